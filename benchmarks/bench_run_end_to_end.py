"""The whole ``rcsim run`` command, timed from outside (prints figures; not a test).

Workload: a 5-minute simulated run on ``basic_track`` with the default car and sensors (1 kHz
physics, 1081-beam lidar at 40 Hz, IMU 100 Hz, odometry/TF/joint states 50 Hz, clock 100 Hz,
commands 50 Hz: 162,011 messages), bag plus plots, summary and index page:

* ``lap``: the shipped ``basic_track_lap`` (two laps, then the car rests) for 300 s;
* ``laps``: laps for the whole 5 minutes (the open-loop laps drift into the wall, where the car
  is held at the wall by the ``stop`` response: collision checks at 1 kHz).

Each figure is one fresh process per run (``rcsim run ... --force``): start-up, imports, the
cached kernels, simulation, bag (sqlite3 or mcap), plots. Printed per storage: the median wall
time and the real-time factor 300 s / wall time (target >= 300), the CPU time of the command
(its processes together) and the loop's own factor as the command reports it. A warm-up run
first compiles or loads whatever is cached. With ``--demo``: the warm ``./scripts/demo`` too
(target < 4 s). With ``--hour``: one simulated hour of ``lap`` per storage, its whole-command time
and peak resident memory (largest process; target: a few hundred MB).

Run: python benchmarks/bench_run_end_to_end.py [--repeat 5] [--demo] [--hour]   (repository
root, venv)
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = Path(__file__).resolve().parents[1]
DURATION = 300.0
LAP_STRAIGHT_M, LAP_RADIUS_M = 3.0, 1.875  # basic_track's lane centre line


def _rcsim() -> list[str]:
    script = Path(sys.executable).parent / 'rcsim'
    return [str(script)] if script.is_file() else [sys.executable, '-m', 'rc_sim_engine']


def _laps_scenario(path: Path) -> Path:
    """Laps of basic_track at 1 m/s for the whole run (curvature mode, as basic_track_lap)."""
    half_circle = 3.141592653589793 * LAP_RADIUS_M
    t, v, k = [0.0], [1.0], [0.0]
    now, turning = 2.0, True
    while now < DURATION - 1.0:
        t.append(round(now, 4))
        v.append(1.0)
        k.append(round(1.0 / LAP_RADIUS_M, 6) if turning else 0.0)
        now += half_circle if turning else LAP_STRAIGHT_M
        turning = not turning
    t.append(DURATION - 1.0)
    v.append(0.0)
    k.append(0.0)
    path.write_text('name: laps\nmode: curvature\n'
                    f't: {t}\nlinear_x: {v}\nangular_z: {k}\n', encoding='utf-8')
    return path


def _timed(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """(wall [s], CPU of the process tree [s], stdout) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f'{" ".join(cmd)} failed: {done.stderr.strip()}')
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def _loop_factor(stdout: str) -> float:
    match = re.search(r'real-time factor\s+([0-9.]+)x \(loop\)', stdout)
    return float(match.group(1)) if match else float('nan')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeat', type=int, default=5, help='runs per figure (median)')
    parser.add_argument('--workload', choices=('lap', 'laps', 'both'), default='both')
    parser.add_argument('--demo', action='store_true', help='also time the warm ./scripts/demo')
    parser.add_argument('--hour', action='store_true',
                        help='also run one simulated hour per storage: time and peak memory')
    args = parser.parse_args()
    print(f'load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores')
    with tempfile.TemporaryDirectory(prefix='bench_e2e_') as tmp:
        laps = _laps_scenario(Path(tmp) / 'laps.yaml')
        workloads = {'lap': 'basic_track_lap', 'laps': str(laps)}
        names = list(workloads) if args.workload == 'both' else [args.workload]
        out = Path(tmp) / 'run'
        base = [*_rcsim(), 'run', '--world', 'basic_track', '--duration', f'{DURATION:g}',
                '--out', str(out), '--force']  # a later --duration overrides
        _timed([*base, '--scenario', workloads['lap']], REPO)  # warm-up (caches)
        for name in names:
            for storage in ('sqlite3', 'mcap'):
                cmd = [*base, '--scenario', workloads[name], '--storage', storage]
                runs = [_timed(cmd, REPO) for _ in range(args.repeat)]
                walls = [w for w, _, _ in runs]
                cpus = [c for _, c, _ in runs]
                wall, cpu = statistics.median(walls), statistics.median(cpus)
                loop = statistics.median(_loop_factor(s) for _, _, s in runs)
                print(f'rcsim run {name:4s} {storage:7s} whole command {wall:5.2f} s wall '
                      f'(best {min(walls):.2f}) = {DURATION / wall:4.0f}x real time '
                      f'(best {DURATION / min(walls):.0f}x; target >= 300x); CPU {cpu:5.2f} s '
                      f'(= {DURATION / cpu:.0f}x per CPU second); loop alone {loop:.0f}x')
            shutil.rmtree(out, ignore_errors=True)
        if args.hour:
            for storage in ('sqlite3', 'mcap'):
                cmd = [*base, '--scenario', workloads['lap'], '--storage', storage,
                       '--duration', '3600']
                wall, cpu, _ = _timed(cmd, REPO)
                peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
                print(f'rcsim run lap  {storage:7s} 3600 s simulated: {wall:6.2f} s wall '
                      f'({3600 / wall:.0f}x), CPU {cpu:.2f} s; peak resident memory of the '
                      f'largest process so far {peak_mb:.0f} MB')
                shutil.rmtree(out, ignore_errors=True)
    if args.demo:
        demo = [str(REPO / 'scripts' / 'demo')]
        _timed(demo, REPO)
        runs = [_timed(demo, REPO) for _ in range(args.repeat)]
        walls = [w for w, _, _ in runs]
        print(f'./scripts/demo, warm              {statistics.median(walls):5.2f} s wall (best '
              f'{min(walls):.2f}; target < 4 s); CPU {statistics.median(c for _, c, _ in runs):.2f} s')
    print(f'load average after: {os.getloadavg()[0]:.2f}')


if __name__ == '__main__':
    main()
