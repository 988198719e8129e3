"""ROUGE-WE-3 (Ng and Abrecht, 2015): ROUGE-3 with soft n-gram matches through word embeddings.

Ng and Abrecht. "Better Summarization Evaluation with Word Embeddings for ROUGE." EMNLP 2015.
HANNA ran the ``rouge-we`` variant of SummEval (Fabbri et al., 2021, ``rouge_we_metric.py`` with
its defaults ``n_gram=3``, ``tokenize=True``, ``alpha=0.5``, which reuses the S3 code of Peyrard
et al., 2017). We follow that code's semantics, written anew:

* Tokens: the maximal runs of word characters (``\\w+``) of the text, lowercased, not stemmed.
* An n-gram's vector is the **sum** of its word vectors; the similarity of two n-grams is the
  cosine of their vectors, 1 for identical n-grams, 0 when either has a word without a vector
  (unless the two are identical). The paper composes n-grams differently (its Sec. 3); the
  code HANNA ran is the reference here. A consequence of the sum: an n-gram matches any
  permutation of itself.
* Soft overlap, greedily: each distinct candidate n-gram (in order of first occurrence, with
  count :math:`v`) takes the most similar reference n-gram still unmatched (first on ties); if
  the similarity is at least :data:`THRESHOLD` = 0.8 it matches :math:`\\min(v, u)` of that
  n-gram's remaining count :math:`u`, which is used up by as much.
* :math:`R = m / (|ref| - n + 1)`, :math:`P = m / (|cand| - n + 1)` with :math:`m` the matched
  count (0 when a text has fewer than :math:`n` tokens), and
  :math:`F = PR / ((1 - \\alpha) P + \\alpha R)` with :math:`\\alpha = 0.5`.

Word vectors: Levy and Goldberg's (2014) dependency-based embeddings ``deps.words`` (SummEval's
default, 300-d, text format), or any word2vec file, given as ``ScoringConfig.models["deps.words"]``
(``--model deps.words=PATH``). With orthogonal (one-hot) vectors only identical n-grams and their
permutations reach the threshold, so ROUGE-WE-3 is then the plain ROUGE-3 overlap of these tokens.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from hanna_stats.scoring.models._embed import unit
from hanna_stats.scoring.models._runtime import MissingCheckpointError
from hanna_stats.scoring.registry import ScoringConfig, Texts, as_reference_sets, register

EMBEDDINGS = "deps.words"
EMBEDDINGS_URL = "http://u.cs.biu.ac.il/~yogo/data/syntemb/deps.words.bz2"
N = 3
THRESHOLD = 0.8
ALPHA = 0.5
MEASURES = ("ROUGE-WE-3 Recall", "ROUGE-WE-3 Precision", "ROUGE-WE-3 F-Score")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class WordVectors:
    """Word vectors keyed by lowercased word.

    Attributes
    ----------
    index : dict of str to int
        Row of each word in ``vectors``.
    vectors : numpy.ndarray
        float64, shape ``(words, dim)``.
    """

    index: dict[str, int]
    vectors: np.ndarray


def _is_header(fields: list[str]) -> bool:
    """word2vec's first line ``"<words> <dim>"``."""
    return len(fields) == 2 and all(f.isdigit() for f in fields)


def _read_text(path: Path) -> tuple[list[str], list[np.ndarray]]:
    words, rows = [], []
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f):
            fields = line.rstrip().split(" ")
            if (number == 0 and _is_header(fields)) or len(fields) < 2:
                continue
            words.append(fields[0])
            rows.append(np.array(fields[1:], dtype=np.float64))
    return words, rows


def _read_binary(path: Path) -> tuple[list[str], list[np.ndarray]]:
    data = path.read_bytes()
    header_end = data.index(b"\n")
    count, dim = (int(x) for x in data[:header_end].split())
    words, rows, pos = [], [], header_end + 1
    for _ in range(count):
        space = data.index(b" ", pos)
        words.append(data[pos:space].decode("utf-8", errors="replace").strip())
        start = space + 1
        rows.append(np.frombuffer(data, dtype="<f4", count=dim, offset=start).astype(np.float64))
        pos = start + 4 * dim
    return words, rows


@cache
def load_word_vectors(path: str) -> WordVectors:
    """Word vectors from a word2vec file, loaded once per process.

    Parameters
    ----------
    path : str
        A text file (``word v1 v2 ...`` per line, optionally under a ``"<words> <dim>"`` header
        line, like ``deps.words``) or, when the name ends in ``.bin``, word2vec's binary format.
        Words are lowercased; a later line for the same lowercased word replaces an earlier one
        (as SummEval's loader does).

    Returns
    -------
    WordVectors

    Raises
    ------
    MissingCheckpointError
        When ``path`` is not a file; the message says where to get the default vectors and how to
        pass a path.
    ValueError
        When the rows do not all have the same dimension.
    """
    file = Path(path)
    if not file.is_file():
        raise MissingCheckpointError(
            f"word vectors {path!r} not found. ROUGE-WE-3 uses the dependency-based word "
            f"embeddings {EMBEDDINGS} of Levy and Goldberg (download {EMBEDDINGS_URL} and "
            f"decompress it) or any word2vec file (text, or binary named *.bin); pass its path "
            f"on the CLI as `--model {EMBEDDINGS}=PATH` (ScoringConfig.models)"
        )
    words, rows = (_read_binary if file.suffix == ".bin" else _read_text)(file)
    if len({len(r) for r in rows}) > 1:
        raise ValueError(f"word vectors {path!r}: rows have different dimensions")
    index = {w.lower(): i for i, w in enumerate(words)}
    return WordVectors(index, np.array(rows, dtype=np.float64).reshape(len(rows), -1))


def tokens(text: str) -> list[str]:
    """Lowercased runs of word characters (``\\w+``), SummEval's tokenization for ROUGE-WE."""
    return [t.lower() for t in _WORD.findall(text)]


def _ngrams(words: list[str], n: int) -> Counter[tuple[str, ...]]:
    """Counts of the contiguous n-grams, in order of first occurrence."""
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def _ngram_vectors(grams: Sequence[tuple[str, ...]], wv: WordVectors) -> tuple[np.ndarray, ...]:
    """Unit sum-of-word vectors of ``grams`` and a mask of those with every word in ``wv``."""
    known = np.array([all(w in wv.index for w in g) for g in grams], dtype=bool)
    sums = np.zeros((len(grams), wv.vectors.shape[1]))
    for i in np.flatnonzero(known):
        sums[i] = wv.vectors[[wv.index[w] for w in grams[i]]].sum(axis=0)
    return unit(sums), known


def soft_overlap(
    candidate: Counter[tuple[str, ...]], reference: Counter[tuple[str, ...]], wv: WordVectors
) -> int:
    """Matched n-gram count of the greedy soft overlap (see the module docstring).

    Parameters
    ----------
    candidate, reference : Counter
        n-gram counts in order of first occurrence.
    wv : WordVectors
        The word vectors.

    Returns
    -------
    int
        :math:`m`, at most ``min(sum(candidate.values()), sum(reference.values()))``.
    """
    if not candidate or not reference:
        return 0
    cand, ref = list(candidate), list(reference)
    cv, cknown = _ngram_vectors(cand, wv)
    rv, rknown = _ngram_vectors(ref, wv)
    sim = np.where(cknown[:, None] & rknown[None, :], cv @ rv.T, 0.0)
    position = {g: j for j, g in enumerate(ref)}
    for i, g in enumerate(cand):
        if g in position:
            sim[i, position[g]] = 1.0
    left = np.array([reference[g] for g in ref], dtype=np.int64)
    matched = 0
    for i, g in enumerate(cand):
        row = np.where(left > 0, sim[i], -np.inf)
        j = int(np.argmax(row))
        if row[j] >= THRESHOLD:
            take = min(candidate[g], int(left[j]))
            left[j] -= take
            matched += take
    return matched


def rouge_we(
    candidates: Sequence[str],
    references: Sequence[str | Sequence[str]],
    config: ScoringConfig,
    *,
    embeddings: str = EMBEDDINGS,
    n: int = N,
) -> dict[str, np.ndarray]:
    """ROUGE-WE-n recall, precision and F-score of each candidate against its reference.

    With several references per candidate, as SummEval's ``rouge_n_we`` (and ROUGE-1.5.5's
    ``-f A``): the matched counts and the reference n-gram counts are summed over the
    references, :math:`R = \\sum_j m_j / \\sum_j (|ref_j| - n + 1)` and
    :math:`P = \\sum_j m_j / (k (|cand| - n + 1))` for k references.

    Parameters
    ----------
    candidates : sequence of str
        The texts to score.
    references : sequence of str or of sequences of str
        Each candidate's reference, or its non-empty sequence of references.
    config : ScoringConfig
        ``config.models.get(embeddings, embeddings)`` is the word-vector file
        (:func:`load_word_vectors`).
    embeddings : str
        Name of the word vectors (default ``deps.words``).
    n : int
        n-gram length (3 for HANNA's ROUGE-WE-3).

    Returns
    -------
    dict
        ``{"ROUGE-WE-3 Recall", "ROUGE-WE-3 Precision", "ROUGE-WE-3 F-Score"}`` -> float64 arrays
        (the names say 3 whatever ``n`` is).
    """
    wv = load_word_vectors(config.models.get(embeddings, embeddings))
    rows = []
    for candidate, group in zip(candidates, as_reference_sets(references), strict=True):
        refs = [tokens(r) for r in group]
        c = tokens(candidate)
        m = sum(soft_overlap(_ngrams(c, n), _ngrams(r, n), wv) for r in refs)
        recall = m / max(sum(max(len(r) - n + 1, 0) for r in refs), 1)
        precision = m / max(len(refs) * (len(c) - n + 1), 1)
        denominator = (1 - ALPHA) * precision + ALPHA * recall
        rows.append((recall, precision, precision * recall / denominator if denominator else 0.0))
    return dict(zip(MEASURES, np.array(rows, dtype=np.float64).reshape(-1, 3).T, strict=True))


@register(
    "rouge-we",
    MEASURES,
    family="embedding",
    reference=True,
    multi_reference="SummEval's rouge_n_we: matches and counts summed over references",
)
def score_rouge_we(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """ROUGE-WE-3 of each candidate against the human reference story, or pooled over its
    references (see :func:`rouge_we`)."""
    return rouge_we(texts.candidates, texts.reference_sets, config)
