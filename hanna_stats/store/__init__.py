"""The score store: a DuckDB database of human ratings and metric scores, in long format.

Its jobs, by module:

- the database and its writing: :mod:`~hanna_stats.store.db` (:func:`open_store`, schema and
  views from ``sql/``, :func:`run_query` for ad-hoc SQL), :mod:`~hanna_stats.store.batch` (one
  validated file written in one transaction), :mod:`~hanna_stats.store.catalogue`,
  :mod:`~hanna_stats.store.scales`, :mod:`~hanna_stats.store.scores`,
  :mod:`~hanna_stats.store.texts`;
- dataset formats: the one table :data:`~hanna_stats.store.formats.FORMATS` and the one
  :func:`ingest` (:mod:`~hanna_stats.store.formats`), over the parsers of each format
  (:mod:`~hanna_stats.store.hanna`, :mod:`~hanna_stats.store.annotations`,
  :mod:`~hanna_stats.store.tidy`, :mod:`~hanna_stats.store.summeval`,
  :mod:`~hanna_stats.store.wmt`) and the reading of files (:mod:`~hanna_stats.store.source`);
  :func:`fetch_hanna` and :func:`resolve_hanna_dir` find the HANNA data;
  :func:`read_user_study` reads the TACL user study of LLM judges' explanations into a frame
  (not into the store);
- loading a Study: :func:`load_study` loads everything the analyses need in one go,
  :func:`open_study` from a store file, a HANNA folder or a tidy file
  (:mod:`~hanna_stats.store.load`). The :class:`~hanna_stats.study.Study` and
  :class:`~hanna_stats.study.Cube` types live in :mod:`hanna_stats.study`, without DuckDB.

Names are imported on first use (module ``__getattr__``): ``import hanna_stats.store`` loads
neither DuckDB nor an ingester until one of them is asked for.
"""

from importlib import import_module

#: Public name -> the module that defines it.
_HOME = {
    "AUTOMATIC_KINDS": "hanna_stats.study",
    "Cube": "hanna_stats.study",
    "Study": "hanna_stats.study",
    "DataNotFoundError": "hanna_stats.store.errors",
    "InputError": "hanna_stats.store.errors",
    "has_ingests": "hanna_stats.store.db",
    "open_store": "hanna_stats.store.db",
    "run_query": "hanna_stats.store.db",
    "fetch_hanna": "hanna_stats.store.fetch",
    "resolve_hanna_dir": "hanna_stats.store.fetch",
    "FORMATS": "hanna_stats.store.formats",
    "IngestSummary": "hanna_stats.store.formats",
    "build_hanna_store": "hanna_stats.store.formats",
    "check_hanna_dir": "hanna_stats.store.formats",
    "detect_format": "hanna_stats.store.formats",
    "ingest": "hanna_stats.store.formats",
    "load_study": "hanna_stats.store.load",
    "open_study": "hanna_stats.store.load",
    "read_user_study": "hanna_stats.store.user_study",
}

__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module 'hanna_stats.store' has no attribute {name!r}")
    value = getattr(import_module(_HOME[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
