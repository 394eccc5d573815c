"""Tracking figures of docs/tracking.md (prints tables; not a test).

1. Model comparison: the lemniscate (figure eight, a = 3 m, w = 0.45 rad/s) tracked by each
   controller on the kinematic model and on the dynamic single track with linear, Fiala and Pacejka
   tyres: RMSE / ISE of the centre-of-mass error after the 3 s start transient.
2. Every analytic trajectory (defaults) x controller on the single track (linear tyres).
3. Wall-clock cost of one closed-loop run (1 kHz physics, 50 Hz control, no lidar).

Run: /work/venv/bin/python benchmarks/bench_tracking.py [--markdown]
"""

from __future__ import annotations

import argparse
import time

from rc_sim_control.tracking import CONTROLLER_NAMES
from rc_sim_control.trajectories import TRAJECTORY_NAMES
from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.scenarios.tracking import run_tracking
from rc_sim_engine.world.sdf import World

MODELS = [('kinematic', None), ('single_track', 'linear'), ('single_track', 'fiala'),
          ('single_track', 'pacejka')]
EIGHT = {'trajectory_type': 'lemniscate', 'amplitude': 3.0, 'angular_speed': 0.45}


def cell(run) -> str:
    m = run.evaluation.metrics_after
    return f'{100 * m.rmse:.2f} / {m.ise:.2e}'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--markdown', action='store_true', help='print markdown tables')
    args = parser.parse_args()
    params = load_vehicle_params()
    flat = World(name='flat', source='bench')
    run_tracking(params, flat, EIGHT, model='kinematic')  # JIT warm-up

    sep = ' | '
    print('1. lemniscate a = 3 m, w = 0.45 rad/s: RMSE [cm] / ISE [m^2 s] after 3 s')
    header = ['model', *CONTROLLER_NAMES]
    print(('| ' + sep.join(header) + ' |') if args.markdown else '  '.join(header))
    if args.markdown:
        print('|' + '---|' * len(header))
    for model, tyre in MODELS:
        name = model if tyre is None else f'{model} ({tyre})'
        cells = [cell(run_tracking(params, flat, {**EIGHT, 'controller': c}, model=model,
                                   tyre_model=tyre)) for c in CONTROLLER_NAMES]
        print(('| ' + sep.join([name, *cells]) + ' |') if args.markdown
              else '  '.join([name, *cells]))

    print('\n2. analytic trajectories (defaults), single_track linear: RMSE [cm] / ISE [m^2 s]')
    header = ['trajectory', *CONTROLLER_NAMES]
    print(('| ' + sep.join(header) + ' |') if args.markdown else '  '.join(header))
    if args.markdown:
        print('|' + '---|' * len(header))
    for traj in TRAJECTORY_NAMES:
        cells = [cell(run_tracking(params, flat, {'trajectory_type': traj, 'controller': c},
                                   model='single_track', tyre_model='linear'))
                 for c in CONTROLLER_NAMES]
        print(('| ' + sep.join([traj, *cells]) + ' |') if args.markdown
              else '  '.join([traj, *cells]))

    t0 = time.perf_counter()
    run = run_tracking(params, flat, {**EIGHT, 'controller': 'fl'}, model='single_track')
    wall = time.perf_counter() - t0
    print(f'\n3. one lemniscate run ({run.duration:.1f} s simulated, 1 kHz single track, 50 Hz '
          f'FL): {wall:.2f} s wall, real-time factor {run.duration / wall:.0f}x')


if __name__ == '__main__':
    main()
