"""The paper's studies on the store, returning tidy polars DataFrames."""
