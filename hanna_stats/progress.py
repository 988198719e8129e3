"""What a long computation tells the reader: progress bars and the first compile's notice,
which show on a terminal and stay quiet when piped or under CI, and the notes an analysis gives
about its result (:class:`StudyNote`)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
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


class StudyNote(UserWarning):
    """A note an analysis gives about its result (what it left out and why), as a warning:
    Python shows it once, the command line prints it as one ``note:`` line on stderr, the
    report shows it in the section whose analysis gave it."""


@contextlib.contextmanager
def study_notes() -> Iterator[list[str]]:
    """Collect the :class:`StudyNote` messages the block gives, in order, into the list it
    yields (filled when the block ends); other warnings go on as they are."""
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StudyNote)
        yield notes
    for note in caught:
        if issubclass(note.category, StudyNote):
            notes.append(str(note.message))
        else:
            warnings.warn_explicit(note.message, note.category, note.filename, note.lineno)


#: The package whose Numba kernels are compiled on first use.
KERNELS = "hanna_stats.kernels"


def kernels_cached() -> bool:
    """True when Numba's cache holds compiled kernels of :data:`KERNELS` (an index file,
    ``*.nbi``), where Numba would look for them: ``NUMBA_CACHE_DIR``, else ``__pycache__``
    beside the kernels when writable, else the user-wide cache; the same locators, in the same
    order, as Numba's."""
    from numba.core.caching import (
        InTreeCacheLocator,
        UserProvidedCacheLocator,
        UserWideCacheLocator,
    )

    spec = importlib.util.find_spec(KERNELS)
    source = str(Path(spec.origin))
    for locator in (UserProvidedCacheLocator, InTreeCacheLocator, UserWideCacheLocator):
        found = locator.from_function(kernels_cached, source)
        if found is not None:
            return any(Path(found.get_cache_path()).glob("*.nbi"))
    return False


def compile_notice() -> None:
    """On a terminal (:func:`progress_enabled`), one line on stderr when the kernels are not
    compiled yet (:func:`kernels_cached`), so that the first run's wait is explained."""
    if progress_enabled() and not kernels_cached():
        print(
            "note: compiling the statistics kernels once (about 20 s); later runs start at once",
            file=sys.stderr,
        )
