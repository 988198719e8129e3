"""Token helpers shared by the string metrics: integer ids and n-gram codes.

Every string metric compares token sequences. They are turned into integer ids once (one
vocabulary per call), so that the compiled loops and numpy set operations never touch Python
strings, and n-grams become single ``int64`` codes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise

import numpy as np


class Vocabulary:
    """A growing map from token strings to consecutive integer ids (0, 1, ...)."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def encode(self, tokens: Iterable[str]) -> np.ndarray:
        """Ids of ``tokens`` (new tokens get the next free ids), as an int64 array."""
        ids = self._ids
        return np.fromiter((ids.setdefault(t, len(ids)) for t in tokens), dtype=np.int64)

    def encode_all(self, texts: Sequence[Iterable[str]]) -> list[np.ndarray]:
        """:meth:`encode` for each token sequence."""
        return [self.encode(tokens) for tokens in texts]


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
    lengths = np.array([len(t) for t in texts], dtype=np.int64)
    flat = np.concatenate([*texts, np.empty(0, np.int64)]).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)])
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
