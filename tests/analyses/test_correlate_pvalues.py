"""``correlate(..., pvalue_method=...)`` on HANNA against scipy.stats, and the CLI options
``correlate --pvalue-method`` and ``williams --family``.

Oracles: ``scipy.stats.kendalltau(method=...)``, ``spearmanr``, ``pearsonr`` (their only
p-values) and, for Spearman's exact p-value, ``scipy.stats.permutation_test`` over all 10!
pairings, on vectors built here from ``hanna_metric_scores.csv`` parsed with csv + json (as
``tests/kernels/test_reproduction_scipy.py``): the per-system means (``np.mean`` of each
system's list of 96 scores) or the 960 pooled items. Multiple testing:
``statsmodels.stats.multitest``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import warnings

import numpy as np
import polars as pl
import pytest
import scipy.stats as ss
from statsmodels.stats.multitest import multipletests

from hanna_stats.analyses.correlations import SCHEMA, correlate
from hanna_stats.analyses.significance import williams
from hanna_stats.cli import main
from hanna_stats.cli import run as cli_run

CRITERIA = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]


@pytest.fixture(scope="module")
def raw(hanna_dir):
    """``{measure: (96 prompts, 10 systems) array}`` of the criteria and the 72 metrics."""
    csv.field_size_limit(1 << 30)
    with open(hanna_dir / "hanna_metric_scores.csv", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Model"] != "Human"]
    header = [c for c in rows[0] if c != "Model"]
    return {
        (c if c in CRITERIA else c.rsplit(" ", 1)[0]): np.array([json.loads(r[c]) for r in rows]).T
        for c in header
    }


def _vector(raw, name, level):
    if level == "system":
        return np.array([np.mean(scores) for scores in raw[name].T])
    return raw[name].ravel()


def _pow2_scaled(v):
    """``v`` scaled exactly by a power of two (CIDEr holds denormals that scipy's pearsonr
    mishandles; the scaling leaves r unchanged; see tests/kernels/test_reproduction_scipy.py)."""
    top = np.abs(v).max()
    return v if top == 0 else np.ldexp(v, -np.frexp(top)[1])


def _scipy(method, pvalue_method, x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input
        if method == "kendall":
            return ss.kendalltau(x, y, method=pvalue_method)
        if method == "spearman":
            return ss.spearmanr(x, y)
        return ss.pearsonr(_pow2_scaled(x), _pow2_scaled(y))


def _assert_pvalue(ours, statistic, expected, key, method="kendall"):
    """Equal to 1e-12 (relative or absolute), NaN matching NaN. Pearson and Spearman near
    |r| = 1 (a metric against itself): the p-value is ill-conditioned in r, so 1e-16 between two
    ways of computing r allows only absolute agreement (as tests/kernels/test_pvalue_methods.py);
    none of the metric-criterion pairs is that close. Kendall's p-value is a function of the integer
    pair counts: always 1e-12."""
    expected = float(expected)
    if math.isnan(expected):
        assert math.isnan(ours), key
    elif method != "kendall" and abs(statistic) > 1 - 1e-9:
        assert math.isclose(ours, expected, abs_tol=1e-6), key
    else:
        assert math.isclose(ours, expected, rel_tol=1e-12, abs_tol=1e-12), key


CASES = [
    ("pearson", "auto"),
    ("pearson", "exact"),
    ("spearman", "auto"),
    ("spearman", "asymptotic"),
    ("kendall", "auto"),
    ("kendall", "asymptotic"),
]


@pytest.mark.parametrize("level", ["system", "global"])
@pytest.mark.parametrize(("method", "pvalue_method"), CASES)
def test_pvalues_match_scipy(hanna_study, raw, level, method, pvalue_method):
    df = correlate(hanna_study, level=level, method=method, pvalue_method=pvalue_method)
    assert df.height == 72 * 6
    assert df.columns[5:8] == ["statistic", "pvalue", "n"]
    assert set(df["n"]) == {10 if level == "system" else 960}
    for row in df.iter_rows(named=True):
        key = (row["measure"], row["against"])
        x, y = (_vector(raw, name, level) for name in key)
        expected = _scipy(method, pvalue_method, x, y)
        assert row["statistic"] == pytest.approx(expected.statistic, abs=1e-12, rel=0), key
        _assert_pvalue(row["pvalue"], row["statistic"], expected.pvalue, key, method)


def test_auto_is_exact_for_untied_system_means(hanna_study, raw):
    """At 10 systems Kendall's "auto" is the exact null distribution, except for Complexity,
    whose system means hold a tie (then the normal approximation), as scipy's rule."""
    df = correlate(hanna_study, level="system", pvalue_method="auto")
    bleu = df.filter(pl.col("measure") == "BLEU")
    for criterion in ("Empathy", "Complexity"):
        x, y = _vector(raw, "BLEU", "system"), _vector(raw, criterion, "system")
        exact = criterion != "Complexity"
        expected = ss.kendalltau(x, y, method="exact" if exact else "asymptotic").pvalue
        got = bleu.filter(pl.col("against") == criterion)["pvalue"].item()
        assert got == pytest.approx(expected, rel=1e-12)
    assert np.unique(_vector(raw, "Complexity", "system")).size == 9


@pytest.mark.parametrize("variant", ["a", "c"])
def test_kendall_exact_between_metrics_matches_scipy(hanna_study, raw, variant):
    """The metrics' system means have no ties: the exact p-values of every pair (any variant:
    the p-value depends on the pair counts only). The square block computes each unordered
    pair once."""
    df = correlate(
        hanna_study,
        level="system",
        method="kendall",
        variant=variant,
        against="metrics",
        pvalue_method="exact",
    )
    assert df.height == 72 * 72
    for row in df[::7].iter_rows(named=True):  # both orders of some pairs, some diagonal
        key = (row["measure"], row["against"])
        expected = _scipy("kendall", "exact", *(_vector(raw, name, "system") for name in key))
        _assert_pvalue(row["pvalue"], row["statistic"], expected.pvalue, key)


@pytest.mark.slow  # scipy enumerates the 10! pairings: about 10 s
def test_spearman_exact_matches_scipy_permutation_test(hanna_study, raw):
    """Spearman's exact p-value against scipy's permutation test over all 10! pairings, for every
    ninth metric against BLEU (one enumeration: a statistic with one value per metric)."""
    df = correlate(
        hanna_study, level="system", method="spearman", against="metrics", pvalue_method="exact"
    ).filter(pl.col("against") == "BLEU")[::9]
    names = df["measure"].to_list()
    assert len(names) == 8 and names[0] == "BLEU"
    n = 10
    cy = ss.rankdata(_vector(raw, "BLEU", "system")) - (n + 1) / 2
    cx = np.array([ss.rankdata(_vector(raw, m, "system")) for m in names]) - (n + 1) / 2

    def rho(ranks, axis):  # ranks: (..., n) pairings of BLEU's ranks -> (..., metrics)
        centred = np.moveaxis(ranks, axis, -1) - (n + 1) / 2
        return (centred @ cx.T) / np.sqrt((cx * cx).sum(axis=1) * (cy @ cy))

    res = ss.permutation_test(
        (cy + (n + 1) / 2,),
        rho,
        permutation_type="pairings",
        n_resamples=np.inf,
        vectorized=True,
        batch=200_000,
    )
    np.testing.assert_allclose(df["statistic"].to_numpy(), res.statistic, rtol=0, atol=1e-12)
    for name, ours, statistic, expected in zip(
        names, df["pvalue"], df["statistic"], res.pvalue, strict=True
    ):
        _assert_pvalue(ours, statistic, expected, name, "spearman")


def test_exact_refused_where_scipy_refuses(hanna_study):
    """As scipy: no exact Kendall or Spearman p-value with ties (Complexity's system means; the
    items' ratings at global level), no exact Spearman beyond 14 pairs, no asymptotic Pearson.
    The message names the pair and what to use."""
    tie = r"'BLEU' \(x\) with 'Complexity' \(y\) at system level, n=10: .*without ties.*'auto'"
    for method in ("kendall", "spearman"):
        with pytest.raises(ValueError, match=tie):
            correlate(hanna_study, level="system", method=method, pvalue_method="exact")
    with pytest.raises(ValueError, match=r"at global level, n=960: .*without ties"):
        correlate(hanna_study, level="global", method="kendall", pvalue_method="exact")
    with pytest.raises(ValueError, match=r"^pvalue_method='asymptotic' is not available for"):
        correlate(hanna_study, level="system", method="pearson", pvalue_method="asymptotic")
    with pytest.raises(ValueError, match=r"needs n <= 14 pairs for method='spearman'; got 960"):
        correlate(
            hanna_study,
            level="global",
            method="spearman",
            against="metrics",
            pvalue_method="exact",
        )


def test_item_level_and_acc_eq_have_no_pvalue(hanna_study):
    with pytest.raises(ValueError, match=r"item-level correlation is a mean of per-input.*`ci`"):
        correlate(hanna_study, level="story", pvalue_method="auto")
    with pytest.raises(ValueError, match=r"method='acc_eq'\) has no p-value"):
        correlate(hanna_study, level="system", method="acc_eq", pvalue_method="auto")
    with pytest.raises(ValueError, match=r"^pvalue_method must be one of"):
        correlate(hanna_study, level="system", pvalue_method="permutation")


def test_without_pvalue_method_the_frame_is_unchanged(hanna_study):
    plain = correlate(hanna_study, level="global", method="pearson")
    assert plain.drop("n").schema == pl.Schema(SCHEMA)
    with_p = correlate(hanna_study, level="global", method="pearson", pvalue_method="auto")
    assert with_p.drop("pvalue").equals(plain)


def test_missing_values_are_omitted_pairwise(tmp_path):
    """A tidy study with missing items and one NaN system mean: the p-values are scipy's with
    ``nan_policy="omit"`` on the per-system means (of the values present) or on the items."""
    from hanna_stats.store import open_study

    rng = np.random.default_rng(7)
    inputs, systems = 6, 8
    values = {m: rng.normal(size=(inputs, systems)) for m in ("crit", "m1", "m2")}
    values["m1"][[0, 3], 2] = np.nan  # two items missing
    values["m2"][:, 5] = np.nan  # a whole system missing
    rows = [
        (f"{g}-{s}", str(g), f"s{s}", m, "human" if m == "crit" else "metric", v[g, s])
        for m, v in values.items()
        for g in range(inputs)
        for s in range(systems)
        if not np.isnan(v[g, s])
    ]
    path = tmp_path / "tidy.csv"
    columns = ["item", "input", "system", "measure", "kind", "value"]
    pl.DataFrame(rows, schema=columns, orient="row").write_csv(path)
    study = open_study(path)
    for level, n in (("system", {"m1": 8, "m2": 7}), ("global", {"m1": 46, "m2": 42})):
        for method, pvalue_method in CASES:
            df = correlate(study, level=level, method=method, pvalue_method=pvalue_method)
            for row in df.iter_rows(named=True):
                m = row["measure"]
                if level == "system":
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # m2's missing system: NaN mean
                        x, y = (np.nanmean(values[k], axis=0) for k in (m, "crit"))
                else:
                    x, y = values[m].ravel(), values["crit"].ravel()
                keep = ~(np.isnan(x) | np.isnan(y))
                expected = _scipy(method, pvalue_method, x[keep], y[keep])
                assert row["n"] == n[m] == keep.sum()
                key = (m, level)
                _assert_pvalue(row["pvalue"], row["statistic"], expected.pvalue, key, method)


# --------------------------------------------------------------------------- the CLI


def test_cli_correlate_prints_pvalues(hanna_dir, hanna_study, capsys, monkeypatch):
    args = ["correlate", "--level", "system", "--format", "csv"]
    data = ["--data", str(hanna_dir)]
    assert main([*args, *data, "--method", "pearson", "--pvalue-method", "exact"]) == 0
    df = pl.read_csv(io.StringIO(capsys.readouterr().out))
    assert df.columns[5:8] == ["statistic", "pvalue", "n"] and df.height == 72 * 6
    api = correlate(hanna_study, level="system", method="pearson", pvalue_method="exact")
    assert df["statistic"].to_list() == pytest.approx(api["statistic"].to_list(), abs=1e-15)
    assert df["pvalue"].to_list() == pytest.approx(api["pvalue"].to_list(), rel=1e-15)
    assert ((df["pvalue"] > 0) & (df["pvalue"] < 1)).all() and set(df["n"]) == {10}
    monkeypatch.setattr(cli_run, "study_of", lambda args: hanna_study)
    # Kendall (the default) at system level: Complexity's tied means have no exact p-value.
    assert main([*args, "--pvalue-method", "exact"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'Complexity' (y)" in err and "'auto'" in err
    # Without the option: no p-value columns.
    assert main(args) == 0
    assert "pvalue" not in capsys.readouterr().out.splitlines()[0]


@pytest.fixture
def cli_study(hanna_study, monkeypatch):
    """The CLI on the session's HANNA study (no rebuild per command)."""
    monkeypatch.setattr(cli_run, "study_of", lambda args: hanna_study)
    return hanna_study


def _williams_csv(argv, capsys):
    assert main(["williams", *argv, "--format", "csv"]) == 0
    return pl.read_csv(io.StringIO(capsys.readouterr().out), infer_schema_length=None)


def _bh(pvalues):
    """Benjamini-Hochberg by statsmodels, NaN p-values left out of the family (and NaN)."""
    pvalues = np.asarray(pvalues, dtype=float)
    out = np.full(pvalues.shape, np.nan)
    ok = ~np.isnan(pvalues)
    if ok.any():
        out[ok] = multipletests(pvalues[ok], method="fdr_bh")[1]
    return out


def _judge(name):
    """A measure's name across criteria: an LLM judge's measure without its criterion
    ("Beluga-13B Empathy (prompt 1)" -> "Beluga-13B (prompt 1)"); a metric's own name."""
    return re.sub(rf" ({'|'.join(CRITERIA)}) \(prompt", " (prompt", name)


@pytest.mark.parametrize("kinds", ["metric", "metric,llm-judge"])
def test_cli_williams_family_pair_is_bh_across_criteria(cli_study, capsys, kinds):
    """``--family pair``: each ordered pair's p-values on the six criteria form one family (a
    judge's measures are one competitor across the criteria); the rows of --criterion."""
    argv = ["--criterion", "EM", "--kinds", kinds]
    df = _williams_csv([*argv, "--family", "pair", "--correction", "bh"], capsys)
    tuple_kinds = tuple(kinds.split(","))
    raw = {c: williams(cli_study, criterion=c, kinds=tuple_kinds) for c in CRITERIA}
    # The rows and raw p-values of `williams --criterion EM`, plus the adjusted column.
    assert df.drop("pvalue_adjusted").equals(raw["Empathy"].select(df.columns[:-1]))
    families = {}
    for criterion, frame in raw.items():
        for a, b, p in frame.select("measure_a", "measure_b", "pvalue").iter_rows():
            families.setdefault((_judge(a), _judge(b)), []).append((criterion, p))
    expected = {}
    for key, members in families.items():
        assert len(members) == 6  # every competitor has a measure for each criterion
        adjusted = _bh([p for _, p in members])
        expected[key] = dict(zip([c for c, _ in members], adjusted, strict=True))["Empathy"]
    got = df.select("measure_a", "measure_b", "pvalue_adjusted").iter_rows()
    for a, b, p in got:
        want = expected[_judge(a), _judge(b)]
        assert (math.isnan(p) and math.isnan(want)) or p == pytest.approx(want, rel=1e-12)


def test_cli_williams_family_criterion_and_all(cli_study, capsys):
    base = ["--criterion", "SU", "--level", "story", "--method", "kendall", "--correction", "bh"]
    one = _williams_csv(base, capsys)  # --family criterion, the default: the criterion's pairs
    np.testing.assert_allclose(one["pvalue_adjusted"], _bh(one["pvalue"]), rtol=1e-12)
    every = _williams_csv([*base, "--family", "all"], capsys)  # all criteria's tests
    assert every.drop("pvalue_adjusted").equals(one.drop("pvalue_adjusted"))
    raw = [williams(cli_study, criterion=c, level="story", method="kendall") for c in CRITERIA]
    pvalues = pl.concat(raw)["pvalue"].to_numpy()
    surprise = slice(3 * one.height, 4 * one.height)
    np.testing.assert_allclose(every["pvalue_adjusted"], _bh(pvalues)[surprise], rtol=1e-12)


def test_cli_williams_family_without_correction_changes_nothing(cli_study, capsys):
    base = ["williams", "--criterion", "EM", "--format", "csv"]
    assert main([*base, "--family", "pair"]) == 0
    paired = capsys.readouterr().out
    assert main(base) == 0
    assert paired == capsys.readouterr().out and "pvalue_adjusted" not in paired.splitlines()[0]


def test_cli_williams_bad_family_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["williams", "--criterion", "EM", "--family", "prompt", "--correction", "bh"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --family: invalid choice: 'prompt'" in err
