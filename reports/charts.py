"""Altair charts of the report, one builder per figure type.

Every builder takes tidy polars frames from :mod:`hanna_stats.analyses` and returns an
``alt.Chart`` (or a compound chart), so a notebook draws any result as the report does, e.g.
``metric_heatmap(correlate(study), x="against", y="measure", color="statistic")``. Parameters
and views carry explicit names (prefixed by the chart's ``name``), so the Vega-Lite
specification, and with it the report, is the same byte for byte on every run.
Interactive choices (the correlation coefficient, a metric family, a criterion) are Altair
parameters bound to drop-downs; they filter data already in the page, no server is involved.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import altair as alt
import polars as pl

#: Sequential and diverging colour schemes (colour-blind safe Vega schemes).
_SEQUENTIAL = "viridis"
_DIVERGING = "redblue"
_CELL = 11  # heatmap cell size in pixels
ALL = "all"  # drop-down option that keeps every row


def _values(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame as chart data: floats to 4 significant digits (compact, stable JSON).

    Altair stores it once in the specification's ``datasets``, named by a hash of its content.
    (``alt.InlineData`` would validate every row against the schema: seconds for 30k rows.)
    """
    return frame.with_columns(pl.col(pl.Float64, pl.Float32).round_sig_figs(4))


def _widen(frame: pl.DataFrame, column: str, options: Sequence[str], values: Sequence[str]):
    """One row per value of the other columns; ``values`` spread into ``"<value>_<j>"``.

    ``j`` is the index of the row's ``column`` value in ``options``. Used for a drop-down over
    ``column``: the chart picks ``datum[value + "_" + indexof(options, choice)]`` instead of
    filtering rows, which divides the data in the page by the number of options.
    """
    index = [c for c in frame.columns if c != column and c not in values]
    wide = None
    for j, option in enumerate(options):
        part = frame.filter(pl.col(column) == option).select(
            *index, *(pl.col(v).alias(f"{v}_{j}") for v in values)
        )
        wide = part if wide is None else wide.join(part, on=index, how="full", coalesce=True)
    return wide


def _tooltips(
    frame: pl.DataFrame, columns: Sequence[str], fields: dict[str, str] | None = None
) -> list[alt.Tooltip]:
    """Tooltips titled by ``columns``, typed from the frame (quantitative for numbers, else
    nominal), reading field ``fields[c]`` (default ``c``)."""
    fields = fields or {}
    return [
        alt.Tooltip(
            fields.get(c, c),
            type="quantitative" if frame.schema[c].is_numeric() else "nominal",
            title=c,
        )
        for c in columns
    ]


def _dropdown(name: str, options: Sequence[str], label: str) -> alt.Parameter:
    return alt.param(
        name=name,
        value=options[0],
        bind=alt.binding_select(options=list(options), name=f"{label} "),
    )


def metric_heatmap(
    frame: pl.DataFrame,
    *,
    x: str,
    y: str,
    color: str,
    name: str = "heatmap",
    title: str = "",
    choices: dict[str, Sequence[str]] | None = None,
    tooltip: Sequence[str] | None = None,
    spread: str | None = None,
    diverging: bool = False,
    reverse: bool = False,
    sort_x: Sequence[str] | None = None,
    sort_y: Sequence[str] | None = None,
) -> alt.Chart:
    """A heatmap of ``color`` over ``x`` x ``y`` with one drop-down per column in ``choices``.

    Parameters
    ----------
    frame : polars.DataFrame
        Tidy data holding ``x``, ``y``, ``color``, the ``choices`` columns and ``tooltip``.
    name : str
        Chart name (prefix of its parameter names).
    choices : dict
        ``{column: options}``: a drop-down per column; only rows equal to the chosen option of
        every column are shown (first option preselected); an option ``"all"`` (:data:`ALL`)
        shows every row.
    spread : str, optional
        One of the ``choices`` columns whose options are spread into columns (see
        :func:`_widen`) rather than filtered: the numeric ``color`` and ``tooltip`` columns are
        picked by the choice. Use it for the largest choice to keep the page small.
    diverging : bool
        Signed values on a red-blue scale centred on 0; otherwise viridis on [0, 1].
    reverse : bool
        Reverse the sequential scale (small values bright), e.g. for p-values.
    sort_x, sort_y : sequence of str, optional
        Axis orders (default: order of first appearance in ``frame``).
    """
    choices = choices or {}
    tooltip = [x, y, color] if tooltip is None else tooltip
    columns = list(dict.fromkeys([x, y, *choices, color, *tooltip]))
    frame = frame.select(columns)
    sort_x = list(sort_x or frame[x].unique(maintain_order=True))
    sort_y = list(sort_y or frame[y].unique(maintain_order=True))
    # Short field names in the page (f0, f1, ...); axis, legend and tooltips show the real ones.
    short = {c: f"f{i}" for i, c in enumerate(columns)}
    numeric = {c for c in columns if frame.schema[c].is_numeric()}
    data = frame.rename(short)
    params = {col: _dropdown(f"{name}_{col}", opts, col) for col, opts in choices.items()}
    picked: dict[str, str] = {}
    if spread is not None:
        options = list(choices[spread])
        spread_values = [short[c] for c in columns if c in numeric and c != spread]
        data = _widen(data, short[spread], options, spread_values)
        at = f"indexof({json.dumps(options)}, {params[spread].name})"
        picked = {v: f"datum[{json.dumps(v + '_')} + {at}]" for v in spread_values}
    chart = alt.Chart(_values(data), name=name, title=title).mark_rect()
    for col, param in params.items():
        chart = chart.add_params(param)
        if col != spread:
            keep = alt.datum[short[col]] == param
            chart = chart.transform_filter((param == ALL) | keep if ALL in choices[col] else keep)
    if picked:
        chart = chart.transform_calculate(**picked).transform_filter(
            f"isValid(datum[{json.dumps(short[color])}])"
        )
    scale = (
        alt.Scale(scheme=_DIVERGING, domain=[-1, 1], reverse=True)
        if diverging
        else alt.Scale(scheme=_SEQUENTIAL, domain=[0, 1], reverse=reverse)
    )
    return chart.encode(
        x=alt.X(f"{short[x]}:N", sort=sort_x, title=None),
        y=alt.Y(f"{short[y]}:N", sort=sort_y, title=None),
        color=alt.Color(f"{short[color]}:Q", scale=scale, title=color),
        tooltip=_tooltips(frame, tooltip, short),
    ).properties(width=max(len(sort_x) * _CELL, 120), height=max(len(sort_y) * _CELL, 60))


def dot_interval(
    frame: pl.DataFrame, *, name: str = "dot_interval", title: str = ""
) -> alt.FacetChart:
    """System means with confidence intervals, one panel per criterion (Tab. 4 as a figure).

    ``frame`` has columns ``system, criterion, mean, ci_low, ci_high, n``.
    """
    systems = frame["system"].unique(maintain_order=True).to_list()
    y = alt.Y("system:N", sort=systems, title=None)
    rule = (
        alt.Chart(name=f"{name}_interval")
        .mark_rule()
        .encode(
            y=y,
            x=alt.X("ci_low:Q", scale=alt.Scale(zero=False), title="mean rating"),
            x2="ci_high:Q",
        )
    )
    dot = (
        alt.Chart(name=f"{name}_mean")
        .mark_point(filled=True, size=40)
        .encode(
            y=y,
            x="mean:Q",
            tooltip=_tooltips(frame, ["system", "criterion", "mean", "ci_low", "ci_high", "n"]),
        )
    )
    return (
        alt.layer(rule, dot, data=_values(frame))
        .properties(width=170, height=len(systems) * 16)
        .facet(
            facet=alt.Facet(
                "criterion:N", sort=frame["criterion"].unique(maintain_order=True).to_list()
            ),
            columns=3,
            title=title,
        )
        .properties(name=name)
    )


def violins(frame: pl.DataFrame, *, name: str = "violins", title: str = "") -> alt.FacetChart:
    """Distributions of item-level ratings per system and criterion (the paper's Fig. 9).

    ``frame`` has columns ``system, criterion, value`` (one row per item). Each violin is a
    Gaussian kernel density (Vega's default bandwidth, Scott's rule) mirrored about its axis.
    """
    systems = frame["system"].unique(maintain_order=True).to_list()
    criteria = frame["criterion"].unique(maintain_order=True).to_list()
    return (
        alt.Chart(_values(frame), name=f"{name}_view")
        .transform_density(
            "value",
            as_=["value", "density"],
            groupby=["criterion", "system"],
            extent=[1, 5],
        )
        .mark_area(orient="horizontal")
        .encode(
            y=alt.Y("value:Q", title="rating", scale=alt.Scale(domain=[1, 5])),
            x=alt.X(
                "density:Q",
                stack="center",
                impute=None,
                title=None,
                axis=alt.Axis(labels=False, values=[0], grid=False, ticks=True),
            ),
            color=alt.Color("system:N", sort=systems, legend=None),
            tooltip=_tooltips(frame, ["system", "criterion"]),
        )
        .properties(width=46, height=110)
        .facet(
            row=alt.Row("criterion:N", sort=criteria, title=None),
            column=alt.Column(
                "system:N", sort=systems, title=None, header=alt.Header(labelAngle=-30)
            ),
            title=title,
        )
        .properties(name=name)
        .configure_facet(spacing=2)
    )


def bar_scores(
    frame: pl.DataFrame, *, x: str, y: str, name: str = "bars", title: str = ""
) -> alt.Chart:
    """Horizontal bars of ``x`` per ``y`` (e.g. Borda counts), longest first."""
    order = frame.sort(x, descending=True)[y].to_list()
    return (
        alt.Chart(_values(frame), name=name, title=title)
        .mark_bar()
        .encode(
            x=alt.X(f"{x}:Q"),
            y=alt.Y(f"{y}:N", sort=order, title=None),
            tooltip=_tooltips(frame, frame.columns),
        )
        .properties(width=300, height=len(order) * 12)
    )


def topk_lines(frame: pl.DataFrame, *, name: str = "topk_lines", title: str = "") -> alt.FacetChart:
    """|r| against the number of best systems kept, one panel per criterion (the paper's Fig. 8).

    ``frame`` has columns ``criterion, k, measure, abs_statistic``. Every metric is a thin grey
    line; the metric chosen in the drop-down is drawn thick and coloured, and the median over
    metrics dashed.
    """
    measures = sorted(frame["measure"].unique().to_list())
    chosen = _dropdown(f"{name}_measure", measures, "metric")
    criteria = frame["criterion"].unique(maintain_order=True).to_list()
    x = alt.X("k:O", title="k best systems", sort="descending")
    lines = (
        alt.Chart(name=f"{name}_all")
        .mark_line(strokeWidth=0.6, opacity=0.35, color="#999")
        .encode(x=x, y=alt.Y("abs_statistic:Q", title="|r|"), detail="measure:N")
    )
    median = (
        alt.Chart(name=f"{name}_median")
        .transform_aggregate(median="median(abs_statistic)", groupby=["criterion", "k"])
        .mark_line(strokeDash=[4, 3], color="black")
        .encode(x=x, y="median:Q", tooltip=["criterion:N", "k:O", "median:Q"])
    )
    highlight = (
        alt.Chart(name=f"{name}_chosen")
        .mark_line(strokeWidth=2.5, point=alt.OverlayMarkDef(color="#d62728"), color="#d62728")
        .encode(
            x=x,
            y="abs_statistic:Q",
            tooltip=_tooltips(frame, ["measure", "criterion", "k", "abs_statistic"]),
        )
        .add_params(chosen)
        .transform_filter(alt.datum.measure == chosen)
    )
    return (
        alt.layer(lines, median, highlight, data=_values(frame))
        .properties(width=200, height=150)
        .facet(facet=alt.Facet("criterion:N", sort=criteria), columns=3, title=title)
        .properties(name=name)
    )
