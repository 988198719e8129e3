"""One self-contained HTML page: text, tables and Vega-Lite charts with inline JavaScript.

The Vega, Vega-Lite and Vega-Embed libraries come from ``vl_convert.javascript_bundle`` (the
bundle Altair inlines for ``chart.save(..., inline=True)``) and are embedded once; every chart is
a ``<div>`` filled by ``vegaEmbed`` from its specification, serialised with sorted keys. The page
loads nothing from the network: no external script, stylesheet, font or image, and the
specifications carry no ``$schema`` URL. Vega-Embed's action menu (which links to the online
Vega editor) is off.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import altair as alt
import polars as pl
import vl_convert

from hanna_stats.tables import constant_columns, constant_items, number_formatter

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 1400px; padding: 0 24px 48px; color: #222; line-height: 1.45; }
nav { font-size: 0.9em; border-bottom: 1px solid #ddd; padding: 8px 0; }
nav a { margin-right: 14px; }
h1 { margin-top: 24px; }
h2 { border-bottom: 2px solid #444; padding-bottom: 4px; margin-top: 40px; }
h3 { margin-top: 24px; }
.how { background: #f3f6fa; border-left: 4px solid #4a78a8; padding: 6px 12px; }
.settings { font-size: 0.85em; color: #444; }
.settings code { background: #f2f2f2; padding: 0 3px; }
.note { background: #fff6e0; border-left: 4px solid #d9a400; padding: 6px 12px; }
.chart { margin: 12px 0 20px; overflow-x: auto; }
.table-wrap { max-height: 480px; max-width: 100%; overflow: auto; margin: 8px 0 16px; }
.absent { color: #555; font-style: italic; }
details summary { cursor: pointer; }
td.text { max-width: 60em; }
table { border-collapse: collapse; font-size: 0.82em; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f5f5f5; position: sticky; top: 0; }
td.text, th.text { text-align: left; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: 4px 0; }
"""


@dataclass(frozen=True)
class Chart:
    """An Altair chart to embed, and the tidy frame it was built from (what the browser test
    compares the rendered chart with)."""

    chart: alt.TopLevelMixin
    frame: pl.DataFrame

    @classmethod
    def of(cls, builder, frame: pl.DataFrame, **options) -> Chart:
        """``builder(frame, **options)`` (a function of :mod:`hanna_stats.reports.charts`) with its
        frame."""
        return cls(builder(frame, **options), frame)


@dataclass(frozen=True)
class Table:
    """A table shown in the page and written by ``--tables``.

    Attributes
    ----------
    name : str
        File stem for ``--tables`` (``<name>.csv``, ``<name>.parquet``).
    frame : polars.DataFrame
        The full table (also what is written to files).
    caption : str
        Caption shown above it.
    max_rows : int
        Rows shown in the page (the files hold all of them); 0 shows only a line naming it.
    """

    name: str
    frame: pl.DataFrame
    caption: str
    max_rows: int = 200


@dataclass(frozen=True)
class Note:
    """A highlighted remark, e.g. why a section has no content for this study."""

    text: str


@dataclass
class Section:
    """One section of the report.

    Attributes
    ----------
    key : str
        Anchor id.
    title : str
        Heading.
    how_to_read : str
        One line on how to read the section.
    settings : dict
        What the section adds to its analyses' settings (a definition, a count), shown under
        the heading.
    analyses : dict
        The settings of the analyses the section ran, per analysis: option -> its values in
        words (:func:`hanna_stats.reports.sections.shown_calls` of what
        :func:`hanna_stats.analyses.analysis_calls` recorded), shown under the heading.
    blocks : list
        ``Chart``, ``Table`` and ``Note`` blocks, in order.
    absent : str
        Why the study cannot feed the section (``""`` when it can): the page then shows the
        title and this one line, without the guide, the settings or a contents entry.
    subset : str
        The subset of the store the section analyses when the page has one section set per
        subset (``""`` otherwise); it ends the ``data-name`` of the section's charts
        (``means-zh-en``), keeping them unique on the page.
    """

    key: str
    title: str
    how_to_read: str
    settings: dict[str, object] = field(default_factory=dict)
    analyses: dict[str, dict[str, str]] = field(default_factory=dict)
    blocks: list[Chart | Table | Note] = field(default_factory=list)
    absent: str = ""
    subset: str = ""

    @property
    def tables(self) -> list[Table]:
        """The section's tables."""
        return [b for b in self.blocks if isinstance(b, Table)]


#: Text cells longer than this are folded: the start shows, the whole text opens on a click.
_LONG_TEXT = 160


def _cell(value: object, number: Callable[[object], str] | None) -> tuple[str, bool]:
    """Text of one table cell and whether it is text (left-aligned); ``number`` writes the
    numbers of its column (:func:`hanna_stats.tables.number_formatter`)."""
    if value is None:
        return "", False
    if number is not None:
        return number(value), False
    if isinstance(value, bool):
        return str(value), False
    text = str(value)
    if len(text) > _LONG_TEXT:
        return (
            f"<details><summary>{html.escape(text[:_LONG_TEXT])}… ({len(text):,} characters)"
            f"</summary>{html.escape(text)}</details>",
            True,
        )
    return html.escape(text), True


def _table_html(table: Table) -> str:
    frame = table.frame
    if table.max_rows == 0:
        return (
            f'<p class="settings">Table <code>{html.escape(table.name)}</code> ({frame.height:,} '
            f"rows: {html.escape(table.caption)}) is written by <code>--tables DIR</code>.</p>"
        )
    constant = constant_columns(frame)
    settings = " · ".join(constant_items(frame, constant))
    frame = frame.drop(constant)
    shown = frame.head(table.max_rows)
    text_cols = {c for c, t in frame.schema.items() if t == pl.String}
    head = "".join(
        f'<th class="text">{html.escape(c)}</th>'
        if c in text_cols
        else f"<th>{html.escape(c)}</th>"
        for c in frame.columns
    )
    numbers = [number_formatter(name, dtype) for name, dtype in frame.schema.items()]
    rows = []
    for row in shown.iter_rows():
        cells = []
        for value, number in zip(row, numbers, strict=True):
            text, is_text = _cell(value, number)
            cells.append(f'<td class="text">{text}</td>' if is_text else f"<td>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = (
        f" (first {shown.height:,} of {frame.height:,} rows; all in {table.name}.csv with --tables)"
        if frame.height > shown.height
        else ""
    )
    return (
        f'<div class="table-wrap"><table id="table-{html.escape(table.name)}">'
        f"<caption>{html.escape(table.caption)}{html.escape(more)}"
        f"{f'<br><span class=settings>{html.escape(settings)}</span>' if settings else ''}"
        "</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def chart_spec(chart: alt.TopLevelMixin) -> str:
    """The chart's Vega-Lite specification as compact JSON with sorted keys, safe in ``<script>``.

    The ``$schema`` URL is dropped (Vega-Embed does not need it; the page names no URL). Inline
    data can exceed Altair's default limit of 5,000 rows; the limit is lifted for the conversion.
    """
    with alt.data_transformers.disable_max_rows():
        spec = chart.to_dict()
    spec.pop("$schema", None)
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.replace("</", "<\\/")


def _settings_html(section: Section) -> str:
    """The settings under a section's heading: the section's own on the first line, then a line
    per analysis it ran, with that analysis' options."""

    def items(settings: dict) -> str:
        return ", ".join(
            f"{html.escape(str(k))} <code>{html.escape(str(v))}</code>" for k, v in settings.items()
        )

    if not (section.settings or section.analyses):
        return ""
    lines = ["Settings:" + (f" {items(section.settings)}." if section.settings else "")]
    lines += [
        f"<b>{html.escape(name)}</b>" + (f": {items(options)}." if options else ".")
        for name, options in section.analyses.items()
    ]
    return f'<p class="settings">{"<br>".join(lines)}</p>'


def render_page(title: str, intro: str, sections: Sequence[Section]) -> str:
    """The whole HTML page.

    Parameters
    ----------
    title : str
        Page title.
    intro : str
        Paragraph under the title (plain text).
    sections : sequence of Section
        Sections in order.

    Returns
    -------
    str
        HTML5 with the JavaScript libraries inline, identical for identical input.
    """
    body: list[str] = []
    scripts: list[str] = []
    n_chart = 0
    for section in sections:
        body.append(f'<section id="{html.escape(section.key)}">')
        body.append(f"<h2>{html.escape(section.title)}</h2>")
        if section.absent:
            body.append(f'<p class="absent">{html.escape(section.absent)}</p></section>')
            continue
        body.append(f'<p class="how"><b>How to read:</b> {html.escape(section.how_to_read)}</p>')
        body.append(_settings_html(section))
        for block in section.blocks:
            if isinstance(block, Note):
                body.append(f'<p class="note">{html.escape(block.text)}</p>')
            elif isinstance(block, Table):
                body.append(_table_html(block))
            else:
                n_chart += 1
                div = f"chart-{n_chart}"
                name = getattr(block.chart, "name", None)
                name = name if isinstance(name, str) else ""
                name = html.escape(f"{name}-{section.subset}" if section.subset else name)
                body.append(f'<div class="chart" id="{div}" data-name="{name}"></div>')
                scripts.append(
                    f'vegaEmbed("#{div}", {chart_spec(block.chart)}, OPTIONS)'
                    f'.then(r => {{ VIEWS["{div}"] = r.view; }}, showError)'
                )
        body.append("</section>")
    nav = "".join(
        f'<a href="#{html.escape(s.key)}">{html.escape(s.title)}</a>'
        for s in sections
        if not s.absent
    )
    embed = (
        'const OPTIONS = {"actions": false, "renderer": "svg", "mode": "vega-lite"};\n'
        "const VIEWS = {};\n" + ";\n".join(scripts) + ";"
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f"<title>{html.escape(title)}</title>",
            f"<style>{_STYLE}</style>",
            f"<script>{_javascript()}</script>",
            "</head>",
            "<body>",
            f"<h1>{html.escape(title)}</h1>",
            f"<p>{html.escape(intro)}</p>",
            f"<nav>{nav}</nav>",
            *body,
            "<script>",
            "function showError(e) { console.error(e); }",
            embed,
            "</script>",
            "</body>",
            "</html>",
            "",
        ]
    )


def _javascript() -> str:
    """Vega, Vega-Lite and Vega-Embed for the Vega-Lite version of the installed Altair.

    ``vl_convert`` builds the bundle in about 2.5 s on 2 cores, most of a warm report's time, so
    it is kept in the package cache (``$HANNA_STATS_CACHE/js``), keyed by the versions of
    vl-convert and Vega-Lite; a missing or unwritable cache only costs the rebuild.
    """
    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    vl_version = f"{major}.{minor}"
    # the package's cache folder, as hanna_stats.store.fetch.cache_root finds it
    root = Path(os.environ.get("HANNA_STATS_CACHE") or Path.home() / ".cache" / "hanna_stats")
    cached = root / "js" / f"vega-bundle-{vl_convert.__version__}-vl{vl_version}.js"
    try:
        bundle = cached.read_text(encoding="utf-8")
    except OSError:
        bundle = vl_convert.javascript_bundle(vl_version=vl_version)
        tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(bundle, encoding="utf-8")
            os.replace(tmp, cached)
        except OSError:  # a read-only home: rebuilt next time
            tmp.unlink(missing_ok=True)
    if "</script" in bundle.lower():  # would end the inline <script> early
        raise RuntimeError("the Vega JavaScript bundle contains '</script'; cannot inline it")
    return bundle
