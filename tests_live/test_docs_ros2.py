"""docs/ros2.md "Running with ROS 2": every command block of the page runs, in order, live.

The fenced ``bash`` blocks are read from the page (page and test cannot drift): each command
(backslash continuations joined) must match exactly one step of :data:`STEPS`, and every step must
be used. Commands run as a user runs them in a new terminal: ``bash -c '. scripts/setup_ros.sh &&
COMMAND'`` in the test's folder (where ``scripts`` links to the repository's, as in the README
test); ``# runs until Ctrl-C`` commands are started in their own process group, checked while they
run, and ended with Ctrl-C where the page says so (a launch before the next launch and at the end,
the recorder before the bag is read, the keyboard and the endless ``ros2 topic pub`` once their
effect is seen); the keyboard runs on a pseudo-terminal and gets keys.

Checks judge by references the commands do not produce: ground truth /odom against the commanded
motion (sign of the yaw rate, direction of travel, REP 103), the node and topic names of
docs/architecture.md, /clock against the probe's wall clock for ``realtime_factor``, the example
car's parameters (rc_sim_calibration/config/example_different_car.yaml) against the fitted ones.

The page's set-up block for a machine with ROS 2 runs too, in a fresh workspace under a temporary
HOME, with three documented substitutions (no /opt/ros here: the overlay kit is already sourced;
the clone becomes a copy of this working tree; rosdep is not available): the rest (``pip install
-r`` against the installed packages, ``colcon build``, ``source install/setup.bash``) runs as
written and ``ros2 run`` then finds the packages in that workspace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import math
from pathlib import Path
import re
import shutil
import subprocess
import time
from typing import Any

from live_harness import LiveRos, RosProcess, wait_until
from nav_msgs.msg import Odometry
import numpy as np
import pytest
from rosgraph_msgs.msg import Clock
from test_calibration_fit import without_workspace
from test_spawn_launch import ONE_CAR_NODES, PER_CAR_NODES, ctrl_c, stamp_s, xy, yaw_of

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / 'docs' / 'ros2.md'
SETUP = '. scripts/setup_ros.sh'
LONG = re.compile(r'\s+#\s*runs until Ctrl-C\s*$')
PACKAGES = ('rc_sim_description', 'rc_sim_control', 'rc_sim_sensors', 'rc_sim_engine',
            'rc_sim_calibration')
RECORDED = ['/cmd_vel', '/steering_angle', '/rear_wheel_speed', '/odom', '/imu', '/joint_states',
            '/scan', '/tf', '/tf_static']


# --------------------------------------------------------------------------- the page
@dataclass
class Block:
    heading: str
    text: str

    def commands(self) -> list[tuple[str, bool]]:
        """(command, runs until Ctrl-C) of each command line; comments and blanks dropped."""
        out = []
        for line in self.text.replace('\\\n', ' ').splitlines():
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            long = bool(LONG.search(line))
            out.append((LONG.sub('', line).strip(), long))
        return out


def page_blocks(text: str) -> list[Block]:
    blocks, heading = [], ''
    for part in re.split(r'(^```bash\n.*?^```\n)', text, flags=re.S | re.M):
        if part.startswith('```bash'):
            blocks.append(Block(heading, part[len('```bash\n'):-len('```\n')]))
        else:
            headings = re.findall(r'^#+ (.+)$', part, re.M)
            heading = headings[-1] if headings else heading
    return blocks


BLOCKS = page_blocks(PAGE.read_text(encoding='utf-8'))
ROS_MACHINE = next(b for b in BLOCKS if b.heading.startswith('On a machine with ROS 2'))
HERE = next(b for b in BLOCKS if b.heading.startswith('Here, without a ROS install'))
FLOW = [b for b in BLOCKS if b not in (ROS_MACHINE, HERE)]


# --------------------------------------------------------------------------- the walk
@dataclass
class Walk:
    """The state of one walk through the page: the processes still running, the probe's view."""

    ros: LiveRos
    launch: RosProcess | None = None
    recorder: RosProcess | None = None
    odom: dict[str, Any] = field(default_factory=dict)  # topic -> inbox
    done: list[str] = field(default_factory=list)

    def shell(self, command: str) -> list[str]:
        """A new terminal: the set-up sourced, then the command."""
        return ['bash', '-c', SETUP if command == SETUP else f'{SETUP} && exec {command}']

    def run(self, command: str, timeout: float = 300.0, check: bool = True
            ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(self.shell(command), env=self.ros.env, cwd=self.ros.folder,
                              text=True, capture_output=True, timeout=timeout,
                              start_new_session=True)
        if check:
            assert done.returncode == 0, f'{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}'
        return done

    def start(self, command: str, name: str, **kwargs: Any) -> RosProcess:
        return self.ros.start(self.shell(command), name, **kwargs)

    def inbox(self, topic: str) -> Any:
        if topic not in self.odom:
            self.odom[topic] = self.ros.probe.subscribe(Odometry, topic, 1000)
        return self.odom[topic]


def end_launch(walk: Walk) -> None:
    if walk.launch is not None:
        assert ctrl_c(walk.ros, walk.launch) == 0, walk.launch.output()[-3000:]
        walk.launch = None


def step_launch(walk: Walk, command: str) -> None:
    """Ctrl-C the running launch ("in terminal 1, Ctrl-C the launch"), start this one, wait
    until every node it documents is up and the ground truth flows."""
    end_launch(walk)
    cars = int(m.group(1)) if (m := re.search(r'num_cars:=(\d+)', command)) else 1
    walk.launch = walk.start(command, 'launch')
    if cars == 1:
        nodes, topics = set(ONE_CAR_NODES), ['/odom']
    else:
        nodes = {'/sim_node'} | {f'/car_{i}/{n}' for i in range(cars) for n in PER_CAR_NODES}
        topics = [f'/car_{i}/odom' for i in range(cars)]
    proc = walk.launch

    def up() -> bool:
        assert proc.alive(), proc.output()[-3000:]
        return nodes <= set(walk.ros.probe.node_names())
    wait_until(up, 120, f'the nodes of {command}', period=0.2)
    for topic in topics:
        walk.inbox(topic).wait(1, timeout=60)
    if 'params_file:=' in command:  # sim_node runs the car of that file
        wanted = re.search(r'params_file:=.*?(\w+\.yaml)', command).group(1)
        got = walk.ros.cli('param', 'get', '--no-daemon', '--spin-time', '3', '/sim_node',
                           'params_file').stdout
        assert wanted in got, got


def step_node_list(walk: Walk, command: str) -> None:
    """The page: the daemon needs a few seconds, "repeat it if a node is missing"."""
    def listed() -> bool:
        return set(walk.run(command).stdout.split()) >= ONE_CAR_NODES
    wait_until(listed, 60, 'ros2 node list to show the launch', period=1.0)


def step_topic_list(walk: Walk, command: str) -> None:
    want = {'/scan': 'sensor_msgs/msg/LaserScan', '/odom': 'nav_msgs/msg/Odometry',
            '/tf': 'tf2_msgs/msg/TFMessage', '/tf_static': 'tf2_msgs/msg/TFMessage',
            '/joint_states': 'sensor_msgs/msg/JointState', '/clock': 'rosgraph_msgs/msg/Clock',
            '/robot_description': 'std_msgs/msg/String', '/cmd_vel': 'geometry_msgs/msg/Twist'}

    def listed() -> bool:
        types = dict(re.findall(r'^(\S+) \[(\S+)\]$', walk.run(command).stdout, re.M))
        return all(types.get(k) == v for k, v in want.items())
    wait_until(listed, 60, 'ros2 topic list -t to show the navigation topics', period=1.0)


def step_echo(walk: Walk, command: str) -> None:
    out = walk.run(command, timeout=120).stdout
    if command.endswith('/odom'):
        assert 'frame_id: odom' in out and 'child_frame_id: base_link' in out, out
    else:  # /tf_static, latched: the fixed frames under base_link
        for frame in ('chassis_link', 'laser', 'imu_link'):
            assert f'child_frame_id: {frame}' in out, out


def heading_travel(msgs: list[Odometry]) -> tuple[float, float]:
    """(unwrapped yaw change [rad], signed path length [m]: each step's displacement along the
    heading, + forward) over ``msgs``."""
    yaw = np.unwrap([yaw_of(m) for m in msgs])
    p = np.array([xy(m) for m in msgs])
    d = np.diff(p, axis=0)
    along = d[:, 0] * np.cos(yaw[:-1]) + d[:, 1] * np.sin(yaw[:-1])
    return float(yaw[-1] - yaw[0]), float(np.sum(along))


def step_teleop(walk: Walk, command: str) -> None:
    """Keys on a terminal: ``i`` (forward) held for 3 s drives the car forward; Ctrl-C quits
    (raw mode: the key, as in a real terminal), exit 0."""
    odom = walk.inbox('/odom')
    teleop = walk.start(command, 'teleop', tty=True)
    walk.ros.probe.wait_publishers('/cmd_vel', timeout=60)
    time.sleep(1.0)  # matching with the mapper
    odom.clear()
    end = time.monotonic() + 3.0
    while time.monotonic() < end:
        teleop.tty.send('i')
        time.sleep(0.1)
    turn, forward = heading_travel(odom.wait(20, timeout=30))
    assert forward > 0.2 and abs(turn) < 0.2, (forward, turn, teleop.output()[-2000:])
    teleop.tty.send('\x03')
    assert teleop.wait(30) == 0, teleop.output()[-2000:]


def twist_of(command: str) -> tuple[str, float, float]:
    m = re.search(r'(/\S*cmd_vel) geometry_msgs/msg/Twist "\{linear: \{x: (\S+)\}, '
                  r'angular: \{z: (\S+)\}\}"', command)
    assert m, command
    return m.group(1), float(m.group(2)), float(m.group(3))


def judge_motion(msgs: list[Odometry], v: float, z: float, duration_s: float) -> None:
    """The ground truth moved as commanded: direction of travel and turn (REP 103: + = left),
    the turn roughly z x the time the commands acted."""
    turn, along = heading_travel(msgs)
    assert math.copysign(1.0, along) == math.copysign(1.0, v) and abs(along) > 0.3 * abs(v) * \
        duration_s, (along, v)
    if z == 0.0:
        assert abs(turn) < 0.15 * duration_s, turn
    else:
        assert 0.4 < turn / (z * duration_s) < 1.3, (turn, z, duration_s)


def step_pub_forever(walk: Walk, command: str) -> None:
    """The endless ``ros2 topic pub -r 10``: measured for 3 s once the car moves, then Ctrl-C."""
    topic, v, z = twist_of(command)
    odom = walk.inbox(topic.replace('cmd_vel', 'odom'))
    pub = walk.start(command, 'pub')

    def acting() -> bool:  # speed AND turn rate: the car may still coast from the step before
        last = odom.last()
        return last is not None and last.twist.twist.linear.x > 0.8 * v \
            and (z == 0.0 or last.twist.twist.angular.z * math.copysign(1.0, z) > 0.8 * abs(z))

    wait_until(acting, 60, f'{topic} to act')
    odom.clear()
    msgs = odom.wait(2, timeout=30)
    wait_until(lambda: stamp_s(odom.last()) - stamp_s(msgs[0]) > 3.0, 60, '3 s of /odom')
    msgs = odom.messages
    judge_motion(msgs, v, z, stamp_s(msgs[-1]) - stamp_s(msgs[0]))
    turn, _ = heading_travel(msgs)
    assert turn / (stamp_s(msgs[-1]) - stamp_s(msgs[0])) == pytest.approx(z, rel=0.15)
    pub.interrupt()


def step_pub_times(walk: Walk, command: str) -> None:
    """``ros2 topic pub -t N -w K``: runs to completion (exit 0); the car moved as commanded
    while the N commands (at 10 Hz) acted."""
    topic, v, z = twist_of(command)
    times = int(re.search(r'-t (\d+)', command).group(1))
    odom = walk.inbox(topic.replace('cmd_vel', 'odom'))
    others = {t: walk.inbox(t) for t in walk.odom if t != odom.topic and t.startswith('/car_')}
    before = {t: xy(o.last()) for t, o in others.items() if o.last() is not None}
    odom.clear()
    walk.run(command, timeout=120)
    time.sleep(0.5)
    msgs = odom.messages
    assert msgs, f'no {odom.topic} during {command}'
    judge_motion(msgs, v, z, 0.1 * times)
    for t, start in before.items():  # several cars: the others did not move
        assert math.dist(start, xy(others[t].last())) < 0.01, t


def step_recorder(walk: Walk, command: str) -> None:
    walk.recorder = walk.start(command, 'bag_recorder')
    for topic in RECORDED[1:]:  # /cmd_vel: once the first command is published
        walk.recorder.wait_output(f'recording {topic} (', timeout=60)


def end_recorder(walk: Walk) -> None:
    """"Then Ctrl-C the recorder in terminal 3": it prints what it wrote and exits 0."""
    rec = walk.recorder
    assert rec is not None, 'the page reads the bag before recording it'
    assert rec.interrupt(30) == 0, rec.output()[-3000:]
    assert re.search(r'wrote runs/ros/my_run: \d+ message\(s\)', rec.output()), rec.output()
    walk.recorder = None


def step_inspect(walk: Walk, command: str) -> None:
    end_recorder(walk)
    out = walk.run(command).stdout
    table = dict(re.findall(r'^\s+(/\S+)\s+\S+/msg/\S+\s+(\d+)', out, re.M))
    assert sorted(table) == sorted(RECORDED), out
    assert all(int(n) > 0 for n in table.values()), out
    assert int(table['/cmd_vel']) == 130, out  # the three commands: 50 + 50 + 30, all recorded


def step_fit(walk: Walk, command: str) -> None:
    """Exit 0, the files written; the fit moved the default car's parameters most of the way
    (the drive's time constant at least half of it) to the example car that drove the
    recording."""
    walk.run(command, timeout=900)
    folder = walk.ros.folder / 'runs' / 'ros'
    assert (folder / 'report' / 'summary.md').is_file()
    from rc_sim_description.params import load_vehicle_params

    example = REPO / 'rc_sim_calibration' / 'config' / 'example_different_car.yaml'
    nominal, truth = load_vehicle_params(), load_vehicle_params(overrides=[str(example)])
    fitted = load_vehicle_params(overrides=[str(folder / 'calibrated.yaml')])
    # the share of the way from nominal to the truth the fit must leave: the drive's time
    # constant rests on the three speed steps of a short live recording (published in real
    # time, on a loaded machine in CI: 0.170 s for a truth of 0.15 s and nominal 0.2 s once),
    # the steering on 10 s of turning
    for section, key, left in (('steering', 'steering_offset', 0.3),
                               ('steering', 'steering_gain', 0.3),
                               ('drive', 'drive_time_constant', 0.5)):
        n, t, f = (getattr(getattr(p, section), key) for p in (nominal, truth, fitted))
        assert abs(f - t) < left * abs(n - t), (key, n, t, f)


def step_realtime_factor(walk: Walk, command: str) -> None:
    clock = walk.ros.probe.subscribe(Clock, '/clock', 100)
    out = walk.run(command).stdout
    assert 'Set parameter successful' in out, out
    clock.wait(3, timeout=30)
    clock.clear()
    wait_until(lambda: len(clock) > 2 and clock.stamped[-1][0] - clock.stamped[0][0] > 4.0, 40,
               '4 s of /clock')
    wall, sim = zip(*((t, m.clock.sec + 1e-9 * m.clock.nanosec) for t, m in clock.stamped))
    assert float(np.polyfit(wall, sim, 1)[0]) == pytest.approx(2.0, rel=0.2)


Step = Callable[[Walk, str], None]
#: (pattern of a page command, runs until Ctrl-C, what the test does with it)
STEPS: list[tuple[str, bool, Step]] = [
    (r'ros2 launch rc_sim_description spawn_rc_car\.launch\.py backend:=embedded .*', True,
     step_launch),
    (r'ros2 node list', False, step_node_list),
    (r'ros2 topic list -t', False, step_topic_list),
    (r'ros2 topic echo --once /(odom|tf_static)', False, step_echo),
    (r'ros2 run rc_sim_control teleop_keyboard', True, step_teleop),
    (r'ros2 topic pub -r 10 /cmd_vel .*', True, step_pub_forever),
    (r'ros2 topic pub -r 10 -t \d+ -w \d /\S*cmd_vel .*', False, step_pub_times),
    (r'ros2 run rc_sim_description bag_recorder .*output:=runs/ros/my_run .*', True,
     step_recorder),
    (r'ros2 run rc_sim_engine rcsim inspect --bag runs/ros/my_run', False, step_inspect),
    (r'ros2 run rc_sim_calibration fit --bag runs/ros/my_run .*', False, step_fit),
    (r'ros2 param set /sim_node realtime_factor 2\.0', False, step_realtime_factor),
]


def step_of(command: str, long: bool) -> Step:
    found = [(lng, step) for pattern, lng, step in STEPS if re.fullmatch(pattern, command)]
    assert len(found) == 1, f'{command!r} matches {len(found)} steps of the test (add one)'
    lng, step = found[0]
    assert lng == long, f'{command!r}: "# runs until Ctrl-C" is {"missing" if lng else "wrong"}'
    return step


# --------------------------------------------------------------------------- tests
def test_every_command_of_the_page_has_a_step():
    assert HERE.commands() == [(SETUP, False)]
    commands = [c for block in FLOW for c in block.commands()]
    used = {step_of(command, long) for command, long in commands}
    assert used == {step for _, _, step in STEPS}, 'a step of the test is not on the page'


def test_the_page_runs_in_order(ros):
    (ros.folder / 'scripts').symlink_to(REPO / 'scripts', target_is_directory=True)
    walk = Walk(ros)
    try:
        walk.run(SETUP)  # the set-up block itself (a no-op when built)
        for block in FLOW:
            for command, long in block.commands():
                step_of(command, long)(walk, command)
                walk.done.append(command)
        end_launch(walk)  # "Ctrl-C in terminal 1 ends the launch and every node it started"
    except BaseException:
        print('page commands done before the failure:', *walk.done, sep='\n  ')
        raise
    finally:
        # the daemon the plain `ros2 node list` started (the page's commands use it)
        subprocess.run(['ros2', 'daemon', 'stop'], env=ros.env, capture_output=True,
                       timeout=60, check=False)


def copy_of_this_checkout(target: Path) -> None:
    """What ``git clone`` gives: the packages and the requirements, without build products."""
    target.mkdir(parents=True)
    ignore = shutil.ignore_patterns('__pycache__', '*.egg-info', '*.pyc')
    for name in PACKAGES:
        shutil.copytree(REPO / name, target / name, ignore=ignore)
    shutil.copy2(REPO / 'requirements-ros.txt', target / 'requirements-ros.txt')


SUBSTITUTES = {
    'source /opt/ros/jazzy/setup.bash': ': ROS 2 is the overlay kit here, already sourced',
    'git clone <this repository> rc_sim': 'cp -r "$RC_SIM_COPY" rc_sim',
    'rosdep install --from-paths src --ignore-src -y': ': no rosdep here, the kit has ROS',
}


def test_the_ros_machine_set_up_builds_a_workspace_ros2_run_finds(ros):
    lines = [c for c, _ in ROS_MACHINE.commands()]
    assert set(SUBSTITUTES) <= set(lines), 'the set-up block changed: update SUBSTITUTES'
    script = '\n'.join(SUBSTITUTES.get(line, line) for line in lines)
    home = ros.folder / 'home'
    home.mkdir()
    copy_of_this_checkout(ros.folder / 'copy' / 'rc_sim')
    env = without_workspace(ros.env)
    env.update(HOME=str(home), RC_SIM_COPY=str(ros.folder / 'copy' / 'rc_sim'),
               PIP_NO_INDEX='1')  # pip must find everything installed already
    check = ('\nros2 pkg prefix rc_sim_calibration'
             '\nros2 pkg executables rc_sim_description'
             '\nros2 run rc_sim_calibration fit --help >/dev/null && echo fit-help-ok')
    done = subprocess.run(['bash', '-e', '-c', script + check], env=env, cwd=home, text=True,
                          capture_output=True, timeout=900, start_new_session=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ws = home / 'ros2_ws'
    assert f'{ws}/install/rc_sim_calibration' in done.stdout.splitlines()
    assert 'rc_sim_description bag_recorder' in done.stdout
    assert done.stdout.strip().endswith('fit-help-ok')


def test_readme_and_architecture_point_to_the_page():
    readme = (REPO / 'README.md').read_text(encoding='utf-8')
    section = readme.split('## With ROS 2', 1)[1].split('\n## ', 1)[0]
    assert '(docs/ros2.md)' in section
    # defect 8: ros2 run / ros2 launch need the colcon workspace, not the pip install
    assert 'find rc-sim only in a colcon' in section
    assert "Package 'rc_sim_calibration' not" in section and '`rcsim fit`' in section
    page = PAGE.read_text(encoding='utf-8')
    assert "`ros2 run rc_sim_calibration fit` answers `Package 'rc_sim_calibration' not found`" \
        in page
    assert '(ros2.md)' in (REPO / 'docs' / 'architecture.md').read_text(encoding='utf-8')
