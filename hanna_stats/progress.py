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
    enabled = progress_enabled()
    return iter(
        tqdm(
            iterable,
            desc=desc,
            total=total,
            disable=not enabled,
            leave=False,
            **(_unsized_terminal() if enabled else {}),
        )
    )


def _unsized_terminal() -> dict[str, int]:
    """tqdm's ``ncols`` and ``nrows`` for a terminal that reports no size (a pseudo-terminal
    nobody sized, as ``script`` opens one without a terminal), where tqdm would print nothing;
    none for a sized terminal (tqdm follows its size)."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        return {}
    return {} if size.columns > 0 and size.lines > 0 else {"ncols": 80, "nrows": 24}
