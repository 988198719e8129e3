"""``python benchmarks/mt_stats.py --mtme PATH``: our MT meta-evaluation kernels against
mt-metrics-eval's own functions on WMT-sized synthetic data.

mt-metrics-eval (github.com/google-research/mt-metrics-eval) is imported at run time from the
checkout at PATH (``sys.path`` insertion); it is never installed and none of its code is part
of this project. The registry package named ``mt-metrics-eval`` is another project: do not
install it. Its ``data.py`` imports ``apache_beam`` (only for its parallel mode); when that is
not installed, ``CompareMetrics``, ``ComputeSigMatrix`` and ``AssignRanks`` are executed from
the checkout's ``data.py`` source alone (parsed with ``ast``, run in a namespace with numpy and
the checkout's ``stats``), as the printout says.

Data, seeded: ``systems`` MT systems x ``segments`` segments, one MQM-like human score
(minus the sum of 1 per minor and 5 per major error, Poisson counts that fall with a latent
quality, capped at -25: integer scores with many ties) and ``metrics`` metrics (the latent
quality plus an error shared by all metrics and a metric's own noise, of increasing size;
metric 0 and one metric in five from metric 1 on take integer scores 0 to 100, with ties).
Metrics 0 and 1 have noise of the same size (a near tie: p-values of their comparison fall
anywhere in (0, 1)).

Each statistic runs on the same data in the same process. Each side is timed ``runs`` times
(``--runs``, default 5) and its median reported, ours warm (a first, untimed call compiles or
loads the Numba cache); the ratio is that of the two medians (the correlation rows alternate
the two sides' runs, so that a load on a shared machine falls on both alike). ``--only WORD``
runs the rows whose name holds WORD (``--only Kendall``: the Kendall rows). Where
mt-metrics-eval's run over all the metrics (or all the resamples) would take minutes, it runs
on a stated subset and its time is scaled linearly to the work ours did (per metric, per pair
of metrics, per resample), as the table's notes say. Agreement: closed forms, the largest
absolute difference over what both computed (tie calibration: also its epsilon); resampling,
the Monte Carlo z-score of the difference of two independent estimates of the same p-value,
|p1 - p2| / sqrt(p (1 - p) (1 / k1 + 1 / k2)) with p pooled, DISAGREE above 4 (compared where
mt-metrics-eval drew at least 10 resamples; its observed difference is compared always); soft
pairwise accuracy is checked with mt-metrics-eval's own sign draws given to ours (then the two
differ only by its float32 arithmetic).
"""

from __future__ import annotations

import ast
import os
import sys
import time
import typing
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.stats

from hanna_stats.kernels import (
    calibrated_permutation_test,
    level_correlation,
    pairwise_accuracy,
    permutation_test_pairs,
    significance_clusters,
    soft_pairwise_accuracy,
    tie_calibration,
)

CLOSED_TOL = 1e-9  # closed forms: largest absolute difference allowed
Z_MAX = 4.0  # resampling: largest Monte Carlo z-score allowed
SPA_TOL = 1e-4  # SPA with the same signs: float32 (theirs) against float64 (ours)


# ------------------------------------------------------------------------------------- data


def wmt_data(segments: int, systems: int = 20, metrics: int = 50, seed: int = 0):
    """``(H, M)``: the human cube (1, segments, systems) and the metrics (metrics, segments,
    systems), WMT-shaped (see the module docstring)."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0.0, 0.4, systems)
    difficulty = rng.normal(0.0, 1.0, (segments, 1))
    latent = quality + difficulty + rng.normal(0.0, 1.0, (segments, systems))
    minor = rng.poisson(np.exp(-0.3 - 0.6 * latent))
    major = rng.poisson(np.exp(-1.5 - 0.8 * latent))
    mqm = -np.minimum(25, minor + 5 * major).astype(float)
    shared = rng.normal(0.0, 0.5, (segments, systems))
    noise = np.r_[0.6, 0.6, np.linspace(0.7, 3.0, max(metrics - 2, 0))][:metrics]
    M = np.empty((metrics, segments, systems))
    for k in range(metrics):
        x = latent + shared + noise[k] * rng.normal(0.0, 1.0, (segments, systems))
        if k == 0 or k % 5 == 1:  # integer scores 0..100 (ties)
            M[k] = np.clip(np.rint(50 + 12 * x), 0, 100)
        else:
            M[k] = rng.uniform(0.2, 3.0) * x + rng.normal(0.0, 5.0)
    return mqm[None], M


def mtme_vector(X: np.ndarray) -> list[float]:
    """A (segments, systems) matrix as mt-metrics-eval's vector: each system's segments one
    after another (system-major), a list as ``data.GetCorrelations`` gives it."""
    return X.T.ravel().tolist()


# --------------------------------------------------------------------------- mt-metrics-eval


@dataclass
class MTME:
    stats: typing.Any
    compare_metrics: typing.Callable
    commit: str
    how_data: str


def load_mtme(path: Path) -> MTME:
    """mt-metrics-eval's ``stats`` and ``data.CompareMetrics`` from the checkout at ``path``."""
    path = path.resolve()
    if (path / "stats.py").is_file() and path.name == "mt_metrics_eval":
        path = path.parent
    if not (path / "mt_metrics_eval" / "stats.py").is_file():
        raise SystemExit(
            f"--mtme {path}: no mt_metrics_eval/stats.py there (a checkout of "
            "github.com/google-research/mt-metrics-eval is needed)"
        )
    sys.path.insert(0, str(path))
    from mt_metrics_eval import stats

    if Path(stats.__file__).resolve().parent != path / "mt_metrics_eval":
        raise SystemExit(f"mt_metrics_eval was imported from {stats.__file__}, not from {path}")
    head = path / ".git" / "HEAD"
    commit = "unknown commit"
    if head.is_file():
        ref = head.read_text().strip()
        target = path / ".git" / ref[5:] if ref.startswith("ref: ") else None
        commit = (target.read_text().strip() if target and target.is_file() else ref)[:7]
    try:
        from mt_metrics_eval import data

        return MTME(stats, data.CompareMetrics, commit, "data.CompareMetrics imported")
    except ImportError as error:  # apache_beam, used by data.py's parallel mode only
        source = (path / "mt_metrics_eval" / "data.py").read_text()
        wanted = {"CompareMetrics", "ComputeSigMatrix", "AssignRanks"}
        tree = ast.parse(source)
        tree.body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
        namespace = {"np": np, "stats": stats, "Callable": typing.Callable, "ast": ast, "os": os}
        exec(compile(tree, str(path / "mt_metrics_eval" / "data.py"), "exec"), namespace)
        how = (
            f"data.py not importable ({error}): its CompareMetrics, ComputeSigMatrix and "
            "AssignRanks run from the checkout's source"
        )
        return MTME(stats, namespace["CompareMetrics"], commit, how)


# ---------------------------------------------------------------------------------- timing


#: Timed runs of each side per row (``--runs``); the rows report their medians.
RUNS = 5


def warm(f, *args, small=None, **kwargs):
    """``(median seconds of RUNS calls, result)`` after one untimed call that compiles or
    loads the Numba cache: on ``small`` (other positional arguments of the same types) when
    given."""
    f(*(args if small is None else small), **kwargs)
    return median_of(f, *args, **kwargs)


def median_of(f, *args, seed=None, **kwargs):
    """``(median seconds of RUNS calls, the first call's value)``; with ``seed``, numpy's
    legacy global state is seeded before each call (mt-metrics-eval draws from it), so that
    every call does the same work."""
    times, value = [], None
    for run in range(RUNS):
        if seed is not None:
            np.random.seed(seed)  # noqa: NPY002 (MTME draws from the legacy global state)
        start = time.perf_counter()
        result = f(*args, **kwargs)
        times.append(time.perf_counter() - start)
        value = result if run == 0 else value
    return float(np.median(times)), value


def alternating(ours, theirs):
    """``((median seconds, value) of ours, (median seconds, value) of theirs)``: RUNS calls of
    each, one after the other (ours, theirs, ours, ...), so that a load on the shared machine
    falls on both sides alike; ``ours`` warm (called once beforehand)."""
    times = ([], [])
    values = [None, None]
    for run in range(RUNS):
        for side, f in enumerate((ours, theirs)):
            start = time.perf_counter()
            value = f()
            times[side].append(time.perf_counter() - start)
            values[side] = value if run == 0 else values[side]
    return tuple((float(np.median(t)), v) for t, v in zip(times, values, strict=True))


@dataclass
class Row:
    statistic: str
    segments: int
    ours: float
    mtme: float  # scaled to ours' work
    agreement: str
    agrees: bool
    note: str = ""
    marks: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.mtme / self.ours


def closed(ours, theirs, what="max |diff|", tol=CLOSED_TOL) -> tuple[str, bool]:
    diff = float(np.nanmax(np.abs(np.asarray(ours, float) - np.asarray(theirs, float))))
    return f"{what} {diff:.1e}", bool(diff <= tol)


def resampled(p_o, k_o, p_m, k_m, delta_o, delta_m) -> tuple[str, bool]:
    """Agreement of a permutation test: its observed difference (a closed form) and, when
    MTME drew at least 10 resamples, the Monte Carlo z-score of the two p-values."""
    d = abs(delta_o - delta_m)
    if k_m < 10:
        return f"d delta {d:.0e}; p {p_o:.3f}/{p_m:.3f} not compared ({k_m} resample)", bool(
            d <= CLOSED_TOL
        )
    z = mc_z(p_o, k_o, p_m, k_m)
    text = f"z {z:.1f} (p {p_o:.3f}/{p_m:.3f}), d delta {d:.0e}"
    return text, bool(z <= Z_MAX and d <= CLOSED_TOL)


def mc_z(p1: float, k1: int, p2: float, k2: int) -> float:
    pooled = (p1 * k1 + p2 * k2) / (k1 + k2)
    var = pooled * (1 - pooled) * (1 / k1 + 1 / k2)
    return 0.0 if var == 0 else abs(p1 - p2) / np.sqrt(var)


def pvalue_matrix(res) -> np.ndarray:
    """``pvalue`` (Mm, Mm) of a result for one human measure, whichever shape it has."""
    p = np.asarray(res.pvalue)
    return p[0] if p.ndim == 3 else p


def per_measure(x) -> np.ndarray:
    x = np.asarray(x, float)
    return x.reshape(-1) if x.ndim <= 1 else x[0]


# ------------------------------------------------------------------------------ statistics


def run_size(mtme: MTME, segments: int, metrics: int, seed: int, only=None) -> list[Row]:
    stats = mtme.stats
    H, M = wmt_data(segments, metrics=metrics, seed=seed)
    S = H.shape[2]
    K = len(M)
    gold = mtme_vector(H[0])
    vectors = [mtme_vector(m) for m in M]
    corr = [stats.Correlation(S, gold, v) for v in vectors]
    # How much of mt-metrics-eval's work is run at this size (its loops are per metric, per
    # segment or per resample; the rest is scaled linearly).
    slow = max(1, round(10_000 / segments))  # metrics: per-segment Python loops
    cheap = min(K, max(10, 100_000 // segments))  # metrics: a few scipy calls each
    k_item = max(1, 20_000 // segments)  # resamples of the by-item tests
    rows: list[Row] = []
    small = (H[:, :40], M[:2, :40])  # compiles the same code as the full cubes

    def wanted(*names):
        return only is None or any(only.lower() in name.lower() for name in names)

    def add(name, ours, theirs, agreement, note=""):
        """One row; ``theirs``: MTME's seconds (median), already scaled to ours' work."""
        if not wanted(name):
            return
        rows.append(Row(name, segments, ours, theirs, agreement[0], agreement[1], note))
        r = rows[-1]
        print(
            f"  {name:<50} ours {ours:8.3f} s  MTME {theirs:9.2f} s  {r.ratio:8.1f}x  "
            f"{r.agreement}",
            flush=True,
        )

    def part(n, total, what="metrics"):
        return f"MTME ran {n} of {total} {what}, time scaled x{total / n:g}" if n < total else ""

    print(
        f"\n{segments:,} segments x {S} systems, 1 MQM-like human score, {K} metrics (seed {seed})",
        flush=True,
    )

    # Segment-level correlations: average_by item (ours: item level grouped by input), sys
    # (grouped by system) and none (global level).
    groupings = (
        ("by item", "item", dict(level="item", group_by="input"), slow),
        ("by sys", "sys", dict(level="item", group_by="system"), cheap),
        ("no grouping", "none", dict(level="global"), cheap),
    )
    for label, average_by, options, n in groupings:
        for method in ("pearson", "kendall"):
            name = f"seg {'Pearson' if method == 'pearson' else 'Kendall tau-b'}, {label}"
            if not wanted(name):
                continue
            fn = "Pearson" if method == "pearson" else "Kendall"
            level_correlation(*small, method=method, **options)  # compiles or loads the cache
            (t_ours, res), (t_mtme, theirs) = alternating(
                lambda method=method, options=options: level_correlation(
                    H, M, method=method, **options
                ),
                lambda fn=fn, n=n, ab=average_by: [
                    getattr(c, fn)(average_by=ab)[0] for c in corr[:n]
                ],
            )
            add(name, t_ours, t_mtme * K / n, closed(res.statistic[0, :n], theirs), part(n, K))

    # System level, from the system scores (mt-metrics-eval reads them from .sys.score files;
    # both sides are given the system means).
    Hs, Ms = H.mean(axis=1, keepdims=True), M.mean(axis=1, keepdims=True)
    gold_sys = Hs[0, 0].tolist()
    for method in ("pearson", "kendall"):
        fn = "Pearson" if method == "pearson" else "Kendall"
        name = f"sys {fn}{' tau-b' if fn == 'Kendall' else ''} (system scores given)"
        if not wanted(name):
            continue

        def sys_level(fn=fn):
            return [getattr(stats.Correlation(S, gold_sys, m[0].tolist()), fn)()[0] for m in Ms]

        level_correlation(Hs, Ms, level="system", method=method)  # compiles or loads the cache
        (t_ours, res), (t_mtme, theirs) = alternating(
            lambda method=method: level_correlation(Hs, Ms, level="system", method=method),
            sys_level,
        )
        add(
            name,
            t_ours,
            t_mtme,
            closed(res.statistic[0], theirs),
        )

    if wanted("acc_eq (epsilon 0), by item"):
        # Pairwise accuracy with ties, epsilon 0, by item (MTME: KendallVariants acc23).
        t_ours, res = warm(pairwise_accuracy, H, M, small=small, level="item")
        t_mtme, theirs = median_of(
            lambda: [c.KendallVariants(average_by="item", variant="acc23")[0] for c in corr[:slow]]
        )
        add(
            "acc_eq (epsilon 0), by item",
            t_ours,
            t_mtme * K / slow,
            closed(res.statistic[0, :slow], theirs),
            part(slow, K),
        )

    if wanted("tie calibration acc_eq, by item", "calibrated pair permutation"):
        # Tie calibration, by item (MTME: KendallWithTiesOpt, sample_rate 1).
        t_ours, cal = warm(tie_calibration, H, M, small=small, level="item")
        theirs, t_cal = [], 0.0
        n_cal = 3 if segments <= 5000 else 2  # 0 and 1: integer scores; 2: continuous
        for m in range(
            n_cal
        ):  # Correlation.KendallWithTiesOpt calls it alike but drops the threshold
            t, out = median_of(
                stats.KendallWithTiesOpt,
                gold,
                vectors[m],
                variant="acc23",
                num_sys=S,
                average_by="item",
                sample_rate=1.0,
            )
            t_cal += t / n_cal  # seconds per metric
            theirs.append(out[:2])
        eps = [e for _, e in theirs]
        text, ok = closed(cal.statistic[0, :n_cal], [a for a, _ in theirs], "max |d acc|")
        ours_eps = per_measure(cal.epsilon)[:n_cal]
        eps_rel = float(np.max(np.abs(ours_eps - eps) / np.maximum(eps, 1e-300)))
        add(
            "tie calibration acc_eq, by item",
            t_ours,
            t_cal * K,
            (f"{text}, eps rel {eps_rel:.1e}", ok and eps_rel <= 1e-9),
            part(n_cal, K),
        )

    if wanted("calibrated pair permutation"):
        # Calibrated pairwise permutation test (MTME: PairwisePermutationSigDiff, acc23, by item),
        # metrics 0 and 1; ours calibrates them too, MTME's calibration time is added.
        pairs = S * (S - 1) // 2
        P = int(min(1000, 2**28 // (segments * pairs)) // 10 * 10)
        t_ours, res = warm(
            calibrated_permutation_test,
            H,
            M[:2],
            small=small,
            level="item",
            permutations=P,
            seed=seed,
        )
        t_mtme, (p_m, delta_m, k_used, _) = median_of(
            stats.PairwisePermutationSigDiff,
            corr[0],
            corr[1],
            "acc23",
            "item",
            k_item,
            stats.PermutationSigDiffParams(block_size=k_item),
            eps[0],
            eps[1],
            seed=seed,
        )
        p_o, d_o = pvalue_matrix(res)[1, 0], np.asarray(res.delta).reshape(-1, 2, 2)[0][1, 0]
        add(
            f"calibrated pair permutation, by item ({P} perm.)",
            t_ours,
            2 * t_cal + t_mtme * P / k_used,
            resampled(p_o, P, p_m, k_used, d_o, delta_m),
            f"MTME ran {k_used} resamples (epsilons given), time scaled to {P}, plus its 2 "
            "calibrations (tie calibration row)",
        )

    if wanted("PERM-BOTH Pearson, by item"):
        # PERM-BOTH, Pearson by item, metrics 0 and 1 (MTME: PermutationSigDiff).
        P = 1000 if segments <= 5000 else 200
        t_ours, res = warm(
            permutation_test_pairs,
            M[:2],
            H[0],
            small=(small[1], small[0][0]),
            level="item",
            method="pearson",
            permutations=P,
            alternative="greater",
            seed=seed,
        )
        t_mtme, (p_m, delta_m, k_used, _) = median_of(
            stats.PermutationSigDiff,
            corr[0],
            corr[1],
            scipy.stats.pearsonr,
            "item",
            k_item,
            stats.PermutationSigDiffParams(block_size=k_item),
            seed=seed,
        )
        p_o, d_o = pvalue_matrix(res)[1, 0], res.delta[1, 0]
        add(
            f"PERM-BOTH Pearson, by item, 1 pair ({P} perm.)",
            t_ours,
            t_mtme * P / k_used,
            resampled(p_o, P, p_m, k_used, d_o, delta_m),
            part(k_used, P, "resamples"),
        )

    if wanted("clusters, PERM-BOTH Pearson no grouping"):
        # Significance clusters, WMT22 style: PERM-BOTH Pearson with no grouping for every pair of
        # a few metrics, then the clusters (MTME: data.CompareMetrics).
        chosen = [0, 1, 10, 30][: 4 if segments <= 5000 else 3]
        chosen = [c for c in chosen if c < K]
        P = 1000 if segments <= 5000 else 200
        k_clu = max(10, 100_000 // segments)
        n_pairs = len(chosen) * (len(chosen) - 1) // 2

        def ours_clusters(X, h):
            r = permutation_test_pairs(
                X,
                h,
                level="global",
                method="pearson",
                permutations=P,
                alternative="greater",
                seed=seed,
            )
            return r, significance_clusters(r.statistic, pvalue_matrix(r), alpha=0.05)

        t_ours, (res, ranks) = warm(ours_clusters, M[chosen], H[0], small=(M[:3, :40], H[0, :40]))
        names = [f"m{c:02d}" for c in chosen]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_mtme, (their, sig, _, _) = median_of(
                mtme.compare_metrics,
                dict(zip(names, (corr[c] for c in chosen), strict=True)),
                scipy.stats.pearsonr,
                "none",
                k_clu,
                stats.PermutationSigDiffParams(block_size=k_clu),
                0.05,
                seed=seed,
            )
        order = list(their)
        their_ranks = [their[n][1] for n in names]
        ours_p = pvalue_matrix(res)
        zs = [
            mc_z(ours_p[names.index(a), names.index(b)], P, sig[i, j], k_clu)
            for i, a in enumerate(order)
            for j, b in enumerate(order)
            if j > i
        ]
        same = list(map(int, ranks)) == their_ranks
        text = (
            f"ranks {'equal' if same else 'DIFFER'} {their_ranks}, max z {max(zs):.1f}, "
            f"d r {np.max(np.abs(res.statistic - [their[n][0] for n in names])):.0e}"
        )
        add(
            f"clusters, PERM-BOTH Pearson no grouping ({P} perm.)",
            t_ours,
            t_mtme * P / k_clu,
            (text, same and max(zs) <= Z_MAX),
            f"{len(chosen)} metrics ({n_pairs} pairs) on both sides; {part(k_clu, P, 'resamples')}",
        )

    if wanted("soft pairwise accuracy"):
        # Soft pairwise accuracy (MTME: Correlation.PairwiseConfidenceError, 1000 permutations).
        t_ours, _ = warm(soft_pairwise_accuracy, H, M, small=small, permutations=1000, seed=seed)
        t_mtme, theirs = median_of(lambda: [c.PairwiseConfidenceError()[0] for c in corr[:cheap]])
        draws = np.random.default_rng(4).random(size=(1000, segments), dtype=np.float32)
        signs = 2.0 * np.rint(draws).astype(np.float64) - 1.0  # pce.compute_pairwise_p_values' draw
        same_signs = soft_pairwise_accuracy(H, M[:cheap], signs=signs).statistic[0]
        add(
            "soft pairwise accuracy (1000 perm.)",
            t_ours,
            t_mtme * K / cheap,
            closed(same_signs, theirs, "same signs: max |diff|", SPA_TOL),
            part(cheap, K),
        )

    return rows


def main(
    path: Path,
    segment_sizes: list[int],
    metrics: int = 50,
    seed: int = 0,
    runs: int = RUNS,
    only: str | None = None,
) -> None:
    global RUNS
    RUNS = runs
    mtme = load_mtme(path)
    print(f"mt-metrics-eval from {path} ({mtme.commit}); {mtme.how_data}")
    print(
        f"ours: hanna_stats.kernels, warm; MTME: its own functions, on the same data; each "
        f"side the median of {runs} runs; MTME (s) is scaled to ours' work where it ran on "
        "part of it (notes)"
    )
    rows = []
    for segments in segment_sizes:
        rows += run_size(mtme, segments, metrics, seed, only)
    print(
        f"\n| statistic | segments | ours (s, median of {runs}) | MTME (s, median of {runs}) "
        "| ratio | agreement | |"
    )
    print("|---|---:|---:|---:|---:|---|---|")
    for r in rows:
        marks = []
        if r.ratio < 10:
            marks.append("BELOW 10x")
        if not r.agrees:
            marks.append("DISAGREE")
        print(
            f"| {r.statistic} | {r.segments:,} | {r.ours:.4f} | {r.mtme:.2f} | "
            f"{r.ratio:,.1f}x | {r.agreement} | {' '.join(marks)} |"
        )
    print("\nnotes (what MTME ran where it was not all the work):")
    for r in rows:
        if r.note:
            print(f"- {r.statistic}, {r.segments:,} segments: {r.note}")
