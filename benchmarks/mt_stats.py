"""Benchmark of the MT meta-evaluation statistics against plain scipy/numpy loops on HANNA.

Run from the repository root: ``python benchmarks/mt_stats.py [HANNA_DIR]`` (default
``$HANNA_DATA`` or ``../shared/data/hanna``). The work: the 72 metrics against the 6 criteria
(10 systems x 96 inputs). Ours is timed warm (one call compiles or loads the Numba cache, then
the best of several repeats); each baseline runs on the same data in the same process and
gives the same numbers (checked).

``python benchmarks/mt_stats.py --mtme PATH [--segments N ...]``: the same statistics on
WMT-sized synthetic data (20 systems, an MQM-like human score, 50 metrics; 2,000 and 20,000
segments by default) against mt-metrics-eval's own functions, imported from the checkout at
PATH (never installed), each side the median of ``--runs`` runs (default 5), with the ratio
of the medians and the agreement per statistic (``benchmarks/mt_stats_mtme.py``; ``--only
WORD``: the rows whose name holds WORD, e.g. ``--only Kendall``). Ratios under 10x are marked
BELOW 10x, agreement failures DISAGREE; the exit status is 0 either way.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

import numpy as np
import scipy.stats
from correlations import best_time  # benchmarks/correlations.py: this folder is on sys.path
from judges import timed

from hanna_stats.kernels import (
    fisher_interval,
    level_correlation,
    sign_flips,
    soft_pairwise_accuracy,
    tie_calibration,
)
from hanna_stats.kernels.calibration import TIE_RTOL
from hanna_stats.store import ingest, load_study, open_store

REPO = Path(__file__).resolve().parents[1]


def load(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """The criteria (6, 96, 10) and metrics (72, 96, 10) cubes of HANNA."""
    con = open_store()
    ingest(con, folder / "hanna_metric_scores.csv", format="hanna-metric-scores")
    cube = load_study(con).cube(kinds=("human", "metric"))
    human = np.asarray(cube.kinds) == "human"
    return cube.values[human], cube.values[~human]


def report(label: str, ours: float, baseline: float) -> None:
    print(
        f"  {label:<44} ours {ours * 1e3:9.2f} ms   baseline {baseline * 1e3:10.1f} ms   "
        f"ratio {baseline / ours:7.1f}x"
    )


def by_system_loop(H, M):
    """scipy.stats.kendalltau per system across the inputs, averaged."""
    out = np.empty((len(H), len(M)))
    for i in range(len(H)):
        for j in range(len(M)):
            taus = [scipy.stats.kendalltau(H[i, :, s], M[j, :, s])[0] for s in range(H.shape[2])]
            out[i, j] = np.nanmean(taus)
    return out


def fisher_loop(H, M):
    """scipy.stats.pearsonr(...).confidence_interval() of the system means, per pair."""
    h, m = H.mean(axis=1), M.mean(axis=1)
    out = np.empty((len(h), len(m), 2))
    for i in range(len(h)):
        for j in range(len(m)):
            ci = scipy.stats.pearsonr(h[i], m[j]).confidence_interval()
            out[i, j] = ci.low, ci.high
    return out


def calibration_loop(H, M):
    """Per pair: numpy pairs of every input, one argsort and a cumulative sum over the sorted
    differences (the sweep of mt-metrics-eval's tau_optimization, vectorised per pair), with
    the metric tying a pair when its difference is within ``epsilon + TIE_RTOL * scale``
    (``scale`` the metric's largest ``|m|``): the candidates are 0 and every difference."""
    i, j = np.triu_indices(H.shape[2], 1)
    out = np.empty((len(H), len(M)))
    w = 1.0 / (len(i) * H.shape[1])
    for a in range(len(H)):
        dh = (H[a][:, j] - H[a][:, i]).ravel()
        for b in range(len(M)):
            dm = (M[b][:, j] - M[b][:, i]).ravel()
            tol = TIE_RTOL * np.abs(M[b]).max()
            strict = (np.sign(dh) == np.sign(dm)).astype(float)
            tie = (dh == 0).astype(float)
            order = np.argsort(np.abs(dm), kind="stable")
            diff = np.abs(dm)[order]
            running = np.r_[0.0, np.cumsum((tie - strict)[order])]
            tied = np.searchsorted(diff, np.r_[0.0, diff] + tol, side="right")
            out[a, b] = (strict.sum() + running[tied]).max() * w
    return out


def spa_loop(H, M, signs):
    """mt-metrics-eval's method in plain numpy (``pce.compute_pairwise_p_values``): per measure,
    the permuted system sums ``signs @ x`` once, the p-values from their differences per pair
    of systems (all pairs at once here, with our rounding tolerance); then per (criterion,
    metric) pair ``1 - mean |p_h - p_m|`` (``pce.compute_one_minus_pce``)."""
    i, j = np.triu_indices(H.shape[2], 1)

    def pvalues(x):
        partial = signs @ x  # (K, S)
        sums = x.sum(axis=0)
        gamma = 1e-10 * (np.abs(x[:, i]) + np.abs(x[:, j])).sum(axis=0)
        return (partial[:, i] - partial[:, j] >= sums[i] - sums[j] - gamma).mean(axis=0)

    p_h = [pvalues(x) for x in H]
    p_m = [pvalues(x) for x in M]
    out = np.empty((len(H), len(M)))
    for a in range(len(H)):
        for b in range(len(M)):
            out[a, b] = 1 - np.abs(p_h[a] - p_m[b]).mean()
    return out


def main(folder: Path) -> None:
    H, M = load(folder)
    print(f"HANNA {len(M)} metrics x {len(H)} criteria, {H.shape[1]} inputs x {H.shape[2]} systems")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant inputs in the scipy loop

        ours = best_time(10, level_correlation, H, M, method="kendall", group_by="system")
        base, ref = timed(by_system_loop, H, M)
        res = level_correlation(H, M, method="kendall", group_by="system").statistic
        assert np.allclose(res, ref, equal_nan=True)
        report("item-level Kendall grouped by system", ours, base)

        def fisher():
            r = level_correlation(H, M, level="system", method="pearson").statistic
            return fisher_interval(r, H.shape[2])

        ours = best_time(10, fisher)
        base, ref = timed(fisher_loop, H, M)
        assert np.allclose(np.stack(fisher(), axis=-1), ref)
        report("system-level Pearson + Fisher z interval", ours, base)

        ours = best_time(5, tie_calibration, H, M)
        base, ref = timed(calibration_loop, H, M)
        assert np.allclose(tie_calibration(H, M).statistic, ref)
        report("item-level tie calibration (acc_eq)", ours, base)

        signs = sign_flips(H.shape[1], permutations=1000, seed=0)
        ours = best_time(5, soft_pairwise_accuracy, H, M, signs=signs)
        base, ref = timed(spa_loop, H, M, signs)
        assert np.allclose(soft_pairwise_accuracy(H, M, signs=signs).statistic, ref, 0, 1e-12)
        report("soft pairwise accuracy (1000 permutations)", ours, base)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hanna_dir", nargs="?", type=Path, help="HANNA folder (HANNA mode)")
    parser.add_argument("--mtme", type=Path, metavar="PATH", help="mt-metrics-eval checkout")
    parser.add_argument(
        "--segments", type=int, action="append", metavar="N", help="with --mtme; repeatable"
    )
    parser.add_argument("--metrics", type=int, default=50, help="with --mtme (default 50)")
    parser.add_argument("--seed", type=int, default=0, help="with --mtme: the data's seed")
    parser.add_argument(
        "--runs", type=int, default=5, help="with --mtme: timed runs per side (median)"
    )
    parser.add_argument("--only", metavar="WORD", help="with --mtme: the rows naming WORD")
    args = parser.parse_args()
    if args.mtme is not None:
        import mt_stats_mtme  # benchmarks/mt_stats_mtme.py

        mt_stats_mtme.main(
            args.mtme,
            args.segments or [2000, 20000],
            args.metrics,
            args.seed,
            runs=args.runs,
            only=args.only,
        )
    else:
        default = Path(os.environ.get("HANNA_DATA", REPO.parent / "shared" / "data" / "hanna"))
        main(args.hanna_dir or default)
