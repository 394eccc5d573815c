"""The plots of a run drawn in a second process, so that a two-core machine simulates and plots
at the same time (``rcsim run``).

:class:`PlotWorker` starts ``python -m rc_sim_engine.output.plot_worker`` at once; the worker
imports matplotlib and draws a throw-away figure (fonts and caches loaded) while the run goes on,
then waits for the run's decimated streams on its standard input (a pickle of plain data: no engine
kernels are imported), writes ``trajectory.png`` and ``signals.png`` into the given directory
(:func:`rc_sim_engine.output.plots.save_run_plots`) and answers one JSON line on its standard
output. If the worker cannot start or dies, the plots are drawn in the calling process instead; an
error it reports (e.g. a file it cannot write) is raised as a one-line ``OutputError``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import pickle
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

__all__ = ['PlotWorker', 'plot_payload']


def plot_payload(result: Any, directory: Path, title: str) -> dict[str, Any]:
    """What the plots need from a run, as plain picklable data."""
    return {
        'directory': str(directory), 'title': title, 'world': result.world,
        'params': list(result.params), 'scan_angles': result.scan_angles,
        'streams': {name: dict(result.streams[name])
                    for name in ('odom', 'imu', 'commands', 'scan') if name in result.streams},
        'collisions': [(e.t, e.x, e.y) for e in result.collisions],
    }


def render(payload: dict[str, Any]) -> list[str]:
    """Draw the plots of a payload (:func:`plot_payload`); returns the file names."""
    from rc_sim_engine.output.plots import save_run_plots
    from rc_sim_engine.sim.series import Series

    result = SimpleNamespace(
        world=payload['world'], params=payload['params'], n_cars=len(payload['params']),
        scan_angles=payload['scan_angles'],
        streams={name: Series(data) for name, data in payload['streams'].items()},
        collisions=[SimpleNamespace(t=t, x=x, y=y) for t, x, y in payload['collisions']])
    return [p.name for p in save_run_plots(result, payload['directory'], payload['title'])]


class PlotWorker:
    """A plotting process started now and given the data when the run is done."""

    def __init__(self) -> None:
        env = {**os.environ, 'MPLBACKEND': 'Agg'}
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, '-m', 'rc_sim_engine.output.plot_worker'], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        except OSError:
            self._proc = None

    def start(self, result: Any, directory: Path, title: str) -> None:
        """Hand the run over; the worker draws while the caller finishes its own work."""
        import threading

        self._payload = plot_payload(result, directory, title)
        self._reply: list[bytes] = []
        proc = self._proc
        if proc is None:
            return

        def talk() -> None:
            try:
                out, _ = proc.communicate(pickle.dumps(self._payload), timeout=600)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                proc.kill()
                proc.communicate()
                out = b''
            self._reply.append(out)

        self._talk = threading.Thread(target=talk, name='rc_sim plots', daemon=True)
        self._talk.start()

    def finish(self) -> list[str]:
        """Wait for the plots of :meth:`start`; returns the file names."""
        from rc_sim_description.errors import OutputError

        if self._proc is not None:
            self._talk.join()
            self._proc = None
            answer = _answer(self._reply[0] if self._reply else b'')
            if answer is not None and 'files' in answer:
                return [str(name) for name in answer['files']]
            if answer is not None and 'error' in answer:
                raise OutputError(str(answer['error']))
        return render(self._payload)  # no worker (or it died): draw here

    def close(self) -> None:
        """Stop the worker if it still runs (the run failed)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


def _answer(out: bytes) -> dict[str, Any] | None:
    for line in reversed(out.decode(errors='replace').splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def _warm_up() -> None:
    """Draw a small figure once: fonts, text layout and the PNG writer are loaded meanwhile."""
    import io

    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from mpl_toolkits.axes_grid1 import make_axes_locatable  # noqa: F401 (used by the plots)

    fig, ax = plt.subplots(figsize=(2, 2), dpi=50)
    ax.plot([0.0, 1.0], [0.0, 1.0], label='x')
    ax.scatter([0.5], [0.5], c=[0.5], cmap='viridis')
    ax.set_title('warm-up')
    ax.legend()
    fig.savefig(io.BytesIO(), format='png')
    plt.close(fig)


def main() -> int:
    """Worker entry: warm up, read one payload from stdin, plot, answer one JSON line."""
    from rc_sim_description.errors import RcSimError

    _warm_up()
    try:
        payload = pickle.load(sys.stdin.buffer)
    except EOFError:  # the run ended without plots (failed or interrupted)
        return 0
    try:
        files = render(payload)
    except (RcSimError, OSError) as exc:
        print(json.dumps({'error': ' '.join(str(exc).split())}), flush=True)
        return 0
    print(json.dumps({'files': files}), flush=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
