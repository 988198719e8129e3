"""The score store: a DuckDB database of human ratings and metric scores, in long format.

Schema and views live in ``sql/``; :func:`open_store` loads them. Ingest functions validate a
whole file before writing it in one transaction; :func:`load_cube` hands dense arrays to the
analyses; :func:`fetch_hanna` and :func:`resolve_hanna_dir` find the HANNA data.
"""

from hanna_stats.store.cube import Cube, build_hanna_store, load_cube
from hanna_stats.store.db import open_store
from hanna_stats.store.errors import DataNotFoundError, InputError
from hanna_stats.store.fetch import fetch_hanna, resolve_hanna_dir
from hanna_stats.store.ingest import (
    ingest_hanna_annotations,
    ingest_hanna_llm,
    ingest_hanna_metric_scores,
    ingest_tidy,
)

__all__ = [
    "Cube",
    "DataNotFoundError",
    "InputError",
    "build_hanna_store",
    "fetch_hanna",
    "ingest_hanna_annotations",
    "ingest_hanna_llm",
    "ingest_hanna_metric_scores",
    "ingest_tidy",
    "load_cube",
    "open_store",
    "resolve_hanna_dir",
]
