"""Power: closed forms against hand-worked values and statsmodels; the simulators against the
closed forms (3 Monte Carlo standard errors) and against a loop of the package's public tests
on the documented draws (exactly); the executor path and the thread count bit for bit."""

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import pytest
import scipy.stats

from hanna_stats.kernels import (
    ClusterExecutor,
    calibrated_permutation_test,
    correlation_power,
    fisher_power,
    level_correlation,
    metric_pair_effect,
    metric_pair_power,
    paired_t_power,
    permutation_test_pairs,
    tie_calibration,
    williams_power,
    williams_test,
)


def test_fisher_power_hand_worked():
    # atanh(0.3) sqrt(82) = 2.80283; Phi(2.80283 - 1.95996) = Phi(0.84287) = 0.80034 (+ the
    # other tail, Phi(-4.76) ~ 1e-6); one-sided Phi(2.80283 - 1.64485) = Phi(1.15798).
    assert fisher_power(0.3, 85) == pytest.approx(0.80035, abs=1e-5)
    assert fisher_power(0.3, 85, alternative="greater") == pytest.approx(0.87656, abs=1e-5)
    assert fisher_power(-0.3, 85, alternative="less") == pytest.approx(0.87656, abs=1e-5)
    grid = fisher_power([0.1, 0.3], [[85], [200]])
    assert grid.shape == (2, 2) and grid[0, 1] == pytest.approx(0.80035, abs=1e-5)
    with pytest.raises(ValueError, match="r must"):
        fisher_power(1.0, 10)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_paired_t_power_matches_statsmodels(alternative):
    from statsmodels.stats.power import TTestPower

    words = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}
    for d in (-0.4, 0.1, 0.5, 1.2):
        for n in (5, 20, 80):
            expected = TTestPower().power(d, n, 0.05, alternative=words[alternative])
            got = paired_t_power(d, n, alpha=0.05, alternative=alternative)
            if np.isnan(expected):  # scipy's nct.cdf far in the tail (d 1.2, n 80, "less")
                assert got == pytest.approx(0.0, abs=1e-12)
            else:
                assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_williams_power_formula():
    # Steiger (1980) eq. 7 typed out here, and scipy.stats' Student t quantile.
    r12, r13, r23, n = 0.5, 0.3, 0.6, 100
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    mean = (r12 + r13) / 2
    t = (r12 - r13) * np.sqrt(
        (n - 1) * (1 + r23) / (2 * det * (n - 1) / (n - 3) + mean**2 * (1 - r23) ** 3)
    )
    crit = scipy.stats.t.ppf(0.95, n - 3)
    assert williams_power(r12, r13, r23, n) == pytest.approx(scipy.stats.norm.cdf(t - crit))
    crit2 = scipy.stats.t.ppf(0.975, n - 3)
    two = scipy.stats.norm.cdf(t - crit2) + scipy.stats.norm.cdf(-t - crit2)
    assert williams_power(r12, r13, r23, n, alternative="two-sided") == pytest.approx(two)


def _within(res, expected):
    """The simulated power within 3 Monte Carlo standard errors of ``expected``."""
    se = np.sqrt(expected * (1 - expected) / res.studies)
    assert abs(res.power - expected) <= 3 * se, (res.power, expected, se)


def test_simulator_reproduces_fisher_power():
    # One metric against the criterion, r = 0 tested by the package's correlation kernel
    # (scipy's exact Pearson test) on 85 items drawn from a bivariate normal pilot of 100,000
    # items (rho 0.3): Fisher's z power of the pilot's r (0.80). 2,000 studies: SE 0.009.
    rng = np.random.default_rng(5)
    Z = rng.multivariate_normal([0, 0], [[1, 0.3], [0.3, 1]], size=100_000)
    H, A = Z[:, :1], Z[:, 1:]
    r = np.corrcoef(Z.T)[0, 1]
    options = {"level": "global", "method": "pearson", "alternative": "two-sided"}
    res = correlation_power(H, A, inputs=85, systems=1, studies=2000, seed=2, **options)
    _within(res, fisher_power(r, 85))


def test_simulator_reproduces_williams_power():
    # A trivariate normal pilot of 100,000 "systems" (one input): at system level a study of
    # n systems drawn without replacement is n (almost) independent draws, the Williams
    # test's setting. 2,000 studies: SE 0.011 (power about 0.45).
    rng = np.random.default_rng(5)
    cov = [[1, 0.5, 0.3], [0.5, 1, 0.6], [0.3, 0.6, 1]]
    Z = rng.multivariate_normal(np.zeros(3), cov, size=100_000)
    H, A, B = (Z[:, i][None, :] for i in range(3))
    R = np.corrcoef(Z.T)
    res = metric_pair_power(
        H, A, B, test="williams", level="system", method="pearson", inputs=1, systems=40,
        studies=2000, seed=1,
    )  # fmt: skip
    _within(res, williams_power(R[0, 1], R[0, 2], R[1, 2], 40))


def _pilot(G=40, S=8, R=3, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(G, S))
    ratings = np.round(truth[..., None] + rng.normal(size=(G, S, R)))
    ratings[0, 0, 1] = np.nan  # a missing rating
    A = truth + rng.normal(size=(G, S))
    B = truth + 1.5 * rng.normal(size=(G, S))
    return ratings, A, B


def _reference(ratings, A, B, design, options, studies, seed, alpha):
    """The rejections of a loop of the public tests on the draws the module documents."""
    inputs, systems, n_ratings, delta = design
    G, S, _ = ratings.shape
    H = np.nanmean(ratings, axis=2)
    if delta is not None:  # the docstring's formulas: lower B, or A, with noise
        h = H.ravel()
        rho_a, rho_b = (abs(np.corrcoef(x.ravel(), h)[0, 1]) for x in (A, B))
        lowered = 1 if delta >= rho_a - rho_b else 0
        rho, target = (rho_b, rho_a - delta) if lowered else (rho_a, rho_b + delta)
        sigma = np.sqrt((A, B)[lowered].var() * ((rho / target) ** 2 - 1))
    test, level, method, permutations = options
    pvalues = []
    for child in np.random.SeedSequence(seed).spawn(studies):
        rng = np.random.default_rng(child)
        gi = rng.integers(0, G, inputs)
        si = rng.choice(S, systems, replace=False)
        cells = np.ix_(gi, si)
        if n_ratings is None:
            Hs = H[cells]
        else:
            items = ratings[cells]
            k = rng.random((inputs, systems, n_ratings)) * (~np.isnan(items)).sum(2)[..., None]
            kept = [[row[~np.isnan(row)] for row in line] for line in items]
            Hs = np.array(
                [[kept[g][s][k[g, s].astype(int)].mean() for s in range(systems)]
                 for g in range(inputs)]
            )  # fmt: skip
        X = np.stack([A[cells], B[cells]])
        if delta is not None:
            X[lowered] = X[lowered] + sigma * rng.standard_normal((inputs, systems))
        if test == "williams":
            kw = {"level": level, "method": method}
            r = level_correlation(X, Hs[None], **kw).statistic[:, 0]
            R = level_correlation(X, **kw).statistic
            n = inputs if level == "item" else systems
            pvalues.append(williams_test(r, R, n).pvalue[0, 1])
        elif test == "calibrated":
            res = calibrated_permutation_test(
                Hs[None], X, level=level, permutations=permutations, seed=rng
            )
            pvalues.append(res.pvalue[0, 0, 1])
        else:
            masks = rng.integers(0, 1 << systems, (permutations, inputs), dtype=np.uint64)
            swaps = ((masks[..., None] >> np.arange(systems, dtype=np.uint64)) & 1).astype(np.uint8)
            res = permutation_test_pairs(
                X, Hs, level=level, method=method, swaps=swaps, alternative="greater"
            )
            pvalues.append(res.pvalue[0, 1])
    return [int((np.array(pvalues) <= a).sum()) for a in alpha]


CASES = [
    # (test, level, method, design (inputs, systems, ratings, delta))
    ("perm-both", "item", "pearson", (30, 8, None, None)),  # the batched kernel
    # the pilot's pooled Pearson rho_a - rho_b is 0.155: delta 0.3 lowers B, 0.05 and 0.1 A
    ("perm-both", "item", "pearson", (25, 6, 2, 0.3)),  # ... ratings and noise drawn
    ("perm-both", "item", "kendall", (20, 5, None, 0.05)),
    ("perm-both", "system", "pearson", (20, 6, None, None)),
    ("williams", "item", "kendall", (30, 8, 1, None)),
    ("williams", "system", "spearman", (30, 8, None, 0.1)),
    ("calibrated", "item", "kendall", (15, 5, None, None)),
]


@pytest.mark.parametrize(("test", "level", "method", "design"), CASES)
def test_simulator_equals_a_loop_of_the_public_tests(test, level, method, design):
    ratings, A, B = _pilot()
    alpha = (0.01, 0.05, 0.2, 0.5, 0.8)
    permutations = 50 if test == "calibrated" else 200
    studies = 12 if test == "calibrated" else 16
    expected = _reference(
        ratings, A, B, design, (test, level, method, permutations), studies, 7, alpha
    )
    inputs, systems, n_ratings, delta = design
    got = [
        int(
            metric_pair_power(
                ratings if n_ratings is not None else np.nanmean(ratings, axis=2),
                A,
                B,
                inputs=inputs,
                systems=systems,
                ratings=n_ratings,
                delta=delta,
                test=test,
                level=level,
                method=method,
                permutations=permutations,
                studies=studies,
                alpha=a,
                seed=7,
            ).rejections
        )
        for a in alpha
    ]
    assert got == expected
    assert 0 < got[-1]  # not all p-values NaN or 1


def test_executor_and_threads_bit_for_bit():
    ratings, A, B = _pilot()
    H = np.nanmean(ratings, axis=2)
    kwargs = {"inputs": [10, 30, 60], "test": "perm-both", "method": "pearson", "studies": 40}
    kwargs |= {"permutations": 100, "delta": 0.3, "alpha": 0.2}
    local = metric_pair_power(H, A, B, **kwargs)
    assert local.power.shape == (3,) and local.power[0] < local.power[2]
    with ThreadPoolExecutor(2) as pool:
        remote = metric_pair_power(H, A, B, executor=ClusterExecutor(pool, blocks=3), **kwargs)
    assert np.array_equal(local.rejections, remote.rejections)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        single = metric_pair_power(H, A, B, **kwargs)
    finally:
        numba.set_num_threads(threads)
    assert np.array_equal(local.rejections, single.rejections)
    # A grid's point equals the single-design call (the same studies' seeds).
    one = metric_pair_power(H, A, B, **(kwargs | {"inputs": 30}))
    assert one.rejections == local.rejections[1]
    assert one.standard_error == pytest.approx(np.sqrt(one.power * (1 - one.power) / 40))


def test_arguments_are_checked():
    ratings, A, B = _pilot()
    H = np.nanmean(ratings, axis=2)
    with pytest.raises(ValueError, match="test must be one of"):
        metric_pair_power(H, A, B, test="t")
    with pytest.raises(ValueError, match="one-sided"):
        metric_pair_power(H, A, B, test="calibrated", alternative="two-sided")
    with pytest.raises(ValueError, match="B must be given"):
        metric_pair_power(H, A, None, delta=0.1)
    with pytest.raises(ValueError, match="delta must lie"):
        metric_pair_power(H, A, B, delta=0.99)
    with pytest.raises(ValueError, match="delta must lie"):
        metric_pair_effect(H, A, B, -0.99)
    with pytest.raises(ValueError, match="delta must be None or finite"):
        metric_pair_power(H, A, B, delta=np.nan)
    with pytest.raises(ValueError, match="needs the pilot's ratings"):
        metric_pair_power(H, A, B, ratings=2)
    with pytest.raises(ValueError, match="inputs must be"):
        metric_pair_power(H, A, B, inputs=3)
    with pytest.raises(ValueError, match="finite"):
        metric_pair_power(H, np.where(A > 2, np.nan, A), B)
    with pytest.raises(ValueError, match="level must be one of"):
        correlation_power(H, A, level="item")


def test_injection_reproduces_williams_power_on_the_real_pair():
    # A trivariate normal pilot as above (r(A, H) 0.5, r(B, H) 0.3, r(A, B) 0.6): noise
    # independent of everything added to one metric X scales its correlations by
    # c = rho_X' / rho_X, so after the injection the pair is again trivariate normal with
    # known correlations. delta 0.12 < the observed 0.194 lowers A to r(B, H) + 0.12 (and
    # r(A, B) by c); delta 0.22 lowers B to r(A, H) - 0.22. Differences where the normal
    # approximation holds (it overstates the power from about 0.24 on: the statistic's extra
    # spread). 2,000 studies: SE 0.009 and 0.011.
    rng = np.random.default_rng(6)
    cov = [[1, 0.5, 0.3], [0.5, 1, 0.6], [0.3, 0.6, 1]]
    Z = rng.multivariate_normal(np.zeros(3), cov, size=100_000)
    H, A, B = (Z[:, i][None, :] for i in range(3))
    R = np.corrcoef(Z.T)
    res = metric_pair_power(
        H, A, B, test="williams", level="system", method="pearson", inputs=1, systems=40,
        delta=[0.12, 0.22], studies=2000, seed=3,
    )  # fmt: skip
    ra, rb = R[0, 2] + 0.12, R[0, 1] - 0.22
    lower_a = williams_power(ra, R[0, 2], R[1, 2] * ra / R[0, 1], 40)
    lower_b = williams_power(R[0, 1], rb, R[1, 2] * rb / R[0, 2], 40)
    _within(res._replace(power=res.power[0]), lower_a)
    _within(res._replace(power=res.power[1]), lower_b)


def test_no_effect_rejects_at_alpha_on_an_exchangeable_pair():
    # A is less noisy than B (criterion = truth + noise): delta = 0 lowers A with noise
    # until its pooled Pearson equals B's, after which A + noise and B are both the truth plus
    # normal noise of (almost exactly) the same variance: exchangeable, so PERM-BOTH (item
    # level, Pearson) rejects at about alpha. 1,000 studies: SE 0.0069 at 0.05.
    rng = np.random.default_rng(8)
    truth = rng.normal(size=(3000, 8))
    H = truth + 0.5 * rng.normal(size=truth.shape)
    A, B = truth + 0.6 * rng.normal(size=truth.shape), truth + rng.normal(size=truth.shape)
    effect = metric_pair_effect(H, A, B, 0.0, method="pearson", test="perm-both")
    assert effect.lowered == "a"
    res = metric_pair_power(
        H, A, B, delta=0.0, inputs=30, test="perm-both", method="pearson", permutations=200,
        studies=1000, seed=5,
    )  # fmt: skip
    _within(res, 0.05)


def test_metric_pair_effect_observed_and_injected():
    ratings, A, B = _pilot()
    H = np.nanmean(ratings, axis=2)
    rho_a, rho_b = (abs(np.corrcoef(x.ravel(), H.ravel())[0, 1]) for x in (A, B))
    # the observed pair: item-level Kendall's tau-b from scipy, averaged over the inputs
    tau = [np.mean([scipy.stats.kendalltau(x[g], H[g]).statistic for g in range(40)])
           for x in (A, B)]  # fmt: skip
    observed = metric_pair_effect(H, A, B, test="perm-both")
    assert observed.effect == pytest.approx(rho_a - rho_b, abs=1e-12)
    assert observed.statistic == pytest.approx(tau[0] - tau[1], abs=1e-12)
    assert (observed.lowered, observed.standard_error, observed.draws) == (None, 0.0, 0)
    acc = tie_calibration(H[None], np.stack([A, B]), level="system").statistic[0]
    calibrated = metric_pair_effect(H, A, B, test="calibrated", level="system")
    assert calibrated.statistic == pytest.approx(acc[0] - acc[1], abs=1e-12)
    # injected: the same noise draws by hand (default_rng(seed), the documented sd)
    for delta, lowered in ((0.3, 1), (0.05, 0)):
        rho, target = (rho_b, rho_a - delta) if lowered else (rho_a, rho_b + delta)
        sd = np.sqrt((A, B)[lowered].var() * ((rho / target) ** 2 - 1))
        rng = np.random.default_rng(4)
        values = []
        for _ in range(10):
            X = np.stack([A, B])
            X[lowered] = X[lowered] + sd * rng.standard_normal(H.shape)
            r = level_correlation(X, H[None], method="spearman", level="system").statistic[:, 0]
            values.append(r[0] - r[1])
        got = metric_pair_effect(H, A, B, delta, test="perm-both", method="spearman",
                                 level="system", draws=10, seed=4)  # fmt: skip
        assert got.lowered == "ab"[lowered] and got.noise_sd == pytest.approx(sd, rel=1e-12)
        assert got.statistic == pytest.approx(np.mean(values), abs=1e-12)
        assert got.standard_error == pytest.approx(np.std(values, ddof=1) / np.sqrt(10))


def test_injected_noise_reaches_the_pooled_pearson_target():
    # corr(X + noise, H) = rho_X sd(X) / sqrt(var(X) + s^2) = the target, up to the sample
    # covariance of the noise with H (SE about 1 / sqrt(items) = 0.004 per draw, 0.0014 over 8).
    ratings, A, B = _pilot(G=2000, S=8, seed=2)
    H = np.nanmean(ratings, axis=2)
    rho_a, rho_b = (abs(np.corrcoef(x.ravel(), H.ravel())[0, 1]) for x in (A, B))
    rng = np.random.default_rng(0)
    for delta in (0.0, 0.1, 0.3):
        effect = metric_pair_effect(H, A, B, delta, test="perm-both", method="pearson", draws=2)
        lowered = "ab".index(effect.lowered)
        X = (A, B)[lowered]
        r = [np.corrcoef((X + effect.noise_sd * rng.standard_normal(X.shape)).ravel(),
                         H.ravel())[0, 1] for _ in range(8)]  # fmt: skip
        target = rho_a - delta if lowered else rho_b + delta
        assert np.mean(r) == pytest.approx(target, abs=3 * 0.0014 + 1e-3)
