"""The installed package: one top-level package, ``hanna_stats``, and no function over 150 lines.

The repository keeps its top-level folders (``reports/``, ``scoring/``, ``sql/``); pyproject's
package-dir maps them under ``hanna_stats`` (``hanna_stats.reports``, ``hanna_stats.scoring``,
``hanna_stats.sql``), and its package list names every package of the tree.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
#: The folder of each package of the wheel.
FOLDERS = {"hanna_stats": "hanna_stats", **SETUPTOOLS["package-dir"]}
#: Longest function allowed, in lines (decorators and docstring included).
LONGEST = 150


def tree_packages() -> set[str]:
    """Every package of the tree: each folder with an ``__init__.py`` under a mapped folder, and
    the data package ``hanna_stats.sql``."""
    found = {"hanna_stats.sql"}
    for package, folder in FOLDERS.items():
        for init in (REPO / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(REPO / folder).parts
            found.add(".".join([package, *parts]))
    return found


def test_the_package_list_names_every_package_of_the_tree():
    assert set(SETUPTOOLS["packages"]) == tree_packages()


def test_the_wheel_holds_one_top_level_package(tmp_path):
    """Built from a copy of the tree (setuptools writes build/ beside the sources)."""
    tree = tmp_path / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in FOLDERS.values():
        shutil.copytree(REPO / folder, tree / folder, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, tree / name)
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run([*pip, "-w", str(tmp_path), str(tree)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("hanna_stats-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"hanna_stats"}
    for expected in (
        "hanna_stats/reports/charts.py",
        "hanna_stats/scoring/registry.py",
        "hanna_stats/sql/schema.sql",
        "hanna_stats/sql/views.sql",
    ):
        assert expected in names


def functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            yield node.name, node.lineno, node.end_lineno - first + 1


SOURCES = sorted(p for folder in FOLDERS.values() for p in (REPO / folder).rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(REPO)) for p in SOURCES])
def test_no_function_over_150_lines(path):
    long = [
        f"{path.relative_to(REPO)}:{line}: {name} is {length} lines"
        for name, line, length in functions(path)
        if length > LONGEST
    ]
    assert not long, "\n".join(long)
