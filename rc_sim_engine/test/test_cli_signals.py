"""A signal during ``rcsim run`` leaves no hidden ``.<name>.*.tmp`` folder and no output.

``rcsim run`` is started in a subprocess; as soon as its temporary output folder appears (the bag
is being written) it gets SIGTERM or SIGINT. SIGKILL cannot be caught: the next output to the
same target removes the dead process's temporary instead.
"""

from __future__ import annotations

from pathlib import Path
import signal
import subprocess
import sys
import time

import pytest

RUN = [sys.executable, '-m', 'rc_sim_engine', 'run', '--world', 'basic_track', '--scenario',
       'basic_track_lap', '--animate']


def _start_and_signal(out: Path, sig: int) -> subprocess.CompletedProcess[str]:
    # a child of a background job inherits SIGINT ignored: give it the default disposition
    proc = subprocess.Popen([*RUN, '--out', str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    try:
        while not list(out.parent.glob(f'.{out.name}.*.tmp')):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f'the run ended before its temporary output appeared: '
                            f'{proc.communicate()}')
            time.sleep(0.005)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@pytest.mark.parametrize('sig, status', [(signal.SIGTERM, 128 + signal.SIGTERM),
                                         (signal.SIGINT, 130)])
def test_a_signal_during_the_run_leaves_nothing(tmp_path: Path, sig: int, status: int) -> None:
    out = tmp_path / 'runs' / 'lap'
    done = _start_and_signal(out, sig)
    assert done.returncode == status, done.stderr
    assert not out.exists()
    assert not (tmp_path / 'runs').exists()  # the parent it created is gone too
    assert list(tmp_path.iterdir()) == []


def test_the_next_run_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    out = tmp_path / 'lap'
    done = _start_and_signal(out, signal.SIGKILL)
    assert done.returncode == -signal.SIGKILL
    left = list(tmp_path.glob('.lap.*.tmp'))
    assert left  # SIGKILL cannot be caught
    quick = [sys.executable, '-m', 'rc_sim_engine', 'run', '--world', 'flat_track',
             '--scenario', 'line', '--duration', '0.5', '--no-plots', '--out', str(out)]
    assert subprocess.run(quick, capture_output=True, text=True).returncode == 0
    assert not any(p.exists() for p in left) and out.is_dir()
    assert [p.name for p in tmp_path.iterdir()] == ['lap']
