"""Progress bars that show on a terminal and stay quiet when piped or under CI."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def progress_enabled() -> bool:
    """True when stderr is a terminal and no CI environment variable is set."""
    return sys.stderr.isatty() and not os.environ.get("CI")


def progress(iterable: Iterable[T], desc: str, total: int | None = None) -> Iterator[T]:
    """Wrap ``iterable`` in a tqdm bar on a terminal; a plain pass-through otherwise."""
    return iter(tqdm(iterable, desc=desc, total=total, disable=not progress_enabled(), leave=False))
