"""``rcsim campaign run`` throughput: runs per second on 1 and 2 local workers (and a Dask
LocalCluster of 2 processes when dask[distributed] is installed), and the campaign's overhead
per run (the whole command minus the bare simulations of the same runs).

The campaign is the docs' example (examples/campaign: a lidar wall follower, 6 s per run) with
``--seeds`` seeds per preset and world; best of three. Usage: ``python benchmarks/bench_campaign.py
[--seeds 8]``.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
import shutil
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / 'examples' / 'campaign'
REPEATS = 3  # best of: the runs are short, the machine is noisy


def bare_seconds(spec_path: Path) -> tuple[float, int]:
    """Wall time of the example's runs driven directly through the Simulator (worlds and
    parameters loaded once; no campaign machinery, no metrics)."""
    from rc_sim_description.params import load_vehicle_params
    from rc_sim_engine.campaign import expand, load_spec
    from rc_sim_engine.sim.run_setup import load_any_world
    from rc_sim_engine.sim.simulator import SimConfig, Simulator
    from rc_sim_sensors.lidar_config import LidarErrorConfig

    spec = load_spec(spec_path)
    sys.path.insert(0, str(spec_path.parent))
    import wall_follower

    runs = expand(spec)
    params = load_vehicle_params()
    worlds = {}
    for name in {r.values['world'] for r in runs}:
        loaded = load_any_world(name)
        worlds[name] = (loaded.world, loaded.spawn)

    def simulate(run: object) -> None:
        v = run.values  # type: ignore[attr-defined]
        world, start = worlds[v['world']]
        config = SimConfig(lidar_errors=LidarErrorConfig.from_preset(v['lidar_errors']),
                           seed=run.seed, command_rate=spec.driver.control_rate_hz,  # type: ignore[attr-defined]
                           mapper_mode=spec.driver.mode)
        sim = Simulator(params, world, config, start=start)
        sim.run(float(spec.driver.duration_s or 0.0), wall_follower.make(None))

    simulate(runs[0])  # warm-up
    best = float('inf')
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for run in runs:
            simulate(run)
        best = min(best, time.perf_counter() - t0)
    return best, len(runs)


def timed(spec: Path, out: Path, **kwargs: object) -> float:
    """Best wall time of REPEATS whole campaigns (each into a new folder)."""
    from rc_sim_engine.campaign.runner import run_campaign

    best = float('inf')
    for i in range(REPEATS):
        t0 = time.perf_counter()
        run_campaign(str(spec), f'{out}_{i}', **kwargs)  # type: ignore[arg-type]
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seeds', type=int, default=8, help='seeds per preset and world')
    args = parser.parse_args()
    from rc_sim_engine.sim.warmup import ensure_compiled

    ensure_compiled(None, 'run', lidar_errors=True)
    with tempfile.TemporaryDirectory(prefix='bench-campaign-') as tmp:
        folder = Path(tmp) / 'spec'
        shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns('__pycache__'))
        spec = folder / 'campaign.yaml'
        text = spec.read_text()
        assert 'count: 50,' in text, 'the example spec changed: update this benchmark'
        text = text.replace('count: 50,', f'count: {args.seeds},')
        spec.write_text(text.replace('bags: failures', 'bags: none'))
        bare, n = bare_seconds(spec)
        one = timed(spec, Path(tmp) / 'w1', workers=1)
        two = timed(spec, Path(tmp) / 'w2', workers=2)
        print(f'campaign of {n} runs (6 s simulated each, 1081-beam lidar with errors), best of '
              f'{REPEATS}')
        print(f'  bare simulations, one after another   {bare:6.2f} s  {n / bare:6.2f} runs/s')
        print(f'  rcsim campaign, 1 worker (in process)  {one:6.2f} s  {n / one:6.2f} runs/s')
        print(f'  rcsim campaign, 2 local workers        {two:6.2f} s  {n / two:6.2f} runs/s '
              f'({one / two:.2f}x)')
        if importlib.util.find_spec('distributed') is not None:
            dask = timed(spec, Path(tmp) / 'dask', dask='local:2')
            print(f'  rcsim campaign, Dask LocalCluster 2     {dask:6.2f} s  {n / dask:6.2f} '
                  'runs/s (cluster start included)')
        print(f'  overhead per run (1 worker - bare)     {1e3 * (one - bare) / n:6.1f} ms')
    return 0


if __name__ == '__main__':
    sys.exit(main())
