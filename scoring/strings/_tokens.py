"""Token helpers shared by the string metrics: distinct texts, integer ids, n-gram statistics.

Every string metric compares token sequences. Each distinct text is tokenised once (prompts and
references repeat across the systems of a study), tokens are turned into integer ids once (one
vocabulary per call), so that the compiled loops never touch Python strings, and n-grams become
single ``int64`` codes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import pairwise

import numpy as np
from numba import njit

#: Columns of :func:`ngram_stats`.
MATCHES, DISTINCT, NOVEL, REPEATED = range(4)
_FIBONACCI = np.int64(0x9E3779B97F4A7C15 - (1 << 64))  # 2^64 / golden ratio, as a signed int


def distinct(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The distinct texts in order of first occurrence, and the position of each text in them.

    ``unique[index[i]] == texts[i]`` for every i.
    """
    positions: dict[str, int] = {}
    index = [positions.setdefault(t, len(positions)) for t in texts]
    return list(positions), np.array(index, dtype=np.int64)


class Vocabulary:
    """A growing map from token strings to consecutive integer ids (0, 1, ...)."""

    def __init__(self) -> None:
        self._ids: defaultdict[str, int] = defaultdict()
        self._ids.default_factory = self._ids.__len__  # a new token gets the next free id

    def __len__(self) -> int:
        return len(self._ids)

    def encode(self, tokens: Iterable[str]) -> np.ndarray:
        """Ids of ``tokens`` (new tokens get the next free ids), as an int64 array."""
        return np.array(list(map(self._ids.__getitem__, tokens)), dtype=np.int64)

    def encode_all(self, texts: Sequence[Iterable[str]]) -> list[np.ndarray]:
        """:meth:`encode` for each token sequence."""
        return [self.encode(tokens) for tokens in texts]


def pack(texts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """All token ids one text after the other, and the ``len(texts) + 1`` text offsets."""
    lengths = np.array([len(t) for t in texts], dtype=np.int64)
    flat = np.concatenate([*texts, np.empty(0, np.int64)]).astype(np.int64)
    return flat, np.concatenate([[0], np.cumsum(lengths)])


def ngram_codes(texts: Sequence[np.ndarray], n: int, vocab_size: int) -> list[list[np.ndarray]]:
    """Integer codes of the 1- to n-grams of every text, consistent across texts.

    The k-gram starting at position i is coded from the pair (code of the (k-1)-gram at i, id
    of token i + k - 1), then the codes of each order are renumbered to ``0 .. (distinct - 1)``
    over all texts together, so they stay small whatever the vocabulary and order.

    Parameters
    ----------
    texts : sequence of ndarray of int64
        Token ids of each text, each in ``[0, vocab_size)``.
    n : int
        Highest order.
    vocab_size : int
        Number of distinct ids (e.g. ``len(vocabulary)``).

    Returns
    -------
    list of list of ndarray
        ``codes[k - 1][t]``: the ``len(texts[t]) - k + 1`` k-gram codes of text t (empty when it is
        shorter than k). Two k-grams have the same code exactly when they have the same tokens.
    """
    flat, starts = pack(texts)
    lengths = np.diff(starts)
    out = [[flat[a:b] for a, b in pairwise(starts.tolist())]]
    previous = flat  # code of the (k-1)-gram starting at each position (-1: none)
    for k in range(2, n + 1):
        # position j starts a k-gram when j + k - 1 lies in the same text
        offset = np.arange(flat.size) - np.repeat(starts[:-1], lengths)
        valid = offset + k - 1 < np.repeat(lengths, lengths)
        current = np.full(flat.size, -1, dtype=np.int64)
        positions = np.flatnonzero(valid)
        pair = previous[positions] * vocab_size + flat[positions + k - 1]
        _, current[positions] = np.unique(pair, return_inverse=True)
        out.append([current[a : max(a, b - k + 1)] for a, b in pairwise(starts.tolist())])
        previous = current
    return out


@njit(cache=True)
def _renumber(keys: np.ndarray, table: np.ndarray, codes: np.ndarray, out: np.ndarray) -> int:
    """Dense codes ``0 .. d-1`` of non-negative ``keys`` (equal keys, equal codes); returns d.

    Open addressing with linear probing in ``table`` (size a power of two, at least twice
    ``keys.size``; ``codes`` the same size), slots from multiplicative hashing (the high bits of
    ``key * 0x9E3779B97F4A7C15`` modulo 2^64): exact, since the keys themselves are compared.
    ``out`` may be ``keys``.
    """
    table[:] = -1
    mask = table.size - 1
    shift = 64
    while (1 << (64 - shift)) < table.size:
        shift -= 1
    d = 0
    for i in range(keys.size):
        key = keys[i]
        slot = ((key * _FIBONACCI) >> shift) & mask  # int64 products wrap around
        while table[slot] != -1 and table[slot] != key:
            slot = (slot + 1) & mask
        if table[slot] == -1:
            table[slot] = key
            codes[slot] = d
            d += 1
        out[i] = codes[slot]
    return d


@njit(cache=True)
def ngram_stats(a: np.ndarray, b: np.ndarray, max_n: int) -> np.ndarray:
    """Statistics of the 1- to ``max_n``-grams of token sequence ``a`` against ``b``.

    With ``c_a(g)``, ``c_b(g)`` the number of occurrences of the k-gram g in each sequence,
    row ``k - 1`` holds

    - ``MATCHES``: the clipped matches ``sum_g min(c_a(g), c_b(g))``;
    - ``DISTINCT``: the number of distinct k-grams of a, ``|{g : c_a(g) > 0}|``;
    - ``NOVEL``: those absent from b, ``|{g : c_a(g) > 0, c_b(g) = 0}|``;
    - ``REPEATED``: those occurring more than once in a, ``|{g : c_a(g) > 1}|``.

    Parameters
    ----------
    a, b : ndarray of int64
        Non-negative token ids (any range: word ids, Unicode code points).
    max_n : int
        Highest order.

    Returns
    -------
    ndarray of int64, shape (max_n, 4)
    """
    bounds = np.array([0, a.size, a.size + b.size], dtype=np.int64)
    return _segment_stats(np.concatenate((a, b)), bounds, max_n)


@njit(cache=True)
def _segment_stats(seq: np.ndarray, bounds: np.ndarray, max_n: int) -> np.ndarray:
    """:func:`ngram_stats` of segment ``a = seq[bounds[0]:bounds[1]]`` against the segments
    ``b_s = seq[bounds[s]:bounds[s + 1]]``, s >= 1, with ``c_b(g) = max_s c_{b_s}(g)`` (the
    most occurrences in one of them: clipping against several references, as BLEU's)."""
    total = seq.size
    na = bounds[1]
    out = np.zeros((max_n, 4), dtype=np.int64)
    if total == 0:
        return out
    size = 2
    while size < 2 * total:
        size *= 2
    table = np.empty(size, dtype=np.int64)
    slot_codes = np.empty(size, dtype=np.int64)
    unigram = np.empty(total, dtype=np.int64)  # code of the token at each position
    _renumber(seq, table, slot_codes, unigram)
    code = unigram.copy()  # code of the k-gram starting at each position
    keys = np.empty(total, dtype=np.int64)
    where = np.empty(total, dtype=np.int64)  # the start position of each key
    count_a = np.zeros(total, dtype=np.int64)
    count_b = np.zeros(total, dtype=np.int64)  # max over the b segments
    count_s = np.zeros(total, dtype=np.int64)  # in the current b segment
    for k in range(1, max_n + 1):
        la = max(na - k + 1, 0)
        if la == 0:
            break
        m = 0  # the k-grams of every segment, segment after segment
        for s in range(bounds.size - 1):
            for p in range(bounds[s], bounds[s + 1] - k + 1):
                where[m] = p
                keys[m] = code[p] if k == 1 else code[p] * total + unigram[p + k - 1]
                m += 1
        d = _renumber(keys[:m], table, slot_codes, keys[:m])
        for i in range(m):
            code[where[i]] = keys[i]
        for i in range(la):
            count_a[keys[i]] += 1
        i = la
        for s in range(1, bounds.size - 1):
            first = i
            for _ in range(max(bounds[s + 1] - bounds[s] - k + 1, 0)):
                count_s[keys[i]] += 1
                i += 1
            for j in range(first, i):
                g = keys[j]
                count_b[g] = max(count_b[g], count_s[g])
            for j in range(first, i):
                count_s[keys[j]] = 0
        for g in range(d):
            ca, cb = count_a[g], count_b[g]
            out[k - 1, MATCHES] += min(ca, cb)
            if ca > 0:
                out[k - 1, DISTINCT] += 1
                if cb == 0:
                    out[k - 1, NOVEL] += 1
                if ca > 1:
                    out[k - 1, REPEATED] += 1
            count_a[g] = 0
            count_b[g] = 0
    return out


@njit(cache=True)
def group_ngram_stats(
    flat: np.ndarray,
    starts: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    groups: np.ndarray,
    max_n: int,
) -> np.ndarray:
    """:func:`ngram_stats` of text ``left[i]`` against the group of texts
    ``right[groups[i]:groups[i + 1]]`` (an item's references) for every i, counting each n-gram
    of the group by its most occurrences in one of its texts (``c_b(g) = max_s c_s(g)``).

    Texts are given packed (:func:`pack`): text t is ``flat[starts[t]:starts[t + 1]]``.
    Returns an int64 array of shape ``(len(left), max_n, 4)``.
    """
    out = np.zeros((left.size, max_n, 4), dtype=np.int64)
    for i in range(left.size):
        texts = np.concatenate((left[i : i + 1], right[groups[i] : groups[i + 1]]))
        lengths = starts[texts + 1] - starts[texts]
        bounds = np.zeros(texts.size + 1, dtype=np.int64)
        bounds[1:] = np.cumsum(lengths)
        seq = np.empty(bounds[-1], dtype=np.int64)
        for t in range(texts.size):
            seq[bounds[t] : bounds[t + 1]] = flat[starts[texts[t]] : starts[texts[t] + 1]]
        out[i] = _segment_stats(seq, bounds, max_n)
    return out


def pair_ngram_stats(
    flat: np.ndarray, starts: np.ndarray, left: np.ndarray, right: np.ndarray, max_n: int
) -> np.ndarray:
    """:func:`group_ngram_stats` of text ``left[i]`` against the single text ``right[i]``."""
    return group_ngram_stats(flat, starts, left, right, np.arange(right.size + 1), max_n)
