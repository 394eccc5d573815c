"""Atomic outputs: write to a temporary name next to the target, rename when complete.

A crash, a user error or a signal never leaves a half-written file or bag directory behind:
while an atomic output is open in the main thread, SIGTERM and SIGHUP raise ``SystemExit(128 +
signal)`` (SIGINT already raises KeyboardInterrupt), so the cleanup of the temporary runs before
the process ends. Temporaries are named ``.<name>.<pid>.<random>.tmp`` (a name near the file
system's limit is shortened in them); one left by a process that was killed outright (SIGKILL,
power loss) is removed by the next output to the same target once that process is gone.

Inputs are sacred (docs/limits.md, *Outputs*): :func:`check_output_path` with ``inputs``
resolves the output and every input of a command (symbolic links, ``..``, hard links and bind
mounts by device and inode) and refuses an output that is, contains or lies inside an input,
with or without ``--force``. ``--force`` replaces only what the command itself writes (``kind``:
a regular file, a bag directory, a directory of its own files), never a device, a symbolic link
(or its target), a mount point or a directory of other things. A full disk, a quota, a read-only
file system, a refused permission, a name too long or a symbolic link loop while an output is
written becomes one :class:`OutputError` line naming the output and what to do; the partial
output is removed (:func:`output_os_error`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
import errno
import fnmatch
import hashlib
import os
from pathlib import Path
import shutil
import signal
import stat
import tempfile
import threading
from types import FrameType
from typing import Union

from rc_sim_description.errors import OutputError

__all__ = ['OUTPUT_KINDS', 'InputPaths', 'atomic_output_dir', 'atomic_output_file',
           'atomic_write_text', 'check_output_path', 'os_error_reason', 'output_os_error',
           'rename_bag_storage']

#: What an output is, for ``--force``: ``file`` (a regular file), ``bag`` (a rosbag2 directory:
#: metadata.yaml and regular files), ``dir`` (a directory of regular files, only those matching
#: the command's name patterns when it gives them) or ``any`` (a regular file or a bag).
OUTPUT_KINDS = ('file', 'bag', 'dir', 'any')
#: The inputs of a command: flag -> path, list of paths or None (not given).
InputPaths = Mapping[str, Union[str, 'os.PathLike[str]', Iterable[Union[str, 'os.PathLike[str]']],
                                None]]

#: Signals that end the process by default and are turned into SystemExit during an output.
_FATAL_SIGNALS = tuple(getattr(signal, name) for name in ('SIGTERM', 'SIGHUP')
                       if hasattr(signal, name))
_depth = 0  # nesting of atomic outputs in the main thread
_STEM_BYTES = 96  # longest target name kept whole in a temporary's name
_WALK_LIMIT = 10_000  # entries compared by inode under one input or output directory


# --------------------------------------------------------------------------- OS errors
#: errno -> (reason, what to do) of the OS errors an output can meet.
_OS_ADVICE: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ('no space left on the device', 'free some space or write to another file '
                   'system'),
    errno.EDQUOT: ('disk quota exceeded', 'free some space within your quota or write '
                   'elsewhere'),
    errno.EFBIG: ('file too large for the file system', 'write to another file system'),
    errno.EROFS: ('read-only file system', 'write to a writable directory'),
    errno.EACCES: ('permission denied', 'write to a directory you may write to'),
    errno.EPERM: ('operation not permitted', 'write to a directory you may write to'),
    errno.ENAMETOOLONG: ('file name too long', 'give a shorter name'),
    errno.ELOOP: ('too many levels of symbolic links', 'check the path for a symbolic link '
                  'loop'),
    errno.ENOTDIR: ('a part of the path is not a directory', 'give a path in a directory'),
    errno.EISDIR: ('is a directory', 'give another name'),
    errno.EIO: ('input/output error', 'check the device or write elsewhere'),
}
#: errors that only writing raises: always the output's, whatever file they name
_WRITE_ONLY = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}
#: SQLite result codes (low byte) of a full, read-only or failing disk -> errno
_SQLITE_ERRNO = {13: errno.ENOSPC, 8: errno.EROFS, 10: errno.EIO, 14: errno.EACCES}


def os_error_reason(exc: BaseException) -> tuple[int, str] | None:
    """``(errno, 'reason (ENAME); what to do')`` of an OS error (also SQLite's full, read-only
    and I/O errors), or None when it is none of the documented ones."""
    code = getattr(exc, 'errno', None) if isinstance(exc, OSError) else None
    if code is None:
        sqlite_code = getattr(exc, 'sqlite_errorcode', None)
        if isinstance(sqlite_code, int):
            code = _SQLITE_ERRNO.get(sqlite_code & 0xFF)
        elif 'database or disk is full' in str(exc):
            code = errno.ENOSPC
    if code not in _OS_ADVICE:
        return None
    reason, advice = _OS_ADVICE[code]
    return code, f'{reason} ({errno.errorcode.get(code, code)}); {advice}'


def _inside(text: str, roots: Iterable[Path]) -> bool:
    """True when the absolute path ``text`` is one of ``roots`` or lies below one."""
    for root in roots:
        root_text = str(root)
        if text == root_text or text.startswith(root_text.rstrip(os.sep) + os.sep):
            return True
    return False


def output_os_error(target: Path, exc: BaseException, *near: Path) -> OutputError | None:
    """The one-line :class:`OutputError` for an OS error met while ``target`` was written, or
    None when ``exc`` is not about it (e.g. an input that cannot be read).

    Errors only writes raise (ENOSPC, EDQUOT, EFBIG, EROFS; SQLite's full disk) are always the
    output's; the others (EACCES, ENAMETOOLONG, ELOOP, ...) when they name a file at ``target``
    or in the directories ``near`` (its temporary, its parent).
    """
    found = os_error_reason(exc)
    if found is None:
        return None
    code, text = found
    if code not in _WRITE_ONLY and isinstance(exc, OSError):
        roots = [Path(os.path.abspath(target)), *(Path(os.path.abspath(p)) for p in near)]
        names = [os.path.abspath(os.fsdecode(n)) for n in (exc.filename, exc.filename2)
                 if isinstance(n, (str, bytes, os.PathLike))]
        if not any(_inside(n, roots) for n in names):
            return None
    return OutputError(f'{target}: cannot write: {text} (nothing was written)')


def _stem(name: str) -> str:
    """``name`` as used in temporary names: at most :data:`_STEM_BYTES` bytes (a long name is
    cut and tagged with a hash of the whole, so the temporary fits where the target fits)."""
    raw = os.fsencode(name)
    if len(raw) <= _STEM_BYTES:
        return name
    digest = hashlib.sha1(raw).hexdigest()[:10]
    return os.fsdecode(raw[:_STEM_BYTES - 12]).rstrip('\udcff') + '~' + digest


# --------------------------------------------------------------------------- signals
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
    prefix = f'.{_stem(name)}.'
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
        with suppress(OSError):
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


# --------------------------------------------------------------------------- paths
def _resolve(path: Path, what: str) -> Path:
    """``path`` with every symbolic link and ``..`` resolved; a loop is a one-line error."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:  # Python < 3.13 raises RuntimeError on a loop
        code = getattr(exc, 'errno', errno.ELOOP) or errno.ELOOP
        reason, advice = _OS_ADVICE.get(code, _OS_ADVICE[errno.ELOOP])
        raise OutputError(f'{what}: cannot resolve the path: {reason} '
                          f'({errno.errorcode.get(code, code)}); {advice}') from None


def _existing_ancestor(resolved: Path) -> Path:
    """Nearest existing ancestor directory of a resolved path (the directories to create lie
    below)."""
    ancestor = resolved.parent
    while not os.path.lexists(ancestor):
        ancestor = ancestor.parent
    return ancestor


def _check_name_lengths(out: Path, resolved: Path, ancestor: Path) -> None:
    """Every name still to be created fits the file system (NAME_MAX), and so does the path."""
    try:
        name_max = os.pathconf(ancestor, 'PC_NAME_MAX')
        path_max = os.pathconf(ancestor, 'PC_PATH_MAX')
    except (OSError, ValueError):
        name_max, path_max = 255, 4096
    for part in resolved.relative_to(ancestor).parts:
        size = len(os.fsencode(part))
        if size > name_max:
            raise OutputError(f'{out}: cannot write: the name {part[:24]}... is {size} bytes '
                              f'long, the file system at {ancestor} allows {name_max} '
                              '(ENAMETOOLONG); give a shorter name')
    if len(os.fsencode(str(resolved))) >= path_max:
        raise OutputError(f'{out}: cannot write: the path is longer than the {path_max} bytes '
                          'the system allows (ENAMETOOLONG); give a shorter path')


def _flat_inputs(inputs: InputPaths | None) -> list[tuple[str, Path]]:
    """``(flag, path)`` of every input given (lists flattened, None skipped)."""
    out: list[tuple[str, Path]] = []
    for flag, value in (inputs or {}).items():
        if value is None:
            continue
        items = [value] if isinstance(value, (str, os.PathLike)) else list(value)
        out += [(flag, Path(item)) for item in items if item is not None and str(item) != '']
    return out


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _tree_ids(root: Path) -> dict[tuple[int, int], Path]:
    """(device, inode) -> path of ``root`` and, for a real directory, everything below it (at
    most :data:`_WALK_LIMIT` entries)."""
    ids: dict[tuple[int, int], Path] = {}
    try:
        ids[_identity(root.stat())] = root
    except OSError:
        return ids
    if not root.is_dir():
        return ids
    count = 0
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            try:
                ids.setdefault(_identity(path.lstat()), path)
            except OSError:
                continue
            count += 1
            if count >= _WALK_LIMIT:
                return ids
    return ids


def _input_roots(path: Path) -> list[Path]:
    """An input and, for a storage file of a rosbag2 directory, that directory (the reader
    reads the whole directory)."""
    roots = [path]
    if path.suffix in ('.db3', '.mcap') and (path.parent / 'metadata.yaml').is_file():
        roots.append(path.parent)
    return roots


def _check_overlap(label: str, out: Path, resolved: Path,
                   inputs: list[tuple[str, Path]]) -> None:
    """Refuse an output that is, contains or lies inside one of ``inputs`` (by resolved path,
    then by device and inode: hard links, bind mounts)."""
    ancestors: dict[tuple[int, int], Path] = {}
    for parent in [resolved, *resolved.parents]:
        try:
            ancestors.setdefault(_identity(parent.stat()), parent)
        except OSError:
            continue
    out_ids: dict[tuple[int, int], Path] | None = None
    for flag, given in inputs:
        for root in _input_roots(given):
            try:
                real = root.resolve()
            except (RuntimeError, OSError):
                continue  # unreadable input: reading it fails with its own error
            how = ''
            if real == resolved:
                how = 'is'
            elif resolved in real.parents:
                how = 'contains'
            elif real in resolved.parents:
                how = 'lies inside'
            else:
                if not os.path.exists(real):
                    continue
                in_ids = _tree_ids(real)
                hits = [k for k in in_ids if k in ancestors]
                if any(ancestors[k] == resolved and in_ids[k] == real for k in hits):
                    how = 'is a hard link (or bind mount) of'
                elif hits:
                    how = 'lies inside'
                else:
                    if out_ids is None:
                        out_ids = _tree_ids(resolved) if os.path.lexists(resolved) else {}
                    shared = [k for k in in_ids if k in out_ids]
                    if shared:
                        how = f'shares {out_ids[shared[0]]} (a hard link or bind mount) with'
            if how:
                what = 'is the same path as' if how == 'is' else how
                raise OutputError(f'{label} {out} {what} the input {flag} {given}: refusing to '
                                  f'write over an input, with or without --force; give another '
                                  f'{label}')


def _replaceable(out: Path, kind: str, names: Iterable[str] | None) -> None:
    """Refuse to replace ``out`` (it exists; ``--force``) unless it is what the command
    writes: a regular file, a bag directory or a directory of the command's files."""
    st = out.lstat()
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        raise OutputError(f'{out} is a symbolic link (to {os.readlink(out)}): --force does not '
                          'replace links or their targets; remove it or give another path')
    if stat.S_ISREG(mode):
        if kind in ('file', 'any'):
            return
        raise OutputError(f'{out} is a file, not a {"bag " if kind == "bag" else ""}directory '
                          f'this command writes: --force does not replace it; remove it or '
                          'give another path')
    if not stat.S_ISDIR(mode):
        what = ('a character device' if stat.S_ISCHR(mode) else 'a block device'
                if stat.S_ISBLK(mode) else 'a named pipe' if stat.S_ISFIFO(mode) else
                'a socket' if stat.S_ISSOCK(mode) else 'not a regular file')
        raise OutputError(f'{out} is {what}: --force replaces only files and directories this '
                          'command writes; give another path')
    if kind == 'file':
        raise OutputError(f'{out} is a directory: --force replaces only a file here; remove it '
                          'or give another path')
    try:
        parent_dev = out.parent.resolve().stat().st_dev
    except OSError:
        parent_dev = st.st_dev
    if parent_dev != st.st_dev or os.path.ismount(out):
        raise OutputError(f'{out} is a mount point: --force does not replace it; give a path '
                          'inside it')
    entries = list(out.iterdir())
    if len(entries) > _WALK_LIMIT:
        raise OutputError(f'{out} holds {len(entries):,} entries, not an rc-sim output: --force '
                          'does not replace it; remove it yourself or give another path')
    is_bag = (out / 'metadata.yaml').is_file()
    patterns = list(names) if names is not None else None
    for entry in entries:
        entry_mode = entry.lstat().st_mode
        if not stat.S_ISREG(entry_mode):
            kind_text = 'a directory' if stat.S_ISDIR(entry_mode) else 'not a regular file'
            raise OutputError(f'{out} holds {entry.name} ({kind_text}): not a directory this '
                              'command writes, --force does not replace it; remove it yourself '
                              'or give another path')
        if kind == 'dir' and patterns is not None and not any(
                fnmatch.fnmatchcase(entry.name, p) for p in patterns):
            raise OutputError(f'{out} holds {entry.name}, which this command does not write: '
                              '--force does not replace it; remove it yourself or give another '
                              'path')
    if kind in ('bag', 'any') and not is_bag:
        raise OutputError(f'{out} is a directory but not a bag (no metadata.yaml): --force does '
                          'not replace it; remove it yourself or give another path')
    if kind == 'dir' and is_bag and not any(fnmatch.fnmatchcase('metadata.yaml', p)
                                            for p in patterns or ()):
        raise OutputError(f'{out} is a bag, not a directory this command writes: --force does '
                          'not replace it; give another path')
    if not entries:
        raise OutputError(f'{out} is an empty directory this command did not write: --force '
                          'does not replace it; remove it (rmdir) or give another path')


def check_output_path(path: str | os.PathLike[str], *, force: bool = False, kind: str = 'any',
                      label: str = '--out', inputs: InputPaths | None = None,
                      names: Iterable[str] | None = None) -> Path:
    """Validate an output path before long work starts; returns it as a Path.

    Raises OutputError (one line) when

    * the output is, contains or lies inside one of ``inputs`` (flag -> path(s), e.g.
      ``{'--bag': args.bag, '--params': args.params}``; compared after resolving symbolic links
      and ``..``, and by device and inode for hard links and bind mounts), with or without
      ``force``;
    * it exists, unless ``force``; with ``force`` when it is not what the command writes
      (``kind``: ``file``, ``bag``, ``dir`` whose entries match ``names`` (glob patterns)
      when given, ``any``): a device, a symbolic link, a mount point, a directory holding
      other things;
    * it is the working directory or one of its parents;
    * a name to create is longer than the file system allows, the path loops, or the nearest
      existing ancestor is not a directory or refuses new entries (probed with a temporary
      directory, so read-only mounts are caught for root too).

    Missing parent directories are fine: the atomic writers create them (``mkdir -p``) and
    remove them again when the output fails.
    """
    if kind not in OUTPUT_KINDS:
        raise ValueError(f'kind must be one of {OUTPUT_KINDS}, got {kind!r}')
    out = Path(path)
    resolved = _resolve(out, f'{out}')
    cwd = Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents:
        raise OutputError(f'{out}: refusing to write over the current directory or one of its '
                          'parents (give a new directory name)')
    _check_overlap(label, out, resolved, _flat_inputs(inputs))
    if os.path.lexists(out):
        if not force:
            raise OutputError(f'{out} exists already (use --force to overwrite)')
        _replaceable(out, kind, names)
    ancestor = _existing_ancestor(resolved)
    if not ancestor.is_dir():
        raise OutputError(f'{out}: {ancestor} is not a directory')
    _check_name_lengths(out, resolved, ancestor)
    try:
        Path(tempfile.mkdtemp(prefix=f'.{_stem(out.name)}.', suffix='.probe',
                              dir=ancestor)).rmdir()
    except OSError as exc:
        found = os_error_reason(exc)
        reason = found[1] if found else (exc.strerror or str(exc))
        raise OutputError(f'{out}: directory {ancestor} is not writable ({reason})') from None
    return out


# --------------------------------------------------------------------------- writers
@contextmanager
def _parents_of(target: Path) -> Iterator[Path]:
    """Create the missing parent directories of ``target``; remove them again on error."""
    parent = _resolve(target, str(target)).parent
    missing: list[Path] = []
    ancestor = parent
    while not os.path.lexists(ancestor):
        missing.append(ancestor)
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputError(f'{target}: {ancestor} is not a directory')
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        found = os_error_reason(exc)
        reason = found[1] if found else exc.strerror
        for directory in missing:  # deepest first: the ones made before the failure
            with suppress(OSError):
                directory.rmdir()
        raise OutputError(f'{target}: cannot create {parent} ({reason})') from None
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


def _translate(target: Path, tmp: Path, parent: Path, exc: BaseException) -> BaseException:
    """The exception to raise for ``exc`` met while writing ``target`` through ``tmp``: an OS
    error of the output as one line naming ``target``; an OutputError naming the temporary
    renamed to ``target``; anything else unchanged."""
    if isinstance(exc, OutputError):
        text = str(exc)
        if str(tmp) in text:
            return OutputError(text.replace(str(tmp), str(target)))
        return exc
    translated = output_os_error(target, exc, tmp, parent)
    return exc if translated is None else translated


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same directory, renamed)."""
    with atomic_output_file(path) as tmp:
        tmp.write_text(text, encoding='utf-8')


def _refuse_special(target: Path) -> None:
    """Never replace a device, a directory or a named pipe by a renamed file (root may)."""
    try:
        mode = target.lstat().st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        _replaceable(target, 'file', None)


@contextmanager
def atomic_output_file(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; replaces ``path`` on success, else removed.

    An existing device, directory or named pipe at ``path`` is never replaced (OutputError); an
    OS error while writing (full disk, ...) is one OutputError line naming ``path``.
    """
    target = Path(path)
    _refuse_special(target)
    with _cleanup_on_signals(), _parents_of(target) as parent:
        _remove_stale(parent, target.name)
        try:
            fd, tmp_name = tempfile.mkstemp(prefix=f'.{_stem(target.name)}.{os.getpid()}.',
                                            suffix='.tmp', dir=parent)
        except OSError as exc:
            found = os_error_reason(exc)
            reason = found[1] if found else exc.strerror
            raise OutputError(f'{target}: cannot write ({reason})') from None
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            yield tmp
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the usual permissions
            _refuse_special(target)
            os.replace(tmp, target)
        except BaseException as exc:
            translated = _translate(target, tmp, parent, exc)
            if translated is exc:
                raise
            raise translated from None
        finally:
            if os.path.lexists(tmp):
                _remove_entry(tmp)


@contextmanager
def atomic_output_dir(path: str | os.PathLike[str], *, force: bool = False, kind: str = 'dir',
                      names: Iterable[str] | None = None) -> Iterator[Path]:
    """Yield a fresh temporary directory path (not yet created) next to ``path``.

    On success it is renamed to ``path`` (replacing an existing one only with ``force``, and
    only when it is what the command writes: see :func:`check_output_path`, ``kind`` and
    ``names``); on any error it is deleted, so a partial output directory (e.g. a bag) is never
    left behind. An OS error while writing (full disk, ...) is one OutputError line naming
    ``path``.
    """
    names = None if names is None else tuple(names)
    target = check_output_path(path, force=force, kind=kind, names=names)
    with _cleanup_on_signals(), _parents_of(target) as parent:
        _remove_stale(parent, target.name)
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f'.{_stem(target.name)}.{os.getpid()}.',
                                        suffix='.tmp', dir=parent))
        except OSError as exc:
            found = os_error_reason(exc)
            reason = found[1] if found else exc.strerror
            raise OutputError(f'{target}: cannot write ({reason})') from None
        tmp.rmdir()  # callers such as rosbags' Writer want to create the directory themselves
        try:
            yield tmp
            if tmp.is_dir():
                os.chmod(tmp, 0o777 & ~_umask())
            if os.path.lexists(target):
                if not force:
                    raise OutputError(f'{target} exists already (use --force to overwrite)')
                _replaceable(target, kind, names)  # again: it may have changed meanwhile
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink()
            os.replace(tmp, target)
        except BaseException as exc:
            translated = _translate(target, tmp, parent, exc)
            if translated is exc:
                raise
            raise translated from None
        finally:
            if os.path.lexists(tmp):
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
