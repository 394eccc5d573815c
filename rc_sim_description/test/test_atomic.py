"""Atomic outputs: missing parents are created, and removed again when the output fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from rc_sim_description.atomic import (
    atomic_output_dir,
    atomic_output_file,
    atomic_write_text,
    check_output_path,
)
from rc_sim_description.errors import OutputError


def test_missing_parents_are_created(tmp_path: Path) -> None:
    target = tmp_path / 'a' / 'b' / 'out.txt'
    assert check_output_path(target) == target
    assert not (tmp_path / 'a').exists()  # checking creates nothing
    atomic_write_text(target, 'ok')
    assert target.read_text() == 'ok'
    with atomic_output_dir(tmp_path / 'c' / 'bag') as tmp:
        tmp.mkdir()
        (tmp / 'x').write_text('x')
    assert (tmp_path / 'c' / 'bag' / 'x').is_file()


@pytest.mark.parametrize('kind', ['file', 'dir'])
def test_failure_removes_the_parents_it_created(tmp_path: Path, kind: str) -> None:
    (tmp_path / 'keep').mkdir()
    target = tmp_path / 'keep' / 'new' / 'deeper' / 'out'
    with pytest.raises(RuntimeError):
        if kind == 'file':
            with atomic_output_file(target) as tmp:
                tmp.write_text('half')
                raise RuntimeError('boom')
        else:
            with atomic_output_dir(target) as tmp:
                tmp.mkdir()
                raise RuntimeError('boom')
    assert list(tmp_path.iterdir()) == [tmp_path / 'keep']
    assert list((tmp_path / 'keep').iterdir()) == []


@pytest.mark.parametrize('kind', ['file', 'dir'])
def test_a_signal_right_after_the_temporary_is_made_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Ctrl-C between the creation of the temporary and the writer's own cleanup (the race a
    loaded machine showed in test_cli_signals): the temporary and the parents go all the same."""
    import tempfile

    make = tempfile.mkstemp if kind == 'file' else tempfile.mkdtemp

    def interrupted(*args: object, **kwargs: object) -> object:
        made = make(*args, **kwargs)    # the temporary exists ...
        if kwargs.get('suffix') != '.tmp':
            return made                 # (the writability probe of check_output_path)
        raise KeyboardInterrupt         # ... and the signal lands before it is returned

    monkeypatch.setattr(tempfile, make.__name__, interrupted)
    target = tmp_path / 'runs' / 'out'
    output = atomic_output_file if kind == 'file' else atomic_output_dir
    with pytest.raises(KeyboardInterrupt), output(target):
        pass
    assert list(tmp_path.iterdir()) == []


def test_output_below_a_file_and_existing_output(tmp_path: Path) -> None:
    blocker = tmp_path / 'file'
    blocker.write_text('x')
    with pytest.raises(OutputError, match='is not a directory'):
        check_output_path(blocker / 'sub' / 'out')
    with pytest.raises(OutputError, match='exists already'):
        check_output_path(blocker)
    assert check_output_path(blocker, force=True) == blocker


def test_unwritable_location_is_caught_before_work() -> None:
    """/sys refuses new entries even for root."""
    with pytest.raises(OutputError, match='not writable'):
        check_output_path('/sys/rcsim_atomic_probe/out')


@pytest.mark.parametrize('target', ['.', '..', '/'])
def test_force_never_replaces_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    target: str) -> None:
    """UX review: ``rcsim protocol --out . --force`` deleted the user's files, then crashed."""
    work = tmp_path / 'work'
    work.mkdir()
    (work / 'precious.txt').write_text('keep')
    monkeypatch.chdir(work)
    with pytest.raises(OutputError, match='refusing to write over the current directory'):
        check_output_path(target, force=True)
    with pytest.raises(OutputError, match='refusing'), \
            atomic_output_dir(target, force=True) as tmp:
        tmp.mkdir()
    assert (work / 'precious.txt').read_text() == 'keep'
