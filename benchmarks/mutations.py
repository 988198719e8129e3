"""Mutation check: does the suite catch a one-line bug in each statistic and option?

Run from the repository root: ``python benchmarks/mutations.py [--only NAME ...] [--list]``.

For each mutation of :data:`MUTATIONS` (one line of one file changed: a wrong branch of an
option, a wrong formula of a statistic) the script copies the repository (the files ``git
ls-files --cached --others --exclude-standard`` lists, as they are in the working tree) into a
fresh temporary folder, applies the change there, and runs the mutation's tests in that copy::

    nice -n 10 python -m pytest TESTS -x -q -p no:randomly -p no:cacheprovider

with ``PYTHONPATH`` the copy and a fresh ``NUMBA_CACHE_DIR`` (no compiled code of another copy
is loaded). ``../shared`` beside the copy links to this repository's ``../shared`` (the test
data). A mutation is *caught* when pytest reports a failed test (exit status 1) and *survives*
when its tests pass. First, the same tests run on an unchanged copy and must all pass (else
the check proves nothing and the script stops). The script prints one line per mutation and
exits with status 1 if any survives or cannot be applied (its ``old`` text must occur exactly
once in its file).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent


class Mutation(NamedTuple):
    """A one-line bug: ``old`` (exactly once in ``path``; it may hold a neighbouring line to
    make it unique) becomes ``new``; ``tests`` are the pytest node ids that must catch it."""

    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


W = "tests/kernels/test_williams.py::"
R = "tests/analyses/test_resampling.py::"
C = "tests/kernels/test_kernels_correlation.py::"
P = "tests/kernels/test_resampling_permutation.py::"
N = "tests/kernels/test_nominal_agreement.py::"

MUTATIONS = (
    Mutation(
        "williams alternative=less computed as greater",
        "hanna_stats/kernels/williams.py",
        'first = (value > 0) == (alternative == "greater")',
        "first = value > 0",
        (
            W + "test_less_greater_and_two_sided_against_student_t",
            W + "test_less_is_the_lower_tail_of_psych_r_test",
        ),
    ),
    Mutation(
        "williams alternative=two-sided as one tail",
        "hanna_stats/kernels/williams.py",
        "p_ab = p_ba = np.minimum(1.0, 2.0 * small)",
        "p_ab = p_ba = small",
        (W + "test_psych_r_test_outputs",),
    ),
    Mutation(
        "williams with n - 2 degrees of freedom",
        "hanna_stats/kernels/williams.py",
        "small = stdtr(n[a, b] - 3.0, -np.abs(value))",
        "small = stdtr(n[a, b] - 2.0, -np.abs(value))",
        (W + "test_steiger_case_a_by_hand",),
    ),
    Mutation(
        "bca resample=both without the system axis in the jackknife",
        "hanna_stats/kernels/bootstrap.py",
        '    if resample in ("systems", "both"):\n        n = A.shape[2]',
        '    if resample == "systems":\n        n = A.shape[2]',
        (R + "test_bootstrap_over_systems_matches_scipy",),
    ),
    Mutation(
        "ci_method=bca computed as percentile",
        "hanna_stats/kernels/bootstrap.py",
        'if ci_method == "percentile":',
        'if ci_method in ("percentile", "bca"):',
        (R + "test_bootstrap_matches_scipy_on_a_mean",),
    ),
    Mutation(
        "resample=both draws no inputs",
        "hanna_stats/kernels/bootstrap.py",
        '    if resample in ("inputs", "both"):\n        inputs = rng',
        '    if resample == "inputs":\n        inputs = rng',
        (R + "test_bootstrap_over_systems_matches_scipy",),
    ),
    Mutation(
        "kendall variant=c without the (m - 1) / m factor",
        "hanna_stats/kernels/kendall.py",
        "value = 2.0 * s / (float(n) * n * (m - 1) / m)",
        "value = 2.0 * s / (float(n) * n)",
        (C + "test_tau_variants_match_scipy_and_brute_force",),
    ),
    Mutation(
        "kendall variant=a computed as b",
        "hanna_stats/kernels/kendall.py",
        "        value = s / n0\n",
        "        value = s / math.sqrt(n0 - n1) / math.sqrt(n0 - n2)\n",
        (C + "test_tau_variants_match_scipy_and_brute_force",),
    ),
    Mutation(
        "spearman (average ranks) with tied values ranked by first position",
        "hanna_stats/kernels/ranks.py",
        "rank = 0.5 * (start + stop - 1)",
        "rank = float(start)",
        (C + "test_rankdata_matches_scipy_average_ranks", C + "test_correlation_matches_scipy"),
    ),
    Mutation(
        "ties=min computed as max",
        "hanna_stats/kernels/ranks.py",
        "            rank = float(start)\n",
        "            rank = float(stop - 1)\n",
        ("tests/kernels/test_kernels_api.py::test_tie_ranks_match_scipy",),
    ),
    Mutation(
        "correction=holm computed as bonferroni",
        "hanna_stats/kernels/multitest.py",
        "return np.minimum(1.0, np.maximum.accumulate(p * (m - np.arange(m))))",
        "return np.minimum(1.0, p * m)",
        ("tests/kernels/test_multitest.py",),
    ),
    Mutation(
        "correction=bh without the step-up minimum",
        "hanna_stats/kernels/multitest.py",
        "return np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])",
        "return np.minimum(1.0, scaled)",
        ("tests/kernels/test_multitest.py",),
    ),
    Mutation(
        "correction=by computed as bh",
        "hanna_stats/kernels/multitest.py",
        'if method == "by":',
        'if method == "none":',
        ("tests/kernels/test_multitest.py",),
    ),
    Mutation(
        "nan_policy=propagate over groups computed as omit",
        "hanna_stats/kernels/levels.py",
        "keep = (n_groups > 0) & (omit | (n_skipped == 0))",
        "keep = n_groups > 0",
        (
            "tests/kernels/test_kernels_grouped.py::test_propagate_and_raise",
            "tests/kernels/test_kernels_api.py::test_group_correlations_nan_policies",
        ),
    ),
    Mutation(
        "nan_policy=propagate of one correlation computed as omit",
        "hanna_stats/kernels/correlation.py",
        'if nan_policy == "propagate":',
        'if nan_policy == "none":',
        (C + "test_nan_policies",),
    ),
    Mutation(
        "group_by=system ignored",
        "hanna_stats/kernels/levels.py",
        'if level == "item" and group_by == "system":',
        'if level == "item" and group_by == "none":',
        ("tests/analyses/test_mt_averaging.py::test_grouping_and_weighting_match_plain_loops",),
    ),
    Mutation(
        "weighting=count of pairwise accuracy ignored",
        "hanna_stats/kernels/levels.py",
        'weights = observation_counts(cubes[0], cubes[-1]) if weighting == "count" else None',
        "weights = None",
        (R + "test_pairwise_accuracy_grouping_and_weighting_match_pair_loop",),
    ),
    Mutation(
        "weighting=count of level correlations ignored",
        "hanna_stats/kernels/levels.py",
        'weighted = weighting == "count"',
        "weighted = False",
        ("tests/analyses/test_mt_averaging.py::test_grouping_and_weighting_match_plain_loops",),
    ),
    Mutation(
        "krippendorff level_of_measurement=ordinal computed as interval",
        "hanna_stats/kernels/agreement.py",
        "            point = average_ranks(values)\n",
        "            point = values\n",
        ("tests/kernels/test_agreement_kernels.py::test_krippendorff_2011_example_c",),
    ),
    Mutation(
        "permutation alternative=less counted as greater",
        "hanna_stats/kernels/permutation.py",
        "hits = perms <= observed + gamma",
        "hits = perms >= observed - gamma",
        (R + "test_permutation_null_matches_loop",),
    ),
    Mutation(
        "permutation unit=systems swaps every cell",
        "hanna_stats/kernels/permutation.py",
        '"systems": (permutations, 1, n_systems),',
        '"systems": (permutations, n_inputs, n_systems),',
        (P + "test_swap_units_structure", P + "test_exact_enumeration_of_all_swaps"),
    ),
    Mutation(
        "interval_method=t computed as z",
        "hanna_stats/kernels/nominal_agreement.py",
        "return float(stdtrit(df, 0.5 + level / 2)) * se,",
        "return float(ndtri(0.5 + level / 2)) * se,",
        (N + "test_cohen_z_interval_is_statsmodels_and_t_interval_by_hand",),
    ),
    Mutation(
        "weights=quadratic computed as linear",
        "hanna_stats/kernels/nominal_agreement.py",
        'return 1.0 - (distance if weights == "linear" else distance**2)',
        "return 1.0 - distance",
        (N + "test_cohen_against_statsmodels",),
    ),
    Mutation(
        "pearson/spearman alternative=less as the upper tail",
        "hanna_stats/kernels/correlation.py",
        "        return cdf(stat)\n",
        "        return sf(stat)\n",
        (C + "test_correlation_matches_scipy",),
    ),
    Mutation(
        "tie_statistic=tau_eq computed as acc_eq",
        "hanna_stats/kernels/calibration.py",
        '_calibrated(Hc, Mc, epsilon, nan_policy, level, statistic)\n    if statistic == "tau_eq":',
        '_calibrated(Hc, Mc, epsilon, nan_policy, level, statistic)\n    if statistic == "none":',
        ("tests/kernels/test_mt_kernels.py::test_mtme_kendall_variants_and_ties_opt",),
    ),
    Mutation(
        "cell_order=system-major ignored",
        "hanna_stats/kernels/calibration.py",
        'if level == "global" and cell_order == "system-major":',
        'if level == "global" and cell_order == "none":',
        ("tests/kernels/test_mt_kernels.py::test_calibrated_permutation_global_cell_order",),
    ),
    Mutation(
        "layout=raters x items read as items x raters",
        "hanna_stats/kernels/agreement.py",
        'return x if layout == "items x raters" else np.ascontiguousarray(x.T)',
        "return x",
        (
            "tests/kernels/test_agreement_kernels.py::"
            "test_alpha_reads_items_x_raters_and_the_transpose_by_name",
        ),
    ),
    Mutation(
        "williams family=criterion adjusted as all",
        "hanna_stats/analyses/significance.py",
        'blocks = np.arange(len(frames)) if family == "criterion" else np.zeros(len(frames))',
        "blocks = np.zeros(len(frames))",
        (W + "test_williams_all_families_are_bh_by_statsmodels",),
    ),
    Mutation(
        "rater reference=others computed as panel",
        "hanna_stats/analyses/correlations.py",
        'if reference == "panel":',
        'if reference in ("panel", "others"):',
        ("tests/analyses/test_judges_tacl.py::test_rater_against_the_others",),
    ),
    Mutation(
        "kendall pvalue_method=exact computed as asymptotic",
        "hanna_stats/kernels/correlation.py",
        "return _kendall_exact_pvalue(counts.n, counts.concordant, alternative)",
        "return _kendall_asymptotic_pvalue(counts, alternative)",
        ("tests/kernels/test_pvalue_methods.py::test_kendall_matches_scipy_kendalltau",),
    ),
    Mutation(
        "task_set wmt23 pooled accuracy weighted as one pair",
        "hanna_stats/analyses/tasks.py",
        "weights = np.array([len(lps)] + [1] * (len(tasks) - 1), dtype=float)",
        "weights = np.ones(len(tasks))",
        ("tests/analyses/test_tasks.py::test_wmt23_equals_mtme",),
    ),
    Mutation(
        "task average draws not rescaled by the task's range",
        "hanna_stats/kernels/task_average.py",
        "null += w * np.resize(d, (K, M, M)) / (high - low)",
        "null += w * np.resize(d, (K, M, M))",
        ("tests/analyses/test_tasks.py::test_pvalues_within_monte_carlo_error",),
    ),
)


def repository_files():
    """The files of the working tree that git tracks or would track (deleted ones left out)."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    return [name for name in listed if name and (REPO / name).is_file()]


def make_copy(root):
    """Copy the repository's files (:func:`repository_files`, listed now) into ``root /
    "repo"`` (a file deleted meanwhile is left out), link ``root / "shared"`` to the test
    data."""
    copy = root / "repo"
    for name in repository_files():
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(REPO / name, target)
        except FileNotFoundError:
            continue
    shared = REPO.parent / "shared"
    if shared.exists():
        (root / "shared").symlink_to(shared)
    return copy


def apply(copy, mutation):
    """Apply ``mutation`` in ``copy``; ValueError unless its ``old`` text occurs once."""
    path = copy / mutation.path
    text = path.read_text()
    if text.count(mutation.old) != 1:
        raise ValueError(
            f"{mutation.path}: the text to change occurs {text.count(mutation.old)} "
            f"times, not once: {mutation.old!r}"
        )
    path.write_text(text.replace(mutation.old, mutation.new))


def run_tests(copy, tests, cache):
    """Exit status and the last line of ``pytest tests`` in ``copy``, niced, with a fresh
    Numba cache and ``PYTHONPATH`` the copy."""
    env = dict(os.environ, PYTHONPATH=str(copy), NUMBA_CACHE_DIR=str(cache), CI="1")
    command = [
        "nice",
        "-n",
        "10",
        sys.executable,
        "-m",
        "pytest",
        *tests,
        "-x",
        "-q",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
    ]
    done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, (lines[-1] if lines else done.stderr.strip()[-200:])


def check_imports_from(copy, cache):
    """Fail unless ``hanna_stats`` imports from ``copy`` there (not an installed checkout)."""
    env = dict(os.environ, PYTHONPATH=str(copy), NUMBA_CACHE_DIR=str(cache))
    where = subprocess.run(
        [sys.executable, "-c", "import hanna_stats; print(hanna_stats.__file__)"],
        cwd=copy,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(copy.resolve()):
        raise SystemExit(f"hanna_stats imports from {where}, not from the copy {copy}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="WORDS",
        help="run the mutations whose name contains any of these words",
    )
    parser.add_argument("--list", action="store_true", help="list the mutations and stop")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or any(word in m.name for word in args.only)]
    if args.list or not chosen:
        for m in chosen or MUTATIONS:
            print(f"{m.name}: {m.path}")
        return 0
    tests = sorted({t for m in chosen for t in m.tests})
    with tempfile.TemporaryDirectory(prefix="hanna-mutation-") as tmp:
        root = Path(tmp) / "baseline"
        copy = make_copy(root)
        check_imports_from(copy, root / "numba")
        start = time.perf_counter()
        status, last = run_tests(copy, tests, root / "numba")
        print(
            f"baseline (no mutation, {len(tests)} test ids): exit {status}, {last} "
            f"[{time.perf_counter() - start:.0f} s]",
            flush=True,
        )
        if status != 0:
            print("the tests fail without a mutation: nothing to check")
            return 1
        shutil.rmtree(root)
        survived = 0
        for k, mutation in enumerate(chosen):
            root = Path(tmp) / f"m{k}"
            copy = make_copy(root)
            try:
                apply(copy, mutation)
            except ValueError as error:
                print(f"NOT APPLIED  {mutation.name}: {error}", flush=True)
                survived += 1
                continue
            start = time.perf_counter()
            status, last = run_tests(copy, list(mutation.tests), root / "numba")
            verdict = "caught  " if status == 1 else ("SURVIVED" if status == 0 else "ERROR   ")
            survived += status != 1
            print(
                f"{verdict} {mutation.name} ({mutation.path}): {last} "
                f"[{time.perf_counter() - start:.0f} s]",
                flush=True,
            )
            shutil.rmtree(root)
    print(f"{len(chosen) - survived} of {len(chosen)} mutations caught")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
