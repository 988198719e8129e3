"""Statistical power from closed forms and from simulated studies drawn from a pilot study.

Closed forms (numpy and :mod:`scipy.special`): :func:`fisher_power` (the test of Pearson's
r = 0 through Fisher's z), :func:`paired_t_power` (the one-sample / paired t-test, noncentral
t) and :func:`williams_power` (a normal approximation of the Williams test's power).

Simulation from a pilot: :func:`metric_pair_power` (two metrics against one criterion:
Williams, PERM-BOTH or the calibrated permutation test of acc_eq), with
:func:`metric_pair_effect` (the effect it injects, on the pooled Pearson scale and on the
test's own statistic), and :func:`correlation_power` (one metric's correlation with the
criterion against 0). A pilot is
the criterion ``H`` of shape (G, S) (inputs x systems; item scores) or its ratings, shape
(G, S, R) with NaN for a missing rating, and the metric scores ``A``, ``B`` (G, S). A design
is ``inputs`` (G'), ``systems`` (S') and ``ratings`` (R' per item, or None). One simulated
study, with the generator ``rng = numpy.random.default_rng(child)`` of its own child
``numpy.random.SeedSequence(seed).spawn(studies)[i]``, draws in this order:

1. the inputs, ``rng.integers(0, G, G')`` (the pilot's inputs as the population, with
   replacement);
2. the systems, ``rng.choice(S, S', replace=False)`` when ``S' <= S``, else
   ``rng.integers(0, S, S')`` (with replacement);
3. with ``ratings`` R' (and pilot ratings): per item, R' of its available ratings with
   replacement, ``k = floor(rng.random((G', S', R')) * n_available)`` into the item's
   ratings in their stored order (NaN skipped), averaged; otherwise the item scores as they
   are (the mean of the available ratings);
4. the effect (:func:`metric_pair_power`): ``rng.standard_normal((G', S'))`` noise, scaled
   and added to the one metric the effect lowers;
5. the test's own draws (PERM-BOTH: ``rng.integers(0, 2**S', (P, G'), dtype=numpy.uint64)``,
   bit ``s`` of entry ``(p, g)`` swapping cell ``(g, s)`` in permutation ``p``; the calibrated
   test: ``seed=rng``).

A study's draws depend on its index and ``seed`` alone, neither on the number of threads nor
on how the studies are split into blocks: the ``executor=`` path gives the same result bit for
bit. Every design of a grid uses the same children (common random numbers: a point of a curve
equals the single-design call, and curves are smoother than with independent draws).
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from hanna_stats.vocabulary import WORDS

from ._options import as_float_array, check_count, check_option, check_seed, memory_budget
from .calibration import calibrated_permutation_test, tie_calibration
from .correlation import correlation
from .distributed import cluster_executor, split
from .levels import level_correlation
from .permutation import permutation_null, permutation_pvalues, standardize
from .williams import williams_test

#: The tests :func:`metric_pair_power` simulates (the vocabulary's ``MetricPairTest``).
PAIR_TESTS = WORDS["metric_pair_test"]
#: Levels of the simulations (no global level).
POWER_LEVELS = WORDS["item_system"]
#: Largest number of systems for which the item-level Pearson PERM-BOTH kernel tabulates the
#: three swapped sums of all 2**S' subsets of an input's systems (2**12 x 3 floats, 96 KiB).
TABLE_SYSTEMS = 12


class PowerResult(NamedTuple):
    """Power of a test at one design, or arrays over a grid of designs.

    ``power``: the rejection rate at ``alpha`` (``rejections / studies``); ``standard_error``:
    its Monte Carlo standard error ``sqrt(power (1 - power) / studies)``; ``rejections``: the
    simulated studies whose p-value was at most ``alpha`` (a NaN p-value never rejects);
    ``studies``: the studies simulated per design.
    """

    power: np.ndarray
    standard_error: np.ndarray
    rejections: np.ndarray
    studies: int


# --------------------------------------------------------------------------- closed forms


def _check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    return float(alpha)


def _normal_power(mean, critical, alternative):
    """``P(N(mean, 1) beyond critical)``: ``critical`` is the one-sided critical value for
    ``"greater"``/``"less"`` and the two-sided one for ``"two-sided"``."""
    from scipy.special import ndtr

    if alternative == "greater":
        return ndtr(mean - critical)
    if alternative == "less":
        return ndtr(-mean - critical)
    return ndtr(mean - critical) + ndtr(-mean - critical)


def _floats(name, value):
    """``value`` as a float array of any shape (0-d for a number)."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or an array of numbers; got {value!r}") from None


def _scalar(x):
    x = np.asarray(x)
    return x[()] if x.ndim == 0 else x


def fisher_power(r, n, *, alpha=0.05, alternative="two-sided"):
    """Power of the test of Pearson's r = 0 through Fisher's z transformation.

    With :math:`\\mu = \\operatorname{atanh}(r) \\sqrt{n - 3}` (Fisher 1921: ``atanh`` of the
    sample correlation is about normal with variance ``1 / (n - 3)``),

    .. math::

        \\text{power} = \\Phi(\\mu - z_{1-\\alpha/2}) + \\Phi(-\\mu - z_{1-\\alpha/2})

    two-sided, :math:`\\Phi(\\mu - z_{1-\\alpha})` for ``"greater"`` (H1: r > 0) and
    :math:`\\Phi(-\\mu - z_{1-\\alpha})` for ``"less"``, with :math:`\\Phi` the standard
    normal distribution function (Cohen 1988, ch. 3).

    Parameters
    ----------
    r : float or array_like
        The true correlation, in (-1, 1).
    n : int or array_like
        Sample size, above 3; broadcast with ``r``.
    alpha : float in (0, 1)
    alternative : {"two-sided", "less", "greater"}

    Returns
    -------
    float or ndarray
        The power, of the broadcast shape of ``r`` and ``n``.

    References
    ----------
    R. A. Fisher, "On the probable error of a coefficient of correlation deduced from a small
    sample", Metron 1, 1921. J. Cohen, Statistical Power Analysis for the Behavioral
    Sciences, 2nd ed., 1988.

    Examples
    --------
    >>> round(float(fisher_power(0.3, 85)), 3)
    0.8
    """
    from scipy.special import ndtri

    check_option("alternative", alternative)
    alpha = _check_alpha(alpha)
    r, n = np.broadcast_arrays(_floats("r", r), _floats("n", n))
    if not (np.abs(r) < 1).all():
        raise ValueError("r must lie in (-1, 1)")
    if not (n > 3).all():
        raise ValueError("n must be greater than 3")
    tail = alpha / 2 if alternative == "two-sided" else alpha
    mean = np.arctanh(r) * np.sqrt(n - 3.0)
    return _scalar(_normal_power(mean, ndtri(1.0 - tail), alternative))


def paired_t_power(effect_size, n, *, alpha=0.05, alternative="two-sided"):
    """Power of the one-sample (or paired) t-test, from the noncentral t distribution.

    For ``n`` pairs with standardized mean difference ``d = effect_size`` (mean / standard
    deviation of the differences), the statistic follows the noncentral t with ``n - 1``
    degrees of freedom and noncentrality :math:`d \\sqrt{n}`; with its distribution function
    :math:`F` (``scipy.special.nctdtr``) and Student's critical values
    :math:`t_q` (``scipy.special.stdtrit``),

    .. math::

        \\text{power} = 1 - F(t_{1-\\alpha/2}) + F(t_{\\alpha/2})

    two-sided, :math:`1 - F(t_{1-\\alpha})` for ``"greater"`` and :math:`F(t_\\alpha)` for
    ``"less"``: statsmodels' ``TTestPower().power`` (whose ``"larger"`` and ``"smaller"`` are
    ``"greater"`` and ``"less"``), except where scipy's ``nctdtr`` gives NaN far in the left
    tail, where :math:`1 - F_{-\\delta}(-t)` of the mirrored distribution is used.

    Parameters
    ----------
    effect_size : float or array_like
    n : int or array_like
        Number of pairs, at least 2; broadcast with ``effect_size``.
    alpha : float in (0, 1)
    alternative : {"two-sided", "less", "greater"}

    Returns
    -------
    float or ndarray

    References
    ----------
    J. Cohen, Statistical Power Analysis for the Behavioral Sciences, 2nd ed., 1988, ch. 2.

    Examples
    --------
    >>> round(float(paired_t_power(0.5, 34)), 3)
    0.808
    """
    from scipy.special import nctdtr, stdtrit

    check_option("alternative", alternative)
    alpha = _check_alpha(alpha)
    d = _floats("effect_size", effect_size)
    d, n = np.broadcast_arrays(d, _floats("n", n))
    if not (n >= 2).all():
        raise ValueError("n must be at least 2")
    df = n - 1.0
    nc = d * np.sqrt(n)
    tail = alpha / 2 if alternative == "two-sided" else alpha
    power = np.zeros(d.shape)
    if alternative != "less":
        power = power + (1.0 - nctdtr(df, nc, stdtrit(df, 1.0 - tail)))
    if alternative != "greater":
        low = stdtrit(df, tail)
        lower = nctdtr(df, nc, low)
        # Far in the left tail scipy's nctdtr gives NaN (as statsmodels then does): there the
        # mirror image 1 - F_{df, -nc}(-t) (a power of about 0).
        power = power + np.where(np.isnan(lower), 1.0 - nctdtr(df, -nc, -low), lower)
    return _scalar(power)


def williams_power(r12, r13, r23, n, *, alpha=0.05, alternative="greater"):
    """Power of the Williams test of ``r12 > r13`` (:func:`williams_test`), normal approximation.

    Williams' T2 is evaluated at the true correlations: ``mu`` =
    ``williams_test([r12, r13], [[1, r23], [r23, 1]], n).statistic[0, 1]`` (the criterion 1,
    the measures 2 and 3); the statistic of a study of size ``n`` is taken as normal with mean
    ``mu`` and variance 1, and compared with the test's own critical values, Student's t with
    ``n - 3`` degrees of freedom (``scipy.special.stdtrit``):

    .. math::

        \\text{power} = \\Phi(\\mu - t_{1-\\alpha, n-3})

    for ``"greater"`` (H1: ``|r12| > |r13|``), :math:`\\Phi(-\\mu - t_{1-\\alpha, n-3})` for
    ``"less"`` and the sum of both with :math:`t_{1-\\alpha/2, n-3}` two-sided. The
    approximation ignores the statistic's extra spread (its variance exceeds 1 when the
    correlations differ, and by 3 / (n - 5) under H0, that of Student's t).

    Parameters
    ----------
    r12, r13, r23 : float or array_like
        True correlations of measure a with the criterion, of b with it and of a with b.
    n : int or array_like
        Sample size, above 3; all four broadcast together.
    alpha : float in (0, 1)
    alternative : {"greater", "two-sided", "less"}

    Returns
    -------
    float or ndarray

    References
    ----------
    E. J. Williams, Regression Analysis, Wiley, 1959. J. H. Steiger, "Tests for comparing
    elements of a correlation matrix", Psychological Bulletin 87(2), 1980.

    Examples
    --------
    >>> round(float(williams_power(0.5, 0.3, 0.6, 100)), 3)
    0.808
    """
    from scipy.special import stdtrit

    check_option("alternative", alternative)
    alpha = _check_alpha(alpha)
    arrays = [
        _floats(k, v) for k, v in zip(("r12", "r13", "r23", "n"), (r12, r13, r23, n), strict=True)
    ]
    r12, r13, r23, n = np.broadcast_arrays(*arrays)
    mean = np.empty(r12.shape)
    for index in np.ndindex(r12.shape):
        R = [[1.0, r23[index]], [r23[index], 1.0]]
        mean[index] = williams_test([r12[index], r13[index]], R, n[index]).statistic[0, 1]
    tail = alpha / 2 if alternative == "two-sided" else alpha
    return _scalar(_normal_power(mean, stdtrit(n - 3.0, 1.0 - tail), alternative))


# --------------------------------------------------------------------------- the pilot


class Pilot(NamedTuple):
    """A pilot study's criterion ratings, ready to draw from (:func:`pilot_ratings`).

    ``scores`` (G, S): item scores, the mean of each item's available ratings (NaN for none);
    ``ratings`` (G, S, R): each item's available ratings first, NaN after; ``counts`` (G, S)
    int64: the available ratings of each item.
    """

    scores: np.ndarray
    ratings: np.ndarray
    counts: np.ndarray


def pilot_ratings(H):
    """The :class:`Pilot` of criterion scores ``H`` (G, S), one rating per item, or of ratings
    ``H`` (G, S, R) with NaN for missing ratings.

    Examples
    --------
    >>> p = pilot_ratings([[[1.0, np.nan, 3.0], [2.0, 2.0, 2.0]]])
    >>> p.scores.tolist(), p.counts.tolist(), p.ratings[0, 0].tolist()
    ([[2.0, 2.0]], [[2, 3]], [1.0, 3.0, nan])
    """
    H = as_float_array("H", H, (2, 3))
    raw = H[..., None] if H.ndim == 2 else H
    if np.isinf(raw).any():
        raise ValueError("H must hold finite ratings or NaN (missing)")
    missing = np.isnan(raw)
    order = np.argsort(missing, axis=2, kind="stable")
    ratings = np.ascontiguousarray(np.take_along_axis(raw, order, axis=2))
    counts = (~missing).sum(axis=2).astype(np.int64)
    total = np.where(missing, 0.0, raw).sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(counts > 0, total / counts, np.nan)
    return Pilot(scores, ratings, counts)


def root_entropy(seed):
    """The entropy of the root :class:`numpy.random.SeedSequence` of the simulated studies:
    ``seed`` itself for an int in [0, 2**63), a draw from the Generator for a Generator
    (advancing it), fresh OS entropy for None."""
    generator = check_seed(seed)  # validates the seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return int(seed)
    return int(generator.integers(0, 2**63))


def study_generator(entropy, study):
    """The generator of simulated study (or study pair) ``study``: that child of
    ``numpy.random.SeedSequence(entropy).spawn(...)``, made directly from its spawn key so that
    a block of studies needs only its range.

    Examples
    --------
    >>> child = np.random.default_rng(np.random.SeedSequence(7).spawn(3)[2])
    >>> int(study_generator(7, 2).integers(1000)) == int(child.integers(1000))
    True
    """
    return np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(int(study),)))


def draw_study(pilot, rows, ratings, rng, systems=None):
    """Criterion scores of a simulated study on the pilot's inputs ``rows`` (and its systems
    ``systems``; None: all, in order), shape (len(rows), S or len(systems)): each item's score
    the mean of ``ratings`` of its available ratings drawn with replacement (uniformly,
    ``floor(u n)`` of ``u = rng.random()`` and its ``n`` available ratings), NaN for an item
    without one; ``ratings=None``: the pilot's item scores of those items.

    Examples
    --------
    >>> p = pilot_ratings([[[1.0, 3.0], [2.0, 2.0]], [[5.0, 5.0], [4.0, np.nan]]])
    >>> draw_study(p, np.array([1, 1, 0]), None, None).tolist()
    [[5.0, 4.0], [5.0, 4.0], [2.0, 2.0]]
    >>> draw_study(p, np.array([1]), 3, np.random.default_rng(0), systems=np.array([1])).tolist()
    [[4.0]]
    """
    cells = rows if systems is None else np.ix_(rows, systems)
    if ratings is None:
        return pilot.scores[cells]
    counts = pilot.counts[cells]
    picks = np.floor(rng.random((*counts.shape, ratings)) * counts[..., None]).astype(np.int64)
    return np.take_along_axis(pilot.ratings[cells], picks, axis=2).mean(axis=2)


class _Metrics(NamedTuple):
    """The pilot of a metric pair: the criterion's :class:`Pilot`, whether it holds rater-level
    ratings (H of shape (G, S, R)), and the metrics ``A``, ``B`` (G, S; ``B`` may be None)."""

    criterion: Pilot
    rated: bool
    A: np.ndarray
    B: np.ndarray | None


def _finite(name, X, shape):
    if X.shape != shape:
        raise ValueError(f"{name} must have shape {shape} (inputs, systems); got {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError(f"{name} must be finite: the simulations take complete pilots")
    return X


def _pilot(H, A, B):
    H = as_float_array("H", H, (2, 3))
    if H.ndim == 2:
        _finite("H", H, H.shape)
    elif np.isinf(H).any() or np.isnan(H).all(axis=2).any():
        raise ValueError("ratings (H of shape (G, S, R)) need a finite rating for every item")
    criterion = pilot_ratings(H)
    shape = criterion.scores.shape
    A = _finite("A", as_float_array("A", A, 2), shape)
    if B is not None:
        B = _finite("B", as_float_array("B", B, 2), shape)
    return _Metrics(criterion, H.ndim == 3, A, B)


def _pooled(pilot):
    """``(rho_a, rho_b)``: the pilot's pooled Pearson ``|r|`` of A and of B with the criterion's
    item scores, over all its items."""
    h = pilot.criterion.scores.ravel()
    return tuple(abs(float(np.corrcoef(X.ravel(), h)[0, 1])) for X in (pilot.A, pilot.B))


def _injection(pilot, delta):
    """The metric the effect ``delta`` lowers (0: A, 1: B) and the standard deviation of the
    noise added to it, so that the pooled Pearson ``rho_a' - rho_b'`` is ``delta``: B lowered
    to ``rho_a - delta`` when ``delta >= rho_a - rho_b`` (``sqrt(var(B) ((rho_b / (rho_a -
    delta))^2 - 1))``), else A to ``rho_b + delta`` (``sqrt(var(A) ((rho_a / (rho_b +
    delta))^2 - 1))``), ``var`` with ddof 0; ``delta`` in ``(-rho_b, rho_a)``."""
    rho_a, rho_b = _pooled(pilot)
    if not -rho_b < delta < rho_a:
        raise ValueError(
            f"delta must lie in ({-rho_b:.4g}, {rho_a:.4g}), minus the pilot's pooled |Pearson r| "
            f"of B with the criterion to that of A; got {delta!r}"
        )
    if delta >= rho_a - rho_b:
        metric, rho, target = 1, rho_b, rho_a - delta
    else:
        metric, rho, target = 0, rho_a, rho_b + delta
    X = (pilot.A, pilot.B)[metric]
    return metric, float(np.sqrt(X.var() * ((rho / target) ** 2 - 1.0)))


def _grid(pilot, inputs, systems, ratings, delta, minimum):
    """The designs of the grid, ``[(inputs, systems, ratings or None, delta or None)]``, and
    the grid's shape (the broadcast of the four)."""
    G, S = pilot.criterion.scores.shape
    inputs = G if inputs is None else inputs
    systems = S if systems is None else systems
    values = []
    for name, value, low in (("inputs", inputs, minimum[0]), ("systems", systems, minimum[1])):
        array = np.asarray(value)
        if array.dtype.kind not in "iu" or array.ndim > 1 or not (array >= low).all():
            raise ValueError(
                f"{name} must be an int >= {low} or a 1-d array of them; got {value!r}"
            )
        values.append(array.astype(np.int64))
    if ratings is not None:
        array = np.asarray(ratings)
        if array.dtype.kind not in "iu" or array.ndim > 1 or not (array >= 1).all():
            raise ValueError(f"ratings must be None, an int >= 1 or a 1-d array; got {ratings!r}")
        if not pilot.rated:
            raise ValueError("ratings needs the pilot's ratings: H of shape (G, S, R)")
    values.append(np.asarray(-1 if ratings is None else ratings, dtype=np.int64))
    values.append(np.asarray(np.nan if delta is None else delta, dtype=np.float64))
    shape = np.broadcast_shapes(*(v.shape for v in values))
    designs = [
        tuple(np.broadcast_to(v, shape)[i].item() for v in values) for i in np.ndindex(shape)
    ]
    designs = [(g, s, None if r < 0 else r, None if np.isnan(d) else d) for g, s, r, d in designs]
    return designs, shape


def _study(pilot, design, injection, rng):
    """One simulated study's cube ``X`` (2, G', S') (A, B with the effect) and criterion
    (G', S') (``X`` (1, G', S') without B), steps 1-4 of the module's draw
    (:func:`draw_study`); ``injection``: the
    ``(metric, noise sd)`` of :func:`_injection` (None: no effect injected)."""
    inputs, systems, ratings, _ = design
    G, S = pilot.criterion.scores.shape
    gi = rng.integers(0, G, inputs)
    si = rng.choice(S, systems, replace=False) if systems <= S else rng.integers(0, S, systems)
    H = draw_study(pilot.criterion, gi, ratings, rng, si)
    cells = np.ix_(gi, si)
    X = np.stack([M[cells] for M in (pilot.A, pilot.B) if M is not None])
    if injection is not None:
        metric, sd = injection
        X[metric] += sd * rng.standard_normal((inputs, systems))
    return X, H


# --------------------------------------------------------------------------- the tests


def _swap_masks(rng, permutations, inputs, systems):
    """PERM-BOTH's swaps of one study as bit masks (P, G') int64: bit s of (p, g) swaps cell
    (g, s) in permutation p (step 5 of the module's draw)."""
    masks = rng.integers(0, 1 << systems, (permutations, inputs), dtype=np.uint64)
    return masks.astype(np.int64)


def _mask_cells(masks, systems):
    """The swaps of :func:`_swap_masks` as :func:`permutation_swaps`' cells (P, G', S') uint8."""
    bits = (masks[..., None] >> np.arange(systems, dtype=np.int64)) & 1
    return np.ascontiguousarray(bits.astype(np.uint8))


@njit(cache=True)
def _swapped_r(s1, s2, sc, cc, n):
    """Pearson r from the sums of x, x^2 and x c (c centred, ``cc = sum c^2``); NaN for a
    (numerically) constant x."""
    var = s2 - s1 * s1 / n
    if not var > 1e-10 * s2:
        return np.nan
    return min(1.0, max(-1.0, sc / np.sqrt(var * cc)))


@njit(cache=True)
def _swapped_table(za, zb, c, table):
    """Fill ``table[m]`` with the sums over the cells of mask ``m`` of ``d = zb - za``,
    ``zb^2 - za^2`` and ``d c``: each entry is the entry without its lowest bit plus that
    cell's terms."""
    for m in range(1, table.shape[0]):
        s = 0
        while not (m >> s) & 1:
            s += 1
        prev = m & (m - 1)
        d = zb[s] - za[s]
        table[m, 0] = table[prev, 0] + d
        table[m, 1] = table[prev, 1] + zb[s] * zb[s] - za[s] * za[s]
        table[m, 2] = table[prev, 2] + d * c[s]


@njit(cache=True, parallel=True)
def _pearson_item_studies(Za, Zb, Cc, masks, tabulate):
    """Item-level Pearson PERM-BOTH null of many studies: ``out[b, 0]`` the observed
    ``r_a - r_b`` (mean over inputs of the per-input correlations, undefined inputs skipped),
    ``out[b, 1 + p]`` after permutation ``p``.

    ``Za``, ``Zb`` (B, G, S): the z-scores of each study's two measures, shifted by a constant
    per input (Pearson is unchanged; the sums lose less to rounding); ``Cc`` (B, G, S): the
    criterion centred per input (a row of zeros where it is constant: undefined);
    ``masks`` (B, G, P) int64 (each input's masks contiguous). A swap exchanges the two scores
    of a cell, so the swapped ``x_a = z_a + w d`` has the sums ``sum z_a + sum w d``,
    ``sum z_a^2 + sum w (z_b^2 - z_a^2)`` and ``sum z_a c + sum w d c`` (``x_b`` subtracts
    them from ``z_b``'s): three sums over the swapped cells, looked up in a table of all 2**S
    subsets when ``tabulate``. Each study is one thread's, summed in a fixed order."""
    B, G, S = Za.shape
    P = masks.shape[2]
    out = np.empty((B, P + 1))
    for b in prange(B):
        sums = np.zeros((2, P + 1))
        counts = np.zeros((2, P + 1), dtype=np.int64)
        table = np.zeros(((1 << S) if tabulate else 1, 3))
        for g in range(G):
            za, zb, c = Za[b, g], Zb[b, g], Cc[b, g]
            cc = a1 = a2 = ac = b1 = b2 = bc = 0.0
            for s in range(S):
                cc += c[s] * c[s]
                a1 += za[s]
                a2 += za[s] * za[s]
                ac += za[s] * c[s]
                b1 += zb[s]
                b2 += zb[s] * zb[s]
                bc += zb[s] * c[s]
            if cc == 0.0:
                continue
            if tabulate:
                _swapped_table(za, zb, c, table)
            for p in range(P + 1):
                d = e = f = 0.0
                if p > 0:
                    m = masks[b, g, p - 1]
                    if tabulate:
                        d, e, f = table[m, 0], table[m, 1], table[m, 2]
                    else:
                        for s in range(S):
                            if (m >> s) & 1:
                                t = zb[s] - za[s]
                                d += t
                                e += zb[s] * zb[s] - za[s] * za[s]
                                f += t * c[s]
                ra = _swapped_r(a1 + d, a2 + e, ac + f, cc, S)
                rb = _swapped_r(b1 - d, b2 - e, bc - f, cc, S)
                if not np.isnan(ra):
                    sums[0, p] += ra
                    counts[0, p] += 1
                if not np.isnan(rb):
                    sums[1, p] += rb
                    counts[1, p] += 1
        for p in range(P + 1):
            if counts[0, p] > 0 and counts[1, p] > 0:
                out[b, p] = sums[0, p] / counts[0, p] - sums[1, p] / counts[1, p]
            else:
                out[b, p] = np.nan
    return out


def _pearson_item_pvalues(cubes, criteria, masks, alternative):
    """p-values of item-level Pearson PERM-BOTH for a batch of studies (B, 2, G', S')."""
    B, _, G, S = cubes.shape
    Z = standardize(cubes.reshape(2 * B, G, S)).reshape(B, 2, G, S)
    shift = 0.5 * (Z[:, 0] + Z[:, 1]).mean(axis=2, keepdims=True)
    constant = (criteria == criteria[..., :1]).all(axis=2, keepdims=True)
    Cc = np.where(constant, 0.0, criteria - criteria.mean(axis=2, keepdims=True))
    args = (Z[:, 0] - shift, Z[:, 1] - shift, Cc)
    masks = np.ascontiguousarray(masks.transpose(0, 2, 1))
    null = _pearson_item_studies(
        *(np.ascontiguousarray(x) for x in args), masks, S <= TABLE_SYSTEMS
    )
    return permutation_pvalues(null, alternative)[0]


def _one_pvalue(X, H, rng, options):
    """The p-value of the package's own test on one study (all but the batched Pearson)."""
    test, level, method, variant, permutations, alternative = options[:6]
    if test == "correlation":
        x, c = (X[0], H) if level == "global" else (X[0].mean(axis=0), H.mean(axis=0))
        res = correlation(
            x.ravel(), c.ravel(), method=method, variant=variant, alternative=alternative
        )
        return res.pvalue
    if test == "williams":
        kwargs = {"level": level, "method": method, "variant": variant}
        r = level_correlation(X, H[None], **kwargs).statistic[:, 0]
        R = level_correlation(X, **kwargs).statistic
        n = X.shape[1] if level == "item" else X.shape[2]
        return williams_test(r, R, n, alternative=alternative).pvalue[0, 1]
    if test == "calibrated":
        res = calibrated_permutation_test(
            H[None], X, level=level, permutations=permutations, seed=rng
        )
        return res.pvalue[0, 0, 1] if alternative == "greater" else res.pvalue[0, 1, 0]
    masks = _swap_masks(rng, permutations, *H.shape)
    swaps = _mask_cells(masks, H.shape[1])
    pairs = np.array([[0, 1]])
    null = permutation_null(X, H, pairs, swaps, level=level, method=method, variant=variant)
    return permutation_pvalues(null, alternative)[0][0]


def _batched(options, systems):
    test, level, method = options[:3]
    return test == "perm-both" and level == "item" and method == "pearson" and systems <= 63


def _chunk(options, design):
    """Studies a batch holds: the batched kernel's swaps within a quarter of the memory
    budget."""
    if not _batched(options, design[1]):
        return 1
    per_study = 8 * options[4] * design[0] + 48 * design[0] * design[1]
    return max(1, memory_budget() // 4 // per_study)


def _block_pvalues(pilot, options, designs, injections, task):
    """The p-values of studies ``lo:hi`` of design ``d`` (``task = (d, lo, hi)``), in batches
    of :func:`_chunk`; each study from its own child of ``options[-1]`` (the root's entropy)."""
    d, lo, hi = task
    design, injection, entropy = designs[d], injections[d], options[-1]
    out = np.empty(hi - lo)
    step = _chunk(options, design)
    for start in range(lo, hi, step):
        stop = min(hi, start + step)
        studies = []
        for index in range(start, stop):
            rng = study_generator(entropy, index)
            X, H = _study(pilot, design, injection, rng)
            studies.append((X, H, rng))
        if _batched(options, design[1]):
            masks = np.stack([_swap_masks(rng, options[4], *H.shape) for _, H, rng in studies])
            cubes = np.stack([X for X, _, _ in studies])
            criteria = np.stack([H for _, H, _ in studies])
            out[start - lo : stop - lo] = _pearson_item_pvalues(cubes, criteria, masks, options[5])
        else:
            for i, (X, H, rng) in enumerate(studies):
                out[start - lo + i] = _one_pvalue(X, H, rng, options)
    return out


def _simulate(pilot, designs, shape, options, alpha, studies, executor, progress):
    """Rejections of every design (an array of ``shape``) and the PowerResult."""
    injections = [None if d[3] is None else _injection(pilot, d[3]) for d in designs]
    cluster = cluster_executor(executor)
    if cluster is None:
        tasks = []
        for d, design in enumerate(designs):
            step = _chunk(options, design)
            tasks += [(d, lo, min(studies, lo + step)) for lo in range(0, studies, step)]
        if progress is not None:
            tasks = progress(tasks, desc="simulated studies", total=len(tasks))
        parts = [
            (task, _block_pvalues(pilot, options, designs, injections, task)) for task in tasks
        ]
    else:
        tasks = [
            (d, lo, hi) for d in range(len(designs)) for lo, hi in split(studies, cluster.blocks)
        ]
        shared = (pilot, options, designs, injections)
        results = cluster.map(
            _block_pvalues, shared, tasks, progress=progress, desc="simulated studies"
        )
        parts = list(zip(tasks, results, strict=True))
    rejections = np.zeros(len(designs), dtype=np.int64)
    for (d, _, _), pvalues in parts:
        rejections[d] += int((pvalues <= alpha).sum())  # NaN never rejects
    rejections = rejections.reshape(shape)
    power = rejections / studies
    se = np.sqrt(power * (1.0 - power) / studies)
    return PowerResult(_scalar(power), _scalar(se), _scalar(rejections), studies)


# --------------------------------------------------------------------------- public simulators


def metric_pair_power(
    H,
    A,
    B,
    *,
    inputs=None,
    systems=None,
    ratings=None,
    delta=None,
    test="williams",
    level="item",
    method="kendall",
    variant="b",
    permutations=1000,
    studies=1000,
    alpha=0.05,
    alternative="greater",
    seed=0,
    executor=None,
    progress=None,
):
    """Power to find that metric A correlates better with the criterion than metric B.

    Simulates ``studies`` studies of each design from the pilot (the draws of
    :mod:`hanna_stats.kernels.power`), injects the effect, runs the package's own test of
    H1 "A correlates more strongly with the criterion than B" on each, and counts the studies
    whose p-value is at most ``alpha``.

    **The effect** (:func:`metric_pair_effect` gives it on the test's own statistic).
    ``delta=None``: A and B as given, resampled together (the pilot's own observed
    difference). ``delta``: the difference ``rho_a' - rho_b'`` of the two metrics' pooled
    Pearson ``|r|`` with the criterion (over all the pilot's items; ``rho_a``, ``rho_b`` the
    pilot's), reached by lowering ONE of the real pair with noise ``N(0, s^2)`` fresh for every
    study and item (``var`` over the pilot's items, ddof 0; the noise is independent of
    everything, so ``r(X + noise, H) = r(X, H) sd(X) / sqrt(var(X) + s^2)``):

    - ``delta >= rho_a - rho_b``: B lowered to ``rho_a - delta``,
      ``s^2 = var(B) ((rho_b / (rho_a - delta))^2 - 1)``;
    - ``delta < rho_a - rho_b``: A lowered to ``rho_b + delta``,
      ``s^2 = var(A) ((rho_a / (rho_b + delta))^2 - 1)``;

    ``delta`` in ``(-rho_b, rho_a)``; ``delta = 0``: equal pooled correlations (the null on
    that scale only where the pair is otherwise exchangeable). Exact on the pooled Pearson
    scale only: per-input correlations drop more where the metric varies less within an input,
    system-level ones less (the means average the noise away), ranks by other amounts.

    **The tests** (``test``): ``"williams"``: :func:`williams_test` of the study's level
    correlations (``method``), ``n`` the study's inputs at item level (the paper's convention)
    or systems at system level; ``"perm-both"``: the PERM-BOTH permutation test of
    :func:`permutation_test_pairs` with ``permutations`` permutations (its
    :func:`permutation_null` and :func:`permutation_pvalues`; item-level Pearson runs many
    studies per call of a compiled kernel that finds the swapped correlations from three sums
    over the swapped cells, with the same p-values); ``"calibrated"``: acc_eq's
    :func:`calibrated_permutation_test` (the metrics tie-calibrated in each study;
    ``method`` is not used), one-sided only. Item-level Williams with ``n`` = inputs is
    conservative (``docs/error-rates.md``: 0 rejections in 400 null studies on every data
    shape): its t with ``n - 3`` degrees of freedom is not the null distribution of a mean of
    per-input correlations, so its simulated power is far below PERM-BOTH's.

    Parameters
    ----------
    H : array_like, shape (G, S) or (G, S, R)
        The pilot's criterion: item scores, or R ratings per item (NaN: missing), each item
        with at least one; finite.
    A, B : array_like, shape (G, S)
        The metrics, finite: H1 says A correlates better.
    inputs, systems : int or 1-d array of int, optional
        The design's inputs G' (drawn with replacement) and systems S' (without replacement
        up to S, with replacement above); None: the pilot's. At least 4 (Williams at item level:
        inputs) and 3 systems (at least 4 for Williams at system level).
    ratings : int or 1-d array of int, optional
        Ratings per item R', drawn with replacement from the item's ratings (needs H of
        shape (G, S, R)); None: the pilot's item scores.
    delta : float or 1-d array of float, optional
        The pooled Pearson difference ``rho_a' - rho_b'`` injected (above); None: the
        pilot's own pair.
    test : {"williams", "perm-both", "calibrated"}
    level : {"item", "system"}
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
        Kendall's variant.
    permutations : int
        Permutations of each simulated test (PERM-BOTH, calibrated).
    studies : int
        Simulated studies per design.
    alpha : float in (0, 1)
    alternative : {"greater", "two-sided", "less"}
        As the test's (``"greater"``: A correlates more); the calibrated test has no
        two-sided p-value.
    seed : int, numpy.random.Generator or None
        The root of the studies' seeds (``numpy.random.SeedSequence(seed).spawn(studies)``);
        a Generator gives it one integer.
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Run blocks of studies on this executor (:mod:`hanna_stats.kernels.distributed`); the
        same result bit for bit.
    progress : callable, optional
        ``progress(iterable, desc=..., total=...)`` wrapping the batches of studies (with
        ``executor``: the blocks as they finish).

    Returns
    -------
    PowerResult
        Scalars for one design; arrays of the broadcast shape of ``inputs``, ``systems``,
        ``ratings`` and ``delta`` for a grid (every design on the same studies' seeds).

    References
    ----------
    D. Card, P. Henderson, U. Khandelwal, R. Jia, K. Mahowald and D. Jurafsky, "With Little
    Power Comes Great Responsibility", EMNLP 2020. D. Deutsch, R. Dror and D. Roth, "A
    Statistical Analysis of Summarization Evaluation Metrics Using Resampling Methods", TACL
    9, 2021.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(50, 8))
    >>> A, B = H + rng.normal(size=H.shape), H + 2 * rng.normal(size=H.shape)
    >>> res = metric_pair_power(H, A, B, inputs=[10, 40], delta=0.3, test="perm-both",
    ...                         method="pearson", studies=200)
    >>> res.power.tolist(), res.studies
    ([0.87, 1.0], 200)
    """
    test = PAIR_TESTS[check_option("test", test, PAIR_TESTS)]
    level = POWER_LEVELS[check_option("level", level, POWER_LEVELS)]
    check_option("method", method)
    check_option("variant", variant)
    check_option("alternative", alternative)
    if test == "calibrated" and alternative == "two-sided":
        raise ValueError("the calibrated test is one-sided: alternative 'greater' or 'less'")
    if B is None:
        raise ValueError("B must be given: the pilot's second metric (the effect acts on the pair)")
    pilot = _pilot(H, A, B)
    if delta is not None and not np.isfinite(np.asarray(delta, dtype=float)).all():
        raise ValueError(f"delta must be None or finite numbers; got {delta!r}")
    williams = test == "williams"
    minimum = (4 if williams and level == "item" else 1, 4 if williams and level == "system" else 3)
    designs, shape = _grid(pilot, inputs, systems, ratings, delta, minimum)
    options = (
        test,
        level,
        method,
        variant,
        check_count("permutations", permutations),
        alternative,
        root_entropy(seed),
    )
    studies = check_count("studies", studies)
    alpha = _check_alpha(alpha)
    return _simulate(pilot, designs, shape, options, alpha, studies, executor, progress)


#: Noise draws :func:`metric_pair_effect` averages the test's statistic over (an injected
#: effect's expected statistic; its standard error is returned).
EFFECT_DRAWS = 64


class PairEffect(NamedTuple):
    """The effect of a metric pair (:func:`metric_pair_effect`).

    ``effect``: ``rho_a - rho_b``, the pooled Pearson ``|r|`` difference (the scale ``delta``
    is given on: ``delta`` itself, or the pilot's observed difference); ``statistic``: the
    difference of the test's own statistic on the pilot (after the injection: its mean over
    ``draws`` noise draws); ``standard_error``: that mean's Monte Carlo standard error (0
    without an injection); ``lowered``: ``"a"`` or ``"b"``, the metric the noise is added to
    (None without one); ``noise_sd``: the noise's standard deviation ``s``; ``draws``.
    """

    effect: float
    statistic: float
    standard_error: float
    lowered: str | None
    noise_sd: float
    draws: int


def _pair_statistic(H, X, test, level, method, variant):
    """The test's statistic of A minus B (``X`` (2, G, S)) against item scores ``H``."""
    if test == "calibrated":
        stat = tie_calibration(H[None], X, level=level).statistic[0]
    else:
        kwargs = {"level": level, "method": method, "variant": variant}
        stat = level_correlation(X, H[None], **kwargs).statistic[:, 0]
        if test == "williams":
            stat = np.abs(stat)
    return float(stat[0] - stat[1])


def metric_pair_effect(
    H,
    A,
    B,
    delta=None,
    *,
    test="williams",
    level="item",
    method="kendall",
    variant="b",
    draws=EFFECT_DRAWS,
    seed=0,
):
    """The effect :func:`metric_pair_power` simulates, on the pooled Pearson scale it is
    injected on and on the test's own statistic.

    The test's statistic is the difference, A minus B, of the two metrics' correlations with
    the criterion's item scores at ``level`` by ``method`` (:func:`level_correlation`;
    Williams: of their absolute values) or, for ``"calibrated"``, of their tie-calibrated
    acc_eq (:func:`tie_calibration`, ``method`` not used), on the whole pilot. ``delta=None``:
    the pilot's own pair. With ``delta``, one metric gets the noise of
    :func:`metric_pair_power` (fresh ``N(0, s^2)`` per item), and the statistic is its mean
    over ``draws`` draws of the noise on the pilot's items, ``numpy.random.default_rng(seed)``
    (an estimate of the expected difference after the injection, with its standard error
    ``std / sqrt(draws)``).

    Parameters
    ----------
    H, A, B, test, level, method, variant
        As :func:`metric_pair_power`.
    delta : float, optional
        The pooled Pearson difference ``rho_a' - rho_b'`` injected; None: the pilot's.
    draws : int
        Noise draws averaged (with ``delta``).
    seed : int, numpy.random.Generator or None
        Of the noise draws.

    Returns
    -------
    PairEffect

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(200, 8))
    >>> A, B = H + rng.normal(size=H.shape), H + 2 * rng.normal(size=H.shape)
    >>> observed = metric_pair_effect(H, A, B, method="pearson")
    >>> round(observed.effect, 3), round(observed.statistic, 3), observed.lowered
    (0.285, 0.282, None)
    >>> null = metric_pair_effect(H, A, B, 0.0, method="pearson")
    >>> round(null.effect, 3), round(null.statistic, 3), null.lowered, round(null.noise_sd, 2)
    (0.0, 0.015, 'a', 1.93)
    """
    test = PAIR_TESTS[check_option("test", test, PAIR_TESTS)]
    level = POWER_LEVELS[check_option("level", level, POWER_LEVELS)]
    check_option("method", method)
    check_option("variant", variant)
    if B is None:
        raise ValueError("B must be given: the pilot's second metric (the effect acts on the pair)")
    pilot = _pilot(H, A, B)
    draws = check_count("draws", draws)
    rng = check_seed(seed)
    scores = pilot.criterion.scores
    X = np.stack([pilot.A, pilot.B])
    options = (test, level, method, variant)
    if delta is None:
        rho_a, rho_b = _pooled(pilot)
        statistic = _pair_statistic(scores, X, *options)
        return PairEffect(rho_a - rho_b, statistic, 0.0, None, 0.0, 0)
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise ValueError(f"delta must be None or a number; got {delta!r}")
    metric, sd = _injection(pilot, float(delta))
    values = np.empty(draws)
    for k in range(draws):
        noisy = X.copy()
        noisy[metric] += sd * rng.standard_normal(scores.shape)
        values[k] = _pair_statistic(scores, noisy, *options)
    se = float(values.std(ddof=1) / np.sqrt(draws)) if draws > 1 else float("nan")
    return PairEffect(float(delta), float(values.mean()), se, "ab"[metric], sd, draws)


def correlation_power(
    H,
    A,
    *,
    inputs=None,
    systems=None,
    ratings=None,
    level="system",
    method="kendall",
    variant="b",
    studies=1000,
    alpha=0.05,
    alternative="greater",
    seed=0,
    executor=None,
    progress=None,
):
    """Power to find metric A's correlation with the criterion different from 0.

    Simulates studies of each design from the pilot as :func:`metric_pair_power` (no effect
    is injected: the pilot's own correlation) and tests each study's correlation with
    :func:`correlation` (scipy's tests: Pearson's exact Beta distribution, Spearman's t,
    Kendall's exact or normal approximation; ``alternative`` as there). The level is
    ``"system"`` (the S' system means over the study's inputs) or ``"global"`` (its G' S'
    items pooled): an item-level correlation (a mean over inputs) has no such test.

    Parameters
    ----------
    H, A, inputs, systems, ratings, studies, alpha, seed, executor, progress
        As :func:`metric_pair_power`; at least 3 systems (system level) or 3 items (global).
    level : {"system", "global"}
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
    alternative : {"greater", "two-sided", "less"}

    Returns
    -------
    PowerResult

    Examples
    --------
    A bivariate normal pilot of 20,000 items with correlation 0.3 (Fisher's z: power 0.80 at
    85 items two-sided):

    >>> rng = np.random.default_rng(1)
    >>> H = rng.normal(size=(20_000, 1))
    >>> A = 0.3 * H + np.sqrt(1 - 0.09) * rng.normal(size=H.shape)
    >>> res = correlation_power(H, A, inputs=85, level="global", method="pearson",
    ...                         alternative="two-sided", studies=400)
    >>> float(res.power), round(float(res.standard_error), 3)
    (0.8325, 0.019)
    """
    levels = ("system", "global")
    level = levels[check_option("level", level, levels)]
    check_option("method", method)
    check_option("variant", variant)
    check_option("alternative", alternative)
    pilot = _pilot(H, A, None)
    minimum = (3, 3) if level == "system" else (1, 1)
    designs, shape = _grid(pilot, inputs, systems, ratings, None, minimum)
    if level == "global" and min(g * s for g, s, _, _ in designs) < 3:
        raise ValueError("the global level needs at least 3 items (inputs x systems)")
    options = ("correlation", level, method, variant, 1, alternative, root_entropy(seed))
    studies = check_count("studies", studies)
    alpha = _check_alpha(alpha)
    return _simulate(pilot, designs, shape, options, alpha, studies, executor, progress)
