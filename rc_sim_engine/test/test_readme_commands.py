"""The README's "Without ROS" commands work in order, in a fresh directory.

The bash block is read from README.md (so the two cannot drift) and run verbatim by bash with
``set -euo pipefail`` in a temporary directory that holds what the commands read from the repository
(``scripts/``, the example car). Its outputs must all appear. To keep CI fast, a bash function
``rcsim`` appends shortening flags (``run``/``track``: ``--duration 8``; ``fit``: ``--budget
24``); ``RC_SIM_README_FULL=1`` runs the commands exactly as written (minutes).

``. scripts/setup_env.sh`` runs for real when the tests run in the venv it manages
(``<repository>/.venv``, as ``./scripts/test`` and CI do; then nothing is installed because the
venv is current); in any other venv it is replaced by putting that venv first on PATH, so a test
never re-points a shared venv at this checkout. ``test_setup_env.py`` covers the script itself.
"""

from __future__ import annotations

import os
from pathlib import Path
import re
import shutil
import subprocess
import sys

import pytest

REPO = Path(__file__).resolve().parents[2]
FAST = '''rcsim() {
  case "$1" in
    run|track) command rcsim "$@" --duration 8 ;;
    fit) command rcsim "$@" --budget 24 ;;
    *) command rcsim "$@" ;;
  esac
}
'''


def readme_commands(text: str) -> str:
    """The first ```bash block of the README section "Without ROS"."""
    section = text.split('## Without ROS', 1)[1].split('\n## ', 1)[0]
    match = re.search(r'```bash\n(.*?)```', section, re.S)
    assert match, 'no bash block in the "Without ROS" section'
    return match.group(1)


def test_the_block_is_what_a_new_user_needs() -> None:
    block = readme_commands((REPO / 'README.md').read_text(encoding='utf-8'))
    lines = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith('#')]
    assert lines[0].startswith('. scripts/setup_env.sh')
    for sub in ('describe', 'run', 'track', 'manoeuvre', 'protocol', 'fit', 'lidar apply'):
        assert f'rcsim {sub}' in block
    assert 'real.db3' not in block  # every input is made by an earlier command
    assert (REPO / 'rc_sim_calibration' / 'config' / 'example_different_car.yaml').is_file()


@pytest.mark.skipif(shutil.which('bash') is None, reason='needs bash')
def test_readme_commands_run_in_order(tmp_path: Path) -> None:
    block = readme_commands((REPO / 'README.md').read_text(encoding='utf-8'))
    venv_bin = Path(sys.executable).parent
    managed = Path(sys.prefix).resolve() == (REPO / '.venv').resolve()
    if managed:  # the script finds the repository (and its venv) through the linked folder
        (tmp_path / 'scripts').symlink_to(REPO / 'scripts', target_is_directory=True)
    else:
        (tmp_path / 'scripts').mkdir()
        (tmp_path / 'scripts' / 'setup_env.sh').write_text(
            f'export PATH="{venv_bin}:$PATH" MPLBACKEND=Agg\n')
    example = Path('rc_sim_calibration', 'config', 'example_different_car.yaml')
    (tmp_path / example).parent.mkdir(parents=True)
    (tmp_path / example).symlink_to(REPO / example)
    full = os.environ.get('RC_SIM_README_FULL') == '1'
    script = 'set -euo pipefail\n' + ('' if full else FAST) + block
    env = {**os.environ, 'PATH': f'{venv_bin}:{os.environ.get("PATH", "/usr/bin:/bin")}'}
    env.pop('RC_SIM_VENV', None)
    env.pop('RC_SIM_EXTRAS', None)
    done = subprocess.run(['bash', '--noprofile', '--norc', '-c', script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    runs = tmp_path / 'runs'
    for name in ('lap', 'eight', 'lap_harsh', 'track', 'avoid', 'calibrated'):
        assert (runs / name / 'metadata.yaml').is_file(), name
    for name in ('lap', 'eight', 'track', 'avoid', 'calibrated'):
        assert (runs / name / 'index.html').is_file(), name
    assert (runs / 'lap' / 'animation.gif').is_file()
    protocol = sorted(p.stem for p in (runs / 'protocol').glob('*.yaml'))
    assert protocol and sorted(p.name for p in (runs / 'bags').iterdir()) == protocol
    assert 'command_latency' in (runs / 'calibrated.yaml').read_text()
    assert (runs / 'report' / 'summary.md').is_file()
    assert 'error' not in done.stderr.lower().replace('error model', '')
