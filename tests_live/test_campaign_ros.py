"""``rcsim campaign run`` with a ROS 2 stack as the driver (``kind: ros_launch``).

The stack under test is a small wall follower written for this test (nodes/wall_follower.py:
/scan + /odom in, /cmd_vel out), started by a launch file the test writes. The campaign (2 worlds
x 2 seeds, 2 workers) starts sim_node in lockstep and the launch file per run, each run in a
ROS domain of its own. The rows are judged against what the controller itself received: it logs
every /odom message to a file named by the run id, from which the test computes the distance
driven; a run reproduced alone (--only) must give the same row; nothing may be left behind (no
process of a run, no Fast DDS shared-memory file no process holds).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
import sys
import tempfile
import textwrap

from live_harness import LiveRos
import numpy as np
import pytest

NODES = Path(__file__).resolve().parent / 'nodes'
DURATION_S = 4.0
SPEED_MPS = 0.8
SHM = Path('/dev/shm')


def launch_file(folder: Path) -> Path:
    """The user's launch file: the wall follower on sim time, its odometry log folder an arg."""
    path = folder / 'stack.launch.py'
    path.write_text(textwrap.dedent(f'''\
        from launch import LaunchDescription
        from launch.actions import DeclareLaunchArgument, ExecuteProcess
        from launch.substitutions import LaunchConfiguration


        def generate_launch_description():
            return LaunchDescription([
                DeclareLaunchArgument('odom_log_dir', default_value=''),
                DeclareLaunchArgument('speed', default_value='0.8'),
                ExecuteProcess(cmd=[{sys.executable!r}, {str(NODES / 'wall_follower.py')!r},
                                    '--ros-args', '-p', 'use_sim_time:=true',
                                    '-p', 'period:=0.05',
                                    '-p', ['speed:=', LaunchConfiguration('speed')],
                                    '-p', ['odom_log_dir:=', LaunchConfiguration('odom_log_dir')]],
                               output='screen'),
            ])
        '''), encoding='utf-8')
    return path


def table(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline='', encoding='utf-8') as fh:
        return {r['run_id']: r for r in csv.DictReader(fh)}


def run_processes() -> list[str]:
    """Live processes started for a campaign run (they carry RCSIM_RUN_ID in their env)."""
    found = []
    for proc in Path('/proc').iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b'RCSIM_RUN_ID=' in (proc / 'environ').read_bytes():
                found.append(f'{proc.name}: {(proc / "cmdline").read_bytes()[:120]!r}')
        except OSError:
            continue
    return found


def fastdds_files() -> set[str]:
    return {p.name for p in SHM.iterdir() if p.name.startswith(('fastrtps_', 'fast_datasharing',
                                                                'sem.fastrtps_'))}


def held_shm() -> set[str]:
    """/dev/shm files some live process maps or has open."""
    held: set[str] = set()
    for proc in Path('/proc').iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for line in (proc / 'maps').read_text().splitlines():
                if '/dev/shm/' in line:
                    held.add(line.split('/dev/shm/', 1)[1].split()[0])
            for fd in (proc / 'fd').iterdir():
                target = os.readlink(fd)
                if target.startswith('/dev/shm/'):
                    held.add(target[len('/dev/shm/'):])
        except OSError:
            continue
    return held


def odom_log(folder: Path, run_id: str) -> np.ndarray:
    rows = np.loadtxt(folder / f'{run_id}.csv', delimiter=',', ndmin=2)
    return rows[rows[:, 0] <= DURATION_S + 1e-9]


@pytest.mark.timing  # alone: its two workers run two simulations and stacks at once
def test_a_campaign_of_a_ros_stack(ros: LiveRos) -> None:
    folder = ros.folder
    logs = folder / 'odom'
    logs.mkdir()
    launch_file(folder)
    spec = folder / 'campaign.yaml'
    spec.write_text(textwrap.dedent(f'''\
        campaign: ros_wall_follower
        driver:
          kind: ros_launch
          launch: {{path: stack.launch.py}}
          args: {{odom_log_dir: {str(logs)!r}, speed: {SPEED_MPS}}}
          duration_s: {DURATION_S}
          control_rate_hz: 20
          timeout_s: 90
        fixed:
          lidar_errors: rplidar_a1
        factors:
          grid:
            world: [basic_track, figure_eight]
            seed: [1, 2]
        metrics: [collisions, first_contact_s, min_wall_distance_m, distance_m, max_speed_mps]
        pass:
          collisions: {{max: 0}}
        '''), encoding='utf-8')
    shm_before = fastdds_files()
    cli = [sys.executable, '-m', 'rc_sim_engine', 'campaign', 'run', str(spec)]
    # the domain leases of the campaign's runs and of the harness in one lock folder
    tmp = {'TMPDIR': tempfile.gettempdir()}
    proc = ros.start([*cli, '--out', str(folder / 'out'), '--workers', '2'], 'campaign', env=tmp)
    status = proc.wait(240)
    out = proc.output()
    assert status in (0, 1), out  # 1: some run failed the pass rule or errored (see the rows)
    rows = table(folder / 'out' / 'results.csv')
    assert len(rows) == 4, out
    for row in rows.values():
        print(' '.join(f'{k}={row[k]}' for k in ('run_id', 'world', 'seed', 'collisions',
                                                 'min_wall_distance_m', 'distance_m')))
    for run_id, row in rows.items():
        assert row['status'] == 'ok', (row, out)
        ref = odom_log(logs, run_id)
        # what the controller received: 20 Hz from t = 0 to the duration
        assert len(ref) >= int(DURATION_S * 20), len(ref)
        assert ref[0, 0] == 0.0 and abs(ref[-1, 0] - DURATION_S) < 1e-6
        distance = float(np.sum(np.hypot(np.diff(ref[:, 1]), np.diff(ref[:, 2]))))
        assert float(row['distance_m']) == distance or \
            abs(float(row['distance_m']) - distance) < 1e-9 * max(distance, 1.0), (row, distance)
        # it drove at the commanded speed (from rest: the drive takes a fraction of a second)
        assert 0.6 * SPEED_MPS * DURATION_S < distance < SPEED_MPS * DURATION_S + 0.05
        assert 0.9 * SPEED_MPS < float(row['max_speed_mps']) < 1.1 * SPEED_MPS
        gap = float(row['min_wall_distance_m'])
        assert 0.0 <= gap < 2.0, row  # walls on both sides of the lane
        contacts = int(float(row['collisions']))
        assert (row['first_contact_s'] == '') == (contacts == 0), row
        if contacts:
            assert gap == 0.0 and 0.0 <= float(row['first_contact_s']) <= DURATION_S, row
    # the seed reaches the lidar noise: the two seeds of a world drive differently
    by_world: dict[str, set[str]] = {}
    for row in rows.values():
        by_world.setdefault(row['world'], set()).add(row['min_wall_distance_m'])
    assert all(len(v) == 2 for v in by_world.values()), by_world
    # a run reproduced alone gives the same row
    run_id = sorted(rows)[0]
    again = ros.start([*cli, '--out', str(folder / 'again'), '--only', run_id, '--workers', '1'],
                      'campaign --only', env=tmp)
    assert again.wait(120) in (0, 1), again.output()
    assert table(folder / 'again' / 'results.csv')[run_id] == rows[run_id]
    # nothing left behind: no process of a run, no unheld Fast DDS shared-memory file
    assert run_processes() == []
    left = fastdds_files() - shm_before - held_shm()
    assert left == set(), left


def test_a_stack_that_dies_is_an_error_row_and_nothing_is_left(ros: LiveRos) -> None:
    """The user's launch ends at once (its node exits 3): the run is an error row naming it,
    the campaign goes on and ends, sim_node is ended too."""
    folder = ros.folder
    (folder / 'dies.launch.py').write_text(textwrap.dedent(f'''\
        from launch import LaunchDescription
        from launch.actions import ExecuteProcess, Shutdown


        def generate_launch_description():
            return LaunchDescription([
                ExecuteProcess(cmd=[{sys.executable!r}, '-c', 'raise SystemExit(3)'],
                               on_exit=Shutdown()),
            ])
        '''), encoding='utf-8')
    spec = folder / 'campaign.yaml'
    spec.write_text('driver: {kind: ros_launch, launch: {path: dies.launch.py}, duration_s: 2, '
                    'timeout_s: 60}\nfactors: {grid: {seed: [7]}}\n', encoding='utf-8')
    proc = ros.start([sys.executable, '-m', 'rc_sim_engine', 'campaign', 'run', str(spec),
                      '--out', str(folder / 'out')], 'campaign',
                     env={'TMPDIR': tempfile.gettempdir()})
    assert proc.wait(120) == 1, proc.output()
    (row,) = table(folder / 'out' / 'results.csv').values()
    assert row['status'] == 'error' and row['passed'] == 'false', row
    print(row['error'])
    assert 'ros2 launch' in row['error'] and 'ended' in row['error'], row
    assert run_processes() == []
