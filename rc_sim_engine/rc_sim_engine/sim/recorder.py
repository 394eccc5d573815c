"""Recorders of the loop: everything in memory (:class:`MemoryRecorder`, the default) or streamed
chunk by chunk to a sink (:class:`StreamingRecorder`, bounded memory for long runs).

The loop hands over blocks of state snapshots and lidar samples as its buffers fill; commands
come from the :class:`~rc_sim_engine.sim.command_plan.CommandLog` and ``/clock`` from the step
count. A streaming recorder converts each chunk into streams
(:class:`~rc_sim_engine.sim.streams.Series`), checks them for non-finite values, gives them to the
sink (e.g. a bag writer), updates running statistics and keeps a decimated copy for plots, then
drops the chunk.
"""

from __future__ import annotations

from collections.abc import Callable
import time
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.limits import MAX_MEMORY_MB
from rc_sim_engine.sim.command_plan import CommandLog
from rc_sim_engine.sim.streams import (
    Decimator,
    RunStats,
    Series,
    StreamDeriver,
    check_finite,
    concat_series,
)

__all__ = ['DECIMATE_SAMPLES', 'DECIMATE_SCANS', 'ChunkConverter', 'MemoryRecorder',
           'StreamSink', 'StreamingRecorder', 'ThreadedSink', 'streaming_bytes']

FloatArray = NDArray[np.float64]
#: Samples per stream a streamed run keeps for plots (evenly spaced); scans kept.
DECIMATE_SAMPLES = 4096
DECIMATE_SCANS = 512


def streaming_bytes(n_cars: int, beams: int, chunk_bytes: float) -> float:
    """Memory a streamed run holds besides the loop's buffers [bytes]: the chunk being
    gathered, the one being converted, the sink's queue (two) and the decimated copies."""
    kept = n_cars * (DECIMATE_SAMPLES * 8 * 48 + DECIMATE_SCANS * beams * 4)
    return 4 * chunk_bytes + kept


class StreamSink(Protocol):
    """Receives the streams of a run chunk by chunk, in time order."""

    def write_chunk(self, streams: dict[str, Series], final: bool, until_ns: int) -> None:
        """One chunk: ``odom``, ``imu``, ``joints``, ``commands``, ``scan``, ``clock``; every
        sample of later chunks is stamped after ``until_ns``."""


class ThreadedSink:
    """A sink run in a background thread: the loop hands over a chunk and goes on simulating
    (its compiled stretches release the GIL) while the thread writes it. At most ``depth``
    chunks wait (bounded memory); an error of the thread is raised in the caller at the next
    chunk or at the end. Use as a context manager: leaving it waits for the thread.
    """

    def __init__(self, sink: StreamSink, depth: int = 2) -> None:
        import queue
        import threading

        self.sink = sink
        self._queue: queue.Queue[tuple[dict[str, Series], bool, int] | None] = queue.Queue(
            maxsize=depth)
        self._error: BaseException | None = None
        self._abandon = False
        self._thread = threading.Thread(target=self._work, name='rc_sim sink', daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if self._error is not None or self._abandon:
                continue  # drain: nothing more is written after an error
            try:
                self.sink.write_chunk(*item)
            except BaseException as exc:  # worker thread: whatever fails is re-raised in the
                # caller's thread (_raise), which alone can report it
                self._error = exc

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def write_chunk(self, streams: dict[str, Series], final: bool, until_ns: int) -> None:
        """Queue one chunk (waits while ``depth`` chunks are queued)."""
        self._raise()
        self._queue.put((streams, final, until_ns))

    def close(self, abandon: bool = False) -> None:
        """Wait until every queued chunk is written (``abandon``: skip the queued ones)."""
        if self._thread.is_alive():
            self._abandon = abandon
            self._queue.put(None)
            self._thread.join()
        if not abandon:
            self._raise()

    def __enter__(self) -> ThreadedSink:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.close(abandon=exc_type is not None)


class _Blocks:
    """Pending snapshot and scan blocks."""

    def __init__(self) -> None:
        self.snap_steps: list[NDArray[np.int64]] = []
        self.snap_states: list[FloatArray] = []
        self.scans: list[Series] = []
        self.pose_t_ns: list[NDArray[np.int64]] = []
        self.poses: list[FloatArray] = []
        self.nbytes = 0.0

    def add_snapshots(self, steps: NDArray[np.int64], states: FloatArray) -> None:
        self.snap_steps.append(steps)
        self.snap_states.append(states)
        self.nbytes += steps.nbytes + states.nbytes

    def add_scans(self, sample: dict[str, np.ndarray]) -> None:
        self.scans.append(Series(sample))
        self.nbytes += sum(v.nbytes for v in sample.values())

    def add_poses(self, t_ns: NDArray[np.int64], poses: FloatArray, expanded: float) -> None:
        self.pose_t_ns.append(t_ns)
        self.poses.append(poses)
        self.nbytes += expanded

    def snapshots(self, n_cars: int, n_state: int) -> tuple[NDArray[np.int64], FloatArray]:
        if not self.snap_steps:
            return np.zeros(0, dtype=np.int64), np.zeros((0, n_cars, n_state))
        return np.concatenate(self.snap_steps), np.concatenate(self.snap_states)


class MemoryRecorder:
    """Keeps every sample; :meth:`streams` converts them (the whole run) on demand."""

    streaming = False

    def __init__(self, deriver: StreamDeriver, log: CommandLog, n_cars: int, n_state: int,
                 dt_ns: int, clock_period: int) -> None:
        self.deriver, self.log = deriver, log
        self.n_cars, self.n_state = n_cars, n_state
        self.dt_ns, self.clock_period = dt_ns, clock_period
        self.blocks = _Blocks()

    @property
    def empty(self) -> bool:
        """Nothing recorded yet."""
        return not (self.blocks.snap_steps or self.blocks.scans)

    def add_snapshots(self, steps: NDArray[np.int64], states: FloatArray) -> None:
        """A block of state snapshots (M,) and (M, N, n_state)."""
        self.blocks.add_snapshots(steps, states)
        self._check_memory()

    def add_scans(self, sample: dict[str, np.ndarray]) -> None:
        """A block of lidar samples (leading axis: scans)."""
        self.blocks.add_scans(sample)
        self._check_memory()

    def _check_memory(self) -> None:
        limit = MAX_MEMORY_MB.value
        if self.blocks.nbytes > limit * 1e6:
            raise ConfigError(
                f'the in-memory recording of this run passed {limit:,.0f} MB (the limit of '
                f'{MAX_MEMORY_MB.env}): stream it to a bag (rcsim run, Simulator.play(..., '
                f'sink=...)), run it shorter or raise {MAX_MEMORY_MB.env}')

    def flush(self, step: int, inclusive: bool) -> None:
        """Nothing to do: everything stays in memory."""

    def streams(self, step: int) -> dict[str, Series]:
        """All streams of the run up to ``step``."""
        steps, states = self.blocks.snapshots(self.n_cars, self.n_state)
        self.deriver.reset()
        out = self.deriver.derive(steps, states)
        check_finite(out)
        out['scan'] = concat_series(self.blocks.scans, Series())
        out['commands'] = self.log.series(step * self.dt_ns)
        out['clock'] = Series(t_ns=np.arange(0, step + 1, self.clock_period,
                                             dtype=np.int64) * self.dt_ns)
        return out


ScanFinisher = Callable[[NDArray[np.int64], FloatArray], tuple[dict[str, np.ndarray], FloatArray]]


class ChunkConverter:
    """A raw chunk of the loop -> streams -> ``sink``: state snapshots converted, lidar scans
    cast from the recorded poses (``finish_scans(t_ns, poses)``: the rays and the error model of
    a whole chunk in one go) unless the loop cast them already, non-finite values checked,
    running statistics and decimated copies kept. Run in the loop's thread or, wrapped in a
    :class:`ThreadedSink`, in its own (the loop does not touch what it uses meanwhile)."""

    def __init__(self, sink: StreamSink, deriver: StreamDeriver, n_cars: int,
                 finish_scans: ScanFinisher | None, keep: bool = True) -> None:
        self.sink, self.deriver, self.finish_scans = sink, deriver, finish_scans
        self.stats = RunStats(n_cars)
        self.keep = keep  # statistics and decimated copies (not for a live publisher)
        self.kept: dict[str, Decimator] = {
            name: Decimator(DECIMATE_SCANS if name == 'scan' else DECIMATE_SAMPLES)
            for name in ('odom', 'imu', 'joints', 'commands', 'scan')}
        self.last_scan: tuple[dict[str, np.ndarray], FloatArray] | None = None
        deriver.reset()

    def write_chunk(self, raw: dict[str, Any], final: bool, until_ns: int) -> None:
        """Convert and hand on one raw chunk (see :meth:`StreamingRecorder.flush`)."""
        out = self.deriver.derive(raw['snap_steps'], raw['snap_states'])
        check_finite(out)
        if raw.get('scan_poses') is not None and self.finish_scans is not None:
            sample, last = self.finish_scans(raw['scan_t_ns'], raw['scan_poses'])
            self.last_scan = sample, last
            out['scan'] = Series(sample)
        else:
            out['scan'] = raw['scan']
        out['commands'] = raw['commands']
        out['clock'] = raw['clock']
        if self.keep:
            self.stats.update(out)
            for name, keeper in self.kept.items():
                series = out[name]
                if name == 'scan' and 'raw' in series:
                    series = Series({k: v for k, v in series.items() if k != 'raw'})
                keeper.add(series)
        self.sink.write_chunk(out, final, until_ns)


class StreamingRecorder:
    """Streams chunks to ``sink``; keeps running statistics and decimated streams.

    The loop hands over snapshots and either finished lidar samples or, when nothing needs the
    scans during the run (a played sequence), only the cars' poses at the scan times
    (:meth:`add_scan_poses`): the scans of a chunk are then cast with the chunk's conversion,
    which runs in a thread of its own (``threaded``) while the loop goes on.
    """

    streaming = True
    empty = False

    def __init__(self, sink: StreamSink, deriver: StreamDeriver, log: CommandLog, n_cars: int,
                 n_state: int, dt_ns: int, clock_period: int, chunk_bytes: float,
                 finish_scans: ScanFinisher | None = None, threaded: bool = True,
                 keep: bool = True) -> None:
        self.log = log
        self.n_cars, self.n_state = n_cars, n_state
        self.dt_ns, self.clock_period = dt_ns, clock_period
        self.chunk_bytes = chunk_bytes
        self.blocks = _Blocks()
        self.converter = ChunkConverter(sink, deriver, n_cars, finish_scans, keep)
        self._stage: ChunkConverter | ThreadedSink = self.converter
        if threaded:  # the converter takes raw chunks through the sink interface
            self._stage = ThreadedSink(self.converter)  # type: ignore[arg-type]
        self._clock_next = 0  # next /clock step not yet streamed
        self.finished = False
        self.sink_seconds = 0.0  # wall time spent handing chunks over (not the loop's)

    @property
    def stats(self) -> RunStats:
        """Running statistics over every sample streamed so far."""
        return self.converter.stats

    def add_snapshots(self, steps: NDArray[np.int64], states: FloatArray) -> None:
        """A block of state snapshots (M,) and (M, N, n_state)."""
        self.blocks.add_snapshots(steps, states)

    def add_scans(self, sample: dict[str, np.ndarray]) -> None:
        """A block of lidar samples (leading axis: scans)."""
        self.blocks.add_scans(sample)

    def add_scan_poses(self, t_ns: NDArray[np.int64], poses: FloatArray,
                       expanded_bytes: float) -> None:
        """The base_link poses (M, N, 3) of the cars at M scan times: scans cast later;
        ``expanded_bytes`` is their size once cast (counts towards the chunk)."""
        self.blocks.add_poses(t_ns, poses, expanded_bytes)

    def flush(self, step: int, inclusive: bool, final: bool = False) -> None:
        """Stream what is pending when a chunk is full (or ``final``): samples before ``step``
        (and at it when ``inclusive``: every event of that step is done)."""
        if not final and self.blocks.nbytes < self.chunk_bytes:
            return
        steps, states = self.blocks.snapshots(self.n_cars, self.n_state)
        last = step if inclusive else step - 1
        ticks = np.arange(self._clock_next, last + 1, dtype=np.int64)
        ticks = ticks[ticks % self.clock_period == 0]
        self._clock_next = last + 1
        blocks, self.blocks = self.blocks, _Blocks()
        raw: dict[str, Any] = {
            'snap_steps': steps, 'snap_states': states,
            'scan': concat_series(blocks.scans, Series(t_ns=np.zeros(0, dtype=np.int64))),
            'scan_t_ns': (np.concatenate(blocks.pose_t_ns) if blocks.pose_t_ns
                          else np.zeros(0, dtype=np.int64)),
            'scan_poses': (np.concatenate(blocks.poses) if blocks.poses else None),
            'commands': self.log.take(step * self.dt_ns, inclusive),
            'clock': Series(t_ns=ticks * self.dt_ns)}
        t0 = time.perf_counter()
        self._stage.write_chunk(raw, final, step * self.dt_ns - (0 if inclusive else 1))
        self.sink_seconds += time.perf_counter() - t0
        self.finished = final

    def close(self, abandon: bool = False) -> None:
        """Wait until every chunk is converted and handed on (``abandon``: drop the queued
        ones); errors of the conversion or the sink are raised here."""
        if isinstance(self._stage, ThreadedSink):
            self._stage.close(abandon=abandon)

    def streams(self, step: int) -> dict[str, Series]:
        """The decimated streams (for plots and summaries)."""
        empty = Series(t_ns=np.zeros(0, dtype=np.int64))
        out = {name: keeper.series(empty) for name, keeper in self.converter.kept.items()}
        out['clock'] = Series(t_ns=np.arange(0, step + 1, self.clock_period,
                                             dtype=np.int64)[-1:] * self.dt_ns)
        return out
