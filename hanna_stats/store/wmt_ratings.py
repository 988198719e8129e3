"""MQM ratings with error spans (MTME's ``human-scores/LP.NAME.seg.rating``) as MQM scores.

A rating file of an MTME test set (google-research/mt-metrics-eval, ``ratings.py``) has one line
per system and segment, the segments of a system in order: ``SYSTEM<TAB>RATING`` or
``SYSTEM<TAB>RATING<TAB>RATER``, ``RATING`` a JSON object ``{"errors": [...]}`` (MTME's
``ratings.Rating``; each error ``{"start": int, "end": int, "category": str or null,
"severity": str, ...}``, its ``ratings.Error``) or ``None`` (the segment was not rated); without
``RATER`` the rater is the rating set's name (MTME's ``ReadRatingFile``).

A rating's MQM score is what MTME's converter (``converters/score_mqm.py``) gives it with its
standard weights :data:`MQM_WEIGHTS`: each error weighs the weight of the most specific key
``severity/category/subcategory`` (lower-cased; the category split at ``/``) that has one, 0 if
none; the score is minus the sum of the weights (:func:`mqm_score`). A rating set has one rating
per segment, so the converter's mean over the raters of a segment is that one rating's score.

Stricter than MTME, which weighs an unknown severity 0 and stops on a severity ``null``: a
severity other than :data:`SEVERITIES` is refused, naming the file, the row and the error. An
error's own ``score`` (the rater's or model's) is not read: the standard weights decide.

References
----------
Freitag, M., Foster, G., Grangier, D., Ratnakar, V., Tan, Q. and Macherey, W. (2021).
Experts, errors, and context: a large-scale study of human evaluation for machine translation.
TACL 9, 1460-1474 (the weights).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from hanna_stats.store.source import Source, shorten

#: MTME's standard MQM weights (``score_mqm.py``'s default ``--weights``), by lower-cased
#: ``severity[/category[/subcategory]]``.
MQM_WEIGHTS = {
    "major": 5.0,
    "minor": 1.0,
    "neutral": 0.0,
    "major/non-translation!": 25.0,
    "minor/fluency/punctuation": 0.1,
}
#: The severities a rating may give (lower-cased): MQM's ``No-error`` weighs 0 as in MTME.
SEVERITIES = ("major", "minor", "neutral", "no-error")
#: The text of a line whose segment was not rated.
NOT_RATED = "None"


def mqm_weight(severity: str, category: str | None = None) -> float:
    """The standard MQM weight of an error (MTME's ``score_mqm.Score`` with its default weights).

    The weight of the most specific of ``severity/category/subcategory``, ``severity/category``
    and ``severity`` (lower-cased) in :data:`MQM_WEIGHTS`; 0 if none is there.

    Parameters
    ----------
    severity : str
        One of :data:`SEVERITIES`, in any case.
    category : str, optional
        The category, its levels joined by ``/`` (``Fluency/Punctuation``); None for none.

    Returns
    -------
    float
        The error's weight (a positive penalty; the score subtracts it).

    Raises
    ------
    ValueError
        If ``severity`` is not one of :data:`SEVERITIES`.

    Examples
    --------
    >>> mqm_weight("Major", "Accuracy/Mistranslation"), mqm_weight("major", "Non-translation!")
    (5.0, 25.0)
    >>> mqm_weight("minor", "fluency/punctuation"), mqm_weight("Neutral", "Style")
    (0.1, 0.0)
    """
    if not isinstance(severity, str) or severity.lower() not in SEVERITIES:
        raise ValueError(
            f"unknown severity {shorten(repr(severity))}: expected one of {', '.join(SEVERITIES)}"
        )
    keys = [severity.lower(), *([] if category is None else category.lower().split("/"))]
    while keys:
        weight = MQM_WEIGHTS.get("/".join(keys))
        if weight is not None:
            return weight
        keys.pop()
    return 0.0


def mqm_score(errors: Iterable[tuple[str, str | None]]) -> float:
    """The MQM score of a rating: minus the sum of its errors' :func:`mqm_weight`.

    .. math:: \\mathrm{MQM} = -\\sum_{e} w(\\mathrm{severity}_e, \\mathrm{category}_e)

    summed in the errors' order, as MTME's converter sums a segment's rows (``-0.0`` for none).

    Parameters
    ----------
    errors : iterable of (str, str or None)
        Each error's severity and category.

    Returns
    -------
    float
        The rating's MQM score (0 or negative).

    Examples
    --------
    >>> mqm_score([("major", "accuracy/mistranslation"), ("minor", "fluency/punctuation")])
    -5.1
    >>> mqm_score([])
    -0.0
    """
    return -sum((mqm_weight(s, c) for s, c in errors), 0.0)


def _errors(source: Source, record: object, row: int) -> list[tuple[str, str | None]]:
    """The (severity, category) of each error of a rating object, checked as MTME's
    ``Rating.FromDict`` reads it (``start`` and ``end`` integers, ``category`` a string or
    null), the severity one of :data:`SEVERITIES`."""
    errors = record.get("errors") if isinstance(record, dict) else None
    if not isinstance(errors, list):
        raise source.error('expected a rating {"errors": [...]} or None', row=row, column="rating")
    found = []
    for k, error in enumerate(errors):
        where = f"error {k + 1}"
        if not isinstance(error, dict):
            raise source.error(f"{where} is not a JSON object", row=row, column="rating")
        for key in ("start", "end"):
            value = error.get(key)
            if not isinstance(value, int) or isinstance(value, bool):
                raise source.error(
                    f"{where}: {key!r} must be an integer, got {shorten(repr(value))}",
                    row=row,
                    column="rating",
                )
        severity, category = error.get("severity"), error.get("category")
        if category is not None and not isinstance(category, str):
            raise source.error(
                f"{where}: 'category' must be a string or null, got {shorten(repr(category))}",
                row=row,
                column="rating",
            )
        try:
            mqm_weight(severity, category)
        except ValueError as e:
            raise source.error(f"{where}: {e}", row=row, column="rating") from None
        found.append((severity, category))
    return found


def rating_lines(
    source: Source, lines: Iterable[str]
) -> Iterator[tuple[int, str, float | None, str | None]]:
    """The lines of a rating file as ``(row, system, MQM score or None, rater or None)``.

    Parameters
    ----------
    source : Source
        The file (named in errors).
    lines : iterable of str
        Its lines, decoded.

    Yields
    ------
    tuple
        The 1-based row, the system, the rating's :func:`mqm_score` (None: ``None``, not rated)
        and the line's rater (None when the line has no third field).

    Raises
    ------
    InputError
        Naming the file and row: a line of other than 2 or 3 tab-separated fields, a rating
        that is neither ``None`` nor a JSON object ``{"errors": [...]}``, an error without
        integer ``start``/``end``, with a category neither string nor null or a severity not
        one of :data:`SEVERITIES`.
    """
    for row, line in enumerate(lines, start=1):
        fields = line.strip().split("\t")
        if len(fields) not in (2, 3):
            raise source.error(
                f"expected 'SYSTEM<TAB>RATING' or 'SYSTEM<TAB>RATING<TAB>RATER', got "
                f"{len(fields)} field(s)",
                row=row,
            )
        system, rating = fields[:2]
        rater = fields[2] if len(fields) == 3 else None
        if rating == NOT_RATED:
            yield row, system, None, rater
            continue
        try:
            record = json.loads(rating)
        except ValueError as e:
            raise source.error(f"the rating is not JSON ({e})", row=row, column="rating") from None
        yield row, system, mqm_score(_errors(source, record, row)), rater
