"""Blocks of the pairwise resampling kernels on an executor: a Dask cluster, or any
:class:`concurrent.futures.Executor`.

The resampling kernels (:func:`~hanna_stats.kernels.permutation_test_pairs`,
:func:`~hanna_stats.kernels.calibrated_permutation_test`,
:func:`~hanna_stats.kernels.bootstrap_ci`, :func:`~hanna_stats.kernels.paired_bootstrap`,
:func:`~hanna_stats.kernels.soft_pairwise_accuracy`) take ``executor=``. Without one (the
default) they run in this process, as before. With one, a kernel draws its swaps, resamples or
sign flips once, here, from ``seed``, as in-process; splits its work into blocks (of pairs of
measures, of resamples, of metrics: see each kernel); and sends each block to the executor as
one task that runs the in-process code on the block, with the same draws, so that every value
is computed by the same operations on the same numbers. The blocks' results are gathered in
order: the result equals the in-process one bit for bit, whatever the number of blocks or
workers. A block whose task fails (its worker died, the connection dropped) is submitted again,
up to ``retries`` times, before the error propagates; ``progress`` counts the finished blocks.

``executor`` may be

- a ``distributed.Client`` (Dask): the data shared by all blocks (the cube, the draws) are
  scattered to the workers once, not sent with every task;
- any :class:`concurrent.futures.Executor` (a ``Client.get_executor()``, a
  ``ProcessPoolExecutor``, ...), whose ``submit`` returns :class:`concurrent.futures.Future`;
- a :class:`ClusterExecutor` wrapping one of those, to choose the number of blocks and of
  retries.

Nothing here imports Dask until a Dask client is used (:func:`connect`); Dask is the optional
extra ``pip install "hanna_stats[cluster]"``.

Examples
--------
>>> from concurrent.futures import ThreadPoolExecutor
>>> import numpy as np
>>> from hanna_stats.kernels import permutation_test_pairs
>>> rng = np.random.default_rng(0)
>>> X, c = rng.normal(size=(4, 30, 5)), rng.normal(size=(30, 5))
>>> with ThreadPoolExecutor(1) as pool:
...     cluster = permutation_test_pairs(X, c, permutations=100, executor=pool)
>>> local = permutation_test_pairs(X, c, permutations=100)
>>> bool(np.array_equal(cluster.pvalue, local.pvalue, equal_nan=True))
True
"""

from __future__ import annotations

import concurrent.futures
import itertools
import numbers
from collections.abc import Callable, Iterator, Sequence
from typing import Any

#: Blocks a kernel's work is split into (at most; fewer when there is less work), unless a
#: :class:`ClusterExecutor` says otherwise: a few per worker of a small cluster, so that a slow
#: or lost worker holds back a small part.
BLOCKS = 16
#: Times a failed block is submitted again before its error propagates.
RETRIES = 3


class ClusterExecutor:
    """Where and how a kernel runs its blocks: ``executor`` (a ``distributed.Client`` or a
    :class:`concurrent.futures.Executor`), split into at most ``blocks`` blocks, each failed
    block submitted again up to ``retries`` times.

    Parameters
    ----------
    executor : distributed.Client or concurrent.futures.Executor
    blocks : int, optional
        At most this many blocks per kernel call (default :data:`BLOCKS`).
    retries : int, optional
        Default :data:`RETRIES`; 0 lets the first failure propagate.
    """

    def __init__(self, executor: Any, *, blocks: int = BLOCKS, retries: int = RETRIES) -> None:
        if isinstance(executor, ClusterExecutor):
            executor = executor.executor
        for name, value, low in (("blocks", blocks, 1), ("retries", retries, 0)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
                raise ValueError(f"{name} must be an int >= {low}; got {value!r}")
        self.client = _dask_client(executor)
        if self.client is not None:
            # A task of its own for every submission (pure=False): a block submitted again is
            # computed again, not looked up as the failed one.
            self.executor = self.client.get_executor(pure=False)
        elif callable(getattr(executor, "submit", None)):
            self.executor = executor
        else:
            raise TypeError(
                "executor must be a distributed.Client, a concurrent.futures.Executor or a "
                f"ClusterExecutor; got {type(executor).__name__}"
            )
        self.blocks = int(blocks)
        self.retries = int(retries)

    def __repr__(self) -> str:
        return (
            f"ClusterExecutor({self.client or self.executor!r}, blocks={self.blocks}, "
            f"retries={self.retries})"
        )

    def share(self, value: Any) -> Any:
        """``value`` as the tasks should receive it: scattered to every worker once on a Dask
        cluster (a future the worker resolves), itself for another executor."""
        if self.client is None:
            return value
        return self.client.scatter([value], broadcast=True, hash=False)[0]

    def map(
        self,
        function: Callable[..., Any],
        shared: Sequence[Any],
        blocks: Sequence[Any],
        *,
        progress: Callable[..., Iterator[Any]] | None = None,
        desc: str = "blocks",
    ) -> list[Any]:
        """``[function(*shared, block) for block in blocks]``, each call a task on the executor
        (``shared`` passed through :meth:`share` once); results in the order of ``blocks``.

        A task that raises is submitted again, up to ``retries`` times; then the remaining
        tasks are cancelled and its exception propagates. ``progress(iterable, desc=...,
        total=...)`` wraps the blocks as they finish."""
        blocks = list(blocks)
        shared = [self.share(value) for value in shared]
        results: list[Any] = [None] * len(blocks)
        done = _completed(self, function, shared, blocks, results)
        if progress is not None:
            done = progress(done, desc=desc, total=len(blocks))
        for _ in done:
            pass
        return results


def _completed(cluster, function, shared, blocks, results) -> Iterator[int]:
    """Submits every block, fills ``results`` and yields each block's index as it finishes;
    resubmits a failed block up to ``cluster.retries`` times."""
    failures = [0] * len(blocks)

    def submit(i):
        return cluster.executor.submit(function, *shared, blocks[i])

    pending = {submit(i): i for i in range(len(blocks))}
    try:
        while pending:
            finished, _ = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in finished:
                i = pending.pop(future)
                error = future.exception()
                if error is None:
                    results[i] = future.result()
                    yield i
                elif failures[i] < cluster.retries:
                    failures[i] += 1
                    pending[submit(i)] = i
                else:
                    raise error
    finally:
        for future in pending:
            future.cancel()


def _dask_client(executor: Any) -> Any:
    """The ``distributed.Client`` behind ``executor`` (a Client, or its ``get_executor()``),
    else None; without importing Dask."""
    module = type(executor).__module__ or ""
    if not module.startswith("distributed"):
        return None
    if hasattr(executor, "scatter") and hasattr(executor, "get_executor"):
        return executor
    client = getattr(executor, "_client", None)  # distributed.cfexecutor.ClientExecutor
    return client if hasattr(client, "get_executor") else None


def cluster_executor(executor: Any) -> ClusterExecutor | None:
    """``executor`` as a :class:`ClusterExecutor` (None stays None: in-process)."""
    if executor is None or isinstance(executor, ClusterExecutor):
        return executor
    return ClusterExecutor(executor)


def split(n: int, blocks: int) -> list[tuple[int, int]]:
    """At most ``blocks`` contiguous ranges ``(lo, hi)`` covering ``range(n)``, sizes differing
    by at most 1 (none empty).

    >>> split(10, 4)
    [(0, 2), (2, 5), (5, 7), (7, 10)]
    >>> split(2, 16)
    [(0, 1), (1, 2)]
    """
    count = max(1, min(blocks, n))
    bounds = [n * b // count for b in range(count + 1)]
    return [(lo, hi) for lo, hi in itertools.pairwise(bounds) if hi > lo]


def connect(address: str | None = None, **kwargs: Any) -> ClusterExecutor:
    """A :class:`ClusterExecutor` on a Dask cluster: the scheduler at ``address``
    (``"tcp://host:8786"``), or a new ``distributed.LocalCluster`` on this machine when None
    (``kwargs`` go to it, e.g. ``n_workers=4``). Close it with ``.client.close()`` (and
    ``.client.cluster.close()`` for a local one). Needs the ``cluster`` extra (Dask)."""
    try:
        import distributed
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the cluster path needs Dask: pip install 'hanna_stats[cluster]' (dask[distributed])"
        ) from error
    if address is None:
        return ClusterExecutor(distributed.Client(distributed.LocalCluster(**kwargs)))
    return ClusterExecutor(distributed.Client(address, **kwargs))
