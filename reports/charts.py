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
import math
from collections.abc import Sequence

import altair as alt
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
    counts): viridis from 0 (dark) to the largest value (all |r| at most 0.41 span the whole
    scheme, not its dark half). ``"pvalue"``: viridis over [0, 1], small p dark. ``"auto"``
    picks ``"pvalue"`` for a column named ``pvalue...``, ``"signed"`` when a value is negative,
    else ``"magnitude"``.
    """
    if scale not in COLOUR_SCALES:
        raise ValueError(f"scale must be one of {', '.join(COLOUR_SCALES)}; got {scale!r}")
    finite = values.cast(pl.Float64).drop_nulls().drop_nans()
    if scale == "auto":
        if (values.name or "").startswith("pvalue"):
            scale = "pvalue"
        else:
            scale = "signed" if finite.len() and finite.min() < 0 else "magnitude"
    top = float(finite.abs().max()) if finite.len() else 0.0
    if scale == "signed":
        top = max(top, 1.0)
        return alt.Scale(scheme=_DIVERGING, domain=[-top, top], domainMid=0, reverse=True), scale
    if scale == "magnitude":
        return alt.Scale(scheme=_SEQUENTIAL, domain=[0, top or 1.0]), scale
    return alt.Scale(scheme=_SEQUENTIAL, domain=[0, 1]), scale


#: Legend titles in words for the report's columns (others are titled by their name).
_WORDS = {
    "abs_statistic": "|correlation|",
    "statistic": "correlation",
    "pvalue": "p-value",
    "pvalue_adjusted": "adjusted p-value",
    "f1": "weighted F1",
    "mean_acc_eq": "acc_eq, mean over the criteria",
}


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
        of ``color`` under every choice; its legend is titled in words (``"|correlation|"`` for
        ``abs_statistic``, ``"p-value"`` for ``pvalue``).
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
            color=alt.Color(f"{short[color]}:Q", scale=colour, title=_WORDS.get(color, color)),
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


def _titled(title: str, subtitle: Sequence[str]) -> alt.TitleParams:
    """A chart title with lines of subtitle saying what the marks show."""
    return alt.TitleParams(text=title, subtitle=list(subtitle), anchor="start")


def _one_scale(frame: pl.DataFrame, by: str, columns: Sequence[str]) -> bool:
    """Whether the panels of ``frame`` (one per ``by`` value) can share one value scale: the
    range of ``columns`` over all panels is at most twice the narrowest panel's own range, so
    every panel fills at least half of the shared axis."""
    values = pl.concat_list(columns).list.explode().drop_nulls()
    spans = frame.group_by(by).agg(low=values.min(), high=values.max())
    narrowest = (spans["high"] - spans["low"]).min()
    return narrowest is not None and spans["high"].max() - spans["low"].min() <= 2 * narrowest


def dot_interval(
    frame: pl.DataFrame, *, name: str = "dot_interval", title: str = ""
) -> alt.FacetChart:
    """System means with confidence intervals, one panel per measure (Tab. 4 as a figure).

    ``frame`` has columns ``system, measure, mean, ci_low, ci_high, n`` (as
    :func:`~hanna_stats.analyses.system_means` gives them). Each panel has its own x scale,
    fitted to its means and intervals, where criteria differ (WMT: MQM about -25..0, raw DA
    0..100, z-scores about 0, each showing its intervals); panels share one scale where it fits
    them all (:func:`_one_scale`, HANNA's 1-5 criteria), so that they compare. A system with
    no mean of a measure (a criterion that does not rate it) reads "not rated" in the middle of
    that panel's range.
    """
    shared = _one_scale(frame, "measure", ["mean", "ci_low", "ci_high"])
    systems = frame["system"].unique(maintain_order=True).to_list()
    measures = frame.select("measure").unique(maintain_order=True)
    values = pl.concat_list("mean", "ci_low", "ci_high").list.explode().drop_nulls()
    centres = frame.group_by("measure").agg(centre=(values.min() + values.max()) / 2)
    if shared:
        centres = centres.with_columns(centre=(frame["ci_low"].min() + frame["ci_high"].max()) / 2)
    absent = (
        pl.DataFrame({"system": systems})
        .join(measures, how="cross")
        .join(frame, on=["system", "measure"], how="anti")
        .join(centres, on="measure")
        .with_columns(note=pl.lit(NOT_RATED))
    )
    data = pl.concat([frame, absent], how="diagonal_relaxed")
    data = data.with_columns(_order(data, "measure").alias("measure_order"))
    y = alt.Y("system:N", sort=systems, title=None)
    rule = (
        alt.Chart(name=f"{name}_interval")
        .mark_rule()
        .encode(
            y=y,
            x=alt.X("ci_low:Q", scale=alt.Scale(zero=False), title="mean"),
            x2="ci_high:Q",
        )
    )
    columns = ["system", "measure", "mean", "ci_low", "ci_high", "n"]
    dot = (
        alt.Chart(name=f"{name}_mean")
        .mark_point(filled=True, size=40)
        .encode(y=y, x="mean:Q", tooltip=_tooltips(frame, columns))
    )
    text = (
        alt.Chart(name=f"{name}_absent")
        .mark_text(color="#888", fontStyle="italic")
        .encode(y=y, x="centre:Q", text="note:N")
    )
    chart = (
        alt.layer(rule, dot, *([text] if absent.height else []), data=_values(data))
        .properties(width=170, height=len(systems) * 16)
        .facet(
            facet=alt.Facet(
                "measure:N", sort=alt.EncodingSortField("measure_order", op="min"), title=None
            ),
            columns=4,
            title=_titled(
                title,
                [
                    "Dot: mean; line: its confidence interval; "
                    + ("one scale for all panels" if shared else "each panel on its own scale")
                ],
            ),
        )
        .resolve_scale(x="shared" if shared else "independent")
        .resolve_axis(x="independent")
        .properties(name=name)
    )
    return _meta(
        chart,
        keys=["system", "measure"],
        values=["mean", "ci_low", "ci_high", "n"],
        marks=[f"{name}_mean_marks"],
        facet={"facet": "measure"},
        axes={"left": "system"},
        empty=NOT_RATED,
        scales={"channel": "x", "columns": ["mean", "ci_low", "ci_high"]},
    )


#: Percentiles that a distribution strip draws: its line, its box and its tick.
QUANTILES = {"p05": 0.05, "p25": 0.25, "median": 0.5, "p75": 0.75, "p95": 0.95}
NOT_RATED = "not rated"


def quantile_strips(frame: pl.DataFrame) -> pl.DataFrame:
    """The percentiles (:data:`QUANTILES`, linear interpolation) and mean of ``value`` per
    criterion and system, with every criterion x system (``n = 0`` and null statistics where a
    system has no value of a criterion), and each criterion's axis range ``lo, hi``: its declared
    scale (``scale_min``, ``scale_max`` columns when ``frame`` has them) widened to the 5th and
    95th percentiles of every system, ``centre`` between them, and ``note``: "not rated" where
    the system has no value of the criterion, else empty (text drawn at ``centre``).

    Returns
    -------
    polars.DataFrame
        Columns ``criterion, system, criterion_order, n, mean, p05, p25, median, p75, p95, lo,
        hi, centre, note``, criteria then systems in order of first appearance.
    """
    systems = frame["system"].unique(maintain_order=True)
    criteria = frame["criterion"].unique(maintain_order=True)
    stats = frame.group_by("criterion", "system").agg(
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("value").mean().alias("mean"),
        *(pl.col("value").quantile(q, "linear").alias(k) for k, q in QUANTILES.items()),
    )
    declared = [c for c in ("scale_min", "scale_max") if c in frame.columns]
    bounds = frame.group_by("criterion").agg(pl.col(declared).first()) if declared else None
    grid = (
        criteria.to_frame()
        .with_row_index("criterion_order")
        .join(systems.to_frame().with_row_index("system_order"), how="cross")
        .join(stats, on=["criterion", "system"], how="left")
        .with_columns(pl.col("n").fill_null(0))
    )
    if bounds is not None:
        grid = grid.join(bounds, on="criterion", how="left")
    over = pl.col("criterion")
    lo = pl.min_horizontal(pl.col("p05").min().over(over), *declared[:1])
    hi = pl.max_horizontal(pl.col("p95").max().over(over), *declared[1:])
    return (
        grid.with_columns(lo=lo, hi=hi)
        .with_columns(
            centre=(pl.col("lo") + pl.col("hi")) / 2,
            note=pl.when(pl.col("n") == 0).then(pl.lit(NOT_RATED)).otherwise(pl.lit("")),
            criterion_order=pl.col("criterion_order").cast(pl.Int64),
        )
        .sort("criterion_order", "system_order")
        .select(
            "criterion",
            "system",
            "criterion_order",
            "n",
            "mean",
            *QUANTILES,
            "lo",
            "hi",
            "centre",
            "note",
        )
    )


def distributions(
    frame: pl.DataFrame, *, name: str = "distributions", title: str = ""
) -> alt.FacetChart:
    """Distributions of item-level values per system and criterion (the paper's Fig. 9 as
    quantile strips), one panel per criterion, one row per system.

    ``frame`` has columns ``system, criterion, value`` (one row per item; optionally the
    criterion's declared ``scale_min, scale_max``, as
    :func:`~hanna_stats.analyses.criterion_values` gives them). Each row of a panel draws
    :func:`quantile_strips`: a line from the 5th to the 95th percentile, a box from the 25th to
    the 75th, a tick at the median and a dot at the mean, which stay readable where a density
    would not (MQM: most segments at 0, a tail to -80). Each panel has its own x scale, spanning
    the criterion's declared scale where there is one (a Likert criterion shows 1-5 in full);
    a system that does not rate a criterion reads "not rated". One colour: the row names the
    system.
    """
    strips = quantile_strips(frame)
    systems = strips["system"].unique(maintain_order=True).to_list()
    n_criteria = strips["criterion"].n_unique()
    per_row = min(n_criteria, 6)
    y = alt.Y("system:N", sort=systems, title=None)
    tooltip = _tooltips(strips, ["system", "criterion", "n", "mean", *QUANTILES])
    span = (
        alt.Chart(name=f"{name}_range")
        .mark_rule(opacity=0)
        .encode(y=y, x=alt.X("lo:Q", title=None, scale=alt.Scale(zero=False)), x2="hi:Q")
    )
    line = alt.Chart().mark_rule(color="#4c78a8").encode(y=y, x="p05:Q", x2="p95:Q")
    box = (
        alt.Chart(name=f"{name}_box")
        .mark_bar(size=9, color="#9ecae9", stroke="#4c78a8", strokeWidth=1)
        .encode(y=y, x="p25:Q", x2="p75:Q", tooltip=tooltip)
    )
    median = alt.Chart().mark_tick(color="black", thickness=2, size=11).encode(y=y, x="median:Q")
    mean = (
        alt.Chart(name=f"{name}_mean")
        .mark_point(shape="diamond", filled=True, size=30, color="#d62728")
        .encode(y=y, x="mean:Q", tooltip=tooltip)
    )
    absent = (
        alt.Chart(name=f"{name}_absent")
        .mark_text(color="#888", fontStyle="italic")
        .encode(y=y, x="centre:Q", text="note:N")
    )
    chart = (
        alt.layer(span, line, box, median, mean, absent, data=_values(strips))
        .properties(width=max(120, min(220, 1000 // per_row)), height=len(systems) * 16)
        .facet(
            facet=alt.Facet(
                "criterion:N", sort=alt.EncodingSortField("criterion_order", op="min"), title=None
            ),
            columns=per_row,
            title=_titled(
                title,
                [
                    "Per system: line from the 5th to the 95th percentile, box from the 25th to "
                    "the 75th, black tick the median, red diamond the mean",
                    "Each criterion on its own scale (a declared scale in full)",
                ],
            ),
        )
        .resolve_scale(x="independent")
        .properties(name=name)
    )
    return _meta(
        chart,
        keys=["system", "criterion"],
        marks=[f"{name}_box_marks"],
        facet={"facet": "criterion"},
        axes={"left": "system"},
        empty=NOT_RATED,
        scales={"channel": "x", "columns": ["value"]},
    )


def _baseline(low: float, high: float) -> float:
    """A round number below ``low`` by about a quarter of ``high - low``: where bars start
    when their differences matter more than their length."""
    spread = (high - low) or abs(low) or 1.0
    step = 10 ** math.floor(math.log10(spread))
    return math.floor((low - spread / 4) / step) * step


def bar_scores(
    frame: pl.DataFrame,
    *,
    x: str,
    y: str,
    name: str = "bars",
    title: str = "",
    start: float | None = 0.0,
    reference: float | None = None,
    subtitle: Sequence[str] = (),
) -> alt.LayerChart:
    """Horizontal bars of ``x`` per ``y`` (e.g. Borda counts), longest first.

    Parameters
    ----------
    start : float or None
        Where the bars start (default 0). None: a round number a little below the smallest
        value (:func:`_baseline`), so that values close together (acc_eq 0.49-0.53) differ
        visibly; the axis starts there.
    reference : float, optional
        A value marked by a dashed line (e.g. 0.5), inside the axis.
    subtitle : sequence of str
        Lines under the title (e.g. what the line marks); a first line says where bars start
        when that is not 0.
    """
    order = frame.sort(x, descending=True)[y].to_list()
    low, high = float(frame[x].min()), float(frame[x].max())
    if reference is not None:
        low, high = min(low, reference), max(high, reference)
    base = _baseline(low, high) if start is None else start
    scale = alt.Scale(domainMin=base, zero=base == 0, nice=start is not None)
    bars = (
        alt.Chart(_values(frame), name=f"{name}_bars")
        .mark_bar()
        .encode(
            x=alt.X(f"{x}:Q", scale=scale, title=_WORDS.get(x, x)),
            x2=alt.datum(base),
            y=alt.Y(f"{y}:N", sort=order, title=None),
            tooltip=_tooltips(frame, frame.columns),
        )
    )
    layers = [bars]
    if reference is not None:
        layers.append(
            alt.Chart(alt.Data(values=[{"reference": reference}]), name=f"{name}_reference")
            .mark_rule(color="black", strokeDash=[4, 3])
            .encode(x="reference:Q")
        )
    if base != 0:
        subtitle = [f"Bars start at {base:g}, not at 0", *subtitle]
    chart = alt.layer(*layers, title=_titled(title, subtitle)).properties(
        name=name, width=300, height=len(order) * 12
    )
    return _meta(
        chart,
        keys=[y],
        values=[c for c in frame.columns if c != y],
        marks=[f"{name}_bars_marks"],
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


#: The two colours that alternate from one significance cluster to the next (:func:`cluster_bars`).
CLUSTER_COLOURS = ("#4c78a8", "#9ecae9")


def cluster_bars(frame: pl.DataFrame, *, cluster: str = "cluster", **options) -> alt.LayerChart:
    """:func:`bar_scores` of ``frame`` (``options``: its ``x``, ``y``, ``name``, ``title``,
    ``subtitle``; the bars start a little below the smallest value), the bars dark and light in
    turn from one value of ``cluster`` to the next (a significance cluster: 1 the best), e.g.
    the WMT ranking of metrics by a task set."""
    chart = bar_scores(frame, start=None, **options)
    colour = alt.Color(
        f"{cluster}:O", scale=alt.Scale(range=list(CLUSTER_COLOURS)), legend=None, title=cluster
    )
    chart.layer[0] = chart.layer[0].encode(color=colour)
    return chart


#: The band around a simulated estimate: +- this many Monte Carlo standard errors (95%).
BAND_Z = 1.96


def power_curves(
    frame: pl.DataFrame,
    *,
    line: str,
    x: str = "inputs",
    name: str = "power_curves",
    title: str = "",
    x_title: str = "inputs",
    y_title: str = "power",
    target: float | None = None,
    subtitle: Sequence[str] = (),
) -> alt.LayerChart:
    """Simulated estimates over designs (:func:`~hanna_stats.analyses.power`'s curves): one
    line per value of ``line``, a point per design, and a band of ``estimate`` +- 1.96
    ``standard_error`` (the Monte Carlo standard error; clipped to [0, 1]).

    Parameters
    ----------
    frame : polars.DataFrame
        Columns ``line``, ``x``, ``estimate`` and ``standard_error`` (others show in the
        tooltips), one row per line and design.
    line : str
        The column naming each curve (its legend, below the plot).
    x : str
        The design's size (inputs), on a log2 axis (the default grid doubles) marked at the
        sizes simulated.
    target : float, optional
        A dashed horizontal rule (e.g. the power 0.8 aimed at).
    """
    order = frame[line].unique(maintain_order=True).to_list()
    sizes = sorted(set(frame[x].to_list()))
    colour = alt.Color(
        f"{line}:N",
        sort=order,
        title=None,
        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=700, symbolOpacity=1),
    )
    xs = alt.X(
        f"{x}:Q",
        scale=alt.Scale(type="log", base=2, nice=False, padding=12),
        axis=alt.Axis(values=sizes, format="~d"),
        title=x_title,
    )
    ys = alt.Y("estimate:Q", scale=alt.Scale(domain=[0, 1]), title=y_title)
    band = (
        alt.Chart(name=f"{name}_band")
        .transform_calculate(
            low=f"max(0, datum.estimate - {BAND_Z} * datum.standard_error)",
            high=f"min(1, datum.estimate + {BAND_Z} * datum.standard_error)",
        )
        .mark_area(opacity=0.18)
        .encode(x=xs, y="low:Q", y2="high:Q", color=colour)
    )
    lines = alt.Chart(name=f"{name}_lines").mark_line().encode(x=xs, y=ys, color=colour)
    points = (
        alt.Chart(name=f"{name}_points")
        .mark_point(filled=True, size=40)
        .encode(x=xs, y=ys, color=colour, tooltip=_tooltips(frame, frame.columns))
    )
    layers = [band, lines, points]
    if target is not None:
        layers.append(
            alt.Chart(alt.Data(values=[{"target": target}]), name=f"{name}_target")
            .mark_rule(color="black", strokeDash=[4, 3])
            .encode(y="target:Q")
        )
    chart = alt.layer(*layers, data=_values(frame), title=_titled(title, subtitle)).properties(
        name=name, width=420, height=220
    )
    return _meta(
        chart,
        keys=[line, x],
        values=["estimate", "standard_error"],
        marks=[f"{name}_points_marks"],
    )
