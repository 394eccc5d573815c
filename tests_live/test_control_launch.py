"""Live: ``ros2 launch rc_sim_control control.launch.py`` as a user starts it.

The nodes it starts (``ros2 node list``), the chain /cmd_vel -> mapper -> bridge ->
joint_commands end to end against the reference equations (1)-(4) of references.py, the
namespace and mode arguments, a bad argument, and Ctrl-C ending the launch with status 0.
"""

from __future__ import annotations

from dataclasses import replace
import math
import threading
import time
from typing import Any

from geometry_msgs.msg import Twist
from live_harness import wait_until
from references import Car, joint_commands, map_command
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Float64

from rc_sim_description.params import load_vehicle_params

JOINTS = ('front_left_steering', 'front_right_steering', 'rear_left_wheel', 'rear_right_wheel')
SPIN = ('--no-daemon', '--spin-time', '3')


def vehicle_car() -> Car:
    p = load_vehicle_params()
    return Car(L=p.geometry.wheelbase, W=p.geometry.track_width, r=p.geometry.wheel_radius,
               delta_max=p.steering.max_steering_angle, omega_max=p.drive.max_wheel_speed)


class RunningClock:
    """The probe as a simulator: /clock at 100 Hz, simulated time running with the wall."""

    def __init__(self, ros: Any) -> None:
        self.pub = ros.probe.publisher(Clock, '/clock')
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        t0 = time.monotonic()
        while not self._stop.is_set():
            ns = int((time.monotonic() - t0 + 10.0) * 1e9)
            msg = Clock()
            msg.clock.sec, msg.clock.nanosec = divmod(ns, 1_000_000_000)
            self.pub.publish(msg)
            time.sleep(0.01)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def node_list(ros: Any, want: set[str], timeout: float = 60.0) -> set[str]:
    """``ros2 node list`` until every node of ``want`` is listed (discovery may take a while)."""
    deadline = time.monotonic() + timeout
    while True:
        names = set(ros.cli('node', 'list', *SPIN).stdout.split())
        if want <= names or time.monotonic() > deadline:
            return names


def chain_until(ros: Any, ns: str, v: float, z: float, expect: dict[str, float],
                launch: Any, timeout: float = 30.0) -> dict[str, float]:
    """Publish (v, z) on <ns>/cmd_vel at 20 Hz until the joint commands equal ``expect``."""
    boxes = {j: ros.probe.subscribe(Float64, f'{ns}/joint_commands/{j}') for j in JOINTS}
    pub = ros.probe.publisher(Twist, f'{ns}/cmd_vel')
    ros.probe.wait_matched(pub, timeout=60)
    msg = Twist()
    msg.linear.x, msg.angular.z = v, z
    deadline = time.monotonic() + timeout
    while True:
        pub.publish(msg)
        time.sleep(0.05)
        got = {j: (b.last().data if b.last() is not None else None) for j, b in boxes.items()}
        if all(g is not None and math.isclose(g, expect[j], rel_tol=1e-9, abs_tol=1e-12)
               for j, g in got.items()):
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f'joint commands {got} never reached {expect}:\n'
                                 f'{launch.output()[-3000:]}')


def test_control_launch_default(ros):
    """Default arguments (use_sim_time true, yaw_rate): three nodes; with a /clock running, the
    worked example of docs/control.md comes out of the bridge; Ctrl-C ends with 0."""
    clock = RunningClock(ros)
    try:
        launch = ros.launch('rc_sim_control', 'control.launch.py')
        want = {'/turning_command_mapper', '/rear_wheel_speed_bridge', '/wheel_odometry'}
        names = node_list(ros, want)
        assert want <= names, (names, launch.output()[-3000:])
        car = vehicle_car()
        m = map_command('yaw_rate', 1.0, 0.5, car)
        got = chain_until(ros, '', 1.0, 0.5, joint_commands(m.delta, m.omega, car), launch)
        assert got['rear_left_wheel'] == 20.0
        # silence on /cmd_vel: the mapper's stop reaches the wheels, the hinges stay turned
        wait_until(lambda: ros.probe.node.count_publishers('/cmd_vel') >= 1, 5, 'publisher')
        box = ros.probe.subscribe(Float64, '/joint_commands/rear_right_wheel')
        wait_until(lambda: box.last() is not None and box.last().data == 0.0, 15,
                   'the wheels to stop after the command timeout')
    finally:
        clock.stop()
    status = launch.interrupt(timeout=30)
    out = launch.output()
    assert status == 0, out[-3000:]
    assert 'Traceback' not in out
    assert 'process has finished cleanly' in out or 'exit code 0' in out, out[-3000:]


def test_control_launch_namespace_mode_and_params_file(ros):
    """namespace:=car_1 mode:=steering_angle use_sim_time:=false params_file:=<override>: the
    nodes and topics live in /car_1, angular.z is the steering angle, and the chain uses the
    override's wheelbase, wheel radius and steering limit."""
    override = ros.folder / 'calib.yaml'
    override.write_text('geometry: {wheelbase: 0.3, wheel_radius: 0.04}\n'
                        'steering: {max_steering_angle: 0.35}\n')
    launch = ros.launch('rc_sim_control', 'control.launch.py', namespace='car_1',
                        mode='steering_angle', use_sim_time=False, params_file=override)
    want = {'/car_1/turning_command_mapper', '/car_1/rear_wheel_speed_bridge',
            '/car_1/wheel_odometry'}
    names = node_list(ros, want)
    assert want <= names, (names, launch.output()[-3000:])
    assert not {'/turning_command_mapper', '/rear_wheel_speed_bridge'} & names
    car = replace(vehicle_car(), L=0.3, r=0.04, delta_max=0.35)
    for v, z in [(1.0, 0.2), (-0.5, -0.3), (3.0, 0.7)]:
        m = map_command('steering_angle', v, z, car)
        chain_until(ros, '/car_1', v, z, joint_commands(m.delta, m.omega, car), launch)
    got = ros.cli('param', 'get', *SPIN, '/car_1/turning_command_mapper', 'mode').stdout
    assert 'steering_angle' in got
    status = launch.interrupt(timeout=30)
    assert status == 0, launch.output()[-3000:]


def test_control_launch_bad_argument_stops_before_any_node(ros):
    """mode:=spin: one line naming the argument, no node started, a non-zero status."""
    launch = ros.launch('rc_sim_control', 'control.launch.py', mode='spin')
    status = launch.wait(60)
    out = launch.output()
    assert status != 0, out
    assert "launch argument mode: expected one of curvature, radius, steering_angle, " \
        "yaw_rate, got 'spin'" in out, out
    assert 'process started' not in out and 'Traceback' not in out, out
