"""Read charts back from a rendered report page and check them against the frames behind them.

The page keeps every embedded Vega view in ``VIEWS[<div id>]`` (reports/html.py). In Chromium,
:data:`READ_VIEW` walks a view's scenegraph and returns, in page coordinates, its facet cells and
headers, axis labels, marks (datum, tooltip, position) and scales. :func:`check_view` then checks
what a reader sees against the chart's Vega-Lite specification and the tidy frame the chart was
built from:

- every facet cell sits under (or beside) the header of its own value, and every mark in a cell
  has the cell's facet values;
- every mark of a heatmap-like chart (nominal x/y) sits at the axis labels of its own x and y;
- every mark's fields equal the frame's row with the same keys, the marks and the frame's rows
  under the current drop-down choices are the same set;
- every tooltip field is defined;
- every colour scale's domain covers the values it colours;
- panels whose values span ranges more than 2x apart (MQM and z-scores) are not drawn on one
  shared value scale (each facet cell's own scales are read from its dataflow);
- no facet cell is empty, and where a chart says what it has nothing to show for (e.g. "not
  rated"), every combination of its keys is drawn or says so.

:func:`check_averages` checks a frame (of a chart or a table) for an average over criteria
that do not share one declared scale.

:func:`drop_down_states` lists every combination of a chart's drop-downs; the browser test sets
each one (``view.signal``) and checks the view again.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pytest

# Flags as in DEVELOPERS.md: no sandbox (root in CI), no GPU, no background networking.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: JavaScript: one view's scenegraph flattened into view coordinates (as one JSON string).
READ_VIEW = (Path(__file__).with_name("vega_readback.js")).read_text(encoding="utf-8")


def chromium_path() -> str:
    """The Chromium binary (``$HANNA_STATS_CHROMIUM`` or Debian's ``chromium``)."""
    found = os.environ.get("HANNA_STATS_CHROMIUM") or next(
        filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None
    )
    if found is None:
        pytest.fail(
            "Chromium not found: install it (Debian: apt-get install -y chromium, as the README's "
            "test command does) or set HANNA_STATS_CHROMIUM=/path/to/chrome"
        )
    return found


@contextmanager
def opened(html: Path, profile: Path, *, width: int = 1400) -> Iterator:
    """A Playwright page with ``html`` loaded and every chart embedded; records JavaScript
    errors in ``page.errors`` and aborts (and records in ``page.outside``) every request that is
    not ``file://``; records Vega's warnings (``WARN Infinite extent ...``: a scale with no
    valid value) in ``page.warnings``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            profile,  # a fresh --user-data-dir
            executable_path=chromium_path(),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": width, "height": 1000},
        )
        try:
            page = browser.new_page()
            errors: list[str] = []
            warnings: list[str] = []
            outside: list[str] = []
            said = {"error": errors, "warning": warnings}
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: said.get(m.type, []).append(m.text))

            def route(r):
                if r.request.url.startswith("file://"):
                    r.continue_()
                else:
                    outside.append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.goto(html.as_uri())
            n = page.evaluate("document.querySelectorAll('.chart').length")
            page.wait_for_function(
                f"typeof VIEWS !== 'undefined' && Object.keys(VIEWS).length == {n}",
                timeout=300_000,
            )
            page.errors, page.warnings, page.outside = errors, warnings, outside
            yield page
        finally:
            browser.close()


def read_view(page, div: str, spec: dict) -> dict:
    """The scenegraph of the view in ``<div id=div>`` (see :data:`READ_VIEW`); marks carry the
    datum fields that ``spec``'s metadata names (keys, values, facets, marks)."""
    meta = ChartMeta(spec)
    names = {*meta.keys, *meta.values, *meta.facet.values()}
    page_names = {page: frame for page, frame in meta.fields.items() if frame in names}
    return json.loads(page.evaluate(READ_VIEW, [div, sorted(names | set(page_names))]))


def set_state(page, div: str, state: dict[str, str]) -> None:
    """Set the drop-down signals of a view and wait for it to re-render."""
    page.evaluate(
        "async ([div, state]) => { const v = VIEWS[div];"
        " for (const [k, x] of Object.entries(state)) v.signal(k, x); await v.runAsync(); }",
        [div, state],
    )


def drop_downs(spec: dict) -> dict[str, list]:
    """``{signal name: options}`` of every bound select in a Vega-Lite specification."""
    found: dict[str, list] = {}

    def visit(node):
        if isinstance(node, dict):
            for param in node.get("params", []):
                bind = param.get("bind")
                if isinstance(bind, dict) and bind.get("input") == "select":
                    found[param["name"]] = bind["options"]
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(spec)
    return found


def drop_down_states(spec: dict) -> list[dict[str, str]]:
    """Every combination of the chart's drop-down options (one empty state without any)."""
    options = drop_downs(spec)
    names = sorted(options)
    return [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*(options[n] for n in names))
    ]


def _same(shown, value) -> bool:
    """Whether a value shown in the page equals the frame's (the page keeps 4 significant
    digits)."""
    numbers = (float, int)
    if isinstance(shown, numbers) and isinstance(value, numbers) and not isinstance(value, bool):
        return math.isclose(shown, value, rel_tol=5e-4, abs_tol=1e-12)
    return shown == value


class ChartMeta:
    """What the readback needs to know of a chart: from its ``usermeta["hanna_stats"]``.

    Keys: ``fields`` (page field -> frame column), ``keys`` (frame columns identifying a row),
    ``values`` (frame columns a mark shows), ``choices`` (signal -> frame column filtered by it),
    ``all`` (the option that keeps every row), ``marks`` (mark names that are rows of the frame;
    others are derived, e.g. densities), ``colour`` (frame column coloured), ``facet``
    (``{"row"|"column"|"facet": column}``).
    """

    def __init__(self, spec: dict):
        meta = spec.get("usermeta", {}).get("hanna_stats")
        assert meta, f"chart {spec.get('name')!r} has no usermeta.hanna_stats"
        self.name = spec.get("name")
        self.fields: dict[str, str] = meta.get("fields", {})
        self.keys: list[str] = meta["keys"]
        self.values: list[str] = meta.get("values", [])
        self.choices: dict[str, str] = meta.get("choices", {})
        self.all: str | None = meta.get("all")
        self.marks: list[str] = meta.get("marks", [])
        self.colour: str | None = meta.get("colour")
        self.facet: dict[str, str] = meta.get("facet", {})
        self.axes: dict[str, str] = meta.get("axes", {})  # orient -> frame column (nominal)
        self.marked: dict[str, float] = meta.get("marked", {})  # mark name -> colour threshold
        self.scale: str | None = meta.get("scale")  # signed, magnitude or pvalue
        # {"channel": "x", "columns": [...]}: the value scale of each panel and the frame
        # columns it shows.
        self.scales: dict = meta.get("scales", {})
        self.empty: str | None = meta.get("empty")  # the text of a cell with nothing to show

    def row_of(self, datum: dict) -> dict:
        """A mark's datum with the frame's column names."""
        return {self.fields.get(k, k): v for k, v in datum.items()}


def _selected(frame: pl.DataFrame, meta: ChartMeta, state: dict[str, str]) -> pl.DataFrame:
    for signal, column in meta.choices.items():
        choice = state.get(signal)
        if choice is not None and choice != meta.all:
            frame = frame.filter(pl.col(column) == choice)
    return frame


def _luminance(colour: str) -> float:
    """Relative luminance of a CSS colour ``#rrggbb`` or ``rgb(r, g, b)``."""
    if colour.startswith("#"):
        rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    else:
        rgb = [float(v) for v in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3]]
    r, g, b = (v / 255 for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _headers_of(view: dict, cell: dict, role: str) -> list[str]:
    """The texts of the ``role`` headers in line with ``cell`` (same column or row)."""
    axis, size = ("x", "width") if role == "column-header" else ("y", "height")
    centre = cell[axis] + cell[size] / 2
    return [
        text
        for h in view["headers"]
        if h["role"] == role and h[axis] <= centre <= h[axis] + max(h[size], 1)
        for text in h["text"]
    ]


def _title_above(view: dict, cell: dict) -> str | None:
    """The text just above a panel of a wrapped facet (its title)."""
    above = [
        tx
        for tx in view["texts"]
        if cell["x"] <= tx["x"] <= cell["x"] + cell["width"]
        and cell["y"] - 60 <= tx["y"] <= cell["y"]
    ]
    closest = max(above, key=lambda tx: tx["y"], default=None)
    return None if closest is None else closest["text"]


def _check_facets(view: dict, meta: ChartMeta) -> list[str]:
    """Each facet cell under the header (or title) of its own value; each mark in a cell with
    the cell's values."""
    problems = []
    for cell in view["cells"]:
        values = meta.row_of(cell["datum"])
        for column, role in (("column", "column-header"), ("row", "row-header")):
            if column in meta.facet:
                value = values[meta.facet[column]]
                texts = _headers_of(view, cell, role)
                if str(value) not in texts:
                    problems.append(f"cell {value!r} under {column} header(s) {texts}")
        if "facet" in meta.facet:
            value, title = values[meta.facet["facet"]], _title_above(view, cell)
            if title != str(value):
                problems.append(f"panel {value!r} under title {title!r}")
    for mark in view["marks"]:
        if mark["cell"] is None:
            continue
        cell = meta.row_of(view["cells"][mark["cell"]]["datum"])
        row = meta.row_of(mark["datum"])
        for field, value in cell.items():
            if field in row and row[field] != value:
                problems.append(f"mark {field}={row[field]!r} drawn in the cell of {value!r}")
    return problems


def _check_axes(view: dict, meta: ChartMeta) -> list[str]:
    """Each mark at the label of its own value on every nominal axis."""
    for orient, column in meta.axes.items():
        labels = [lab for lab in view["labels"] if lab["orient"] == orient]
        across = "x" if orient in ("top", "bottom") else "y"
        size = "width" if across == "x" else "height"
        for mark in view["marks"]:
            if mark["mark"] not in meta.marks:
                continue
            centre = mark[across] + mark[size] / 2
            near = [lab for lab in labels if lab["cell"] == mark["cell"]] or labels
            at = min(near, key=lambda lab: abs(lab[across] - centre), default=None)
            text = str(meta.row_of(mark["datum"])[column])
            if at is None or not (
                at["text"] == text
                or (at["text"].endswith("…") and text.startswith(at["text"][:-1]))
            ):
                return [f"mark of {column}={text!r} at label {at and at['text']!r}"]
    return []


def _check_values(view: dict, meta: ChartMeta, expected: dict[tuple, dict]) -> list[str]:
    """Each mark's values equal its frame row; marks and rows are the same set; marked cells
    are exactly the rows whose column is true."""
    problems, seen = [], set()
    for mark in view["marks"]:
        if mark["mark"] not in meta.marks:
            continue
        row = meta.row_of(mark["datum"])
        key = tuple(row.get(k) for k in meta.keys)
        seen.add(key)
        want = expected.get(key)
        if want is None:
            problems.append(f"mark {key} is not a row of the frame under this choice")
            continue
        for column in meta.values:
            if not _same(row.get(column), want[column]):
                problems.append(f"mark {key}: {column}={row.get(column)!r}, frame {want[column]!r}")
    if meta.marks and seen != set(expected):
        missing = sorted(set(expected) - seen, key=str)[:3]
        problems.append(f"{len(set(expected) - seen)} frame rows not drawn, e.g. {missing}")
    for mark_name, threshold in meta.marked.items():
        marked = {
            tuple(meta.row_of(m["datum"]).get(k) for k in meta.keys)
            for m in view["marks"]
            if m["mark"] == mark_name
        }
        # The page holds 4 significant digits: a value a hair above the threshold may show as it.
        want = {key for key, row in expected.items() if row[meta.colour] <= threshold}
        allowed = {k for k, row in expected.items() if row[meta.colour] <= threshold * (1 + 5e-4)}
        if not want <= marked <= allowed:
            problems.append(
                f"{len(marked)} cells marked, {len(want)} rows with {meta.colour} <= {threshold}"
            )
    return problems


def _check_tooltips(view: dict) -> list[str]:
    """Every tooltip field defined (Vega-Lite writes a missing field as "undefined" or
    "NaN")."""
    for mark in view["marks"]:
        for field, value in (mark["tooltip"] or {}).items():
            if value in ("__undefined__", "undefined", "NaN", "__NaN__"):
                return [f"tooltip {field} is {value.strip('_')} (mark {mark['mark']})"]
    return []


def _check_colours(view: dict, meta: ChartMeta, values: list[float]) -> list[str]:
    """Continuous colour scales cover the values they colour; signed ones are centred on 0,
    magnitudes and p-values start at 0; small p-values are drawn darker than large ones (the
    guide text's reading)."""
    problems = []
    for name, scale in view["scales"].items():
        if not name.endswith(("color", "fill")) or scale["type"] in ("ordinal", "band", "point"):
            continue
        lo, hi = min(scale["domain"]), max(scale["domain"])
        if values and (min(values) < lo - 1e-9 or max(values) > hi + 1e-9):
            problems.append(
                f"colour domain [{lo}, {hi}] misses values in [{min(values)}, {max(values)}]"
            )
        if meta.scale == "signed" and lo != -hi:
            problems.append(f"signed values on a domain [{lo}, {hi}] not centred on 0")
        if meta.scale in ("magnitude", "pvalue") and lo != 0:
            problems.append(f"{meta.scale} domain [{lo}, {hi}] does not start at 0")
    if meta.scale == "pvalue":
        drawn = [m for m in view["marks"] if m["mark"] in meta.marks and m["fill"]]
        p = [meta.row_of(m["datum"])[meta.colour] for m in drawn]
        if len(set(p)) > 1:
            darkest = _luminance(drawn[p.index(min(p))]["fill"])
            lightest = _luminance(drawn[p.index(max(p))]["fill"])
            if not darkest < lightest:
                problems.append(f"p = {min(p)} is not drawn darker than p = {max(p)}")
    return problems


#: How much wider one panel's values may spread than another's on a shared value scale.
SPREAD_RATIO = 2.0


def _check_scales(view: dict, meta: ChartMeta, frame: pl.DataFrame) -> list[str]:
    """Panels whose values spread more than :data:`SPREAD_RATIO` times as wide as another's
    do not share that other's value scale (a panel of z-scores beside one of MQM)."""
    if not meta.scales or not meta.facet:
        return []
    facet = next(iter(meta.facet.values()))
    channel = meta.scales["channel"]
    values = pl.concat_list(meta.scales["columns"]).list.explode().drop_nulls().drop_nans()
    spans = {
        key: high - low
        for key, low, high in frame.group_by(facet)
        .agg(values.min().alias("low"), values.max().alias("high"))
        .iter_rows()
        if low is not None
    }
    shared = [s["domain"] for name, s in view["scales"].items() if name.endswith(f"_{channel}")]
    domains = {}
    for cell in view["cells"]:
        key = meta.row_of(cell["datum"]).get(facet)
        own = next(
            (c["scales"] for c in view["cellScales"] if meta.row_of(c["datum"]).get(facet) == key),
            {},
        )
        found = [s["domain"] for name, s in own.items() if name.endswith(f"_{channel}")]
        domains[key] = (found or shared or [None])[0]
    problems = []
    for wide, narrow in itertools.permutations(spans, 2):
        if 0 < spans[narrow] * SPREAD_RATIO < spans[wide] and domains.get(wide) == domains.get(
            narrow
        ):
            problems.append(
                f"panels {wide!r} (values spread {spans[wide]:.3g}) and {narrow!r} "
                f"({spans[narrow]:.3g}) share one {channel} scale {domains[wide]}"
            )
    return problems[:3]


def _check_empty(view: dict, meta: ChartMeta, frame: pl.DataFrame) -> list[str]:
    """Every facet cell holds a mark; in a chart that says where it has nothing to show
    (``empty``, e.g. "not rated"), every combination of its keys' values is drawn or says so."""
    problems = [
        f"empty panel {meta.row_of(cell['datum'])}"
        for k, cell in enumerate(view["cells"])
        if k not in {m["cell"] for m in view["marks"]}
    ]
    if meta.empty is not None:
        shown = {
            tuple(meta.row_of(m["datum"]).get(k) for k in meta.keys)
            for m in view["marks"]
            if m["mark"] in meta.marks or m["text"] == meta.empty
        }
        grid = itertools.product(*(frame[k].unique(maintain_order=True) for k in meta.keys))
        problems += [f"{key} neither drawn nor {meta.empty!r}" for key in grid if key not in shown]
    return problems[:3]


def check_averages(frame: pl.DataFrame, scales: dict[str, tuple]) -> list[str]:
    """An average over criteria in ``frame`` (a row whose ``criterion`` or ``measure`` is
    ``Average...``) when the criteria do not share one declared scale (``scales``: criterion ->
    ``(scale, low, high)``, a bound None where none is declared)."""
    if len(set(scales.values())) == 1 and None not in next(iter(scales.values())):
        return []
    declared = sorted(set(scales.values()), key=str)
    return [
        f"{column} {value!r}: an average over criteria on scales {declared}"
        for column in ("criterion", "measure")
        if column in frame.columns
        for value in frame[column].unique().to_list()
        if isinstance(value, str) and value.startswith("Average")
    ][:1]


def check_view(view: dict, spec: dict, frame: pl.DataFrame, state: dict[str, str]) -> list[str]:
    """Everything wrong with one rendered view (empty when it shows its frame faithfully)."""
    meta = ChartMeta(spec)
    chosen = _selected(frame, meta, state)
    values: list[float] = []
    if meta.colour is not None:
        chosen = chosen.filter(pl.col(meta.colour).is_not_null() & pl.col(meta.colour).is_not_nan())
        values = chosen[meta.colour].to_list()
    expected = {tuple(r[k] for k in meta.keys): r for r in chosen.iter_rows(named=True)}
    problems = [
        *_check_facets(view, meta),
        *_check_axes(view, meta),
        *_check_values(view, meta, expected),
        *_check_tooltips(view),
        *_check_colours(view, meta, values),
        *_check_scales(view, meta, chosen),
        *_check_empty(view, meta, frame),
    ]
    where = f"{meta.name} {state or ''}".strip()
    return [f"{where}: {problem}" for problem in problems]
