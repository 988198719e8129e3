"""Read the texts to score: a generic CSV/Parquet/JSONL file, or the HANNA story files as they are.

Three shapes are recognised by their columns:

- generic: ``input, system, prompt, reference, story`` and optionally ``item`` (default item
  name ``"<system>/<input>"``) and further references in columns ``reference_2``,
  ``reference_3``, ... (any number, in every format: CSV and Parquet columns, JSONL keys; an
  item's references are its non-empty values among ``reference, reference_2, ...`` in that
  order, so items may have different numbers of references; SummEval has 11 per summary;
  a column ``reference_0`` or ``reference_1`` is refused: the first reference is ``reference``);
- ``hanna_stories_annotations.csv`` (``Story ID, Prompt, Human, Story, Model``, one row per
  rating): one item per Story ID, named as :mod:`hanna_stats.store.hanna` names HANNA items
  (item = Story ID, input = Story ID mod the number of prompts, system = Model), so its scores
  land on the items of the HANNA metric files;
- ``hanna_llm_stories.csv`` (``Prompt, Human, Story, Model``): input = index of the prompt in
  order of first appearance (HANNA's prompt order), system = Model, item ``"<Model>/<input>"``.

Prompts are required; a missing reference is refused only when a reference-based metric is
asked for, several references only when that metric takes one (:func:`to_texts`; the store
keeps them all, table ``item_references``); an empty story is scored as an empty text (each metric's
docstring says what it gives).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
from hanna_stats.scoring.registry import Texts

from hanna_stats.store.source import Source, decode_text, read_source
from hanna_stats.store.texts import stored_texts

COLUMNS = ("item", "input", "system", "prompt", "reference", "story")
GENERIC = ("input", "system", "prompt", "reference", "story")
_ANNOTATIONS = ("Story ID", "Prompt", "Human", "Story", "Model")
_LLM_STORIES = ("Prompt", "Human", "Story", "Model")
_REFERENCES = ("references", "reference_columns", "row")
_MORE_REFERENCES = re.compile(r"reference_([2-9]|[1-9][0-9]+)")
_NUMBERED = re.compile(r"reference_[0-9]+")


@dataclass(frozen=True)
class ScoringInput:
    """Texts read from one file.

    Attributes
    ----------
    source : Source
        The file (name, bytes, SHA-256), for error messages and the store's provenance.
    frame : polars.DataFrame
        Columns :data:`COLUMNS` (strings; ``reference`` and ``story`` may be null),
        ``references`` (list of the item's non-empty reference texts, ``reference`` being the
        first of them), ``reference_columns`` (the column of each of them) and ``row``, the
        1-based data row where the item first appears.
    stored : bool
        True for texts read from a store (:func:`read_store_texts`): errors then name the item
        besides its row (its rank in the store's order), and ``prompt`` (the input's text) may be
        null, refused only by the metrics that read it.
    """

    source: Source
    frame: pl.DataFrame
    stored: bool = False


def _read_frame(source: Source) -> pl.DataFrame:
    suffix = source.path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            return pl.read_parquet(io.BytesIO(source.data))
        if suffix in (".jsonl", ".ndjson"):
            return pl.read_ndjson(io.StringIO(decode_text(source)))
        return pl.read_csv(io.StringIO(decode_text(source)), infer_schema=False)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise source.error(f"cannot read the file: {exc}") from None


def _text(source: Source, df: pl.DataFrame, column: str) -> pl.Expr:
    if column not in df.columns:
        raise source.error("missing column", column=column)
    if df.schema[column] not in (pl.String, pl.Null):
        raise source.error(f"expected text, got {df.schema[column]}", column=column)
    return pl.col(column).cast(pl.String)


def _with_references(df: pl.DataFrame, columns: dict[str, str]) -> pl.DataFrame:
    """Add ``references`` (the non-empty texts of the frame's columns ``columns``, in order)
    and ``reference_columns`` (the file's names of their columns: ``columns`` maps each frame
    column to it); ``reference`` becomes the first of them."""
    present = {c: pl.col(c).fill_null("") != "" for c in columns}
    texts = pl.concat_list([pl.when(present[c]).then(pl.col(c)) for c in columns])
    names = pl.concat_list([pl.when(present[c]).then(pl.lit(n)) for c, n in columns.items()])
    df = df.with_columns(
        texts.list.drop_nulls().alias("references"),
        names.list.drop_nulls().alias("reference_columns"),
    )
    return df.with_columns(pl.col("references").list.first().alias("reference"))


def _standard(source: Source, df: pl.DataFrame) -> pl.DataFrame:
    """Map the recognised shapes onto :data:`COLUMNS` plus ``references``,
    ``reference_columns`` and ``row``."""
    df = df.with_row_index("row", offset=1).with_columns(pl.col("row").cast(pl.Int64))
    cols = set(df.columns)
    if set(_ANNOTATIONS) <= cols:
        text = {c: _text(source, df, c) for c in _ANNOTATIONS}
        story_id = text["Story ID"].str.strip_chars()
        df = df.select(
            story_id.alias("item"),
            text["Model"].str.strip_chars().alias("system"),
            text["Prompt"].alias("prompt"),
            text["Human"].alias("reference"),
            text["Story"].alias("story"),
            "row",
        )
        bad = df.filter(~pl.col("item").str.contains(r"^\d+$").fill_null(False)).head(1)
        if bad.height:
            raise source.error(
                "expected a non-negative integer", row=bad["row"][0], column="Story ID"
            )
        df = df.unique("item", keep="first", maintain_order=True)
        n_prompts = df["prompt"].n_unique()
        df = df.with_columns(
            (pl.col("item").cast(pl.Int64) % n_prompts).cast(pl.String).alias("input")
        )
        return _with_references(df, {"reference": "Human"}).select(*COLUMNS, *_REFERENCES)
    if set(_LLM_STORIES) <= cols:
        text = {c: _text(source, df, c) for c in _LLM_STORIES}
        df = df.select(
            text["Model"].str.strip_chars().alias("system"),
            text["Prompt"].alias("prompt"),
            text["Human"].alias("reference"),
            text["Story"].alias("story"),
            "row",
        )
        order = df["prompt"].unique(maintain_order=True).drop_nulls()
        index = pl.DataFrame({"prompt": order, "input": [str(i) for i in range(order.len())]})
        df = df.join(index, on="prompt", how="left", maintain_order="left")
        df = df.with_columns(pl.concat_str("system", pl.lit("/"), "input").alias("item"))
        return _with_references(df, {"reference": "Human"}).select(*COLUMNS, *_REFERENCES)
    for c in sorted(cols):
        if _NUMBERED.fullmatch(c) and not _MORE_REFERENCES.fullmatch(c):
            raise source.error(
                "unexpected column: the first reference is 'reference', further ones "
                "'reference_2', 'reference_3', ...",
                column=c,
            )
    exprs = [_text(source, df, c).alias(c) for c in GENERIC]
    for key in ("input", "system"):
        exprs[GENERIC.index(key)] = exprs[GENERIC.index(key)].str.strip_chars()
    item = (
        _text(source, df, "item").str.strip_chars()
        if "item" in cols
        else pl.concat_str(pl.col("system").str.strip_chars(), pl.lit("/"), pl.col("input"))
    )
    more = sorted((int(m[1]), c) for c in cols if (m := _MORE_REFERENCES.fullmatch(c)))
    more_refs = [_text(source, df, c).alias(c) for _, c in more]
    df = df.select(item.alias("item"), *exprs, *more_refs, "row")
    references = {"reference": "reference"} | {c: c for _, c in more}
    return _with_references(df, references).select(*COLUMNS, *_REFERENCES)


def _first(df: pl.DataFrame, mask: pl.Expr) -> dict | None:
    hit = df.filter(mask).head(1)
    return hit.row(0, named=True) if hit.height else None


def read_texts(path: str | Path) -> ScoringInput:
    """Read and validate a file of texts to score.

    Parameters
    ----------
    path : str or Path
        CSV (UTF-8), Parquet or JSONL (``.jsonl``/``.ndjson``) in one of the module's shapes.

    Returns
    -------
    ScoringInput
        One row per item, in file order.

    Raises
    ------
    InputError
        Naming file, row and column: unreadable file, bytes that are not UTF-8, a missing
        column, an empty item, input, system or prompt, or two rows for the same item or the
        same (input, system) with different texts.
    DataNotFoundError
        If the file does not exist.
    """
    source = read_source(path)
    df = _standard(source, _read_frame(source))
    if df.height == 0:
        raise source.error("no rows to score")
    for column in ("item", "input", "system", "prompt"):
        missing = _first(df, pl.col(column).is_null() | (pl.col(column).str.strip_chars() == ""))
        if missing is not None:
            what = "a story without its prompt" if column == "prompt" else "empty value"
            raise source.error(what, row=missing["row"], column=column)
    for key, what in ((["item"], "item"), (["input", "system"], "(input, system)")):
        dup = _first(df, ~pl.struct(key).is_first_distinct())
        if dup is not None:
            first = _first(df, pl.all_horizontal(pl.col(c) == dup[c] for c in key))
            names = ", ".join(str(dup[c]) for c in key)
            raise source.error(
                f"duplicate {what}: {names} (also row {first['row']})", row=dup["row"]
            )
    return ScoringInput(source, df)


def read_store_texts(con: duckdb.DuckDBPyConnection, path: str | Path) -> ScoringInput:
    """The texts a store holds (:func:`hanna_stats.store.texts.stored_texts`): every item's
    output text, all its references (first one first) and its input's text as the prompt.
    Items whose output text the store does not know are left out (nothing to score).

    Raises
    ------
    InputError
        If the store holds no output text.
    """
    source, df = stored_texts(con, path)
    df = df.filter(pl.col("story").is_not_null())
    if df.height == 0:
        raise source.error("the store holds no output texts to score (items.text is empty)")
    return ScoringInput(source, df, stored=True)


def to_texts(
    data: ScoringInput,
    *,
    need_reference: bool,
    single_reference: str | None = None,
    need_prompt: bool = False,
) -> Texts:
    """The :class:`~hanna_stats.scoring.registry.Texts` of ``data``; a null story counts as empty
    text.

    Parameters
    ----------
    data : ScoringInput
        Texts read by :func:`read_texts`.
    need_reference : bool
        Refuse items without a reference.
    single_reference : str, optional
        The name of a scorer that takes one reference per item: refuse items with several.
    need_prompt : bool
        Refuse items without a prompt (only texts read from a store can lack one: an input
        whose text the store does not know); otherwise a null prompt counts as empty text.

    Raises
    ------
    InputError
        If ``need_reference`` and a row has no reference text, ``single_reference`` and a
        row has several (naming the row and the column of its second reference), or
        ``need_prompt`` and a row has no prompt.
    """
    df = data.frame
    count = pl.col("references").list.len()

    def where(hit: dict) -> dict:
        return {"row": hit["row"], "context": f"item={hit['item']}" if data.stored else None}

    if need_reference:
        missing = _first(df, count == 0)
        if missing is not None:
            raise data.source.error(
                "no reference text (needed by the reference-based metrics)",
                column="reference",
                **where(missing),
            )
    if need_prompt:
        missing = _first(df, pl.col("prompt").is_null())
        if missing is not None:
            raise data.source.error(
                "no source text (the input's text, needed by the reference-free metrics); "
                "ingest a file that gives it (SummEval: the paired file with `text`)",
                column="prompt",
                **where(missing),
            )
    if single_reference is not None:
        several = _first(df, count > 1)
        if several is not None:
            raise data.source.error(
                f"{len(several['references'])} references, but scorer {single_reference!r} "
                "takes one per item",
                column=several["reference_columns"][1],
                **where(several),
            )
    return Texts.of(
        df["prompt"].fill_null("").to_list(),
        [refs if len(refs) else [""] for refs in df["references"].to_list()],
        df["story"].fill_null("").to_list(),
    )
