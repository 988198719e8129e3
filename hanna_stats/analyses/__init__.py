"""The paper's studies on the store, returning tidy polars DataFrames.

- :mod:`~hanna_stats.analyses.correlations`: metric-criterion, metric-metric and
  criterion-criterion correlations at story, system or global level (Figs. 1-6, 10-25; Tabs. 5,
  8, 9);
- :mod:`~hanna_stats.analyses.agreement`: ICC and Krippendorff's alpha (Tab. 3), system means with
  t-intervals (Tab. 4);
- :mod:`~hanna_stats.analyses.significance`: Williams tests (Figs. 27-38) with multiple-testing
  correction, paired bootstrap comparison of systems (Figs. 7, 26);
- :mod:`~hanna_stats.analyses.resampling`: bootstrap confidence intervals and permutation tests;
- :mod:`~hanna_stats.analyses.rankings`: Borda count (Tab. 6), top-k systems (Fig. 8).
"""
