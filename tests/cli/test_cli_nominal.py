"""``nominal-agreement``: the command prints the analysis' table for the options given."""

from __future__ import annotations

import io

import polars as pl

from hanna_stats.analyses import nominal_agreement
from hanna_stats.cli import main


def test_nominal_agreement_command_matches_the_analysis(hanna_dir, hanna_study, capsys):
    options = ["--measures", "RE", "CH", "--resamples", "50", "--seed", "3"]
    assert main(["nominal-agreement", "--data", str(hanna_dir), *options, "--format", "csv"]) == 0
    printed = pl.read_csv(io.StringIO(capsys.readouterr().out))
    expected = nominal_agreement(
        hanna_study, measures=["RE", "CH"], resamples=50, seed=3, interval_method=None
    )
    assert printed.height == expected.height == 6
    assert printed["coefficient"].to_list() == expected["coefficient"].to_list()
    for column in ("statistic", "ci_low", "ci_high"):
        assert (printed[column] - expected[column]).abs().max() < 1e-12
