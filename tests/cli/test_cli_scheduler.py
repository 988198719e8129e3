"""``--scheduler``: the resampling commands on a Dask cluster print what they print in-process."""

from __future__ import annotations

import pytest

from hanna_stats.cli import main

pytest.importorskip(
    "distributed", reason="Dask is not installed: pip install 'hanna_stats[cluster]'"
)


def test_permutation_on_a_local_cluster_prints_the_same_table(hanna_dir, capsys):
    command = [
        "permutation",
        "--data",
        str(hanna_dir),
        "--criterion",
        "EM",
        "--level",
        "system",
        "--permutations",
        "100",
        "--format",
        "csv",
    ]
    assert main(command) == 0
    alone = capsys.readouterr().out
    assert main([*command, "--scheduler", "local:2"]) == 0
    assert capsys.readouterr().out == alone
    assert alone.count("\n") > 100


@pytest.mark.parametrize("address", ["local:0", "local:x", "locality"])
def test_bad_scheduler_is_one_line(hanna_dir, capsys, address):
    command = ["permutation", "--data", str(hanna_dir), "--criterion", "EM"]
    assert main([*command, "--scheduler", address]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"error: --scheduler {address}: expected tcp://HOST:PORT")
        and err.count("\n") == 1
    )
