"""Issue 28, item 1: inputs are sacred, and ``--force`` replaces only what a command writes.

An output that is, contains or lies inside an input (after symbolic links, ``..``, hard links and
bind mounts) is one line naming both, with or without ``--force``; ``--force`` never replaces a
device, a symbolic link (or its target), a mount point, or a directory of other files. Names
longer than the file system allows and symbolic link loops are one line before anything is
written. Devices are made with mknod inside the test's directory (never the real /dev).
"""

from __future__ import annotations

import os
from pathlib import Path
import stat
import subprocess

import pytest

from rc_sim_description.atomic import (
    atomic_output_dir,
    atomic_output_file,
    atomic_write_text,
    check_output_path,
)
from rc_sim_description.errors import OutputError

ROOT = os.geteuid() == 0


def _bag(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / 'metadata.yaml').write_text('rosbag2_bagfile_information: {}\n')
    (path / f'{path.name}.db3').write_bytes(b'SQLite format 3\x00' + bytes(100))
    return path


def _snapshot(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob('*'))
            if p.is_file()}


# --------------------------------------------------------------------------- overlaps
@pytest.mark.parametrize('force', [False, True])
def test_output_equal_to_an_input_names_both(tmp_path: Path, force: bool) -> None:
    bag = _bag(tmp_path / 'in')
    before = _snapshot(bag)
    with pytest.raises(OutputError) as info:
        check_output_path(bag, force=force, kind='bag', inputs={'--cmd-vel-bag': str(bag)})
    text = str(info.value)
    assert f'--out {bag} is the same path as the input --cmd-vel-bag {bag}' in text
    assert 'with or without --force' in text and '\n' not in text
    assert _snapshot(bag) == before


def test_output_that_contains_an_input(tmp_path: Path) -> None:
    _bag(tmp_path / 'wrap' / 'in')
    (tmp_path / 'wrap' / 'metadata.yaml').write_text('x')  # looks like a bag: --force would go
    with pytest.raises(OutputError, match=r'--out .*wrap contains the input --bag .*wrap/in'):
        check_output_path(tmp_path / 'wrap', force=True, kind='bag',
                          inputs={'--bag': tmp_path / 'wrap' / 'in'})


def test_output_inside_an_input_bag(tmp_path: Path) -> None:
    bag = _bag(tmp_path / 'in')
    with pytest.raises(OutputError, match='lies inside the input --bag'):
        check_output_path(bag / 'new', kind='bag', inputs={'--bag': bag})


def test_storage_file_given_as_input_protects_its_bag_directory(tmp_path: Path) -> None:
    bag = _bag(tmp_path / 'in')
    with pytest.raises(OutputError, match='contains the input --bag'):
        check_output_path(bag, force=True, kind='bag', inputs={'--bag': bag / 'in.db3'})


def test_symlinks_and_dotdot_are_resolved(tmp_path: Path) -> None:
    bag = _bag(tmp_path / 'in')
    (tmp_path / 'alias').symlink_to(bag)
    (tmp_path / 'sub').mkdir()
    for out in (tmp_path / 'sub' / '..' / 'in', tmp_path / 'alias'):
        with pytest.raises(OutputError, match='the input --bag'):
            check_output_path(out, force=True, kind='bag', inputs={'--bag': bag})
    # the input given through a link, the output by its real path
    with pytest.raises(OutputError, match='the input --bag'):
        check_output_path(bag, force=True, kind='bag', inputs={'--bag': tmp_path / 'alias'})


def test_hard_links_are_the_same_file(tmp_path: Path) -> None:
    params = tmp_path / 'p.yaml'
    params.write_text('mass_properties: {mass: 3.0}\n')
    link = tmp_path / 'calibrated.yaml'
    os.link(params, link)
    with pytest.raises(OutputError, match=r'is a hard link \(or bind mount\) of the input '
                                          r'--params'):
        check_output_path(link, force=True, kind='file', inputs={'--params': [params]})
    # a directory (an earlier output) that holds a hard link of an input
    out = _bag(tmp_path / 'run')
    os.link(params, out / 'copy.yaml')
    with pytest.raises(OutputError, match=r'shares .*copy\.yaml \(a hard link or bind mount\) '
                                          r'with the input --params'):
        check_output_path(out, force=True, kind='bag', inputs={'--params': [params]})
    assert params.read_text() == 'mass_properties: {mass: 3.0}\n'


@pytest.mark.skipif(not ROOT, reason='bind mounts need root')
def test_bind_mounts_are_the_same_directory(tmp_path: Path) -> None:
    bag = _bag(tmp_path / 'in')
    view = tmp_path / 'view'
    view.mkdir()
    if subprocess.run(['mount', '--bind', str(bag), str(view)], capture_output=True).returncode:
        pytest.skip('mount --bind is not allowed here')
    try:
        with pytest.raises(OutputError, match='the input --bag'):
            check_output_path(view / 'new', kind='bag', inputs={'--bag': bag})
    finally:
        subprocess.run(['umount', str(view)], check=True)


def test_outputs_of_one_command_must_differ(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match=r'--report .* the input --out'):
        check_output_path(tmp_path / 'r', label='--report', kind='dir',
                          inputs={'--out': tmp_path / 'r'})


def test_unrelated_inputs_are_fine(tmp_path: Path) -> None:
    bag = _bag(tmp_path / 'in')
    out = tmp_path / 'out'
    assert check_output_path(out, kind='bag', inputs={'--bag': bag, '--params': None,
                                                       '--world': [], '--x': ''}) == out


# --------------------------------------------------------------------------- --force targets
@pytest.mark.skipif(not ROOT, reason='mknod needs root')
@pytest.mark.parametrize('kind', ['file', 'bag', 'dir', 'any'])
def test_force_never_replaces_a_device(tmp_path: Path, kind: str) -> None:
    """A copy of /dev/null made in the test directory: as root, os.replace would swap the
    device for a file (rcsim inspect --write-recording /dev/null --force did that)."""
    dev = tmp_path / 'null'
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    with pytest.raises(OutputError, match='is a character device'):
        check_output_path(dev, force=True, kind=kind)
    with pytest.raises(OutputError, match='is a character device'):
        atomic_write_text(dev, 'x')
    assert stat.S_ISCHR(dev.lstat().st_mode)


def test_force_never_replaces_a_named_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / 'fifo'
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match='is a named pipe'):
        check_output_path(fifo, force=True, kind='file')
    with pytest.raises(OutputError, match='is a named pipe'), atomic_output_file(fifo) as tmp:
        tmp.write_text('x')
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.parametrize('kind', ['bag', 'dir', 'file'])
def test_force_never_follows_a_symlink(tmp_path: Path, kind: str) -> None:
    precious = tmp_path / 'precious'
    precious.mkdir()
    (precious / 'file').write_text('keep')
    (precious / 'metadata.yaml').write_text('x')  # even one that looks like a bag
    link = tmp_path / 'link'
    link.symlink_to(precious)
    with pytest.raises(OutputError, match='is a symbolic link'):
        check_output_path(link, force=True, kind=kind)
    if kind != 'file':
        with pytest.raises(OutputError, match='is a symbolic link'), \
                atomic_output_dir(link, force=True, kind=kind) as tmp:
            tmp.mkdir()
    assert link.is_symlink() and (precious / 'file').read_text() == 'keep'


def test_force_replaces_only_what_the_command_writes(tmp_path: Path) -> None:
    foreign = tmp_path / 'foreign'
    foreign.mkdir()
    (foreign / 'thesis.tex').write_text('keep')
    for kind in ('bag', 'dir', 'any'):
        with pytest.raises(OutputError, match='--force does not replace it'):
            check_output_path(foreign, force=True, kind=kind,
                              names=('summary.txt',) if kind == 'dir' else None)
    nested = tmp_path / 'nested'
    _bag(nested / 'inner')
    (nested / 'metadata.yaml').write_text('x')
    with pytest.raises(OutputError, match=r'holds inner \(a directory\)'):
        check_output_path(nested, force=True, kind='bag')
    empty = tmp_path / 'empty'
    empty.mkdir()
    with pytest.raises(OutputError, match='empty directory this command did not write'):
        check_output_path(empty, force=True, kind='dir')
    file = tmp_path / 'notes.txt'
    file.write_text('keep')
    with pytest.raises(OutputError, match='is a file, not a bag directory'):
        check_output_path(file, force=True, kind='bag')
    with pytest.raises(OutputError, match='is a directory: --force replaces only a file'):
        check_output_path(foreign, force=True, kind='file')
    with pytest.raises(OutputError, match='is a directory'):
        atomic_write_text(foreign, 'x')
    assert (foreign / 'thesis.tex').read_text() == 'keep' and file.read_text() == 'keep'


def test_force_replaces_its_own_outputs(tmp_path: Path) -> None:
    out = tmp_path / 'describe'
    for _ in range(2):
        with atomic_output_dir(out, force=True, names=('summary.txt',)) as tmp:
            tmp.mkdir()
            (tmp / 'summary.txt').write_text('ok')
    bag = _bag(tmp_path / 'bag')
    assert check_output_path(bag, force=True, kind='bag') == bag
    target = tmp_path / 'x.yaml'
    target.write_text('old')
    assert check_output_path(target, force=True, kind='file') == target


@pytest.mark.skipif(not ROOT, reason='mounting needs root')
def test_force_never_replaces_a_mount_point(tmp_path: Path) -> None:
    point = tmp_path / 'mnt'
    point.mkdir()
    if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', str(point)],
                      capture_output=True).returncode:
        pytest.skip('mount is not allowed here')
    try:
        (point / 'metadata.yaml').write_text('x')
        with pytest.raises(OutputError, match='is a mount point'):
            check_output_path(point, force=True, kind='bag')
    finally:
        subprocess.run(['umount', str(point)], check=True)


# --------------------------------------------------------------------------- OS limits up front
def test_a_name_longer_than_the_file_system_allows(tmp_path: Path) -> None:
    long = tmp_path / ('a' * 300)
    with pytest.raises(OutputError, match=r'300 bytes long, the file system .* allows 255 '
                                          r'\(ENAMETOOLONG\)'):
        check_output_path(long / 'x.yaml')
    assert list(tmp_path.iterdir()) == []


def test_a_name_near_the_limit_is_written(tmp_path: Path) -> None:
    """The temporary's name is shortened: a 250-byte name was refused (its temporary was
    longer than 255 bytes)."""
    name = 'b' * 250
    atomic_write_text(tmp_path / name, 'ok')
    with atomic_output_dir(tmp_path / f'{name[:-1]}d') as tmp:
        tmp.mkdir()
        (tmp / 'x').write_text('x')
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, f'{name[:-1]}d'])


def test_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    (tmp_path / 'a').symlink_to(tmp_path / 'b')
    (tmp_path / 'b').symlink_to(tmp_path / 'a')
    with pytest.raises(OutputError, match=r'too many levels of symbolic links \(ELOOP\)'):
        check_output_path(tmp_path / 'a' / 'out.yaml')
    with pytest.raises(OutputError, match='ELOOP'):
        atomic_write_text(tmp_path / 'a' / 'out.yaml', 'x')
