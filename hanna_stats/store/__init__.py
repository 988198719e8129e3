"""The score store: a DuckDB database of human ratings and metric scores, in long format.

Schema and views live in ``sql/``; :func:`open_store` loads them. Ingest functions validate a
whole file before writing it in one transaction; :func:`load_study` loads everything the
analyses need in one go (:class:`Study`), :func:`open_study` from a store file, a HANNA folder or
a tidy file; :func:`run_query` runs ad-hoc SQL; :func:`fetch_hanna` and
:func:`resolve_hanna_dir` find the HANNA data. :func:`read_user_study` reads the TACL user study
of LLM judges' explanations into a frame (not into the store).
"""

from hanna_stats.store.cube import Cube, build_hanna_store, check_hanna_dir, ingest_hanna_dir
from hanna_stats.store.db import has_ingests, open_store, run_query
from hanna_stats.store.errors import DataNotFoundError, InputError
from hanna_stats.store.fetch import fetch_hanna, resolve_hanna_dir
from hanna_stats.store.ingest import (
    ingest_hanna_annotations,
    ingest_hanna_llm,
    ingest_hanna_metric_scores,
    ingest_summeval,
    ingest_tidy,
    ingest_wmt,
)
from hanna_stats.store.study import AUTOMATIC_KINDS, Study, load_study, open_study
from hanna_stats.store.user_study import read_user_study

__all__ = [
    "AUTOMATIC_KINDS",
    "Cube",
    "DataNotFoundError",
    "InputError",
    "Study",
    "build_hanna_store",
    "check_hanna_dir",
    "fetch_hanna",
    "has_ingests",
    "ingest_hanna_annotations",
    "ingest_hanna_dir",
    "ingest_hanna_llm",
    "ingest_hanna_metric_scores",
    "ingest_summeval",
    "ingest_tidy",
    "ingest_wmt",
    "load_study",
    "open_store",
    "open_study",
    "read_user_study",
    "resolve_hanna_dir",
    "run_query",
]
