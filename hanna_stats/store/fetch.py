"""Find or download the HANNA data, pinned to commits and SHA-256 checksums.

The files come from the public repository dig-team/hanna-benchmark-asg (MIT licence). They are
never part of this project: users point at a local copy or download them into a cache
(``$HANNA_STATS_CACHE``, default ``~/.cache/hanna_stats``, sub-folder ``hanna``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path

from hanna_stats.store.errors import ChecksumError, DataNotFoundError

REPOSITORY = "dig-team/hanna-benchmark-asg"
COLING_COMMIT = "bf4a171e01224390d0fecf96b829fd1baa5da1f4"  # branch coling (COLING 2022)
MAIN_COMMIT = "282f27536a5d05ad4ce14298abcd70c45668fed2"  # branch main (TACL 2024 follow-up)
METRIC_SCORES_FILE = "hanna_metric_scores.csv"
LLM_FILE = "hanna_metric_scores_llm.csv"
ANNOTATIONS_FILE = "hanna_stories_annotations.csv"
CACHE_ENV, DATA_ENV = "HANNA_STATS_CACHE", "HANNA_DATA"
_CHUNK = 1 << 20

HOW_TO_PROVIDE = (
    "Provide a local copy of the HANNA files (from "
    f"https://github.com/{REPOSITORY}): pass --data DIR, set {DATA_ENV}=DIR, or copy it into "
    "the cache with `python -m hanna_stats fetch-data --local DIR`."
)


@dataclass(frozen=True)
class PinnedFile:
    """A file of the HANNA repository at a fixed commit, with its SHA-256."""

    name: str
    commit: str
    sha256: str | None  # None: no checksum is pinned (the download is unverified)

    @property
    def url(self) -> str:
        """Raw download address."""
        return f"https://raw.githubusercontent.com/{REPOSITORY}/{self.commit}/{self.name}"


MANIFEST: tuple[PinnedFile, ...] = (
    PinnedFile(
        METRIC_SCORES_FILE,
        COLING_COMMIT,
        "c099556b4fe7387f176c24c182484dd2f5d21677d89291d35a08b8c865c0f950",
    ),
    PinnedFile(
        LLM_FILE,
        MAIN_COMMIT,
        "d0ce43f9b5cc12894f8b7bf3f7b4da06d19cdbea2c989dd3f173f2240dfee26d",
    ),
    PinnedFile(
        "hanna_llm_stories.csv",
        MAIN_COMMIT,
        "91f46039ed696be653374eccb38141ac6b8d8b5c675bf48a5032bc9317b50753",
    ),
    PinnedFile(
        "user_study.csv",
        MAIN_COMMIT,
        "9736893a6baf9eba4514ac9b281703b094ccbb1f5c376177433dcfd89b30d96a",
    ),
    PinnedFile(
        "LICENSE",
        MAIN_COMMIT,
        "bc03dc792290fc9ec16bd6772b1e5e88038541f323c63762c988cec07a017146",
    ),
)
ANNOTATIONS = PinnedFile(ANNOTATIONS_FILE, MAIN_COMMIT, None)


class UnverifiedDataWarning(UserWarning):
    """A file was fetched that has no pinned checksum; the warning gives its SHA-256."""


def cache_root() -> Path:
    """The package's cache folder: ``$HANNA_STATS_CACHE``, default ``~/.cache/hanna_stats``."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "hanna_stats")


def cache_dir() -> Path:
    """Folder of the downloaded HANNA files: ``$HANNA_STATS_CACHE/hanna``.

    ``HANNA_STATS_CACHE`` defaults to ``~/.cache/hanna_stats``.
    """
    return cache_root() / "hanna"


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _is_verified(path: Path, pinned: PinnedFile) -> bool:
    return path.is_file() and sha256_file(path) == pinned.sha256


def _install(pinned: PinnedFile, dest: Path, fill, what: str) -> str:
    """Write a file via ``fill(binary_file)`` into a temporary file, check it, rename it.

    Returns its SHA-256. On any error the temporary file is removed and nothing is left.
    """
    fd, tmp = tempfile.mkstemp(dir=dest, prefix=f".{pinned.name}.", suffix=".part")
    tmp_path = Path(tmp)
    try:
        with os.fdopen(fd, "wb") as out:
            fill(out)
        digest = sha256_file(tmp_path)
        if pinned.sha256 is not None and digest != pinned.sha256:
            raise ChecksumError(
                f"{pinned.name} from {what} has SHA-256 {digest}, expected {pinned.sha256} "
                f"(commit {pinned.commit}); the file was not kept."
            )
        tmp_path.replace(dest / pinned.name)
        return digest
    finally:
        tmp_path.unlink(missing_ok=True)


def _download(pinned: PinnedFile, dest: Path, timeout: float) -> str:
    def fill(out) -> None:
        try:
            with urllib.request.urlopen(pinned.url, timeout=timeout) as response:
                shutil.copyfileobj(response, out, _CHUNK)
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise DataNotFoundError(
                f"Could not download {pinned.name} from {pinned.url} ({reason}). " + HOW_TO_PROVIDE
            ) from exc

    return _install(pinned, dest, fill, pinned.url)


def _copy(pinned: PinnedFile, source: Path, dest: Path) -> str:
    def fill(out) -> None:
        with source.open("rb") as f:
            shutil.copyfileobj(f, out, _CHUNK)

    return _install(pinned, dest, fill, str(source))


def fetch_hanna(
    dest: str | Path | None = None,
    *,
    local: str | Path | None = None,
    include_annotations: bool = False,
    timeout: float = 10,
) -> Path:
    """Download (or copy) the pinned HANNA files and verify their checksums.

    Files already in ``dest`` with the right checksum are kept as they are. Each file is
    written to a temporary file, checked, then renamed, so a failed or corrupted transfer
    leaves nothing behind.

    Parameters
    ----------
    dest : str or Path, optional
        Target folder; default :func:`cache_dir`.
    local : str or Path, optional
        Folder holding a copy of the files (e.g. an offline copy): verify and copy
        them instead of downloading; nothing is fetched from the network.
    include_annotations : bool
        Also fetch ``hanna_stories_annotations.csv`` (raw rater-level annotations, commit
        ``282f2753``). No checksum is pinned for it: it is NOT verified, and an
        :class:`UnverifiedDataWarning` gives its SHA-256 (also written to
        ``hanna_stories_annotations.csv.sha256`` next to it).
    timeout : float
        Seconds before a stalled connection fails (keep it short so that an offline machine
        fails fast).

    Returns
    -------
    Path
        The folder holding the files.

    Raises
    ------
    DataNotFoundError
        If a file cannot be downloaded (offline, ...) or is missing from ``local``; the message
        says how to provide a local copy.
    ChecksumError
        If a file does not match its pinned SHA-256.
    """
    dest = Path(dest) if dest is not None else cache_dir()
    dest.mkdir(parents=True, exist_ok=True)
    wanted = MANIFEST + ((ANNOTATIONS,) if include_annotations else ())
    for pinned in wanted:
        target = dest / pinned.name
        if pinned.sha256 is None and target.is_file():
            digest = sha256_file(target)  # kept as it is: nothing to verify it against
        elif _is_verified(target, pinned):
            continue
        elif local is not None:
            source = Path(local) / pinned.name
            if not source.is_file():
                raise DataNotFoundError(f"{pinned.name} not found in {local}. " + HOW_TO_PROVIDE)
            digest = _copy(pinned, source, dest)
        else:
            digest = _download(pinned, dest, timeout)
        if pinned.sha256 is None:
            (dest / f"{pinned.name}.sha256").write_text(f"{digest}  {pinned.name}\n")
            warnings.warn(
                f"{pinned.name} is UNVERIFIED (no checksum is pinned for it): "
                f"SHA-256 {digest}, from {local or pinned.url}",
                UnverifiedDataWarning,
                stacklevel=2,
            )
    return dest


def resolve_hanna_dir(data: str | Path | None = None) -> Path:
    """Find the folder with the HANNA files.

    Order: ``data`` if given, else ``$HANNA_DATA``, else the cache (:func:`cache_dir`) if its
    pinned files are present and verified.

    Parameters
    ----------
    data : str or Path, optional
        Folder given by the user (e.g. ``--data DIR``).

    Returns
    -------
    Path
        A folder holding at least ``hanna_metric_scores.csv``.

    Raises
    ------
    DataNotFoundError
        If the chosen folder lacks ``hanna_metric_scores.csv`` or nothing is found; the message
        says how to provide the data.
    """
    for given, origin in ((data, "--data"), (os.environ.get(DATA_ENV), DATA_ENV)):
        if given:
            folder = Path(given)
            if not (folder / METRIC_SCORES_FILE).is_file():
                raise DataNotFoundError(
                    f"{METRIC_SCORES_FILE} not found in {folder} (from {origin}). " + HOW_TO_PROVIDE
                )
            return folder
    cache = cache_dir()
    if all(_is_verified(cache / p.name, p) for p in MANIFEST):
        return cache
    raise DataNotFoundError(
        f"HANNA data not found (no --data, no {DATA_ENV}, no verified copy in {cache}). "
        + HOW_TO_PROVIDE
    )
