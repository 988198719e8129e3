"""Screenshots of report charts for the README, taken from a rendered report (never edited).

Run from the repository root, after writing a report::

    python -m hanna_stats report --data ../shared/data/hanna --out report.html
    python docs/screenshots.py report.html docs/img distributions williams corr_item

Each NAME is a chart's name (the ``data-name`` of its ``<div class="chart">``); the chart is
shot in headless Chromium (Debian's ``chromium`` through Playwright, the browser test's flags),
1400 px wide, as ``OUT/report-NAME.png``. A NAME ``section:KEY`` shoots the whole section
``<section id="KEY">`` (text, charts and tables) as ``OUT/report-section-KEY.png``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from vega_readback import opened

DEFAULT = ("distributions", "williams", "corr_item")


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        raise SystemExit("usage: python docs/screenshots.py REPORT.html OUT_DIR [NAME ...]")
    page_path, out = Path(argv[0]).resolve(), Path(argv[1])
    names = argv[2:] or DEFAULT
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile, opened(page_path, Path(profile)) as page:
        for name in names:
            key = name.removeprefix("section:")
            if key != name:
                chart, name = page.locator(f'section[id="{key}"]'), f"section-{key}"
            else:
                chart = page.locator(f'.chart[data-name="{name}"]')
            if chart.count() != 1:
                raise SystemExit(f"{page_path}: no chart or section named {name!r}")
            target = out / f"report-{name}.png"
            chart.screenshot(path=str(target))
            print(target)


if __name__ == "__main__":
    main(sys.argv[1:])
