"""``scripts/setup_env.sh`` is safe to source: options kept, failures return, pip only when needed.

Each test sources a copy of the script in a bash subprocess, inside a throw-away repository
(dummy setup files) and a fake venv whose ``pip`` only logs its arguments and whose ``python``
is this interpreter: no network, no change to the real venv.
"""

from __future__ import annotations

from pathlib import Path
import shutil
import subprocess
import sys

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ('rc_sim_description', 'rc_sim_control', 'rc_sim_sensors', 'rc_sim_engine',
            'rc_sim_calibration')

pytestmark = pytest.mark.skipif(shutil.which('bash') is None, reason='needs bash')


@pytest.fixture
def sandbox(tmp_path: Path) -> dict[str, Path]:
    repo = tmp_path / 'repo'
    (repo / 'scripts').mkdir(parents=True)
    shutil.copy(REPO / 'scripts' / 'setup_env.sh', repo / 'scripts' / 'setup_env.sh')
    for pkg in PACKAGES:
        (repo / pkg).mkdir()
        for name in ('setup.py', 'setup.cfg', 'package.xml'):
            (repo / pkg / name).write_text(f'# {pkg} {name}\n')
    (repo / 'requirements-test.txt').write_text('pytest\n')
    venv = tmp_path / 'venv'
    (venv / 'bin').mkdir(parents=True)
    log = tmp_path / 'pip.log'
    (venv / 'bin' / 'python').write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (venv / 'bin' / 'pip').write_text(f'#!/bin/sh\necho "pip $*" >> {log}\n'
                                      'exit "${FAKE_PIP_STATUS:-0}"\n')
    (venv / 'bin' / 'activate').write_text(
        f'VIRTUAL_ENV={venv}\nPATH="$VIRTUAL_ENV/bin:$PATH"\nexport VIRTUAL_ENV PATH\n')
    for name in ('python', 'pip'):
        (venv / 'bin' / name).chmod(0o755)
    # the interpreter alone on PATH: the test venv's own bin may hold a real uv
    host = tmp_path / 'hostbin'
    host.mkdir()
    for name in ('python', 'python3'):
        (host / name).symlink_to(sys.executable)
    return {'repo': repo, 'venv': venv, 'log': log, 'host': host}


def _bash(script: str, box: dict[str, Path], **env: str) -> subprocess.CompletedProcess[str]:
    environ = {'PATH': f'{box["host"]}:/usr/bin:/bin', 'HOME': str(box['repo']),
               'RC_SIM_VENV': str(box['venv']), 'RC_SIM_INSTALLER': 'pip', **env}
    return subprocess.run(['bash', '--noprofile', '--norc', '-c', script], cwd=box['repo'],
                          env=environ, capture_output=True, text=True, timeout=120)


def _pip_calls(box: dict[str, Path]) -> int:
    return len(box['log'].read_text().splitlines()) if box['log'].exists() else 0


@pytest.mark.parametrize('options', ['', 'set -euo pipefail', 'set -u; shopt -s extglob'])
def test_sourcing_keeps_the_shell_options(sandbox: dict[str, Path], options: str) -> None:
    script = (f'{options}\nbefore="$(set +o; shopt -p)"\n. scripts/setup_env.sh\n'
              'status=$?\nafter="$(set +o; shopt -p)"\n'
              '[ "$before" = "$after" ] && echo SAME-OPTIONS\necho "status=$status"\n'
              'type _rc_sim_setup >/dev/null 2>&1 || echo NO-LEFTOVERS\n'
              'command -v python')
    out = _bash(script, sandbox)
    assert 'SAME-OPTIONS' in out.stdout, out.stdout + out.stderr
    assert 'status=0' in out.stdout and 'NO-LEFTOVERS' in out.stdout
    assert out.stdout.strip().endswith(str(sandbox['venv'] / 'bin' / 'python'))


def test_pip_runs_only_when_a_setup_file_changed(sandbox: dict[str, Path]) -> None:
    assert _bash('. scripts/setup_env.sh', sandbox).returncode == 0
    first = _pip_calls(sandbox)
    assert first >= 1
    out = _bash('. scripts/setup_env.sh', sandbox)
    assert out.returncode == 0 and 'pip install' not in out.stderr
    assert _pip_calls(sandbox) == first  # nothing changed: no pip
    (sandbox['repo'] / 'rc_sim_engine' / 'setup.py').write_text('# a new dependency\n')
    assert _bash('. scripts/setup_env.sh', sandbox).returncode == 0
    assert _pip_calls(sandbox) == first + 1
    # the test extras need their own install once, then nothing again
    assert _bash('. scripts/setup_env.sh', sandbox, RC_SIM_EXTRAS='test').returncode == 0
    with_test = _pip_calls(sandbox)
    assert with_test == first + 3  # the packages, then requirements-test.txt
    assert _bash('. scripts/setup_env.sh', sandbox, RC_SIM_EXTRAS='test').returncode == 0
    assert _bash('. scripts/setup_env.sh', sandbox).returncode == 0
    assert _pip_calls(sandbox) == with_test


def test_a_failing_venv_creation_returns_without_killing_the_shell(
        sandbox: dict[str, Path], tmp_path: Path) -> None:
    missing = tmp_path / 'no-venv-yet'
    script = ('. scripts/setup_env.sh\necho "status=$?"\necho ALIVE\n'
              'set -e\n. scripts/setup_env.sh || echo "returned $?"\necho STILL-ALIVE')
    out = _bash(script, sandbox, RC_SIM_VENV=str(missing), RC_SIM_PYTHON='false')
    assert 'status=1' in out.stdout and 'ALIVE' in out.stdout
    assert 'returned 1' in out.stdout and 'STILL-ALIVE' in out.stdout
    assert 'error: could not create the venv' in out.stderr
    assert not missing.exists()


def test_a_failing_pip_returns_non_zero_and_writes_no_stamp(sandbox: dict[str, Path]) -> None:
    out = _bash('. scripts/setup_env.sh\necho "status=$?"', sandbox, FAKE_PIP_STATUS='1')
    assert 'status=1' in out.stdout
    assert 'error: pip install of the rc-sim packages failed' in out.stderr
    assert not list(sandbox['venv'].glob('.rc_sim_setup*'))
    assert _bash('. scripts/setup_env.sh', sandbox).returncode == 0  # retried next time
    assert list(sandbox['venv'].glob('.rc_sim_setup*'))


def _fake_uv(box: dict[str, Path], status: int = 0) -> Path:
    """A uv in the fake venv that logs its arguments (and fails with ``status``)."""
    uv = box['venv'] / 'bin' / 'uv'
    uv.write_text(f'#!/bin/sh\necho "uv $*" >> {box["log"]}\nexit {status}\n')
    uv.chmod(0o755)
    return uv


def test_uv_installs_when_it_is_there(sandbox: dict[str, Path]) -> None:
    _fake_uv(sandbox)
    out = _bash('. scripts/setup_env.sh', sandbox, RC_SIM_INSTALLER='uv')
    assert out.returncode == 0, out.stderr
    calls = sandbox['log'].read_text().splitlines()
    assert calls[0].startswith('uv pip install -q --python ' + str(sandbox['venv']))
    assert '--config-settings editable_mode=compat' in calls[0]
    assert not any(c.startswith('pip ') for c in calls)  # pip not needed


def test_a_failing_uv_falls_back_to_pip(sandbox: dict[str, Path]) -> None:
    _fake_uv(sandbox, status=2)
    out = _bash('. scripts/setup_env.sh', sandbox, RC_SIM_INSTALLER='uv')
    assert out.returncode == 0 and 'trying pip' in out.stderr
    calls = sandbox['log'].read_text().splitlines()
    assert calls[0].startswith('uv pip install') and calls[1].startswith('pip install')


def test_without_uv_pip_brings_it(sandbox: dict[str, Path]) -> None:
    """No uv anywhere: pip installs uv into the venv first (here the fake pip does nothing, so
    the packages go through pip)."""
    if shutil.which('uv', path='/usr/bin:/bin'):  # pragma: no cover - a system uv
        pytest.skip('a uv in /usr/bin or /bin')
    out = _bash('. scripts/setup_env.sh', sandbox, RC_SIM_INSTALLER='uv',
                PATH=f'/usr/bin:/bin:{sandbox["host"]}')
    calls = sandbox['log'].read_text().splitlines()
    assert out.returncode == 0 and calls[0] == 'pip install -q uv'
    assert calls[1].startswith('pip install -q -e ')
