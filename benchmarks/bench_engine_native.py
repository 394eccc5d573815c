"""Native workload of the embedded engine (prints figures; not a test).

basic_track (91 wall boxes from the SDF), 1 kHz physics (single-track RK4), 1081-beam lidar at
40 Hz, IMU 100 Hz, odometry/TF/joint states 50 Hz, commands 50 Hz, adaptive collision checks: the
shipped two-lap scenario ``basic_track_lap`` (36.6 s simulated) through Simulator.play. Target: real-time
factor >= 300 for the loop. Also printed: the factor including the conversion of the recordings
(SimResult) and including writing the sqlite3 bag.

Run: /work/venv/bin/python benchmarks/bench_engine_native.py
"""

from __future__ import annotations

from pathlib import Path
import statistics
import tempfile
import time

from rc_sim_control.commands import load_sequence
from rc_sim_description.bags.writer import BagWriter
from rc_sim_description.params import load_vehicle_params
from rc_sim_description.paths import world_path
from rc_sim_description.worlds import spawn_pose
from rc_sim_engine.output.bags import write_sim_result
from rc_sim_engine.sim.run_setup import scenario_path
from rc_sim_engine.sim.simulator import SimConfig, Simulator
from rc_sim_engine.world.sdf import load_world


def main(repeat: int = 5) -> None:
    params = load_vehicle_params()
    path = world_path('basic_track')
    world = load_world(path)
    spawn = spawn_pose(path)
    scenario = scenario_path('basic_track_lap')
    assert scenario is not None
    seq = load_sequence(scenario)
    sim = Simulator(params, world, SimConfig(), start=(spawn.x, spawn.y, spawn.yaw))
    sim.play(seq, duration=2.0)  # load the compiled kernels from the cache
    loop, with_result = [], []
    result = None
    for _ in range(repeat):
        sim.reset((spawn.x, spawn.y, spawn.yaw))
        t0 = time.perf_counter()
        result = sim.play(seq)
        with_result.append(result.sim_time / (time.perf_counter() - t0))
        loop.append(result.realtime_factor)
    assert result is not None
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        with BagWriter(Path(tmp) / 'bag') as bag:
            write_sim_result(bag, result)
        t_bag = time.perf_counter() - t0
        n_msgs = sum(bag.counts.values())
    summary = result.summary()
    print(f'native workload: basic_track, {result.sim_time:.1f} s simulated, dt 1 ms, '
          f'{params.sensors.lidar_samples}-beam lidar at {params.sensors.lidar_update_rate:g} Hz, '
          f'{len(world.boxes)} wall boxes, {summary["collisions"][0]} collisions')
    print(f'  real-time factor (loop)            median {statistics.median(loop):,.0f}x, '
          f'best {max(loop):,.0f}x   (target >= 300)')
    print(f'  real-time factor (loop + result)   median {statistics.median(with_result):,.0f}x')
    print(f'  bag writing (sqlite3)              {n_msgs} messages in {t_bag:.2f} s '
          f'({n_msgs / t_bag:,.0f} msg/s); whole run incl. bag '
          f'{result.sim_time / (result.sim_time / statistics.median(with_result) + t_bag):,.0f}x')


if __name__ == '__main__':
    main()
