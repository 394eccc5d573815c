"""A run streamed to a bag chunk by chunk: the same bag as the in-memory result written at once,
memory bounded by one chunk whatever the run length, errors of the writer thread reach the
caller, the decimated result keeps the statistics of every sample."""

from __future__ import annotations

from pathlib import Path
import tracemalloc

import numpy as np
import pytest

from rc_sim_control.commands import CommandSequence, load_sequence
from rc_sim_description.bags import open_bag
from rc_sim_description.bags.writer import BagWriter
from rc_sim_description.params import load_vehicle_params
from rc_sim_description.paths import world_path
from rc_sim_engine.output.bags import SimBagStream, write_sim_result
from rc_sim_engine.sim import recorder as recorder_module
from rc_sim_engine.sim import simulator as simulator_module
from rc_sim_engine.sim.recorder import StreamingRecorder, ThreadedSink
from rc_sim_engine.sim.run_setup import scenario_path
from rc_sim_engine.sim.simulator import SimConfig, Simulator
from rc_sim_engine.world.sdf import World, load_world

P = load_vehicle_params()
WORLD = load_world(world_path('basic_track'))
LAP = load_sequence(scenario_path('basic_track_lap'))
STARTS = [(-0.5, -1.875, 0.0), (1.0, -1.875, 0.0)]


def messages(path: Path) -> list[tuple[str, int, bytes]]:
    with open_bag(path) as reader:
        return [(c.topic, t, bytes(d)) for c, t, d in reader.messages()]


@pytest.mark.parametrize('storage, cars, errors', [('sqlite3', 1, 'hokuyo_ust10lx'),
                                                   ('mcap', 2, None)])
def test_streamed_bag_equals_the_bag_of_the_whole_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, storage: str, cars: int,
        errors: str | None) -> None:
    from rc_sim_sensors.lidar_config import LidarErrorConfig

    monkeypatch.setattr(simulator_module, 'CHUNK_BYTES', 0.7e6)  # many chunks in 12 s
    config = SimConfig(seed=4, lidar_errors=None if errors is None
                       else LidarErrorConfig.from_preset(errors))
    whole = Simulator(P, WORLD, config, n=cars, start=STARTS[:cars]).play(LAP, 12.0)
    with BagWriter(tmp_path / 'whole', storage=storage) as bag:
        write_sim_result(bag, whole)
    sim = Simulator(P, WORLD, config, n=cars, start=STARTS[:cars])
    chunks: list[int] = []
    stream = SimBagStream(bag_stream := BagWriter(tmp_path / 'streamed', storage=storage),
                          sim.params)
    original = stream.write_chunk

    def counting(streams: dict, final: bool, until_ns: int | None = None) -> None:
        chunks.append(len(streams['odom']['t_ns']))
        original(streams, final, until_ns)

    stream.write_chunk = counting  # type: ignore[method-assign]
    with bag_stream, ThreadedSink(stream) as sink:
        streamed = sim.play(LAP, 12.0, sink=sink)
    assert len(chunks) >= 4  # the run crossed several chunks
    assert messages(tmp_path / 'streamed') == messages(tmp_path / 'whole')  # bytes and order
    assert streamed.decimated and not whole.decimated
    a, b = whole.summary(), streamed.summary()
    for key in ('distance_m', 'max_lateral_acceleration_mps2', 'max_speed_mps'):
        np.testing.assert_allclose(a[key], b[key], rtol=1e-12)
    assert a['collisions'] == b['collisions'] and a['sim_time_s'] == b['sim_time_s']
    odom = streamed.streams['odom']
    assert 0 < len(odom['t_ns']) <= recorder_module.DECIMATE_SAMPLES
    np.testing.assert_array_equal(np.diff(odom['t_ns']), np.diff(odom['t_ns'])[0])  # even


def _streamed_peak(seconds: float) -> tuple[int, int]:
    """(tracemalloc peak, largest pending chunk) of a run streamed to a sink that keeps nothing."""
    class Drop:
        def write_chunk(self, streams: dict, final: bool, until_ns: int) -> None:
            assert len(streams['scan']['t_ns']) or final

    pending: list[int] = []
    original = StreamingRecorder.flush

    def flush(self: StreamingRecorder, step: int, inclusive: bool, final: bool = False) -> None:
        pending.append(self.blocks.nbytes)
        original(self, step, inclusive, final)

    StreamingRecorder.flush = flush  # type: ignore[method-assign]
    try:
        sim = Simulator(P, WORLD, SimConfig(), start=STARTS[0])
        sim.play(LAP, 1.0)
        sim.reset(STARTS[0])
        tracemalloc.start()
        sim.play(LAP, seconds, sink=Drop())
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        StreamingRecorder.flush = original  # type: ignore[method-assign]
    return peak, max(pending)


def test_a_long_streamed_run_holds_one_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    chunk = 2e6
    monkeypatch.setattr(simulator_module, 'CHUNK_BYTES', chunk)
    short_peak, short_pending = _streamed_peak(30.0)
    long_peak, long_pending = _streamed_peak(120.0)  # 4 x longer: ~15 chunks instead of ~4
    assert short_pending <= 2 * chunk and long_pending <= 2 * chunk
    # everything that grows with the run (plan, decimated copies) is small: the peak stays put
    assert long_peak < 1.3 * short_peak + 1e6, (short_peak, long_peak)


def test_a_whole_run_in_memory_grows_with_its_length() -> None:
    """The check above can fail: kept in memory, a longer run takes more memory."""
    peaks = []
    for seconds in (10.0, 40.0):
        sim = Simulator(P, WORLD, SimConfig(), start=STARTS[0])
        tracemalloc.start()
        sim.play(LAP, seconds)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] > 2.5 * peaks[0]


def test_writer_thread_errors_reach_the_caller() -> None:
    class Broken:
        calls = 0

        def write_chunk(self, streams: dict, final: bool, until_ns: int) -> None:
            Broken.calls += 1
            raise OSError('disk full')

    sim = Simulator(P, World('e', 't'), SimConfig(lidar=False))
    seq = CommandSequence(np.array([0.0, 5.0]), np.array([1.0, 0.0]), np.zeros(2),
                          'steering_angle')
    with pytest.raises(OSError, match='disk full'), ThreadedSink(Broken()) as sink:
        sim.play(seq, 120.0, sink=sink)
    assert Broken.calls == 1  # nothing more is written after an error


def test_a_streamed_run_needs_a_fresh_simulator() -> None:
    from rc_sim_description.errors import ConfigError

    sim = Simulator(P, World('e', 't'), SimConfig(lidar=False))
    sim.step_to(0.1)
    with pytest.raises(ConfigError, match='nothing recorded'):
        sim.run(1.0, lambda t, obs: (0.0, 0.0), sink=ThreadedSink(SimBagStream.__new__(
            SimBagStream)))
