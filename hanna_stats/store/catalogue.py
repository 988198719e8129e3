"""The HANNA measure catalogue: what each column of the HANNA files means.

Column headers of ``hanna_metric_scores.csv`` and ``hanna_metric_scores_llm.csv``:

- ``Model``: the system (row); ``Human`` is the human-written reference story.
- The six human criteria (averages over 3 raters), Likert 1..5.
- 72 metrics named ``<name> <symbol>``: the symbol's first character is ``Ξ`` (reference-based)
  or ``¤`` (reference-free); the second ``§`` (string), ``ε`` (embedding) or ``Δ`` (model).
  The clean measure name is the header without the symbol.
- LLM file only: ``Human k XX`` (rating of judge slot k = 1..3 for criterion XX), ``Human Avg k XX``
  (leave-one-out means, derivable and not stored) and LLM judges ``<judge> <XX|AVG> <prompt>``,
  stored as measures named ``<judge> <Criterion> (prompt <prompt>)``, e.g.
  ``Beluga-13B Relevance (prompt 1)`` or ``ChatGPT Average (prompt 4)``.

A measure's ``position`` is its column index in the source file, 0 being the first column after
``Model``: human criteria 0..5, metrics 6..77, LLM judges from 114 on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CRITERIA: tuple[tuple[str, str], ...] = (
    ("Relevance", "RE"),
    ("Coherence", "CH"),
    ("Empathy", "EM"),
    ("Surprise", "SU"),
    ("Engagement", "EG"),
    ("Complexity", "CX"),
)
CRITERION_BY_ABBREVIATION = {abbr: name for name, abbr in CRITERIA}
LIKERT_MIN, LIKERT_MAX = 1.0, 5.0
HUMAN_SYSTEM = "Human"
MODEL_COLUMN = "Model"

# Measure kinds; the schema's CHECK constraint lists the same three.
HUMAN, METRIC, LLM_JUDGE = "human", "metric", "llm-judge"
# Scales a measure may declare (column measures.scale; NULL: none declared). Likert and integer
# scales take whole numbers at rater level (item-level values are means, checked on bounds only).
LIKERT, INTEGER, CONTINUOUS = "likert", "integer", "continuous"
SCALES = (LIKERT, INTEGER, CONTINUOUS)
# What an ingest does with a non-human value outside its measure's scale (human ratings: always
# 'error'): refuse the file, store NULL, clip to the bounds (rounded on whole-number scales), or
# keep it; every such value is counted in table scale_checks.
SCALE_POLICIES = ("error", "missing", "clip", "keep")
# HANNA's LLM file keeps its out-of-scale judge values: the TACL authors' correlations (their
# notebook's Kendall tables, reproduced by tests/analyses/test_judges_tacl.py) use the values as
# published.
JUDGE_SCALE_POLICY = "keep"

_REFERENCE = {"Ξ": True, "¤": False}
_FAMILY = {"§": "string", "ε": "embedding", "Δ": "model"}
_METRIC = re.compile(r"^(?P<name>.+) (?P<symbol>[Ξ¤][§εΔ])$")
_SLOT = re.compile(r"^Human (?P<slot>\d+) (?P<abbr>[A-Z]{2})$")
_LEAVE_ONE_OUT = re.compile(r"^Human Avg \d+ [A-Z]{2}$")
_JUDGE = re.compile(r"^(?P<judge>.+) (?P<abbr>[A-Z]{2}|AVG) (?P<variant>\d+)$")
JUDGE_AVERAGE = "Average"


def slot_rater(slot: int) -> str:
    """Rater name of judge slot ``slot`` (1-based): a position, not a worker identity."""
    return f"HANNA judge slot {slot}"


@dataclass(frozen=True)
class Column:
    """What a HANNA column holds.

    Attributes
    ----------
    role : str
        ``"criterion"``, ``"metric"``, ``"llm-judge"``, ``"slot"`` (judge-slot ratings) or
        ``"derived"`` (leave-one-out means, not stored).
    measure : dict or None
        Catalogue row (keys of the ``measures`` table) for stored measures; for ``"slot"``, the
        criterion rated.
    slot : int or None
        Judge slot (1-based) for ``"slot"`` columns.
    """

    role: str
    measure: dict | None = None
    slot: int | None = None


def _criterion_row(name: str, abbreviation: str, position: int, header: str) -> dict:
    return {
        "name": name,
        "kind": HUMAN,
        "family": None,
        "reference_based": None,
        "symbol": None,
        "abbreviation": abbreviation,
        "criterion": name,
        "variant": None,
        "judge": None,
        "scale": LIKERT,
        "scale_min": LIKERT_MIN,
        "scale_max": LIKERT_MAX,
        "position": position,
        "source_name": header,
    }


def classify(header: str, position: int) -> Column | None:
    """Classify one HANNA column header (other than ``Model``).

    Parameters
    ----------
    header : str
        Column header as in the file.
    position : int
        Column index in the file minus one (0 = first column after ``Model``).

    Returns
    -------
    Column or None
        None if the header is not a known HANNA column.
    """
    for name, abbr in CRITERIA:
        if header == name:
            return Column("criterion", _criterion_row(name, abbr, position, header))
    if _LEAVE_ONE_OUT.match(header):
        return Column("derived")
    if m := _SLOT.match(header):
        criterion = CRITERION_BY_ABBREVIATION.get(m["abbr"])
        if criterion is None or int(m["slot"]) < 1:
            return None
        row = _criterion_row(criterion, m["abbr"], position, header)
        return Column("slot", row, int(m["slot"]))
    if m := _METRIC.match(header):
        symbol = m["symbol"]
        row = {
            "name": m["name"],
            "kind": METRIC,
            "family": _FAMILY[symbol[1]],
            "reference_based": _REFERENCE[symbol[0]],
            "symbol": symbol,
            "abbreviation": None,
            "criterion": None,
            "variant": None,
            "judge": None,
            "scale": None,
            "scale_min": None,
            "scale_max": None,
            "position": position,
            "source_name": header,
        }
        return Column("metric", row)
    if m := _JUDGE.match(header):
        abbr = m["abbr"]
        criterion = JUDGE_AVERAGE if abbr == "AVG" else CRITERION_BY_ABBREVIATION.get(abbr)
        if criterion is None:
            return None
        row = {
            "name": f"{m['judge']} {criterion} (prompt {m['variant']})",
            "kind": LLM_JUDGE,
            "family": None,
            "reference_based": None,
            "symbol": None,
            "abbreviation": abbr,
            "criterion": criterion,
            "variant": m["variant"],
            "judge": m["judge"],
            # The judges answered on the 1..5 Likert scale; the published values are means of
            # three tries (continuous), in which an unparsable answer counted as -1, so some
            # leave the scale: the file's scale policy is 'keep' (see JUDGE_SCALE_POLICY).
            "scale": CONTINUOUS,
            "scale_min": LIKERT_MIN,
            "scale_max": LIKERT_MAX,
            "position": position,
            "source_name": header,
        }
        return Column("llm-judge", row)
    return None
