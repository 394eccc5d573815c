"""Issue 28, item 3, through the ``rcsim`` commands: a full disk, a read-only file system and a
closed pipe on real file systems.

A 256 kB tmpfs mounted by the test (root only; skipped with the reason otherwise, unmounted at
teardown) fills while ``rcsim run``, ``track``, ``lidar apply``, ``describe``, ``map
centerline`` and ``inspect --write-recording`` write: exit status 2, one line naming the output
and what to do, no traceback, and the file system is empty again (no half-written bag, no
temporary). Before issue 28, a sqlite3 bag whose storage could not be created was renamed into
place half-written and the other writers ended in a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
import os
from pathlib import Path
import subprocess
import sys

import pytest

from rc_sim_description.testing import small_tmpfs
from rc_sim_engine.cli import main


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / 'small', 'size=256k') as point:
        yield point


@pytest.fixture(scope='module')
def bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp('bag') / 'bag'
    assert main(['run', '--world', 'flat_track', '--scenario', 'line', '--duration', '3',
                 '--no-plots', '--out', str(out)]) == 0
    return out


def _one_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: ') and err.count('\n') == 1 and 'Traceback' not in err, err
    return err


def _fill(point: Path, free_kb: int) -> None:
    """Leave about ``free_kb`` kB free (tmpfs counts whole pages)."""
    (point / 'fill').write_bytes(bytes((256 - free_kb) * 1024))


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_run_on_a_full_disk(small_fs: Path, capsys: pytest.CaptureFixture[str],
                            storage: str) -> None:
    err = _one_line(capsys, 'run', '--world', 'flat_track', '--scenario', 'line', '--duration',
                    '3', '--no-plots', '--storage', storage, '--out', str(small_fs / 'runs' /
                                                                          'run'))
    assert f'{small_fs / "runs" / "run"}: cannot write: no space left on the device (ENOSPC); ' \
           'free some space or write to another file system' in err
    assert list(small_fs.iterdir()) == []


def test_run_whose_storage_cannot_be_created(small_fs: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the half-created temporary bag was renamed to --out (a broken bag left)."""
    _fill(small_fs, 8)
    err = _one_line(capsys, 'run', '--world', 'flat_track', '--scenario', 'line', '--duration',
                    '3', '--no-plots', '--out', str(small_fs / 'run'))
    assert 'ENOSPC' in err
    assert sorted(p.name for p in small_fs.iterdir()) == ['fill']


def test_track_on_a_full_disk(small_fs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _one_line(capsys, 'track', '--duration', '4', '--no-plots', '--out',
                    str(small_fs / 'track'))
    assert 'track: cannot write: no space left on the device (ENOSPC)' in err
    assert list(small_fs.iterdir()) == []


def test_lidar_apply_on_a_full_disk(small_fs: Path, bag: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    err = _one_line(capsys, 'lidar', 'apply', '--bag', str(bag), '--preset', 'harsh', '--out',
                    str(small_fs / 'noisy'))
    assert 'noisy: cannot write: no space left on the device (ENOSPC)' in err
    assert list(small_fs.iterdir()) == []


@pytest.mark.parametrize('argv', [
    ('describe', '--out', '{fs}/describe'),
    ('map', 'centerline', 'chicane_track', '--out', '{fs}/line.csv'),
    ('inspect', '--bag', '{bag}', '--write-recording', '{fs}/recording.yaml'),
], ids=['describe', 'map-centerline', 'inspect'])
def test_small_writers_on_a_full_disk(small_fs: Path, bag: Path,
                                      capsys: pytest.CaptureFixture[str],
                                      argv: tuple[str, ...]) -> None:
    _fill(small_fs, 0)
    args = [a.format(fs=small_fs, bag=bag) for a in argv]
    err = _one_line(capsys, *args)
    assert 'ENOSPC' in err and str(small_fs) in err
    assert sorted(p.name for p in small_fs.iterdir()) == ['fill']


def test_read_only_file_system(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with small_tmpfs(tmp_path / 'ro', 'size=64k,ro') as point:
        err = _one_line(capsys, 'run', '--world', 'flat_track', '--scenario', 'line', '--out',
                        str(point / 'run'))
        assert 'read-only file system (EROFS)' in err


def test_inspect_into_a_closed_pipe_is_quiet(bag: Path) -> None:
    """``rcsim inspect --bag B | head -1`` with the reader already gone: status 141, as a Unix
    tool killed by SIGPIPE, and nothing on stderr (before: a BrokenPipeError traceback)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, '-m', 'rc_sim_engine', 'inspect', '--bag',
                               str(bag)], stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=300)
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ''
