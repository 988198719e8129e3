"""Item subsampling of a study: :func:`sample_inputs`, mt-metrics-eval's ``sample_size``,
``sample_method`` and ``sample_seed`` (``data.GetCorrelations``), as a Study every analysis
takes."""

from __future__ import annotations

import numbers

import numpy as np

from hanna_stats.kernels import check_seed, sample_items
from hanna_stats.study import Study
from hanna_stats.vocabulary import SampleMethod, check


def sample_inputs(
    study: Study,
    size: int,
    *,
    method: SampleMethod = "uniform",
    seed: int | np.random.Generator | None = 0,
) -> Study:
    """The study of ``size`` of its inputs drawn at random (WMT: segments), per subset.

    Every measure's values, the criteria's among them, are restricted to the same drawn inputs
    (:meth:`~hanna_stats.study.Study.inputs_at`), so every analysis of the result compares
    them on the same sample, as mt-metrics-eval's ``GetCorrelations(..., sample_size,
    sample_method, sample_seed)`` restricts every metric's and the gold's segment vectors
    before its correlations and significance tests. The draw is
    :func:`hanna_stats.kernels.sample_items` over the inputs in study order: ``"uniform"``
    draws ``size`` of them without replacement; ``"stratify"`` gives each document (each run
    of consecutive inputs of the same document, as mt-metrics-eval's ``evs.docs``) its share of
    ``size`` by the largest remainder method and draws within it. A study of several subsets
    (WMT: language pairs) is sampled subset by subset, ``size`` inputs of each, each from
    ``seed`` afresh (an int; a Generator is drawn from in turn), as mt-metrics-eval samples
    each language pair's EvalSet with the same seed. The inputs keep the order drawn
    (mt-metrics-eval's ``Sample.Select``).

    Parameters
    ----------
    study : Study
    size : int
        Inputs per subset, non-negative; 0, or more than a subset holds, keeps all of that
        subset's inputs (in the order drawn), as mt-metrics-eval.
    method : {"uniform", "stratify"}
        ``"stratify"`` needs every input's document (:attr:`~hanna_stats.study.Study.documents`;
        WMT: ``documents/LP.docs``).
    seed : int, numpy.random.Generator or None
        The draw's seed (default 0); mt-metrics-eval draws the same inputs for the same seed
        (other than 0, which it takes as "no seed"), except where two documents tie for the
        last extra items of ``"stratify"`` (see :func:`~hanna_stats.kernels.sample_items`).

    Returns
    -------
    Study
        The sampled study: its inputs (a subset's together, in the order drawn), their values,
        ratings and documents; without the given system-level values (``system_scores="given"``
        is refused on it: those values are of every input, not of the sample). The store's
        counts, catalogue and sources are the whole store's.

    Raises
    ------
    ValueError
        For a bad ``size``, ``method`` or ``seed``; for ``"stratify"`` on a study whose inputs
        have no document, or only some.

    References
    ----------
    google-research/mt-metrics-eval, ``data.GetCorrelations`` and ``stats.Sample``.

    Examples
    --------
    >>> from hanna_stats.analyses import correlate, sample_inputs         # doctest: +SKIP
    >>> small = sample_inputs(wmt_study, 100, method="stratify", seed=1)   # doctest: +SKIP
    >>> correlate(small, level="item", criterion="mqm")                   # doctest: +SKIP
    """
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 0:
        raise ValueError(f"size must be a non-negative integer; got {size!r}")
    check("sample_method", method)
    check_seed(seed)
    documents = np.asarray(study.documents or [""] * len(study.inputs), dtype=object)
    if method == "stratify" and not documents.all():
        missing = int((documents == "").sum())
        raise ValueError(
            f"method='stratify' draws within documents, and {missing:,} of the study's "
            f"{len(study.inputs):,} inputs have none (WMT: documents/LP.docs); use "
            "method='uniform'"
        )
    index = study.subset_index
    groups = np.zeros(len(study.inputs), dtype=np.intp) if index is None else index.inputs
    drawn = []
    for group in dict.fromkeys(groups.tolist()):
        positions = np.flatnonzero(groups == group)
        strata = None
        if method == "stratify":
            ours = documents[positions]
            starts = np.flatnonzero(np.r_[True, ours[1:] != ours[:-1]])
            strata = np.diff(np.r_[starts, ours.size])
        drawn.append(positions[sample_items(positions.size, size, strata=strata, seed=seed)])
    return study.inputs_at(np.concatenate(drawn))
