"""The layers: no module imports a layer above its own, or a private name of another module.

``sql/`` -> :mod:`hanna_stats.store` -> :mod:`hanna_stats.kernels` -> :mod:`hanna_stats.analyses`
-> ``reports/`` -> :mod:`hanna_stats.cli`, with :mod:`hanna_stats.vocabulary` (the words) and
:mod:`hanna_stats.study` (the in-memory Study and Cube) beneath the analyses,
:mod:`hanna_stats.tables` (the tables people read) beneath the reports, and ``scoring/``
beside the store (it computes metrics from texts into it). Every import statement counts,
including those inside functions (the lazy ones). A private (``_``) name is private to its module:
what two modules share has a public name in one of them (``from . import _x`` crosses modules too).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Folder of each package whose folder is not its dotted name (pyproject's package-dir):
#: reports/ is hanna_stats.reports, scoring/ is hanna_stats.scoring.
PACKAGE_DIRS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
    "package-dir"
]


def source(module: str) -> Path:
    """Where the dotted ``module`` of this project lives (without ``.py``)."""
    for package, folder in PACKAGE_DIRS.items():
        if module == package or module.startswith(package + "."):
            return REPO.joinpath(folder, *module.split(".")[package.count(".") + 1 :])
    return REPO.joinpath(*module.split("."))

#: What each layer may import (besides itself).
ALLOWED = {
    "vocabulary": set(),
    "progress": set(),
    "tables": set(),  # hanna_stats/tables.py: the tables people read (reports, command line)
    "study": {"vocabulary"},
    "store": {"vocabulary", "progress", "study"},
    "kernels": {"vocabulary", "progress"},
    "analyses": {"vocabulary", "progress", "study", "kernels"},
    "reports": {"vocabulary", "progress", "tables", "study", "kernels", "analyses"},
    "scoring": {"vocabulary", "progress", "study", "store", "kernels"},
    "cli": {
        "vocabulary",
        "progress",
        "tables",
        "study",
        "store",
        "kernels",
        "analyses",
        "reports",
        "scoring",
    },
    "package": {"vocabulary", "study", "store"},  # hanna_stats/__init__.py, __main__.py
}


def layer(module: str) -> str | None:
    """The layer of a dotted module name of this project (None for any other module)."""
    parts = module.split(".")
    if parts[0] != "hanna_stats":
        return None
    if len(parts) == 1:
        return "package"
    if parts[1] == "__main__":  # python -m hanna_stats: runs the command line
        return "cli"
    return parts[1].removesuffix(".py")


def modules() -> list[tuple[str, Path]]:
    found = []
    tops = {"hanna_stats": "hanna_stats", **PACKAGE_DIRS}
    for package, folder in tops.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            found.append((".".join([package, *parts]), path))
    return found


def imports(name: str, path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, imported module, imported names) of every import in the file, relative ones
    resolved against the module's package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            for alias in node.names:  # `from hanna_stats import analyses`: a submodule
                if base == "hanna_stats" and is_module(f"{base}.{alias.name}"):
                    out.append((node.lineno, f"{base}.{alias.name}", []))
                else:
                    out.append((node.lineno, base, [alias.name]))
    return out


CASES = modules()


@pytest.mark.parametrize(("name", "path"), CASES, ids=[name for name, _ in CASES])
def test_no_import_reaches_up_or_into_private_modules(name, path):
    own = layer(name)
    problems = []
    for line, module, _ in imports(name, path):
        target = layer(module)
        if target is None or target == own:
            continue
        where = f"{path.relative_to(REPO)}:{line}"
        if target not in ALLOWED[own]:
            problems.append(f"{where}: the {own} layer imports {module} ({target} layer)")
        private = [p for p in module.split(".")[1:] if p.startswith("_")]
        if private:
            problems.append(f"{where}: imports private {', '.join(private)} of {module}")
    assert not problems, "\n".join(problems)


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_module(module: str) -> bool:
    path = source(module)
    return path.is_dir() or path.with_suffix(".py").is_file()


@pytest.mark.parametrize(("name", "path"), CASES, ids=[name for name, _ in CASES])
def test_no_private_name_crosses_a_module(name, path):
    """Neither ``from m import _x`` nor ``m._x`` of another module ``m`` of this project."""
    problems = [
        f"{path.relative_to(REPO)}:{line}: imports private {n} of {module}"
        for line, module, names in imports(name, path)
        if layer(module) is not None and module != name
        for n in names
        if private(n)
    ]
    bound = {}  # local name -> the project module it is bound to
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if layer(alias.name) is not None:
                    head = alias.asname or alias.name.partition(".")[0]
                    bound[head] = alias.name if alias.asname else head
    for _, module, names in imports(name, path):
        for n in names:
            if layer(module) is not None and is_module(f"{module}.{n}"):
                bound[n] = f"{module}.{n}"
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and private(node.attr)):
            continue
        chain, value = [], node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in bound:
            module = ".".join([bound[value.id], *reversed(chain)])
            if is_module(module) and module != name:
                where = f"{path.relative_to(REPO)}:{node.lineno}"
                problems.append(f"{where}: uses private {node.attr} of {module}")
    assert not problems, "\n".join(problems)


def test_every_module_has_a_layer():
    assert all(layer(name) in ALLOWED for name, _ in CASES), [
        name for name, _ in CASES if layer(name) not in ALLOWED
    ]
