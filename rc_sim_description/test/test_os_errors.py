"""Issue 28, item 3: OS errors are user errors, on real small file systems.

ENOSPC (a size-limited tmpfs mounted by the test), EROFS (a read-only tmpfs), EACCES (a child
process as the unprivileged user ``nobody``), ENAMETOOLONG and ELOOP while an output is written:
one ``OutputError`` line naming the output and what to do, nothing left behind (no partial file,
no temporary, no parent directory the output created). EDQUOT cannot be produced here (the
kernel has no tmpfs quotas and no quota tools), so it is injected. A closed stdout pipe ends
quietly with status 141. The mounts need root: skipped with the reason otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
import errno
import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from rc_sim_description.atomic import (
    atomic_output_dir,
    atomic_write_text,
    check_output_path,
    os_error_reason,
)
from rc_sim_description.bags.writer import BagWriter
from rc_sim_description.cli_support import EXIT_BROKEN_PIPE, run_cli
from rc_sim_description.errors import OutputError
from rc_sim_description.testing import small_tmpfs


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 256 kB tmpfs, unmounted and removed at teardown."""
    with small_tmpfs(tmp_path / 'small', 'size=256k') as point:
        yield point


@pytest.fixture
def read_only_fs(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / 'ro', 'size=64k,ro') as point:
        yield point


def _entries(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob('*'))


# --------------------------------------------------------------------------- ENOSPC
def test_full_disk_file(small_fs: Path) -> None:
    target = small_fs / 'deep' / 'er' / 'big.csv'
    with pytest.raises(OutputError) as info:
        atomic_write_text(target, 'x' * 1_000_000)
    text = str(info.value)
    assert text.startswith(f'{target}: cannot write: no space left on the device (ENOSPC); '
                           'free some space')
    assert '\n' not in text
    assert _entries(small_fs) == []  # no partial file, no temporary, no created parent


def test_full_disk_directory(small_fs: Path) -> None:
    target = small_fs / 'report'
    with pytest.raises(OutputError, match=r'report: cannot write: no space left .*ENOSPC'), \
            atomic_output_dir(target) as tmp:
        tmp.mkdir()
        (tmp / 'a.png').write_bytes(bytes(100_000))
        (tmp / 'b.png').write_bytes(bytes(400_000))
    assert _entries(small_fs) == []


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
@pytest.mark.parametrize('when', ['open', 'write'])
def test_full_disk_bag(small_fs: Path, storage: str, when: str) -> None:
    """Before: a failure while the sqlite3 storage was created renamed the half-made temporary
    into place (a half-written bag left behind); a failure while writing was a traceback."""
    from rc_sim_description.bags import cdr_bulk as cdr
    from rc_sim_description.bags.cdr_bulk import RawBatch

    if when == 'open':
        (small_fs / 'fill').write_bytes(bytes(248 * 1024))
    target = small_fs / 'bag'
    t = np.arange(20_000, dtype=np.int64) * 1_000_000
    with pytest.raises(OutputError) as info, BagWriter(target, storage=storage) as bag:
        for _ in range(10):
            bag.write_batches([RawBatch('/x', 'std_msgs/msg/Float64', t,
                                        cdr.float64(np.ones(len(t))), 0)])
    assert str(info.value).startswith(f'{target}: cannot write: no space left on the device '
                                      '(ENOSPC)')
    assert _entries(small_fs) == (['fill'] if when == 'open' else [])


# --------------------------------------------------------------------------- EROFS, EACCES
def test_read_only_file_system(read_only_fs: Path) -> None:
    with pytest.raises(OutputError, match=r'not writable \(read-only file system \(EROFS\); '
                                          r'write to a writable directory\)'):
        check_output_path(read_only_fs / 'out')
    with pytest.raises(OutputError, match=r'read-only file system \(EROFS\)'):
        atomic_write_text(read_only_fs / 'x.yaml', 'a: 1\n')
    with pytest.raises(OutputError, match='EROFS'), atomic_output_dir(read_only_fs / 'd') as tmp:
        tmp.mkdir()


def test_permission_denied_for_an_unprivileged_user() -> None:
    """A forked child that became ``nobody`` (uid 65534) writes into a directory of root's (a
    fork, not a new interpreter: the venv's interpreter lies under /root, closed to nobody)."""
    if os.geteuid() != 0:
        pytest.skip('switching to the user nobody needs root')
    root = Path(tempfile.mkdtemp(prefix='rcsim_eacces_'))
    root.chmod(0o755)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no pytest machinery from here on, only os._exit
        status = 99
        try:
            os.close(read)
            os.dup2(write, 2)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            sys.stderr = os.fdopen(2, 'w', closefd=False)
            status = run_cli(lambda: atomic_write_text(root / 'out.yaml', 'x') or 0)
            sys.stderr.flush()
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read) as pipe:
        err = pipe.read()
    _, status = os.waitpid(pid, 0)
    try:
        assert os.waitstatus_to_exitcode(status) == 2, err
        assert err == (f'error: {root / "out.yaml"}: cannot write (permission denied (EACCES); '
                       'write to a directory you may write to)\n'), err
        assert list(root.iterdir()) == []
    finally:
        shutil.rmtree(root)


# --------------------------------------------------------------------------- injected errors
@pytest.mark.parametrize('code', [errno.EDQUOT, errno.ENOSPC, errno.EFBIG])
def test_quota_and_size_errors_while_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             code: int) -> None:
    """EDQUOT cannot be made on this machine's file systems: injected at the write."""
    real = Path.write_text

    def failing(self: Path, *args: object, **kwargs: object) -> int:
        if self.name.endswith('.tmp'):
            raise OSError(code, os.strerror(code))  # a write error names no file
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, 'write_text', failing)
    target = tmp_path / 'new' / 'out.yaml'
    with pytest.raises(OutputError, match=rf'out\.yaml: cannot write: .*\({errno.errorcode[code]}'
                                          r'\)'):
        atomic_write_text(target, 'x')
    assert list(tmp_path.iterdir()) == []


def test_sqlite_full_and_read_only_codes() -> None:
    import sqlite3

    full = sqlite3.OperationalError('database or disk is full')
    full.sqlite_errorcode = 13  # type: ignore[attr-defined]
    assert os_error_reason(full)[0] == errno.ENOSPC  # type: ignore[index]
    readonly = sqlite3.OperationalError('attempt to write a readonly database')
    readonly.sqlite_errorcode = 8  # type: ignore[attr-defined]
    assert os_error_reason(readonly)[0] == errno.EROFS  # type: ignore[index]
    assert os_error_reason(sqlite3.OperationalError('no such table: x')) is None


def test_an_os_error_escaping_a_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    def command() -> int:
        raise PermissionError(errno.EACCES, 'Permission denied', '/somewhere/input.yaml')

    assert run_cli(command) == 2
    err = capsys.readouterr().err
    assert err == ('error: /somewhere/input.yaml: permission denied (EACCES); write to a '
                   'directory you may write to\n')

    def other() -> int:
        raise ConnectionResetError(errno.ECONNRESET, 'reset')

    with pytest.raises(ConnectionResetError):  # not a documented user error: a real bug
        run_cli(other)


# --------------------------------------------------------------------------- EPIPE
def test_closed_pipe_ends_quietly() -> None:
    """``rcsim inspect ... | head -1``: the reader is gone before the output is flushed."""
    code = ('import sys\n'
            'from rc_sim_description.cli_support import run_cli\n'
            'sys.exit(run_cli(lambda: print("line\\n" * 100000) or 0))\n')
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, '-c', code], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == EXIT_BROKEN_PIPE
    assert done.stderr == ''
