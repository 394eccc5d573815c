"""Shared CLI plumbing: one-line errors (also for OS errors), a quiet end on a closed pipe,
quiet-off-terminal progress bars."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
import os
import re
import sys
from typing import Any, NoReturn

from rc_sim_description.errors import ConfigError, RcSimError

__all__ = ['DEBUG_ENV', 'EXIT_BROKEN_PIPE', 'OneLineErrorParser', 'debug_enabled',
           'is_interactive', 'os_error_line', 'progress', 'require_ros', 'run_cli',
           'split_key_value']

DEBUG_ENV = 'RCSIM_DEBUG'
#: exit status after the reader of stdout went away (128 + SIGPIPE, as a shell reports it)
EXIT_BROKEN_PIPE = 141


class OneLineErrorParser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line ``error: ...`` (exit 2), like user errors.

    An invalid choice gets a did-you-mean hint; the usage stays available with ``--help``.
    Subparsers created with ``add_subparsers`` inherit the class.
    """

    def error(self, message: str) -> NoReturn:
        from rc_sim_description.yamlio import did_you_mean

        hint = ''
        match = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if match:
            choices = [c.strip().strip("'") for c in match[2].split(',')]
            hint = did_you_mean(match[1], choices)
        self.exit(2, f'error: {self.prog}: {message}{hint} (see {self.prog} --help)\n')


def split_key_value(item: str, flag: str, expected: str = 'KEY=VALUE',
                    error: type[RcSimError] = ConfigError) -> tuple[str, str]:
    """``(key, value)`` of one ``KEY=VALUE`` argument of ``flag`` (key stripped, value as given).

    No ``=`` or an empty key raises ``error("<flag> '<item>': expected <expected>")`` (one line).
    """
    key, sep, value = item.partition('=')
    key = key.strip()
    if not sep or not key:
        raise error(f'{flag} {item!r}: expected {expected}')
    return key, value


def require_ros() -> None:
    """Exit with one line when rclpy is missing: a ROS node started on a machine without ROS 2.

    Called by every ``<pkg>/nodes/__init__.py``, so ``sim_node`` & co. never end in an ImportError
    traceback on a plain pip install.
    """
    import importlib.util

    if importlib.util.find_spec('rclpy') is None:
        name = os.path.basename(sys.argv[0]) or 'this node'
        print(f'error: {name} is a ROS 2 node and needs rclpy (source '
              '/opt/ros/<distro>/setup.bash); without ROS use the rcsim command (rcsim --help)',
              file=sys.stderr)
        raise SystemExit(2)


def is_interactive() -> bool:
    """True on a terminal outside CI: progress bars are shown only then."""
    return sys.stderr.isatty() and not os.environ.get('CI')


def debug_enabled() -> bool:
    """True when ``RCSIM_DEBUG`` is set to anything but empty or ``0``."""
    return os.environ.get(DEBUG_ENV, '').strip() not in ('', '0')


def _print_full_traceback(exc: BaseException) -> None:
    """The traceback of ``exc`` with every cause, also those hidden by ``raise ... from None``.

    ``from None`` only sets ``__suppress_context__``; Python still records the exception being
    handled in ``__context__``, so clearing the flag along the chain brings the hidden cause back.
    """
    import traceback

    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        link.__suppress_context__ = False
        link = link.__cause__ or link.__context__
    traceback.print_exception(exc, file=sys.stderr)


def _broken_pipe() -> int:
    """The reader of stdout went away (``rcsim inspect ... | head -1``): end quietly with the
    status of a process killed by SIGPIPE (141), as Unix tools do; stdout is pointed at
    /dev/null first so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor
        pass
    return EXIT_BROKEN_PIPE


def os_error_line(exc: OSError) -> str | None:
    """``<path>: <reason> (ENAME); <what to do>`` of a documented OS error (ENOSPC, EDQUOT,
    EROFS, EACCES, ENAMETOOLONG, ELOOP, ...), or None for any other."""
    from rc_sim_description.atomic import os_error_reason

    found = os_error_reason(exc)
    if found is None:
        return None
    names = [os.fsdecode(n) for n in (exc.filename, exc.filename2)
             if isinstance(n, (str, bytes, os.PathLike))]
    return f'{" -> ".join(names) or "a file"}: {found[1]}'


def run_cli(main: Callable[[], int]) -> int:
    """Run ``main``; user errors become ``error: <one line>`` on stderr and their exit status
    (2; 3 for a degenerate result, :class:`~rc_sim_description.errors.DegenerateError`).

    A documented OS error that escaped the writers (ENOSPC, EACCES, ELOOP, ...) is one line
    naming the file, exit status 2; a closed stdout pipe ends quietly (status 141). With
    ``RCSIM_DEBUG=1`` in the environment the line is followed by the full traceback, including
    the third-party exception a ``raise ... from None`` wrapped.
    """
    import warnings

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        if category.__name__ == 'BagWarning':  # corrupt data read past (--skip-corrupt)
            print(f'warning: {message}', file=sys.stderr)
        else:
            default_show(message, category, filename, lineno, file, line)

    default_show = warnings.showwarning
    warnings.showwarning = show
    try:
        status = main()
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return status
    except BrokenPipeError:
        return _broken_pipe()
    except RcSimError as exc:
        _error_line(str(exc), exc)
        return int(getattr(exc, 'exit_status', 2))
    except KeyboardInterrupt:
        _error_line('interrupted', None)
        return 130
    except OSError as exc:
        line = os_error_line(exc)
        if line is None:
            raise
        _error_line(line, exc)
        return 2
    finally:
        warnings.showwarning = default_show


def _error_line(text: str, exc: BaseException | None) -> None:
    """``error: <text>`` on stderr (and the traceback with RCSIM_DEBUG); a closed stderr is
    ignored."""
    try:
        print(f'error: {text}', file=sys.stderr)
        if exc is not None and debug_enabled():
            _print_full_traceback(exc)
    except (BrokenPipeError, ValueError):
        pass


class _Progress:
    def __init__(self, bar: Any, task: Any) -> None:
        self._bar, self._task = bar, task

    def advance(self, amount: float = 1.0) -> None:
        if self._bar is not None:
            self._bar.update(self._task, advance=amount)

    def update(self, completed: float) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=completed)


@contextmanager
def progress(description: str, total: float) -> Iterator[_Progress]:
    """A rich progress bar on a terminal; a no-op in CI or when output is piped."""
    if not is_interactive():
        yield _Progress(None, None)
        return
    from rich.progress import BarColumn, Progress, TimeRemainingColumn

    with Progress('[progress.description]{task.description}', BarColumn(),
                  '[progress.percentage]{task.percentage:>3.0f}%', TimeRemainingColumn(),
                  transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield _Progress(bar, task)
