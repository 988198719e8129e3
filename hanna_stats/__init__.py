"""hanna_stats: how well do automatic metrics agree with humans?

Layers: ``sql/`` (schema, views) -> :mod:`hanna_stats.store` (DuckDB I/O, ingest, validation)
-> :mod:`hanna_stats.kernels` (Numba functions on arrays) -> :mod:`hanna_stats.analyses` (the
paper's studies as tidy polars DataFrames) -> CLI (:mod:`hanna_stats.cli`).
"""

__version__ = "0.1.0"
