"""hanna_stats: how well do automatic metrics agree with humans?

Layers: ``sql/`` (schema, views) -> :mod:`hanna_stats.store` (DuckDB I/O, the dataset formats
and their one ``ingest``, validation, loading a Study) -> :mod:`hanna_stats.kernels` (Numba
functions on arrays) -> :mod:`hanna_stats.analyses` (the paper's studies on a Study, as tidy
polars DataFrames) -> ``reports`` -> CLI (:mod:`hanna_stats.cli`). Beneath the analyses, without
DuckDB: :mod:`hanna_stats.study` (the in-memory :class:`~hanna_stats.study.Study` and
:class:`~hanna_stats.study.Cube`) and :mod:`hanna_stats.vocabulary` (every option's words).

In a notebook::

    from hanna_stats import open_study
    from hanna_stats.analyses import correlate
    study = open_study("hanna.duckdb")   # a store file, a HANNA folder or a tidy file
    correlate(study, level="system", method="kendall")
"""

__version__ = "0.1.0"
__all__ = ["open_study"]


def __getattr__(name: str):
    # Lazy: `python -m hanna_stats` imports this package first and should not pay for the store.
    if name == "open_study":
        from hanna_stats.store.load import open_study

        return open_study
    raise AttributeError(f"module 'hanna_stats' has no attribute {name!r}")
