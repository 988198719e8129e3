"""Study design from a pilot: the power of a system-pair comparison and the stable ranking
probability (Riley et al., 2024) of a design, simulated by resampling the pilot.

A pilot is a matrix of criterion scores ``H`` (G inputs x S systems; an item's score is the mean
of its ratings), or its ratings ``H`` (G, S, R) with NaN for the ratings an item lacks (HANNA: R
= 3 per story). A design is a number of ``inputs`` G' and of ``ratings`` R' per item. A
simulated study draws G' of the pilot's inputs (with replacement; without, and disjoint, for the
two studies of a pair in :func:`stable_ranking_probability`), and for each drawn (input, system)
item R' of its available ratings with replacement, averaged (``ratings=None``: the pilot's item
scores as they are). The package's own test is then run on the simulated study.

Randomness: simulated study (or study pair) ``i`` draws everything (its inputs, its ratings, its
test's resamples or sign flips) from its own generator,
``numpy.random.default_rng(numpy.random.SeedSequence(seed).spawn(studies)[i])``, in that order
(:func:`~hanna_stats.kernels.power.study_generator`; the pilot, its draws and the seeds are
:mod:`hanna_stats.kernels.power`'s, shared by both modules). A study's draws therefore depend
neither on the thread count nor on how the studies are split into blocks, and the executor path
(blocks of studies on a Dask cluster or any :class:`concurrent.futures.Executor`) gives the
in-process result bit for bit.

The hot part, the sign-flip permutation test of every pair of systems in thousands of studies,
is the test of the package's :func:`~hanna_stats.kernels.pairwise_pvalues` in one matrix product
of the sign flips with the study's scores (BLAS) and vectorised comparisons
(:func:`sign_test_pvalues`); no compiled loop is needed (the product is most of the time).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import NamedTuple

import numpy as np

from hanna_stats.vocabulary import WORDS

from ._options import check_count, check_option
from .distributed import cluster_executor, split
from .power import Pilot, PowerResult, draw_study, pilot_ratings, root_entropy, study_generator
from .soft_accuracy import pairwise_pvalues
from .system_pairs import TIE_RTOL, paired_bootstrap, system_pairs

#: The tests of :func:`system_pair_power` (the vocabulary's ``SystemPairTest``): the paired
#: bootstrap (Koehn 2004, :func:`~hanna_stats.kernels.paired_bootstrap`), the paired sign-flip
#: permutation test of the mean difference (:func:`~hanna_stats.kernels.pairwise_pvalues`) and
#: the paired t-test.
PAIR_TESTS = WORDS["system_pair_test"]
#: A permuted difference reaches the observed one within this much relative to ``sum_g |x[g, a]|
#: + |x[g, b]|``, as in :func:`~hanna_stats.kernels.pairwise_pvalues`: far above the rounding of
#: the sums in another order, far below any real difference of scores.
REACH_RTOL = 1e-10
#: Largest number of ratings per item of a design.
MAX_RATINGS = 1000


class StableRankingResult(NamedTuple):
    """Result of :func:`stable_ranking_probability`; each probability with its Monte Carlo
    standard error ``sqrt(p (1 - p) / studies)``.

    ``statistic``: the stable ranking probability (SRP), the share of stable study pairs;
    ``standard_error``; ``stable`` and ``studies``: the stable study pairs and all of them;
    ``pairs`` (P, 2) int64: the system pairs (a, b), a < b, lexicographic; ``pair_agreement``
    (P,): per system pair, the share of study pairs whose two studies give it the same outcome
    (a > b significant, b > a significant, or not significant), with ``pair_standard_error``;
    ``pair_significant`` (P,): the share of the ``2 studies`` simulated studies in which the
    pair's difference is significant (that test's power at the design); ``top_agreement``: the
    share of study pairs whose two studies have the same top system(s), with
    ``top_standard_error``; ``mean_agreement``: the share of system pairs given the same outcome
    by both studies, averaged over the study pairs (the mean of ``pair_agreement``), with
    ``mean_standard_error``, the standard error of that average over the study pairs.
    """

    statistic: float
    standard_error: float
    stable: int
    studies: int
    pairs: np.ndarray
    pair_agreement: np.ndarray
    pair_standard_error: np.ndarray
    pair_significant: np.ndarray
    top_agreement: float
    top_standard_error: float
    mean_agreement: float
    mean_standard_error: float


def _check_design(pilot, inputs, ratings, alpha):
    inputs = check_count("inputs", inputs)
    if ratings is not None:
        ratings = check_count("ratings", ratings, MAX_RATINGS)
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    unscored = np.flatnonzero(pilot.counts.sum(axis=0) == 0)
    if unscored.size:
        raise ValueError(f"H has no score of system {int(unscored[0])} (last axis of H)")
    return inputs, ratings, float(alpha)


def _studies(function, shared, studies, progress, executor, desc):
    """``function(*shared, (lo, hi))`` over blocks of the studies, in process or on
    ``executor``; the blocks' results in order."""
    if executor is not None:
        cluster = cluster_executor(executor)
        blocks = split(studies, cluster.blocks)
        return cluster.map(function, shared, blocks, progress=progress, desc=desc)
    step = studies if progress is None else max(1, -(-studies // 20))
    blocks = [(lo, min(lo + step, studies)) for lo in range(0, studies, step)]
    if len(blocks) > 1:
        blocks = progress(blocks, desc=desc, total=len(blocks))
    return [function(*shared, block) for block in blocks]


def draw_signs(inputs, permutations, rng):
    """Sign flips (K, G) float64 in {-1, +1} of the paired permutation test of one study, a fair
    coin per permutation and input: ``1 - 2 rng.integers(0, 2, (K, G), dtype=numpy.uint8)``
    (the distribution of :func:`~hanna_stats.kernels.sign_flips`, drawn 5x faster)."""
    return 1.0 - 2.0 * rng.integers(0, 2, size=(permutations, inputs), dtype=np.uint8)


def sign_test_pvalues(x, signs):
    """One-sided permutation p-values ``(greater, less)`` (each (P,), the system pairs (a, b),
    a < b, lexicographic) of every pair of columns of a study's scores ``x`` (G, S):
    ``greater`` of "a is better than b", ``#{T* >= T} / K``, and ``less`` of "b is better than
    a", ``#{T* <= T} / K``, with ``T = sum_g (x[g, a] - x[g, b])`` and ``T* = sum_g e_g (x[g, a]
    - x[g, b])`` over the sign flips ``signs`` (K, G).

    This is :func:`~hanna_stats.kernels.pairwise_pvalues` of ``x`` and of ``-x`` on the same
    signs (its test, its tolerance: ``T*`` reaches ``T`` within ``1e-10 sum_g (|x[g, a]| +
    |x[g, b]|)``), computed from one product of the signs with ``x``; a study with a missing
    score goes through :func:`~hanna_stats.kernels.pairwise_pvalues` itself, which leaves an
    input out of the pairs it lacks.
    """
    a, b = np.triu_indices(x.shape[1], 1)
    if np.isnan(x).any():
        both = pairwise_pvalues(np.stack([x, -x]), signs=signs)
        return both[0][a, b], both[1][a, b]
    permuted = signs @ x  # (K, S): each system's permuted sum
    sums = x.sum(axis=0)
    scale = np.abs(x).sum(axis=0)
    observed = sums[a] - sums[b]
    tolerance = REACH_RTOL * (scale[a] + scale[b])
    differences = permuted[:, a] - permuted[:, b]  # (K, P)
    greater = (differences >= observed - tolerance).mean(axis=0)
    less = (differences <= observed + tolerance).mean(axis=0)
    return greater, less


def _t_pvalue(d, alternative):
    """p-value of the paired t-test of differences ``d`` (NaN dropped), as
    ``scipy.stats.ttest_rel``: ``t = mean(d) / (sd(d) / sqrt(n))`` (sd with ddof 1) on n - 1
    degrees of freedom, from Student's t CDF (``scipy.special.stdtr``); NaN when undefined."""
    from scipy.special import stdtr  # here: scipy.special costs 0.1 s at import

    d = d[~np.isnan(d)]
    n = d.size
    if n < 2:
        return math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        t = d.mean() / (d.std(ddof=1) / math.sqrt(n))
    if math.isnan(t):
        return math.nan
    if alternative == "greater":
        return float(stdtr(n - 1, -t))
    if alternative == "less":
        return float(stdtr(n - 1, t))
    return float(2.0 * stdtr(n - 1, -abs(t)))


def _rejects(x, settings, rng):
    """Whether the test of ``settings`` rejects on one simulated study ``x`` (G', 2)."""
    test, alternative, alpha, resamples, permutations = settings[:5]
    if test == "bootstrap":
        label = paired_bootstrap(x[None], resamples=resamples, seed=rng, alpha=alpha).labels[0, 0]
        wanted = {"two-sided": (1, 2), "greater": (1,), "less": (2,)}[alternative]
        return bool(label in wanted)
    if test == "permutation":
        signs = draw_signs(x.shape[0], permutations, rng)
        greater, less = (float(p[0]) for p in sign_test_pvalues(x, signs))
        p = {"greater": greater, "less": less, "two-sided": min(1.0, 2.0 * min(greater, less))}
        return bool(p[alternative] <= alpha)
    return bool(_t_pvalue(x[:, 0] - x[:, 1], alternative) <= alpha)


def _power_block(pilot, settings, block):
    """Rejections (hi - lo,) bool of the simulated studies ``lo:hi``."""
    inputs, ratings, entropy = settings[5:]
    lo, hi = block
    out = np.zeros(hi - lo, dtype=bool)
    for i in range(lo, hi):
        rng = study_generator(entropy, i)
        rows = rng.integers(0, pilot.scores.shape[0], size=inputs)
        out[i - lo] = _rejects(draw_study(pilot, rows, ratings, rng), settings, rng)
    return out


def _pair_pilot(H, pair, delta):
    """The pilot of the two systems of ``pair`` (a, b), b's ratings shifted so that the mean
    item difference a - b is ``delta`` (unchanged when None)."""
    pilot = pilot_ratings(H)
    systems = pilot.scores.shape[1]
    if (
        not isinstance(pair, tuple | list | np.ndarray)
        or len(pair) != 2
        or not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in pair)
        or not all(0 <= s < systems for s in pair)
        or pair[0] == pair[1]
    ):
        raise ValueError(f"pair must be two different systems in [0, {systems}); got {pair!r}")
    a, b = (int(s) for s in pair)
    shift = 0.0
    if delta is not None:
        if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not np.isfinite(delta):
            raise ValueError(f"delta must be a finite number or None; got {delta!r}")
        d = pilot.scores[:, a] - pilot.scores[:, b]
        if np.isnan(d).all():
            raise ValueError(f"systems {a} and {b} share no scored input in H")
        shift = float(np.nanmean(d)) - float(delta)
    ratings = pilot.ratings[:, [a, b]].copy()
    ratings[:, 1] += shift
    scores = pilot.scores[:, [a, b]].copy()
    scores[:, 1] += shift
    return Pilot(scores, ratings, pilot.counts[:, [a, b]].copy())


def system_pair_power(
    H,
    *,
    pair,
    inputs,
    ratings=None,
    delta=None,
    test="bootstrap",
    resamples=1000,
    permutations=1000,
    studies=1000,
    alpha=0.05,
    alternative="two-sided",
    seed=0,
    progress=None,
    executor=None,
):
    """Power of a comparison of two systems at a design, simulated from a pilot.

    Each of ``studies`` simulated studies draws ``inputs`` of the pilot's inputs with
    replacement (and ``ratings`` ratings per item, as the module says), and runs ``test`` on the
    two systems' scores ``x_a, x_b`` of its inputs; the power is the share of studies in which
    it rejects, ``p = rejections / studies``, with Monte Carlo standard error ``sqrt(p (1 - p) /
    studies)``.

    The effect: with the pilot's item differences ``d_g = x_{g,a} - x_{g,b}`` (items where both
    are scored), ``delta`` on the rating scale re-centres them to mean ``delta``: every rating of
    b is shifted by the constant ``mean(d) - delta``, i.e. ``x_b := x_a - (d - mean(d) +
    delta)``, so that a simulated study's expected mean difference is ``delta`` and the spread of
    the differences stays the pilot's. ``delta=None``: the pilot's observed difference, as it is.

    The tests (a rejection with ``alternative`` "greater" means "a is better than b"):

    - ``"bootstrap"``: the paired bootstrap of Koehn (2004),
      :func:`~hanna_stats.kernels.paired_bootstrap` with ``resamples`` resamples: a system wins
      when its mean is greater in at least ``1 - alpha`` of them. Koehn's rule is one-sided per
      direction at ``1 - alpha``: "two-sided" rejects when either system wins (label != 0, a
      level of up to ``2 alpha`` under the null), "greater" when a wins, "less" when b does.
    - ``"permutation"``: the paired sign-flip permutation test of the mean difference
      (:func:`~hanna_stats.kernels.pairwise_pvalues`, ``permutations`` sign flips per study):
      ``p_greater = #{T* >= T} / K`` and ``p_less = #{T* <= T} / K`` for ``T = sum_g d_g``;
      "two-sided" is ``min(1, 2 min(p_greater, p_less))`` (scipy.stats.permutation_test's rule).
    - ``"t"``: the paired t-test (the p-value of ``scipy.stats.ttest_rel``), a closed-form
      reference.

    A test rejects when its p-value is at most ``alpha`` (never when it is NaN).

    Parameters
    ----------
    H : array_like, shape (G, S) or (G, S, R)
        The pilot: item scores, or ratings with NaN for missing ones.
    pair : (int, int)
        The two systems (a, b), indices on the last axis of the item scores.
    inputs : int
        Inputs G' of the design.
    ratings : int, optional
        Ratings R' per item of the design; None: the pilot's item scores as they are.
    delta : float, optional
        The mean difference a - b to inject, on the rating scale; None: the pilot's own.
    test : {"bootstrap", "permutation", "t"}
    resamples, permutations : int
        Bootstrap resamples, sign flips of the permutation test (each test uses its own).
    studies : int
        Simulated studies.
    alpha : float
        Level of each test, in (0, 1) ((0, 0.5) for the bootstrap).
    alternative : {"two-sided", "less", "greater"}
    seed : int, numpy.random.Generator or None
        Root of the studies' generators (:func:`~hanna_stats.kernels.power.study_generator`).
    progress : callable, optional
        ``progress(iterable, desc=..., total=...)`` wrapping the blocks of studies.
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Run blocks of studies on it; the result is the in-process one bit for bit.

    Returns
    -------
    PowerResult
        :class:`~hanna_stats.kernels.power.PowerResult` of floats: ``power``, its Monte Carlo
        ``standard_error`` ``sqrt(power (1 - power) / studies)``, ``rejections``, ``studies``.

    References
    ----------
    Koehn, P. (2004). Statistical significance tests for machine translation evaluation. EMNLP.
    Card, D. et al. (2020). With little power comes great responsibility. EMNLP.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(200, 2))
    >>> res = system_pair_power(H, pair=(0, 1), inputs=50, delta=2.0, test="t", studies=200)
    >>> res.power, res.studies
    (1.0, 200)
    """
    test = PAIR_TESTS[check_option("test", test, PAIR_TESTS)]
    alternative = WORDS["alternative"][check_option("alternative", alternative)]
    pilot = _pair_pilot(H, pair, delta)
    inputs, ratings, alpha = _check_design(pilot, inputs, ratings, alpha)
    if test == "bootstrap" and alpha >= 0.5:
        raise ValueError(f"alpha must lie in (0, 0.5) for the bootstrap test; got {alpha!r}")
    studies = check_count("studies", studies)
    resamples = check_count("resamples", resamples)
    permutations = check_count("permutations", permutations)
    settings = (test, alternative, alpha, resamples, permutations, inputs, ratings)
    settings = (*settings, root_entropy(seed))
    parts = _studies(_power_block, (pilot, settings), studies, progress, executor, "studies")
    rejections = int(np.concatenate(parts).sum())
    power = rejections / studies
    return PowerResult(power, math.sqrt(power * (1.0 - power) / studies), rejections, studies)


def study_outcomes(x, alpha, signs):
    """Outcome (P,) int8 of every system pair (a, b), a < b, lexicographic, in one study's
    scores ``x`` (G, S): 1 if a > b is significant, 2 if b > a is, else 0 (two-sided sign-flip
    permutation test at ``alpha``, :func:`sign_test_pvalues`: significant when ``2 min(p_greater,
    p_less) <= alpha``, in the direction of the smaller one-sided p-value)."""
    greater, less = sign_test_pvalues(x, signs)
    out = np.zeros(greater.size, dtype=np.int8)
    out[2.0 * greater <= alpha] = 1
    out[2.0 * less <= alpha] = 2
    return out


def top_systems(x):
    """The top systems (S,) bool of a study's scores ``x`` (G, S): those whose mean (over their
    scored inputs) is the highest, within :data:`~hanna_stats.kernels.system_pairs.TIE_RTOL`
    relative (a system without a score in the study is never on top)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a system without a score: NaN
        means = np.nanmean(x, axis=0)
        best = np.nanmax(means)
    return means >= best - TIE_RTOL * abs(best)


def _srp_block(pilot, settings, block):
    """(same (n, P) bool, top_same (n,) bool, significant (P,) int64) of study pairs ``lo:hi``."""
    inputs, ratings, alpha, permutations, entropy = settings
    lo, hi = block
    n_pairs = pilot.scores.shape[1] * (pilot.scores.shape[1] - 1) // 2
    same = np.zeros((hi - lo, n_pairs), dtype=bool)
    top_same = np.zeros(hi - lo, dtype=bool)
    significant = np.zeros(n_pairs, dtype=np.int64)
    for i in range(lo, hi):
        rng = study_generator(entropy, i)
        rows = rng.permutation(pilot.scores.shape[0])[: 2 * inputs]
        first, second = (draw_study(pilot, r, ratings, rng) for r in (rows[:inputs], rows[inputs:]))
        outcomes, tops = [], []
        for x in (first, second):
            signs = draw_signs(inputs, permutations, rng)
            outcomes.append(study_outcomes(x, alpha, signs))
            tops.append(top_systems(x))
        same[i - lo] = outcomes[0] == outcomes[1]
        top_same[i - lo] = np.array_equal(tops[0], tops[1])
        significant += (outcomes[0] != 0).astype(np.int64) + (outcomes[1] != 0)
    return same, top_same, significant


def stable_ranking_probability(
    H,
    *,
    inputs,
    ratings=None,
    studies=1000,
    alpha=0.05,
    permutations=1000,
    seed=0,
    progress=None,
    executor=None,
):
    """Stable ranking probability (SRP) of a design: how likely two independent studies of it
    are to rank the systems the same way (Riley et al., 2024).

    The definition this package follows: ``studies`` pairs of studies are simulated, the two
    studies of a pair on DISJOINT samples of ``inputs`` of the pilot's inputs (drawn without
    replacement: ``2 inputs`` distinct inputs per pair), with ``ratings`` ratings per item drawn
    as the module says. In each study every pair of systems (a, b) is compared by the paired
    sign-flip permutation test of the mean difference (:func:`~hanna_stats.kernels.pairwise_pvalues`
    with ``permutations`` sign flips drawn for that study), two-sided at ``alpha``: its outcome
    is "a > b" or "b > a" when ``2 min(p_greater, p_less) <= alpha`` (in the direction of the
    smaller one-sided p-value), else "not significant". A study pair is stable when its two
    studies give every system pair the same outcome (the same significant ordered pairs), and

    .. math:: \\mathrm{SRP} = \\frac{\\#\\{\\text{stable study pairs}\\}}{\\text{studies}},

    with Monte Carlo standard error ``sqrt(SRP (1 - SRP) / studies)``. Also returned: per system
    pair, the share of study pairs whose two studies give it the same outcome, and the share
    whose two studies have the same top system: the systems with the highest mean score in a
    study (means equal within a relative 1e-12 tie, and the study's top is the set of them), the
    same when the two sets are equal; and the share of system pairs given the same outcome,
    averaged over the study pairs. An item without a score (NaN) is left out of its system's
    mean and of the pairs' tests (:func:`~hanna_stats.kernels.pairwise_pvalues`'s rule).

    Parameters
    ----------
    H : array_like, shape (G, S) or (G, S, R)
        The pilot: item scores, or ratings with NaN for missing ones.
    inputs : int
        Inputs G' of each study, at most G / 2.
    ratings : int, optional
        Ratings R' per item; None: the pilot's item scores as they are.
    studies : int
        Simulated study pairs.
    alpha : float
        Two-sided level of each test, in (0, 1).
    permutations : int
        Sign flips per test.
    seed : int, numpy.random.Generator or None
        Root of the study pairs' generators
        (:func:`~hanna_stats.kernels.power.study_generator`: one child per study pair, drawing
        its inputs, then each study's ratings, then each study's sign flips).
    progress : callable, optional
        ``progress(iterable, desc=..., total=...)`` wrapping the blocks of study pairs.
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Run blocks of study pairs on it; the result is the in-process one bit for bit.

    Returns
    -------
    StableRankingResult

    Raises
    ------
    ValueError
        When ``2 inputs`` exceeds the pilot's inputs, or for a bad argument.

    References
    ----------
    Riley, P., Deutsch, D., Foster, G., Ratnakar, V., Dabirmoghaddam, A. and Freitag, M.
    (2024). Finding Replicable Human Evaluations via Stable Ranking Probability. NAACL.

    Examples
    --------
    Two systems one point apart on every input: every study finds system 0 better.

    >>> H = np.array([[2.0, 1.0], [3.0, 2.0], [5.0, 4.0], [1.0, 0.0]] * 5)
    >>> res = stable_ranking_probability(H, inputs=10, studies=50, permutations=200)
    >>> res.statistic, res.standard_error, res.top_agreement
    (1.0, 0.0, 1.0)
    """
    pilot = pilot_ratings(H)
    inputs, ratings, alpha = _check_design(pilot, inputs, ratings, alpha)
    pilot_inputs = pilot.scores.shape[0]
    if 2 * inputs > pilot_inputs:
        raise ValueError(
            f"inputs must be at most half the pilot's {pilot_inputs} inputs (a study pair draws "
            f"2 x inputs distinct inputs); got {inputs}"
        )
    studies = check_count("studies", studies)
    permutations = check_count("permutations", permutations)
    settings = (inputs, ratings, alpha, permutations, root_entropy(seed))
    parts = _studies(_srp_block, (pilot, settings), studies, progress, executor, "study pairs")
    same = np.concatenate([part[0] for part in parts])
    top_same = np.concatenate([part[1] for part in parts])
    significant = np.sum([part[2] for part in parts], axis=0, dtype=np.int64)
    stable = int(same.all(axis=1).sum())
    srp = stable / studies
    agreement = same.mean(axis=0)
    top = float(top_same.mean())
    shares = same.mean(axis=1)  # per study pair: the share of system pairs given one outcome
    spread = float(shares.std(ddof=1)) if studies > 1 else 0.0

    def se(p):
        return np.sqrt(p * (1.0 - p) / studies)

    return StableRankingResult(
        srp,
        float(se(srp)),
        stable,
        studies,
        system_pairs(pilot.scores.shape[1]),
        agreement,
        se(agreement),
        significant / (2.0 * studies),
        top,
        float(se(top)),
        float(shares.mean()),
        spread / math.sqrt(studies),
    )
