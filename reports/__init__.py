"""The HTML report: the paper's study as one offline, interactive page built with Altair.

``python -m hanna_stats report`` calls :func:`write_report`; :mod:`reports.sections` holds one
builder per section, :mod:`reports.charts` the Altair charts and :mod:`reports.html` the page.
"""

from reports.report import build_report, write_report, write_tables
from reports.sections import ReportSettings

__all__ = ["ReportSettings", "build_report", "write_report", "write_tables"]
