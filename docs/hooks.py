"""MkDocs hooks (``mkdocs.yml``): the README as the site's home page, and the API reference pages.

Pages link to each other as files of the repository (``docs/PAGE.md`` from the README,
``../data/README.md`` from a page of ``docs/``), so that the links work where the files are
read; :func:`on_page_markdown` points each such link at the page the site makes of the file.
Each API page is a ``:::`` block (mkdocstrings) for its module; a package
with an ``__all__`` gets its docstring, then one block per public callable of ``__all__``, read
from the module that defines it (``hanna_stats.analyses`` and ``hanna_stats.store`` import their
names on first use, which a static reader cannot follow, and a function may share its module's
name: ``hanna_stats.kernels.correlation``). The reference of the analysis commands' options
in ``docs/command-line.md`` is generated from their parsers (:func:`options_table`), where the
page has :data:`OPTIONS_MARKER`.
"""

from __future__ import annotations

import posixpath
import re
from importlib import import_module
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]

#: Repository files outside ``docs/`` that the site shows -> their page.
PAGES = {"README.md": "index.md", "DEVELOPERS.md": "developers.md", "data/README.md": "data.md"}

#: A Markdown link's target: the path, then an optional anchor.
LINK = re.compile(r"\]\(([^)\s#:]+)(#[^)\s]*)?\)")

#: API page -> its module.
API = {
    "api/kernels.md": "hanna_stats.kernels",
    "api/analyses.md": "hanna_stats.analyses",
    "api/store.md": "hanna_stats.store",
    "api/study.md": "hanna_stats.study",
    "api/vocabulary.md": "hanna_stats.vocabulary",
}


def on_files(files, config):
    for path, uri in PAGES.items():
        text = (ROOT / path).read_text(encoding="utf-8")
        files.append(File.generated(config, uri, content=text))
    for uri, module in API.items():
        files.append(File.generated(config, uri, content=api_page(module)))
    return files


#: Where a page shows the options of the analysis commands (:func:`options_table`).
OPTIONS_MARKER = "<!-- the options of the analysis commands -->"


def on_page_markdown(markdown, page, config, files):
    markdown = markdown.replace(OPTIONS_MARKER, options_table())
    uri = page.file.src_uri
    repo_path = next((p for p, u in PAGES.items() if u == uri), f"docs/{uri}")

    def target(match: re.Match) -> str:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(repo_path), match[1]))
        if path in PAGES:
            path = PAGES[path]
        elif path.startswith("docs/"):
            path = path.removeprefix("docs/")
        else:
            return match[0]
        return f"]({posixpath.relpath(path, posixpath.dirname(uri) or '.')}{match[2] or ''})"

    return LINK.sub(target, markdown)


def api_page(name: str) -> str:
    """The Markdown of one module's API page."""
    module = import_module(name)
    if "__all__" not in vars(module):
        return f"# `{name}`\n\n::: {name}\n"
    blocks = [f"# `{name}`\n\n::: {name}\n    options:\n      members: false\n"]
    for member in module.__all__:
        obj = getattr(module, member)
        home = getattr(obj, "__module__", None)
        if callable(obj) and home and home.startswith(f"{name}."):
            blocks.append(f"::: {home}.{member}\n    options:\n      heading_level: 2\n")
    return "\n".join(blocks)


def options_table() -> str:
    """The options of the commands built from a signature (the analyses, ``user-study``) or
    from :class:`~hanna_stats.reports.ReportSettings` (``report``) as a Markdown table, read
    from the commands (:mod:`hanna_stats.cli.commands`): each option with its default as
    ``--help`` states it, its Python keyword and default, and the commands that have it (one
    row per default)."""
    from hanna_stats.cli.commands import commands

    rows: dict[tuple[str, str, str], list[str]] = {}
    for command in commands():
        if command.generated is None:
            continue
        for argument in command.arguments():
            if not argument.keyword:
                continue
            shown = argument.default_text()
            if shown is None:
                cells = ("required", f"`{argument.dest}`")
            else:
                value = argument.settings.get(
                    "default", argument.settings.get("action") == "store_false"
                )
                cells = (f"`{shown}`", f"`{argument.dest}={value!r}`")
            key = (argument.flags[0], *(c.replace("|", "\\|") for c in cells))
            rows.setdefault(key, []).append(f"`{command.name}`")
    lines = ["| Option | Default | Python | Commands |", "|---|---|---|---|"]
    for (flag, shown, python), names in sorted(rows.items()):
        lines.append(f"| `{flag}` | {shown} | {python} | {', '.join(names)} |")
    return "\n".join(lines)
