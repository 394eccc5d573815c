"""Atomic outputs: write to a temporary name next to the target, rename when complete.

A crash or a user error never leaves a half-written file or bag directory behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
import os
from pathlib import Path
import shutil
import tempfile

from rc_sim_description.errors import OutputError

__all__ = ['atomic_output_dir', 'atomic_output_file', 'atomic_write_text', 'check_output_path',
           'rename_bag_storage']


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
    except BaseException:
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
    with _parents_of(target) as parent:
        try:
            fd, tmp_name = tempfile.mkstemp(prefix=f'.{target.name}.', suffix='.tmp',
                                            dir=parent)
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
    with _parents_of(target) as parent:
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f'.{target.name}.', suffix='.tmp', dir=parent))
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
