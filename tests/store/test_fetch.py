"""Finding and downloading the HANNA data: pinned checksums, offline behaviour, resolve order."""

from __future__ import annotations

import hashlib
import io
import time
import urllib.error

import pytest

from hanna_stats.store import DataNotFoundError, fetch_hanna, resolve_hanna_dir
from hanna_stats.store import fetch as fetch_module
from hanna_stats.store.errors import ChecksumError
from hanna_stats.store.fetch import PinnedFile, UnverifiedDataWarning

CONTENT = {"hanna_metric_scores.csv": b"Model,Relevance\n", "LICENSE": b"MIT\n"}
COMMIT = "0" * 40
REAL_MANIFEST = fetch_module.MANIFEST


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """A private cache, no HANNA_DATA, a two-file manifest, and no network at all."""
    monkeypatch.setenv("HANNA_STATS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HANNA_DATA", raising=False)
    manifest = tuple(
        PinnedFile(name, COMMIT, hashlib.sha256(data).hexdigest()) for name, data in CONTENT.items()
    )
    monkeypatch.setattr(fetch_module, "MANIFEST", manifest)

    def no_network(url, timeout):
        raise AssertionError(f"unexpected download of {url}")

    monkeypatch.setattr(fetch_module.urllib.request, "urlopen", no_network)


def serve(monkeypatch, files: dict[str, bytes]) -> list[str]:
    """Answer downloads from ``files`` (by file name); returns the list of URLs asked for."""
    asked = []

    def urlopen(url, timeout):
        asked.append(url)
        return io.BytesIO(files[url.rsplit("/", 1)[1]])

    monkeypatch.setattr(fetch_module.urllib.request, "urlopen", urlopen)
    return asked


def cache():
    return fetch_module.cache_dir()


def local_copy(tmp_path, files=CONTENT):
    folder = tmp_path / "local"
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def test_download_verifies_and_caches(monkeypatch):
    asked = serve(monkeypatch, CONTENT)
    dest = fetch_hanna()
    assert dest == cache() and dest.parent.name == "cache"
    assert {p.name for p in dest.iterdir()} == set(CONTENT)
    assert asked[0] == (
        f"https://raw.githubusercontent.com/dig-team/hanna-benchmark-asg/{COMMIT}/"
        "hanna_metric_scores.csv"
    )
    fetch_hanna()  # verified files are not downloaded again
    assert len(asked) == 2


def test_download_checksum_mismatch_leaves_nothing(monkeypatch):
    serve(monkeypatch, {**CONTENT, "LICENSE": b"tampered\n"})
    with pytest.raises(ChecksumError, match=r"LICENSE .* has SHA-256"):
        fetch_hanna()
    assert sorted(p.name for p in cache().iterdir()) == ["hanna_metric_scores.csv"]


def test_offline_fails_fast_with_instructions(monkeypatch):
    def offline(url, timeout):
        assert timeout == 10
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(fetch_module.urllib.request, "urlopen", offline)
    start = time.perf_counter()
    with pytest.raises(DataNotFoundError) as err:
        fetch_hanna()
    assert time.perf_counter() - start < 1
    message = str(err.value)
    for hint in ("--data DIR", "HANNA_DATA=DIR", "python -m hanna_stats fetch-data --local DIR"):
        assert hint in message
    assert "name resolution" in message
    assert list(cache().iterdir()) == []  # no partial file


def test_local_copy_is_verified_and_copied(tmp_path):
    folder = local_copy(tmp_path)
    dest = fetch_hanna(tmp_path / "dest", local=folder)
    assert (dest / "LICENSE").read_bytes() == CONTENT["LICENSE"]
    bad = local_copy(tmp_path / "bad", {**CONTENT, "LICENSE": b"other\n"})
    with pytest.raises(ChecksumError):
        fetch_hanna(tmp_path / "dest2", local=bad)
    assert not (tmp_path / "dest2" / "LICENSE").exists()
    assert not any(p.name.endswith(".part") for p in (tmp_path / "dest2").iterdir())
    missing = local_copy(tmp_path / "missing", {"LICENSE": CONTENT["LICENSE"]})
    with pytest.raises(DataNotFoundError, match=r"hanna_metric_scores\.csv not found"):
        fetch_hanna(tmp_path / "dest3", local=missing)


def test_annotations_are_optional_and_unverified(tmp_path, monkeypatch):
    data = b"Story ID,Prompt\n"
    asked = serve(monkeypatch, {**CONTENT, "hanna_stories_annotations.csv": data})
    fetch_hanna()
    assert not (cache() / "hanna_stories_annotations.csv").exists()
    digest = hashlib.sha256(data).hexdigest()
    with pytest.warns(UnverifiedDataWarning, match=f"UNVERIFIED.*{digest}"):
        fetch_hanna(include_annotations=True)
    assert asked[-1].endswith(
        "/282f27536a5d05ad4ce14298abcd70c45668fed2/hanna_stories_annotations.csv"
    )
    assert (cache() / "hanna_stories_annotations.csv.sha256").read_text().startswith(digest)


def test_real_local_copy(hanna_dir, tmp_path, monkeypatch):
    """The pinned checksums match the shared copy of the data."""
    monkeypatch.setattr(fetch_module, "MANIFEST", REAL_MANIFEST)
    dest = fetch_hanna(local=hanna_dir)
    assert dest == cache()
    assert resolve_hanna_dir() == cache()


def test_resolve_order(tmp_path, monkeypatch):
    with pytest.raises(DataNotFoundError) as err:
        resolve_hanna_dir()
    assert "--data DIR" in str(err.value) and "HANNA_DATA=DIR" in str(err.value)
    fetch_hanna(local=local_copy(tmp_path))
    assert resolve_hanna_dir() == cache()
    env = local_copy(tmp_path / "env")
    monkeypatch.setenv("HANNA_DATA", str(env))
    assert resolve_hanna_dir() == env
    explicit = local_copy(tmp_path / "explicit")
    assert resolve_hanna_dir(explicit) == explicit
    with pytest.raises(DataNotFoundError, match="from --data"):
        resolve_hanna_dir(tmp_path / "nowhere")
    (cache() / "LICENSE").write_bytes(b"changed\n")
    monkeypatch.delenv("HANNA_DATA")
    with pytest.raises(DataNotFoundError, match="no verified copy"):
        resolve_hanna_dir()
