"""Every kind of output page, opened in a real headless browser (Debian's chromium) as a person
would: the commands run as a user types them (their own processes), then each ``index.html`` is
loaded, checked from inside the browser (every picture loads and is shown at least at 60 % of its
own size, nothing is wider than the window, the text has no raw summary keys, absolute paths,
``nan`` or ``inf``) and screenshotted (a PNG that is not blank).

Screenshots go to ``$RC_SIM_SCREENSHOT_DIR`` when set (to look at them), else to a temporary
directory. Skipped with the reason where chromium is missing (``./scripts/test`` installs it as
root: ``apt-get install chromium``).
"""

from __future__ import annotations

import os
from pathlib import Path
import re
import subprocess
import sys
import time

import pytest

from rc_sim_description.testing import BROWSER, browse_page

pytestmark = pytest.mark.skipif(BROWSER is None, reason='no chromium (Debian: apt-get install '
                                'chromium; ./scripts/test installs it when run as root)')

RCSIM = [sys.executable, '-m', 'rc_sim_engine']
SHOT = (1100, 3600)  # screenshot size: the width of a laptop window, most of a page's length

#: Raw keys of the summaries that must not reach a reader.
RAW = re.compile(r'\b\w+_(?:s|m|mps|mps2|per_m)\b|\bcollision_events\b|\bsim_time\b|'
                 r'\brealtime_factor\b|\bwhole_run\b|\bafter_transient\b')


def _run(args: list[str], cwd: Path) -> float:
    """Run ``rcsim ARGS`` in its own process; returns its wall time [s]."""
    t0 = time.perf_counter()
    done = subprocess.run([*RCSIM, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900, env={**os.environ, 'MPLBACKEND': 'Agg'})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return time.perf_counter() - t0


@pytest.fixture(scope='module')
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, float]]:
    """One output folder of every page kind, made by the commands (name -> folder, wall s)."""
    root = tmp_path_factory.mktemp('pages')
    made: dict[str, tuple[Path, float]] = {}

    def make(name: str, args: list[str]) -> None:
        made[name] = (root / name, _run(args, root))

    make('run', ['run', '--world', 'basic_track', '--scenario', 'basic_track_lap', '--duration',
                 '6', '--animate', '--out', 'run'])
    make('track', ['track', '--trajectory', 'lemniscate', '--controller', 'fl', '--world',
                   'flat_track', '--duration', '8', '--out', 'track'])
    make('manoeuvre', ['manoeuvre', 'avoid', '--out', 'manoeuvre'])
    make('lidar_apply', ['lidar', 'apply', '--bag', 'run', '--out', 'lidar_apply', '--preset',
                         'harsh'])
    make('lidar_stats', ['lidar', 'stats', '--bag', 'lidar_apply', '--out', 'lidar_stats'])
    make('lidar_fit', ['lidar', 'fit', '--bag', 'lidar_apply', '--out', 'fit.yaml', '--report',
                       'lidar_fit'])
    return made


@pytest.mark.parametrize('kind', ['run', 'track', 'manoeuvre', 'lidar_apply', 'lidar_stats',
                                  'lidar_fit'])
def test_the_page_reads_in_a_browser(folders: dict[str, tuple[Path, float]], kind: str,
                                     tmp_path: Path) -> None:
    folder, wall = folders[kind]
    page = folder / 'index.html'
    assert page.is_file()
    shots = Path(os.environ.get('RC_SIM_SCREENSHOT_DIR') or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / f'{kind}.png'
    data = browse_page(page, shot, SHOT)
    assert data['scrollWidth'] <= data['clientWidth'], 'the page is wider than the window'
    assert data['images'], 'no plot on the page'
    for img in data['images']:
        assert img['ok'] and img['natural'] > 0, f'{img["src"]} does not load'
        assert img['shown'] >= 0.6 * img['natural'], f'{img["src"]} is shrunk to be unreadable'
    text: str = data['text']
    for part in ('What ran', 'command', 'rcsim ', 'software', 'Files'):
        assert part in text, part
    assert not RAW.findall(text), RAW.findall(text)
    assert str(folder.parent) not in text, 'an absolute path on the page'
    # no undefined value (the REP 117 words +inf / -inf / .inf name what a driver writes)
    assert not re.search(r'(?<![+\-.\w])(?:nan|inf|None)(?!\w)', text)
    # the command's real wall time (its whole process), not the loop's; a run's page leaves a
    # one-time kernel compile out (and says so)
    seconds = re.search(r'wall time of the (?:whole )?command\s+([\d.,]+) s', text)
    assert seconds, 'no wall time of the command'
    shown = float(seconds.group(1).replace(',', ''))
    assert 0 < shown <= wall + 0.5
    if kind != 'run':
        assert shown >= 0.3 * wall
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size == SHOT
        lo, hi = im.convert('L').getextrema()
        assert hi - lo > 100, 'a blank screenshot'


def test_the_run_page_says_it_in_words(folders: dict[str, tuple[Path, float]]) -> None:
    text = (folders['run'][0] / 'index.html').read_text(encoding='utf-8')
    assert 'The car drove' in text and 'without a collision' in text
    assert '<td>world</td><td>basic_track</td>' in text  # by name
    assert 'collision 1' not in text  # no empty rows for events that did not happen
    assert 'wall time of the simulation loop alone' in text
    from PIL import Image

    with Image.open(folders['run'][0] / 'animation.gif') as gif:
        assert gif.size[0] >= 700  # its text reads at the natural size
