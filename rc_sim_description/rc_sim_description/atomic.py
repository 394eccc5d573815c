"""Atomic outputs: write to a temporary name next to the target, rename when complete.

A crash, a user error or a signal never leaves a half-written file or bag directory behind:
while an atomic output is open in the main thread, SIGTERM and SIGHUP raise ``SystemExit(128 +
signal)`` (SIGINT already raises KeyboardInterrupt), so the cleanup of the temporary runs before
the process ends. Temporaries are named ``.<name>.<pid>.<random>.tmp``; one left by a process that
was killed outright (SIGKILL, power loss) is removed by the next output to the same target once
that process is gone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
import os
from pathlib import Path
import shutil
import signal
import tempfile
import threading
from types import FrameType

from rc_sim_description.errors import OutputError

__all__ = ['atomic_output_dir', 'atomic_output_file', 'atomic_write_text', 'check_output_path',
           'rename_bag_storage']


#: Signals that end the process by default and are turned into SystemExit during an output.
_FATAL_SIGNALS = tuple(getattr(signal, name) for name in ('SIGTERM', 'SIGHUP')
                       if hasattr(signal, name))
_depth = 0  # nesting of atomic outputs in the main thread


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    for sig in _FATAL_SIGNALS:  # a second signal must not interrupt the cleanup
        signal.signal(sig, signal.SIG_IGN)
    raise SystemExit(128 + signum)


@contextmanager
def _cleanup_on_signals() -> Iterator[None]:
    """While active (main thread only), SIGTERM/SIGHUP raise SystemExit so ``finally`` blocks
    run; handlers the program installed itself are left alone."""
    global _depth
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    if _depth == 0:
        for sig in _FATAL_SIGNALS:
            if signal.getsignal(sig) is signal.SIG_DFL:
                previous[sig] = signal.signal(sig, _raise_exit)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. EPERM: it exists but belongs to another user
        return True
    return True


def _temporaries(parent: Path, name: str) -> list[tuple[Path, int]]:
    """``(entry, pid)`` of the ``.<name>.<pid>.*.tmp`` entries in ``parent``."""
    prefix = f'.{name}.'
    try:
        entries = [p for p in parent.iterdir() if p.name.startswith(prefix)
                   and p.name.endswith('.tmp')]
    except OSError:
        return []
    out = []
    for entry in entries:
        pid = entry.name[len(prefix):].split('.', 1)[0]
        if pid.isdigit():
            out.append((entry, int(pid)))
    return out


def _remove_entry(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


def _remove_stale(parent: Path, name: str) -> None:
    """Remove ``.<name>.<pid>.*.tmp`` entries in ``parent`` whose process no longer exists."""
    for entry, pid in _temporaries(parent, name):
        if pid != os.getpid() and not _pid_alive(pid):
            _remove_entry(entry)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _existing_ancestor(path: Path) -> Path:
    """Nearest existing ancestor directory of ``path`` (the directories to create lie below)."""
    ancestor = path.resolve().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    return ancestor


def check_output_path(path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Validate an output path before long work starts; returns it as a Path.

    Raises OutputError when it exists (unless ``force``), or when the nearest existing ancestor
    is not a directory or refuses new entries (probed with a temporary directory, so read-only
    mounts are caught for root too). Missing parent directories are fine: the atomic writers
    create them (``mkdir -p``) and remove them again when the output fails.
    """
    out = Path(path)
    resolved = out.resolve()
    if resolved == Path.cwd().resolve() or resolved in Path.cwd().resolve().parents:
        raise OutputError(f'{out}: refusing to write over the current directory or one of its '
                          'parents (give a new directory name)')
    if out.exists() and not force:
        raise OutputError(f'{out} exists already (use --force to overwrite)')
    ancestor = _existing_ancestor(out)
    if not ancestor.is_dir():
        raise OutputError(f'{out}: {ancestor} is not a directory')
    try:
        Path(tempfile.mkdtemp(prefix=f'.{out.name}.', suffix='.probe', dir=ancestor)).rmdir()
    except OSError as exc:
        raise OutputError(f'{out}: directory {ancestor} is not writable '
                          f'({exc.strerror or exc})') from None
    return out


@contextmanager
def _parents_of(target: Path) -> Iterator[Path]:
    """Create the missing parent directories of ``target``; remove them again on error."""
    parent = target.resolve().parent
    missing: list[Path] = []
    ancestor = parent
    while not ancestor.exists():
        missing.append(ancestor)
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputError(f'{target}: {ancestor} is not a directory')
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f'{target}: cannot create {parent} ({exc.strerror})') from None
    try:
        yield parent
    except BaseException:  # any failure, Ctrl-C included: clean up, then re-raise it
        # this process's temporaries of the target, also one a signal caught between its
        # creation and the writer's own cleanup
        for entry, pid in _temporaries(parent, target.name):
            if pid == os.getpid():
                _remove_entry(entry)
        for directory in missing:  # deepest first; only the ones this call created, if empty
            try:
                directory.rmdir()
            except OSError:
                break
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same directory, renamed)."""
    with atomic_output_file(path) as tmp:
        tmp.write_text(text, encoding='utf-8')


@contextmanager
def atomic_output_file(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; replaces ``path`` on success, else removed."""
    target = Path(path)
    with _cleanup_on_signals(), _parents_of(target) as parent:
        _remove_stale(parent, target.name)
        try:
            fd, tmp_name = tempfile.mkstemp(prefix=f'.{target.name}.{os.getpid()}.',
                                            suffix='.tmp', dir=parent)
        except OSError as exc:
            raise OutputError(f'{target}: cannot write ({exc.strerror})') from None
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            yield tmp
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the usual permissions
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                tmp.unlink()


@contextmanager
def atomic_output_dir(path: str | os.PathLike[str], *, force: bool = False) -> Iterator[Path]:
    """Yield a fresh temporary directory path (not yet created) next to ``path``.

    On success it is renamed to ``path`` (replacing an existing one only with ``force``); on any
    error it is deleted, so a partial output directory (e.g. a bag) is never left behind.
    """
    target = check_output_path(path, force=force)
    with _cleanup_on_signals(), _parents_of(target) as parent:
        _remove_stale(parent, target.name)
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f'.{target.name}.{os.getpid()}.', suffix='.tmp',
                                        dir=parent))
        except OSError as exc:
            raise OutputError(f'{target}: cannot write ({exc.strerror})') from None
        tmp.rmdir()  # callers such as rosbags' Writer want to create the directory themselves
        try:
            yield tmp
            if tmp.is_dir():
                os.chmod(tmp, 0o777 & ~_umask())
            if target.exists():
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink()
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


def rename_bag_storage(bag_dir: Path, final_name: str) -> None:
    """Rename the storage file(s) of a rosbag2 directory written under a temporary name.

    rosbags' Writer names the storage file after its directory (``<dir>/<dir>.db3|.mcap``) and
    lists it in ``metadata.yaml``; a bag built in :func:`atomic_output_dir` would otherwise keep
    the temporary name. Call it on the temporary directory before the final rename.
    """
    meta = bag_dir / 'metadata.yaml'
    text = meta.read_text(encoding='utf-8')
    for storage in sorted(bag_dir.iterdir()):
        if storage.suffix in ('.db3', '.mcap') and storage.stem.startswith(bag_dir.name):
            new = f'{final_name}{storage.name[len(bag_dir.name):]}'
            storage.rename(bag_dir / new)
            text = text.replace(storage.name, new)
    meta.write_text(text, encoding='utf-8')
