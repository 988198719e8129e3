"""The cluster path of the pairwise resampling tests (hanna_stats.kernels.distributed): on a
local Dask cluster of 2 worker processes, the same p-values (and statistics, counts, wins,
samples) as in-process, bit for bit, on HANNA and on WMT-sized data; a failed block retried
(a raising task, and a worker process killed); progress over the blocks; and the in-process
default without Dask.

The Dask tests skip, saying why, where Dask is not installed (``pip install
'hanna_stats[cluster]'``; the ``test`` extra installs it). The workers run Numba on 1 thread
and the in-process runs on all: the equality also shows that no result depends on the thread
count.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from hanna_stats.analyses import (
    bootstrap_pairs,
    calibrated_comparison,
    correlation_ci,
    metric_clusters,
    permutation_test,
    power,
    spa,
)
from hanna_stats.kernels import (
    ClusterExecutor,
    calibrated_permutation_test,
    paired_bootstrap,
    permutation_test_pairs,
    significance_clusters,
    soft_pairwise_accuracy,
)
from hanna_stats.kernels.distributed import split

try:
    import distributed
except ImportError:  # pragma: no cover - depends on the environment
    distributed = None

REPO = Path(__file__).resolve().parents[2]
NO_DASK = "Dask is not installed: pip install 'hanna_stats[cluster]' (dask[distributed])"


@pytest.fixture(scope="module")
def client():
    """A local Dask cluster of 2 single-threaded worker processes (Numba on 1 thread); its
    web server on a free port (``None`` would still take 8787: two clusters would clash)."""
    if distributed is None:
        pytest.skip(NO_DASK)
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        env={"NUMBA_NUM_THREADS": "1"},
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def assert_identical(local, remote):
    """Every field (a kernel's NamedTuple) or column (an analysis' frame) equal, NaN = NaN."""
    if isinstance(local, pl.DataFrame):
        assert local.columns == remote.columns
        fields = {c: (local[c].to_numpy(), remote[c].to_numpy()) for c in local.columns}
    else:
        fields = {f: (getattr(local, f), getattr(remote, f)) for f in local._fields}
    for name, (a, b) in fields.items():
        np.testing.assert_array_equal(a, b, err_msg=name, strict=True)


def wmt_sized(metrics=10, inputs=2000, systems=20, seed=0, missing=True):
    """A WMT-sized synthetic cube (metrics, segments, systems) and its human criterion: noisy
    copies of the criterion at different noise levels, rounded (ties), a few missing scores."""
    rng = np.random.default_rng(seed)
    human = rng.normal(size=(inputs, systems)) + rng.normal(size=systems)
    noise = rng.uniform(0.3, 3.0, size=(metrics, 1, 1))
    X = (human + noise * rng.normal(size=(metrics, inputs, systems))).round(1)
    human = human.round(0)  # MQM-like ties
    human[rng.random(human.shape) < 0.01] = np.nan
    if missing:
        X[1, rng.random((inputs, systems)) < 0.02] = np.nan  # a metric with missing scores
    return X, human


# ----------------------------------------------------------------- permutation tests (PERM-BOTH)


@pytest.mark.parametrize("level", ["item", "system"])
def test_permutation_test_on_hanna(client, hanna_study, level):
    options = dict(criterion="EM", level=level, method="kendall", permutations=200)
    local = permutation_test(hanna_study, **options)
    remote = permutation_test(hanna_study, **options, executor=client)
    assert local.height == 72 * 71
    assert_identical(local, remote)


@pytest.mark.parametrize(("level", "stop_alpha"), [("item", None), ("system", 0.05)])
def test_permutation_pairs_wmt_sized(client, level, stop_alpha):
    X, human = wmt_sized()
    options = dict(level=level, permutations=50, alternative="greater", stop_alpha=stop_alpha)
    local = permutation_test_pairs(X, human, **options)
    remote = permutation_test_pairs(X, human, **options, executor=client)
    assert_identical(local, remote)
    assert (local.n_missing[1, 2:] > 0).all()  # metric 1's pairs ran as jobs of their own
    assert (local.n_drawn[np.triu_indices(10, 1)] < 50).any() == (stop_alpha is not None)
    ranks = significance_clusters(local.statistic, local.pvalue)
    assert ranks.tolist() == significance_clusters(remote.statistic, remote.pvalue).tolist()


def test_permutation_units_and_methods_on_thread_pool():
    # Every path of the kernel (PERM-SYS, PERM-INPUT, Pearson, global level, missing values,
    # two-sided) split into uneven blocks: no Dask needed to check the splitting itself.
    X, human = wmt_sized(metrics=5, inputs=60, systems=8, seed=1)
    cases = [
        dict(level="item", unit="systems"),
        dict(level="system", unit="inputs", method="pearson"),
        dict(level="global", method="spearman", alternative="two-sided"),
        dict(level="global", method="pearson", stop_alpha=0.2),  # the sums path
        dict(level="item", method="pearson", stop_alpha=0.2),
        dict(level="item", stop_alpha=0.2),  # Kendall's fast path
    ]
    with ThreadPoolExecutor(1) as pool:
        for case in cases:
            local = permutation_test_pairs(X, human, permutations=60, **case)
            remote = permutation_test_pairs(
                X, human, permutations=60, **case, executor=ClusterExecutor(pool, blocks=3)
            )
            assert_identical(local, remote)


# ----------------------------------------------------------- calibrated tests and clusters


def test_calibrated_comparison_and_clusters_on_hanna(client, hanna_study):
    local = calibrated_comparison(hanna_study, criterion="EM", permutations=200)
    remote = calibrated_comparison(hanna_study, criterion="EM", permutations=200, executor=client)
    assert_identical(local, remote)
    for method, level in (("acc_eq", "item"), ("kendall", "system")):
        options = dict(criterion="EM", level=level, method=method, permutations=200)
        local = metric_clusters(hanna_study, **options)
        remote = metric_clusters(hanna_study, **options, executor=client)
        assert_identical(local, remote)
        assert local["rank"].max() > 1


def test_calibrated_permutation_wmt_sized(client):
    # 2 human measures, a task each (HANNA's 2,556 pairs above take 10 blocks of 256).
    X, human = wmt_sized(missing=False)
    H = np.stack([human, np.round(human + 0.5 * np.nanstd(human), 0)])
    local = calibrated_permutation_test(H, X, permutations=20, seed=3)
    remote = calibrated_permutation_test(H, X, permutations=20, seed=3, executor=client)
    assert_identical(local, remote)
    assert np.isfinite(local.pvalue[0, 0, 1:]).all()


def test_calibrated_score_swaps(client):
    X, human = wmt_sized(metrics=4, inputs=30, systems=6, seed=2)
    options = dict(level="system", swap="scores", permutations=40, seed=5)
    local = calibrated_permutation_test(human[None], X, **options)
    remote = calibrated_permutation_test(human[None], X, **options, executor=client)
    assert_identical(local, remote)


# ------------------------------------------------------------------- bootstraps and SPA


def test_bootstraps_and_spa_on_hanna(client, hanna_study):
    local = bootstrap_pairs(hanna_study, resamples=200, seed=1)
    remote = bootstrap_pairs(hanna_study, resamples=200, seed=1, executor=client)
    assert_identical(local, remote)
    for level, resample in (("item", "both"), ("system", "inputs")):
        options = dict(level=level, resample=resample, resamples=100, ci_method="bca")
        local = correlation_ci(hanna_study, **options)
        remote = correlation_ci(hanna_study, **options, executor=client)
        assert_identical(local, remote)
    local = spa(hanna_study, permutations=200)
    remote = spa(hanna_study, permutations=200, executor=client.get_executor())
    assert_identical(local, remote)


def test_power_curves_on_hanna(client, hanna_study):
    # Issue 31: a power curve (the metrics question, PERM-BOTH's batched kernel), the systems
    # question and the stable ranking probability, the simulated studies in blocks on the
    # cluster: the same frame bit for bit.
    for question, options in (
        ("metrics", {"inputs": (24, 48, 96), "permutations": 200}),
        ("systems", {"inputs": (24, 96), "resamples": 200}),
        ("ranking", {"inputs": (12, 24), "permutations": 200}),
    ):
        options |= {"question": question, "studies": 40, "target_power": None}
        local = power(hanna_study, **options)
        assert_identical(local, power(hanna_study, **options, executor=client))


def test_paired_bootstrap_and_spa_wmt_sized(client):
    X, human = wmt_sized()
    local = paired_bootstrap(X, resamples=200, seed=4)
    assert_identical(local, paired_bootstrap(X, resamples=200, seed=4, executor=client))
    local = soft_pairwise_accuracy(human[None], X, permutations=200)
    remote = soft_pairwise_accuracy(human[None], X, permutations=200, executor=client)
    assert_identical(local, remote)


# ------------------------------------------------------------------- retries and progress


class FailOnce:
    """An executor that runs one block's first submission as a failing task (``fail``: a
    function of the block's task, called instead of it), and counts the submissions."""

    def __init__(self, executor, fail, index=1):
        self.executor, self.fail, self.index = executor, fail, index
        self.submitted = 0
        self.lock = threading.Lock()

    def submit(self, function, *args):
        with self.lock:
            self.submitted += 1
            first = self.submitted == self.index + 1
        if first:
            return self.executor.submit(self.fail, function, *args)
        return self.executor.submit(function, *args)


def _raise(function, *args):
    raise ConnectionError("worker lost (simulated)")


def _exit_once(marker, function, *args):
    """Kills the worker process the first time (no marker file yet), runs the task after."""
    if not os.path.exists(marker):
        Path(marker).touch()
        os._exit(1)
    return function(*args)


def test_a_failed_block_is_retried_and_progress_counts_blocks():
    X, human = wmt_sized(metrics=6, inputs=40, systems=6, seed=5)
    local = permutation_test_pairs(X, human, level="item", permutations=50)
    seen = []

    def progress(iterable, desc, total):
        seen.append((desc, total))
        for item in iterable:
            seen.append(item)
            yield item

    with ThreadPoolExecutor(1) as pool:
        flaky = FailOnce(pool, _raise)
        remote = permutation_test_pairs(
            X,
            human,
            level="item",
            permutations=50,
            progress=progress,
            executor=ClusterExecutor(flaky, blocks=4),
        )
        assert_identical(local, remote)
        assert flaky.submitted == 4 + 1  # the failed block, once more
        assert seen[0] == ("permutation blocks", 4)
        assert sorted(seen[1:]) == [0, 1, 2, 3]  # each block once, as it finished
        with pytest.raises(ConnectionError, match="simulated"):
            permutation_test_pairs(
                X,
                human,
                level="item",
                permutations=50,
                executor=ClusterExecutor(FailOnce(pool, _raise), blocks=4, retries=0),
            )


def test_a_killed_worker_block_is_retried(tmp_path):
    # The scheduler gives up on a task at its first worker death (allowed-failures 0), so the
    # retry is ours: the block runs again, on the restarted worker or the other one.
    if distributed is None:
        pytest.skip(NO_DASK)
    import dask

    X, human = wmt_sized(metrics=6, inputs=40, systems=6, seed=6)
    local = permutation_test_pairs(X, human, level="system", permutations=50)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        )
        client = distributed.Client(cluster)
    try:
        marker = str(tmp_path / "killed")
        flaky = FailOnce(client.get_executor(pure=False), _ExitOnce(marker))
        remote = permutation_test_pairs(
            X,
            human,
            level="system",
            permutations=50,
            executor=ClusterExecutor(flaky, blocks=3),
        )
        assert os.path.exists(marker)  # a worker died
        assert flaky.submitted == 3 + 1
        assert_identical(local, remote)
    finally:
        client.close()
        cluster.close()


class _ExitOnce:
    """A picklable ``_exit_once`` bound to its marker file."""

    def __init__(self, marker):
        self.marker = marker

    def __call__(self, function, *args):
        return _exit_once(self.marker, function, *args)


# ------------------------------------------------------------------------ the default


def test_the_in_process_default_does_not_import_dask():
    code = (
        "import sys, numpy as np\n"
        "from hanna_stats.kernels import permutation_test_pairs, paired_bootstrap\n"
        "import hanna_stats.analyses\n"
        "X = np.random.default_rng(0).normal(size=(3, 10, 4))\n"
        "permutation_test_pairs(X, X[0], level='item', permutations=10)\n"
        "paired_bootstrap(X, resamples=10)\n"
        "assert not {'dask', 'distributed'} & set(sys.modules), 'dask imported'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=REPO)


def test_cluster_executor_arguments():
    with pytest.raises(TypeError, match="a concurrent"):
        ClusterExecutor(object())
    with ThreadPoolExecutor(1) as pool:
        with pytest.raises(ValueError, match="blocks must be an int >= 1"):
            ClusterExecutor(pool, blocks=0)
        with pytest.raises(ValueError, match="retries must be an int >= 0"):
            ClusterExecutor(pool, retries=-1)
        wrapped = ClusterExecutor(pool, blocks=2)
        assert ClusterExecutor(wrapped).blocks == 16  # re-wrapped with the defaults
    assert split(5, 2) == [(0, 2), (2, 5)]
    assert split(0, 4) == []
