"""F1TENTH gym on the same workload, for comparison (prints figures; not a test).

Runs the F1TENTH gym simulator (``f110_gym.envs.base_classes.Simulator``: single-track model, RK4,
dt = 10 ms, 1080-beam lidar by ray marching in a distance transform, agent-to-agent scan
occlusion and collisions) on a map_server track map, N cars lapping with pure pursuit on the map's
centre line (computed outside the timed calls). F1TENTH gym is NOT a dependency of rc-sim: install
it in a throwaway virtual environment outside the repository, e.g.

    python3 -m venv /tmp/f1t_venv && /tmp/f1t_venv/bin/pip install numpy numba scipy pillow pyyaml
    /tmp/f1t_venv/bin/pip install --no-deps /path/to/f1tenth_gym   # its gym==0.19 pin is unused
    /tmp/f1t_venv/bin/python benchmarks/bench_f1tenth_gym.py --map /tmp/rc_sim_bench_maps/bench_circuit.yaml

(``python benchmarks/bench_racing_map.py`` writes that map first.) The Simulator class is imported
without the package's ``gym`` registration, which needs gym 0.19.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
from pathlib import Path
import sys
import time
import types

import numpy as np
import yaml

# vehicle parameters of F1TENTH gym's default car (its F110Env defaults)
F1TENTH_CAR = {'mu': 1.0489, 'C_Sf': 4.718, 'C_Sr': 5.4562, 'lf': 0.15875, 'lr': 0.17145,
               'h': 0.074, 'm': 3.74, 'I': 0.04712, 's_min': -0.4189, 's_max': 0.4189,
               'sv_min': -3.2, 'sv_max': 3.2, 'v_switch': 7.319, 'a_max': 9.51, 'v_min': -5.0,
               'v_max': 20.0, 'width': 0.31, 'length': 0.58}


def import_simulator() -> types.ModuleType:
    """``f110_gym.envs.base_classes`` without running the package __init__ (gym 0.19)."""
    spec = importlib.util.find_spec('f110_gym')
    if spec is None or spec.submodule_search_locations is None:
        sys.exit('f110_gym is not installed in this interpreter (see the module docstring)')
    root = Path(next(iter(spec.submodule_search_locations)))
    for name, path in (('f110_gym', root), ('f110_gym.envs', root / 'envs')):
        module = types.ModuleType(name)
        module.__path__ = [str(path)]
        sys.modules[name] = module
    import f110_gym.envs.base_classes as base

    return base


def centre_line(map_yaml: Path) -> np.ndarray:
    meta = yaml.safe_load(map_yaml.read_text())
    rows = [line.split(',')[:2] for line in (map_yaml.parent / meta['centerline']).read_text()
            .splitlines() if line and not line.startswith('#')]
    return np.array(rows, dtype=float)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--map', required=True, help='map YAML with a centerline CSV')
    parser.add_argument('--cars', type=int, default=1)
    parser.add_argument('--steps', type=int, default=5000)
    args = parser.parse_args()
    base = import_simulator()
    map_yaml = Path(args.map)
    meta = yaml.safe_load(map_yaml.read_text())
    line = centre_line(map_yaml)
    seg = np.linalg.norm(np.roll(line, -1, axis=0) - line, axis=1)
    s_line = np.concatenate([[0.0], np.cumsum(seg)])
    sim = base.Simulator(F1TENTH_CAR, args.cars, seed=12345, time_step=0.01,
                         integrator=base.Integrator.RK4)
    sim.set_map(str(map_yaml), Path(meta['image']).suffix)
    poses = []
    for i in range(args.cars):  # grid behind the start, 1 m apart, staggered 0.25 m
        k = (-10 * i) % len(line)
        p0, p1 = line[k], line[(k + 1) % len(line)]
        yaw = math.atan2(p1[1] - p0[1], p1[0] - p0[0])
        side = 0.25 * (1 if i % 2 == 0 else -1) * (args.cars > 1)
        poses.append([p0[0] - side * math.sin(yaw), p0[1] + side * math.cos(yaw), yaw])
    sim.reset(np.array(poses))

    def pursue(obs: dict) -> np.ndarray:
        out = np.empty((args.cars, 2))
        for i in range(args.cars):
            x, y, yaw = obs['poses_x'][i], obs['poses_y'][i], obs['poses_theta'][i]
            k = int(np.argmin((line[:, 0] - x) ** 2 + (line[:, 1] - y) ** 2))
            goal = line[int(np.searchsorted(s_line, (s_line[k] + 1.5) % s_line[-1])) % len(line)]
            dx, dy = goal[0] - x, goal[1] - y
            lat = -math.sin(yaw) * dx + math.cos(yaw) * dy
            kappa = 2 * lat / max(dx * dx + dy * dy, 1e-6)
            out[i] = (math.atan(kappa * 0.3302), 4.0)
        return out

    obs = sim.step(np.zeros((args.cars, 2)))  # compiles
    times = []
    crashes = 0
    for _ in range(args.steps):
        action = pursue(obs)
        t0 = time.perf_counter()
        obs = sim.step(action)
        times.append(time.perf_counter() - t0)
        crashes += int(np.sum(obs['collisions']))
    t = np.asarray(times)
    n = len(t) // 500
    blocks = t[:n * 500].reshape(n, 500).sum(axis=1)
    h, w = sim.agents[0].scan_simulator.map_height, sim.agents[0].scan_simulator.map_width
    print(f'F1TENTH gym Simulator.step: {map_yaml.name} ({w} x {h} cells), {args.cars} car(s), '
          f'dt 10 ms RK4, 1080-beam lidar every step, {args.steps} steps')
    print(f'  steps/s            {500 / blocks.min():,.0f} best 500-step block '
          f'({blocks.min() / 500 * 1e6:.1f} us/step), median block {500 / np.median(blocks):,.0f}')
    print(f'  sanity: {crashes} car-steps in collision')


if __name__ == '__main__':
    main()
