"""Progress of a fit: on a terminal one live line (stage, evaluations, best cost, time left);
in CI logs (the ``CI`` environment variable) one line per finished stage; otherwise quiet.

The fit reports stages with :meth:`FitProgress.stage` (name and evaluation budget) and
evaluations with :meth:`FitProgress.advance`; the best cost comes from the fit problem's record
(:meth:`FitProgress.best`). Time left is the elapsed time per evaluation so far times the
evaluations left in the announced budgets (a rough figure: evaluations of later stages may cost
more or less).
"""

from __future__ import annotations

from collections.abc import Callable
import math
import os
import sys
import time
from typing import TextIO

__all__ = ['FitProgress', 'progress_mode']

#: seconds between two redraws of the live line
REDRAW = 0.2


def progress_mode(stream: TextIO | None = None) -> str:
    """``live`` on a terminal outside CI, ``lines`` in CI (``CI`` set), else ``quiet``."""
    stream = stream or sys.stderr
    if os.environ.get('CI', '').strip() not in ('', '0', 'false'):
        return 'lines'
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return 'live' if tty else 'quiet'


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return '?'
    seconds = max(seconds, 0.0)
    if seconds < 60:
        return f'{seconds:.0f} s'
    return f'{int(seconds // 60)} min {int(seconds % 60):02d} s'


class FitProgress:
    """Stage, evaluations, best cost and time left of a fit (see the module docstring)."""

    def __init__(self, total: int, mode: str | None = None, stream: TextIO | None = None,
                 best: Callable[[], float] | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.stream = stream or sys.stderr
        self.mode = mode or progress_mode(self.stream)
        self.total = max(int(total), 1)
        self.done = 0
        self.best_of = best or (lambda: math.nan)
        self.clock = clock
        self.t0 = self.clock()
        self.name = ''
        self.stage_t0 = self.t0
        self.stage_done = 0
        self.count = 0
        self._drawn = 0.0
        self._width = 0
        self._watched: list[object] = []

    def watch(self, problem: object) -> None:
        """Show the lowest cost ``problem`` (anything with a ``best_cost``) has seen in this
        stage."""
        self._watched.append(problem)

    def _best_cost(self) -> float:
        costs = [float(getattr(p, 'best_cost', math.inf)) for p in self._watched]
        costs = [c for c in costs if math.isfinite(c)]
        return min(costs) if costs else self.best_of()

    def stage(self, name: str, budget: int = 0) -> None:
        """A new stage starts (the previous one is finished); ``budget``: its evaluations."""
        self._finish_stage()
        self.count += 1
        self.name, self.stage_t0, self.stage_done = name, self.clock(), 0
        self._watched = []
        self.total = max(self.total, self.done + int(budget))
        self._draw(force=True)

    def advance(self, n: int = 1) -> None:
        """``n`` more evaluations."""
        self.done += int(n)
        self.stage_done += int(n)
        self.total = max(self.total, self.done)
        self._draw()

    def close(self, failed: bool = False) -> None:
        """The fit is over: the last stage line (CI), the live line cleared (terminal).
        ``failed``: the last stage ended by an error, so it is not reported as finished (the
        error is the one line the user gets about it)."""
        if not failed:
            self._finish_stage()
        if self.mode == 'live' and self._width:
            self._write('\r' + ' ' * self._width + '\r')
            self._width = 0
        self.name = ''

    def __enter__(self) -> FitProgress:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(failed=exc_type is not None)

    # --- text
    def _best(self) -> str:
        b = self._best_cost()
        return f'best cost {b:.4g}' if math.isfinite(b) else 'best cost -'

    def _left(self) -> str:
        elapsed = self.clock() - self.t0
        if self.done < 10 or elapsed < 1.0:
            return 'time left ?'
        rate = elapsed / self.done
        return f'time left about {_duration(rate * (self.total - self.done))}'

    def line(self) -> str:
        """The live line."""
        return (f'fit: {self.name} | {self.done}/{self.total} evaluations | {self._best()} | '
                f'{self._left()}')

    def _finish_stage(self) -> None:
        if not self.name or self.mode != 'lines':
            return
        took = self.clock() - self.stage_t0
        self._write(f'fit: stage {self.count} {self.name}: {self.stage_done} evaluations, '
                    f'{self._best()}, {took:.1f} s\n')

    def _draw(self, force: bool = False) -> None:
        if self.mode != 'live':
            return
        now = self.clock()
        if not force and now - self._drawn < REDRAW:
            return
        self._drawn = now
        text = self.line()
        pad = max(self._width - len(text), 0)
        self._width = len(text)
        self._write('\r' + text + ' ' * pad)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.mode = 'quiet'
