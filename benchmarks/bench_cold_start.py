"""Cold start of ``rcsim run`` (prints figures; not a test).

Runs, in fresh Python processes, (1) ``rcsim --help`` (CLI import), (2) the import of the engine and
its first simulated step with the compiled kernels loaded from numba's on-disk cache, and (3) a whole
short ``rcsim run`` (0.5 s simulated on basic_track, bag written, no plots). One warm-up process
fills the cache first. Target: import + cached JIT < 2 s.

With ``--compile``: the one-time kernel compile from an empty cache (a fresh
``NUMBA_CACHE_DIR``, where the compile stamp lives too) of what ``rcsim run`` needs, on every
core (the default) and in one process (``RC_SIM_COMPILE_WORKERS=1``), then of every set; then
the first ``rcsim run`` after it (the demo's two laps, no plots), which must load everything.

Run: python benchmarks/bench_cold_start.py [--compile]
"""

from __future__ import annotations

from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

FIRST_STEP = '''
import time
t0 = time.perf_counter()
from rc_sim_description.params import load_vehicle_params
from rc_sim_description.paths import world_path
from rc_sim_engine.sim.simulator import SimConfig, Simulator
from rc_sim_engine.world.sdf import load_world
sim = Simulator(load_vehicle_params(), load_world(world_path('basic_track')), SimConfig(),
                start=(-0.5, -1.875, 0.0))
sim.command(0.1, 10.0)
sim.step_to(0.05)
sim.result()
print(time.perf_counter() - t0)
'''


def _wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def compile_figures() -> None:
    """The kernel compile from an empty cache: parallel and in one process."""
    import os

    py = sys.executable
    rcsim = str(Path(py).with_name('rcsim'))
    print(f'kernel compile from an empty cache (load average {os.getloadavg()[0]:.1f}):')
    for label, extra, workers in (('rcsim run sets, every core', [], ''),
                                  ('rcsim run sets, one process', [], '1'),
                                  ('every set, every core', ['--all'], '')):
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, 'NUMBA_CACHE_DIR': cache, 'RC_SIM_QUIET': '1'}
            if workers:
                env['RC_SIM_COMPILE_WORKERS'] = workers
            import resource

            cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run([py, '-m', 'rc_sim_engine.sim.warmup', *extra], check=True, env=env)
            seconds = time.perf_counter() - t0
            cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
            line = (f'  {label:<30}{seconds:6.1f} s wall, {cpu:5.1f} s of CPU '
                    f'(load average {os.getloadavg()[0]:.1f})')
            if not extra and not workers:
                with tempfile.TemporaryDirectory() as out:
                    t0 = time.perf_counter()
                    subprocess.run([rcsim, 'run', '--world', 'basic_track', '--scenario',
                                    'basic_track_lap', '--no-plots', '--out', f'{out}/r'],
                                   check=True, env=env, stdout=subprocess.DEVNULL)
                    line += f'; then the first rcsim run {time.perf_counter() - t0:.1f} s'
            print(line, flush=True)


def main(repeat: int = 3) -> None:
    py = sys.executable
    rcsim = str(Path(py).with_name('rcsim'))
    with tempfile.TemporaryDirectory() as tmp:
        def run_cmd(i: int) -> list[str]:
            return [rcsim, 'run', '--world', 'basic_track', '--scenario', 'line', '--duration',
                    '0.5', '--no-plots', '--out', str(Path(tmp) / f'run{i}')]

        _wall(run_cmd(99))  # warm-up: fills numba's cache if it is empty
        helps = [_wall([rcsim, '--help']) for _ in range(repeat)]
        inner = []
        for _ in range(repeat):
            out = subprocess.run([py, '-c', FIRST_STEP], check=True, capture_output=True,
                                 text=True).stdout
            inner.append(float(out.strip().splitlines()[-1]))
        runs = [_wall(run_cmd(i)) for i in range(repeat)]
    print('cold start (fresh processes, numba cache warm):')
    print(f'  rcsim --help                          {statistics.median(helps):.2f} s')
    print(f'  import + cached JIT + first step      {statistics.median(inner):.2f} s   (target < 2 s)')
    print(f'  rcsim run (0.5 s sim, bag, no plots)  {statistics.median(runs):.2f} s wall')


if __name__ == '__main__':
    if '--compile' in sys.argv[1:]:
        compile_figures()
    else:
        main()
