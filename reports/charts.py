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
import numpy as np
import polars as pl

#: Colour schemes (colour-blind safe Vega schemes): signed statistics on a diverging scale centred
#: on 0 (red positive, blue negative), magnitudes and p-values on viridis.
_SEQUENTIAL = "viridis"
_DIVERGING = "redblue"
ALL = "all"  # drop-down option that keeps every row
#: How a heatmap colours its values: ``"auto"`` (chosen from the column and its values),
#: ``"signed"``, ``"magnitude"`` or ``"pvalue"`` (see :func:`colour_scale`).
COLOUR_SCALES = ("auto", "signed", "magnitude", "pvalue")


def colour_scale(values: pl.Series, scale: str = "auto") -> tuple[alt.Scale, str]:
    """The colour scale of a statistic, and its kind.

    ``"signed"`` (a correlation that can be negative): red-blue diverging, centred on 0, over
    [-1, 1] or [-m, m] with m the largest |value| when that exceeds 1. ``"magnitude"`` (|r|, F1,
    counts): viridis from 0 (dark) to 1 or to the largest value. ``"pvalue"``: viridis over
    [0, 1], small p dark. ``"auto"`` picks ``"pvalue"`` for a column named ``pvalue...``,
    ``"signed"`` when a value is negative, else ``"magnitude"``.
    """
    if scale not in COLOUR_SCALES:
        raise ValueError(f"scale must be one of {', '.join(COLOUR_SCALES)}; got {scale!r}")
    finite = values.cast(pl.Float64).drop_nulls().drop_nans()
    if scale == "auto":
        if (values.name or "").startswith("pvalue"):
            scale = "pvalue"
        else:
            scale = "signed" if finite.len() and finite.min() < 0 else "magnitude"
    top = float(finite.abs().max()) if finite.len() else 1.0
    top = max(top, 1.0)
    if scale == "signed":
        return alt.Scale(scheme=_DIVERGING, domain=[-top, top], domainMid=0, reverse=True), scale
    if scale == "magnitude":
        return alt.Scale(scheme=_SEQUENTIAL, domain=[0, top]), scale
    return alt.Scale(scheme=_SEQUENTIAL, domain=[0, 1]), scale


def _order(frame: pl.DataFrame, column: str, order: Sequence[str] | None = None) -> pl.Expr:
    """The position of each row's ``column`` value in ``order`` (default: order of first
    appearance): a sort field, so that facets and axes follow the data, never a parallel array."""
    order = list(order or frame[column].unique(maintain_order=True))
    rank = {v: i for i, v in enumerate(order)}
    return pl.col(column).replace_strict(rank, default=len(rank), return_dtype=pl.Int64)


def _meta(chart, **meta) -> alt.TopLevelMixin:
    """``chart`` with what a reader-side check needs to know of it (``usermeta.hanna_stats``:
    the page's field names, the frame columns that identify a row and those a mark shows, the
    drop-downs and the columns they filter, facets and nominal axes); Vega ignores it."""
    return chart.properties(usermeta={"hanna_stats": meta})


def _values(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame as chart data: floats to 4 significant digits, or 2 decimals from 100 up
    (compact, stable JSON; a Borda count of 1126.5 stays 1126.5).

    Altair stores it once in the specification's ``datasets``, named by a hash of its content.
    (``alt.InlineData`` would validate every row against the schema: seconds for 30k rows.)
    """
    floats = pl.col(pl.Float64, pl.Float32)
    return frame.with_columns(
        pl.when(floats.abs() >= 100).then(floats.round(2)).otherwise(floats.round_sig_figs(4))
    )


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
    scale: str = "auto",
    marked_at: float | None = None,
    sort_x: Sequence[str] | None = None,
    sort_y: Sequence[str] | None = None,
) -> alt.LayerChart:
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
    tooltip : sequence of str, optional
        Columns shown on hover (default ``x, y, color``); a ``choices`` column shows the option
        chosen.
    spread : str, optional
        One of the ``choices`` columns whose options are spread into columns (see
        :func:`_widen`) rather than filtered: the numeric ``color`` and ``tooltip`` columns are
        picked by the choice. Use it for the largest choice to keep the page small.
    scale : str
        The colour scale (:func:`colour_scale`): ``"auto"`` (default; from the column's name and
        values), ``"signed"``, ``"magnitude"`` or ``"pvalue"``. Its domain covers every value
        of ``color`` under every choice.
    marked_at : float, optional
        Cells whose ``color`` value is at most this carry a white star (e.g. p-values
        significant at alpha: ``marked_at=0.05``); decided in the page from the values shown.
    sort_x, sort_y : sequence of str, optional
        Axis orders (default: order of first appearance in ``frame``).
    """
    choices = choices or {}
    tooltip = [x, y, color] if tooltip is None else list(tooltip)
    columns = list(dict.fromkeys([x, y, *choices, color, *tooltip]))
    frame = frame.select(columns)
    sort_x = list(sort_x or frame[x].unique(maintain_order=True))
    sort_y = list(sort_y or frame[y].unique(maintain_order=True))
    colour, kind = colour_scale(frame[color], scale)
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
        picked[short[spread]] = params[spread].name  # the option shown, e.g. in tooltips
    base = alt.Chart(_values(data))
    if picked:
        base = base.transform_calculate(**picked).transform_filter(
            f"isValid(datum[{json.dumps(short[color])}])"
        )
    for col, param in params.items():
        if col != spread:
            keep = alt.datum[short[col]] == param
            base = base.transform_filter((param == ALL) | keep if ALL in choices[col] else keep)
    position = {
        "x": alt.X(f"{short[x]}:N", sort=sort_x, title=None),
        "y": alt.Y(f"{short[y]}:N", sort=sort_y, title=None),
    }
    rect = (
        base.mark_rect()
        .encode(
            **position,
            color=alt.Color(f"{short[color]}:Q", scale=colour, title=color),
            tooltip=_tooltips(frame, tooltip, short),
        )
        .properties(name=f"{name}_cells")
    )
    layers = [rect]
    if marked_at is not None:
        stars = base.transform_filter(f"datum[{json.dumps(short[color])}] <= {marked_at!r}")
        layers.append(
            stars.mark_text(text="\u2731", color="white", fontSize=8)
            .encode(**position, tooltip=_tooltips(frame, tooltip, short))
            .properties(name=f"{name}_marked")
        )
    width, height = (
        len(axis) * int(min(36, max(11, 420 // len(axis)))) for axis in (sort_x, sort_y)
    )
    chart = (
        alt.layer(*layers, title=title)
        .add_params(*params.values())
        .properties(name=name, width=width, height=height)
    )
    keys = [x, y, *choices]
    return _meta(
        chart,
        fields={v: k for k, v in short.items()},
        keys=keys,
        values=[c for c in columns if c not in keys],
        choices={params[c].name: c for c in choices},
        all=ALL,
        marks=[f"{name}_cells_marks"],
        marked={f"{name}_marked_marks": marked_at} if marked_at is not None else {},
        colour=color,
        scale=kind,
        axes={"bottom": x, "left": y},
    )


def dot_interval(
    frame: pl.DataFrame, *, name: str = "dot_interval", title: str = ""
) -> alt.FacetChart:
    """System means with confidence intervals, one panel per criterion (Tab. 4 as a figure).

    ``frame`` has columns ``system, criterion, mean, ci_low, ci_high, n``; each panel has its
    own x axis (no empty panels when the criteria do not fill the last row).
    """
    systems = frame["system"].unique(maintain_order=True).to_list()
    data = frame.with_columns(_order(frame, "criterion").alias("criterion_order"))
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
    columns = ["system", "criterion", "mean", "ci_low", "ci_high", "n"]
    dot = (
        alt.Chart(name=f"{name}_mean")
        .mark_point(filled=True, size=40)
        .encode(y=y, x="mean:Q", tooltip=_tooltips(frame, columns))
    )
    chart = (
        alt.layer(rule, dot, data=_values(data))
        .properties(width=170, height=len(systems) * 16)
        .facet(
            facet=alt.Facet(
                "criterion:N",
                sort=alt.EncodingSortField("criterion_order", op="min"),
                title=None,
            ),
            columns=3,
            title=title,
        )
        .resolve_axis(x="independent")
        .properties(name=name)
    )
    return _meta(
        chart,
        keys=["system", "criterion"],
        values=["mean", "ci_low", "ci_high", "n"],
        marks=[f"{name}_mean_marks"],
        facet={"facet": "criterion"},
        axes={"left": "system"},
    )


#: Points per violin at which its density is evaluated.
_DENSITY_POINTS = 81


def _bandwidth(values: np.ndarray) -> float:
    """Vega's default kernel bandwidth (vega-statistics ``estimateBandwidth``): 1.06 times the
    smaller of the standard deviation and the interquartile range / 1.34, times n^(-1/5)."""
    sd = float(np.std(values, ddof=1)) if values.size > 1 else 0.0
    q1, q3 = np.quantile(values, [0.25, 0.75])
    spread = min(sd, (q3 - q1) / 1.34) or sd or abs(float(values[0])) or 1.0
    return 1.06 * spread * values.size**-0.2


def densities(frame: pl.DataFrame) -> pl.DataFrame:
    """Gaussian kernel densities of ``value`` per criterion and system, on a grid spanning each
    criterion's values, for every criterion x system (one row with null ``value`` and
    ``density`` where a system has no value of a criterion: its cell stays in the grid, empty).

    Returns
    -------
    polars.DataFrame
        Columns ``criterion, system, criterion_order, system_order, value, density``.
    """
    systems = frame["system"].unique(maintain_order=True).to_list()
    criteria = frame["criterion"].unique(maintain_order=True).to_list()
    s_code = frame["system"].replace_strict(systems, range(len(systems))).to_numpy()
    c_code = frame["criterion"].replace_strict(criteria, range(len(criteria))).to_numpy()
    value = frame["value"].to_numpy()
    columns: dict[str, list] = {k: [] for k in ("criterion_order", "system_order", "value")}
    columns["density"] = []
    for c in range(len(criteria)):
        on_c = c_code == c
        lo, hi = value[on_c].min(), value[on_c].max()
        grid = np.linspace(lo, hi, _DENSITY_POINTS) if hi > lo else np.array([lo])
        for s in range(len(systems)):
            values = value[on_c & (s_code == s)]
            at, density = [None], [None]  # an empty cell: one row without a value
            if values.size:
                h = _bandwidth(values)
                z = (grid[:, None] - values[None, :]) / h
                at = grid.tolist()
                density = (
                    np.exp(-0.5 * z**2).sum(axis=1) / (values.size * h * np.sqrt(2 * np.pi))
                ).tolist()
            columns["criterion_order"] += [c] * len(at)
            columns["system_order"] += [s] * len(at)
            columns["value"] += at
            columns["density"] += density
    out = pl.DataFrame(
        columns,
        schema={k: pl.Float64 for k in columns}
        | {"criterion_order": pl.Int64, "system_order": pl.Int64},
    )
    return out.select(
        pl.col("criterion_order").replace_strict(range(len(criteria)), criteria).alias("criterion"),
        pl.col("system_order").replace_strict(range(len(systems)), systems).alias("system"),
        pl.all(),
    )


def violins(frame: pl.DataFrame, *, name: str = "violins", title: str = "") -> alt.FacetChart:
    """Distributions of item-level values per system and criterion (the paper's Fig. 9).

    ``frame`` has columns ``system, criterion, value`` (one row per item). Each violin is a
    Gaussian kernel density (Vega's default bandwidth, :func:`_bandwidth`) mirrored about its
    axis, computed by :func:`densities` over the range of its criterion (each row of panels has
    its own y scale: a Likert criterion and an MQM score side by side). Rows and columns are
    faceted on the criterion and system fields themselves, ordered by sort fields; every
    criterion x system has a cell (an empty one where the system has no value), so no cell moves
    under another header. The cell spec has no transform: one there makes Vega-Lite lose the
    cells' sort fields (cells then follow the data, not their headers).
    """
    systems = frame["system"].unique(maintain_order=True).to_list()
    chart = (
        alt.Chart(name=f"{name}_view")
        .mark_area(orient="horizontal")
        .encode(
            y=alt.Y("value:Q", title=None, scale=alt.Scale(zero=False, nice=False)),
            x=alt.X(
                "density:Q",
                stack="center",
                impute=None,
                title=None,
                axis=alt.Axis(labels=False, values=[0], grid=False, ticks=True),
            ),
            color=alt.Color("system:N", scale=alt.Scale(domain=systems), legend=None),
            tooltip=_tooltips(frame, ["system", "criterion"]),
        )
        .properties(width=46, height=110)
        .facet(
            row=alt.Row(
                "criterion:N",
                sort=alt.EncodingSortField("criterion_order", op="min"),
                title=None,
            ),
            column=alt.Column(
                "system:N",
                sort=alt.EncodingSortField("system_order", op="min"),
                title=None,
                header=alt.Header(labelAngle=-30),
            ),
            title=title,
            data=_values(densities(frame)),
        )
        .resolve_scale(y="independent")
        .properties(name=name)
        .configure_facet(spacing=2)
    )
    return _meta(
        chart,
        keys=["system", "criterion"],
        marks=[f"{name}_view_marks"],
        facet={"row": "criterion", "column": "system"},
    )


def bar_scores(
    frame: pl.DataFrame, *, x: str, y: str, name: str = "bars", title: str = ""
) -> alt.Chart:
    """Horizontal bars of ``x`` per ``y`` (e.g. Borda counts), longest first."""
    order = frame.sort(x, descending=True)[y].to_list()
    chart = (
        alt.Chart(_values(frame), name=name, title=title)
        .mark_bar()
        .encode(
            x=alt.X(f"{x}:Q"),
            y=alt.Y(f"{y}:N", sort=order, title=None),
            tooltip=_tooltips(frame, frame.columns),
        )
        .properties(width=300, height=len(order) * 12)
    )
    return _meta(
        chart,
        keys=[y],
        values=[c for c in frame.columns if c != y],
        marks=[f"{name}_marks"],
        axes={"left": y},
    )


def topk_lines(frame: pl.DataFrame, *, name: str = "topk_lines", title: str = "") -> alt.FacetChart:
    """|r| against the number of best systems kept, one panel per criterion (the paper's Fig. 8).

    ``frame`` has columns ``criterion, k, measure, abs_statistic``. Every metric is a thin grey
    line; the metric chosen in the drop-down is drawn thick and coloured, and the median over
    metrics dashed.
    """
    measures = sorted(frame["measure"].unique().to_list())
    chosen = _dropdown(f"{name}_measure", measures, "metric")
    data = frame.with_columns(_order(frame, "criterion").alias("criterion_order"))
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
        .mark_line(strokeWidth=2.5, color="#d62728")
        .encode(x=x, y="abs_statistic:Q")
        .transform_filter(alt.datum.measure == chosen)
    )
    points = (
        alt.Chart(name=f"{name}_points")
        .mark_point(filled=True, color="#d62728")
        .encode(
            x=x,
            y="abs_statistic:Q",
            tooltip=_tooltips(frame, ["measure", "criterion", "k", "abs_statistic"]),
        )
        .add_params(chosen)
        .transform_filter(alt.datum.measure == chosen)
    )
    chart = (
        alt.layer(lines, median, highlight, points, data=_values(data))
        .properties(width=200, height=150)
        .facet(
            facet=alt.Facet(
                "criterion:N", sort=alt.EncodingSortField("criterion_order", op="min"), title=None
            ),
            columns=3,
            title=title,
        )
        .resolve_axis(x="independent")
        .properties(name=name)
    )
    return _meta(
        chart,
        keys=["criterion", "k", "measure"],
        values=["abs_statistic"],
        choices={chosen.name: "measure"},
        marks=[f"{name}_points_marks"],
        facet={"facet": "criterion"},
    )
