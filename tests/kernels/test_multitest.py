"""Multiple-testing adjustment against statsmodels and scipy, and its properties."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from hanna_stats.kernels.multitest import adjust_pvalues
from hanna_stats.vocabulary import WORDS

METHODS = WORDS["correction"]

STATSMODELS = {"bh": "fdr_bh", "by": "fdr_by", "holm": "holm", "bonferroni": "bonferroni"}

# Families with ties, exact 0 and 1, tiny values and NaN.
_pvalue = st.one_of(
    st.sampled_from([0.0, 1.0, 0.05, 0.01, 0.5, 1e-300, np.nan]),
    st.floats(0.0, 1.0),
)
families = st.lists(_pvalue, min_size=0, max_size=40).map(np.array)


@settings(deadline=None, max_examples=120)
@given(families, st.sampled_from(METHODS))
def test_matches_statsmodels(p, method):
    adjusted = adjust_pvalues(p, method=method)
    nan = np.isnan(p)
    assert np.isnan(adjusted[nan]).all()
    if (~nan).any():
        expected = multipletests(p[~nan], method=STATSMODELS[method])[1]
        np.testing.assert_allclose(adjusted[~nan], expected, rtol=0, atol=1e-12)
        if method in ("bh", "by"):
            scipy_expected = scipy.stats.false_discovery_control(p[~nan], method=method)
            np.testing.assert_allclose(adjusted[~nan], scipy_expected, rtol=0, atol=1e-12)


@settings(deadline=None, max_examples=200)
@given(families, st.sampled_from(METHODS))
def test_monotone_and_never_below_raw(p, method):
    adjusted = adjust_pvalues(p, method=method)
    valid = ~np.isnan(p)
    raw, adj = p[valid], adjusted[valid]
    assert (adj >= raw).all() and (adj <= 1).all()
    order = np.argsort(raw, kind="stable")
    assert (np.diff(adj[order]) >= 0).all()
    # Tied raw p-values share their adjusted value.
    for value in np.unique(raw):
        assert np.unique(adj[raw == value]).size == 1


def test_hand_worked():
    # BH on (0.01, 0.04, 0.03), m = 3: sorted 0.01, 0.03, 0.04 -> 3p/i = 0.03, 0.045, 0.04;
    # running minimum from the top: 0.03, 0.04, 0.04.
    np.testing.assert_allclose(
        adjust_pvalues([0.01, 0.04, np.nan, 0.03], method="bh"), [0.03, 0.04, np.nan, 0.04]
    )
    # Holm: 3(0.01), max(.03, 2(0.03)), max(.06, 0.04) = 0.03, 0.06, 0.06.
    np.testing.assert_allclose(
        adjust_pvalues([0.01, 0.04, 0.03], method="holm"), [0.03, 0.06, 0.06]
    )
    np.testing.assert_allclose(adjust_pvalues([0.5, 0.2], method="bonferroni"), [1.0, 0.4])
    assert adjust_pvalues([], method="by").size == 0
    assert np.isnan(adjust_pvalues([np.nan, np.nan], method="holm")).all()


@pytest.mark.parametrize(
    ("pvalues", "method", "name"),
    [([0.1], "fdr_bh", "method"), ([[0.1]], "bh", "pvalues"), ([1.5], "bh", "pvalues")],
)
def test_bad_arguments(pvalues, method, name):
    with pytest.raises(ValueError, match=name):
        adjust_pvalues(pvalues, method=method)
