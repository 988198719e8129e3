"""The HTML report: the paper's study as one offline, interactive page built with Altair.

``python -m hanna_stats report`` calls :func:`write_report`; :mod:`hanna_stats.reports.sections`
holds one
builder per section, :mod:`hanna_stats.reports.charts` the Altair charts and
:mod:`hanna_stats.reports.html` the page.
"""

from hanna_stats.reports.report import build_report, write_report, write_tables
from hanna_stats.reports.sections import ReportSettings

__all__ = ["ReportSettings", "build_report", "write_report", "write_tables"]
