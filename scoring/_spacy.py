"""spaCy's blank English pipeline, built once for the scorers that split sentences or tokenise."""

from __future__ import annotations

from functools import cache


@cache
def blank_english():
    """``spacy.blank("en")`` with the rule-based ``sentencizer`` (offline, no model download).

    Its ``tokenizer`` is spaCy's rule-based English tokenizer; the ``sents`` of a text it
    processes end at ``.``, ``!`` or ``?`` (with any closing quotes or brackets that follow).
    spaCy is imported on the first call only.
    """
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp
