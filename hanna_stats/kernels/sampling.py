"""Item subsampling, uniform or stratified over contiguous blocks (WMT: documents), as
mt-metrics-eval's ``stats.Sample``."""

from __future__ import annotations

import numbers

import numpy as np

from ._options import check_seed


def _stratum_sizes(strata, size, rng):
    """Items per stratum: ``size`` split in proportion to the strata, floor of each share
    plus one for the strata with the largest remainders (largest remainder method); ties at
    the cut drawn at random from ``rng`` (only when there is one)."""
    ideal = (strata / strata.sum()) * size
    sizes = ideal.astype(np.int64)
    missing = size - int(sizes.sum())
    if missing:
        remainder = ideal - sizes
        order = np.argsort(-remainder, kind="stable")
        cut = remainder[order[missing - 1]]
        sure = remainder > cut
        tied = np.flatnonzero(remainder == cut)
        sizes[sure] += 1
        need = missing - int(sure.sum())
        if need < tied.size:
            tied = rng.permutation(tied)
        sizes[tied[:need]] += 1
    return sizes


def sample_items(n_items, size, *, strata=None, seed=0):
    """Indices of ``size`` of ``n_items`` items drawn without replacement: uniformly, or
    stratified over contiguous strata (e.g. the documents of a test set, in order).

    Uniform: ``numpy.random.default_rng(seed).choice(n_items, size, replace=False)``, the
    indices in the order drawn. Stratified: each stratum gets its share of ``size`` in
    proportion to its size (the largest remainder method: ``floor(share)``, plus one for the
    strata with the largest remainders), then its items are drawn uniformly without
    replacement, stratum after stratum from the same generator. ``size`` of 0 or above
    ``n_items`` keeps every item (in the order drawn). As mt-metrics-eval's ``stats.Sample``
    (``"uniform"``, ``"stratify"``): for the same seed (other than 0) the same indices; where
    several strata tie for the last extra items, mt-metrics-eval breaks the tie with numpy's
    global random state (so its sample is not determined by its seed) and this function with
    a permutation drawn from ``seed`` before the items.

    Parameters
    ----------
    n_items : int
    size : int
        Non-negative.
    strata : array_like of int, optional
        Sizes of the consecutive strata, summing to ``n_items``; None: uniform.
    seed : int, numpy.random.Generator or None

    Returns
    -------
    numpy.ndarray of int64, shape (min(size, n_items),) (``n_items`` when ``size`` is 0)

    References
    ----------
    google-research/mt-metrics-eval ``stats.Sample``, used by ``data.GetCorrelations``
    (``sample_size``, ``sample_method``, ``sample_seed``).

    Examples
    --------
    >>> sample_items(10, 3, seed=1).tolist()
    [4, 3, 7]
    >>> sample_items(10, 5, strata=[4, 6], seed=1).tolist()  # 2 from the first, 3 after
    [1, 2, 7, 4, 9]
    """
    for name, value in (("n_items", n_items), ("size", size)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer; got {value!r}")
    rng = check_seed(seed)
    n_items, size = int(n_items), int(size)
    if size == 0 or size > n_items:
        size = n_items
    if strata is None:
        return rng.choice(n_items, size, replace=False).astype(np.int64)
    strata = np.asarray(strata)
    if strata.ndim != 1 or not np.issubdtype(strata.dtype, np.integer) or (strata < 0).any():
        raise ValueError("strata must be a 1-d array of non-negative integer sizes")
    if int(strata.sum()) != n_items:
        raise ValueError(f"strata must sum to n_items ({n_items}); got {int(strata.sum())}")
    sizes = _stratum_sizes(strata, size, rng)
    starts = np.concatenate([[0], np.cumsum(strata)[:-1]])
    parts = [
        rng.choice(int(n), int(k), replace=False) + b
        for n, k, b in zip(strata, sizes, starts, strict=True)
    ]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)
