"""The calibration report as a person reads it (issue 29 items 2-3): ``rcsim fit --report`` run as
a user types it, its ``index.html`` opened in a real headless browser (Debian's chromium): the
first screen holds the verdict, the held-out errors of the four predictors and the parameters that
moved, in words; every figure loads at a readable size; no ``nan``/``inf``, no raw keys, no
absolute path; a screenshot that is not blank.

Screenshots go to ``$RC_SIM_SCREENSHOT_DIR`` when set (to look at them), else to a temporary
directory. Skipped with the reason where chromium is missing.
"""

from __future__ import annotations

import os
from pathlib import Path
import re
import shutil
import subprocess
import sys

import pytest

from rc_sim_description.testing import BROWSER, browse_page

SHOT = (1100, 1000)      # one screen of a laptop window

@pytest.fixture(scope='module')
def report(synthetic, tmp_path_factory) -> Path:
    """``rcsim fit`` with two training recordings (each held out in turn) and a report."""
    root = tmp_path_factory.mktemp('calreport')
    for name in ('slalom', 'circle'):
        shutil.copytree(synthetic['bags'][name], root / name)
    done = subprocess.run(
        [sys.executable, '-m', 'rc_sim_engine', 'fit', '--bag', 'slalom', 'circle', '--free',
         'steering_gain,steering_offset,command_latency', '--budget', '20', '--out', 'cal.yaml',
         '--report', 'report'], cwd=root, capture_output=True, text=True, timeout=1200,
        env={**os.environ, 'MPLBACKEND': 'Agg'}, check=False)
    assert done.returncode in (0, 3), done.stdout[-3000:] + done.stderr[-3000:]
    return root / 'report'


def test_the_report_opens_with_the_verdict_the_table_and_the_parameters(report: Path) -> None:
    text = (report / 'summary.md').read_text(encoding='utf-8')
    page = (report / 'index.html').read_text(encoding='utf-8')
    order = [page.index(s) for s in ('class="verdict', 'Held-out prediction error',
                                     'What the calibration changed', 'What ran', 'Warnings',
                                     'Model structures compared', 'Figures', 'Files')]
    assert order == sorted(order)
    for recording in ('slalom', 'circle'):
        row = re.search(rf'\| {recording} \| \d+ \| calibrated \|', text)
        assert row, recording
    for pred in ('nominal', 'CTRV', 'kinematic'):
        assert text.count(f'|  |  | {pred} |') == 2, pred
    assert re.search(r'\| steering_gain \| 1 \| [\d.]+ \| (well determined|confounded with|not '
                     r'determined)', text)
    assert 'each recording in turn (slalom; circle)' in text
    for body in (text, page):
        assert not re.search(r'(?<![\w.])(?:nan|inf|None)(?!\w)', body)
    assert str(report.parent) not in page


@pytest.mark.skipif(BROWSER is None, reason='no chromium (Debian: apt-get install chromium)')
def test_the_report_reads_in_a_browser(report: Path, tmp_path: Path) -> None:
    page = report / 'index.html'
    shots = Path(os.environ.get('RC_SIM_SCREENSHOT_DIR') or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / 'calibration_report.png'
    data = browse_page(page, shot, SHOT, window=SHOT)
    assert data['scrollWidth'] <= data['clientWidth'], 'the page is wider than the window'
    tops = dict(data['headings'])
    # the first screen: the verdict, the held-out table and the start of the parameters
    assert tops['Held-out prediction error'] < 0.4 * SHOT[1]
    assert tops['What the calibration changed'] < SHOT[1]
    assert data['images'], 'no figure on the page'
    for img in data['images']:
        assert img['ok'] and img['natural'] > 0, f'{img["src"]} does not load'
        assert img['shown'] >= 0.6 * img['natural'], f'{img["src"]} is shrunk to be unreadable'
    text: str = data['text']
    for part in ('What ran', 'command', 'software', 'Files', 'calibrated', 'nominal', 'CTRV',
                 'kinematic'):
        assert part in text, part
    assert not re.search(r'(?<![\w.])(?:nan|inf|None)(?!\w)', text)
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size == SHOT
        lo, hi = im.convert('L').getextrema()
        assert hi - lo > 100, 'a blank screenshot'
