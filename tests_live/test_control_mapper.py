"""Live: turning_command_mapper (ros2 run) judged by the reference equations of references.py.

Every case starts the node as its own process and talks to it over DDS from the probe: /cmd_vel
(or /ackermann_cmd) in, /steering_angle, /rear_wheel_speed and the debug topics /yaw_rate,
/turn_radius out. Expected values come from tests_live/references.py (eqs. 1-3 written from the
seed document) with the vehicle numbers of rc_sim_description/config/vehicle.yaml.
"""

from __future__ import annotations

from collections.abc import Sequence
import math
import re
import threading
import time
from typing import Any

from ackermann_msgs.msg import AckermannDriveStamped
from geometry_msgs.msg import Twist
from live_harness import wait_until
import numpy as np
import pytest
from references import Car, achieved, map_command
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Float64
import yaml

from rc_sim_description.params import load_vehicle_params

OUTPUTS = ('steering_angle', 'rear_wheel_speed', 'yaw_rate', 'turn_radius')
INF = math.inf
NAN = math.nan


def vehicle_car(**extra: float) -> Car:
    """Reference car with the numbers of the installed vehicle.yaml."""
    p = load_vehicle_params()
    return Car(L=p.geometry.wheelbase, W=p.geometry.track_width, r=p.geometry.wheel_radius,
               delta_max=p.steering.max_steering_angle, omega_max=p.drive.max_wheel_speed,
               steer_rate=p.steering.max_steering_rate, **extra)


def twist(v: float, z: float, **other: float) -> Twist:
    msg = Twist()
    msg.linear.x, msg.angular.z = float(v), float(z)
    for name, value in other.items():
        part, axis = name.split('_')
        setattr(getattr(msg, part), axis, float(value))
    return msg


def close(a: float | None, b: float, tol: float = 1e-9) -> bool:
    if a is None:
        return False
    if math.isinf(b) or math.isinf(a):
        return a == b
    return math.isclose(a, b, rel_tol=tol, abs_tol=1e-12)


class Mapper:
    """A mapper process, the probe's inboxes of its outputs and publishers of its inputs."""

    def __init__(self, ros: Any, params: dict[str, Any], namespace: str = '') -> None:
        self.ros = ros
        self.node = ros.run('rc_sim_control', 'turning_command_mapper', params)
        ns = f'/{namespace}' if namespace else ''
        self.inbox = {name: ros.probe.subscribe(Float64, f'{ns}/{name}') for name in OUTPUTS}
        self.cmd = ros.probe.publisher(Twist, f'{ns}/cmd_vel')
        self.ack = ros.probe.publisher(AckermannDriveStamped, f'{ns}/ackermann_cmd')
        ros.probe.wait_matched(self.cmd)
        ros.probe.wait_matched(self.ack)
        for name in OUTPUTS:
            ros.probe.wait_publishers(f'{ns}/{name}')

    def last(self) -> dict[str, float | None]:
        return {name: (m.data if (m := box.last()) is not None else None)
                for name, box in self.inbox.items()}

    def clear(self) -> None:
        for box in self.inbox.values():
            box.clear()

    def drive_until(self, msg: Any, expect: dict[str, float], timeout: float = 20.0,
                    publisher: Any = None) -> dict[str, float | None]:
        """Publish ``msg`` at 20 Hz until the last value of every expected output matches."""
        pub = publisher or self.cmd
        deadline = time.monotonic() + timeout
        while True:
            pub.publish(msg)
            time.sleep(0.05)
            got = self.last()
            if all(close(got[k], v) for k, v in expect.items()):
                return got
            if time.monotonic() > deadline:
                raise AssertionError(f'outputs {got} never reached {expect}:\n'
                                     f'{self.node.output()[-2000:]}')


def expected_outputs(mode: str, v: float, z: float, car: Car,
                     held: float) -> tuple[dict[str, float], float]:
    """Reference outputs of one steady command; ``held`` is the steering target before it."""
    m = map_command(mode, v, z, car)
    delta = held if m.delta is None else m.delta
    yaw, radius = achieved(delta, m.omega, car)
    return ({'steering_angle': delta, 'rear_wheel_speed': m.omega, 'yaw_rate': yaw,
             'turn_radius': radius}, delta)


# (v [m/s], angular.z) per mode: plain, both turn directions, reverse, saturation of the steering
# and of the wheel speed, degenerate inputs (R = 0 and +-inf, v = 0 and v below the standstill
# speed in yaw_rate mode: the steering is held).
CASES: dict[str, list[tuple[float, float]]] = {
    'curvature': [(1.0, 0.5), (1.0, -0.8), (-1.0, 0.5), (0.5, 5.0), (-0.7, -4.0), (20.0, 0.3),
                  (-30.0, 0.0), (1.0, 0.0)],
    'radius': [(1.0, 2.0), (1.0, 0.0), (1.0, -1.5), (1.0, INF), (0.8, 0.3), (1.0, -INF),
               (-1.0, -2.0), (-0.5, 0.2), (25.0, 4.0), (0.0, 3.0)],
    'steering_angle': [(1.0, 0.2), (1.0, -0.2), (1.5, 1.0), (-0.5, 0.3), (-1.0, -0.9),
                       (15.0, 0.1), (0.0, -0.25)],
    'yaw_rate': [(1.0, 0.5), (0.0, 0.5), (0.0, -2.0), (-1.0, 0.5), (0.02, -3.0), (1.0, 5.0),
                 (-1.0, -5.0), (20.0, 2.0), (0.3, 0.0), (0.0, 0.0), (2.0, -1.0), (-0.04, 1.0)],
}


@pytest.mark.parametrize('mode', list(CASES))
def test_mapper_modes_match_reference(ros, mode):
    """Each mode maps (v, angular.z) to delta, omega and the achieved yaw rate / radius."""
    car = vehicle_car()
    mapper = Mapper(ros, {'mode': mode, 'command_timeout': 5.0})
    held = 0.0
    for v, z in CASES[mode]:
        expect, held = expected_outputs(mode, v, z, car, held)
        mapper.drive_until(twist(v, z), expect)
    assert mapper.node.alive(), mapper.node.output()
    assert 'dropped' not in mapper.node.output()  # inf R is a valid radius, nothing was refused


def test_mapper_worked_example_of_the_docs(ros):
    """docs/control.md worked example: yaw_rate mode, v = 1 m/s, psi_dot = 0.5 rad/s; then 5
    rad/s saturates at full lock (achieved 1.348 rad/s, R = R_min = 0.742 m)."""
    mapper = Mapper(ros, {})
    # every output awaited (each topic's subscription may connect at its own time)
    got = mapper.drive_until(twist(1.0, 0.5), {'rear_wheel_speed': 20.0, 'yaw_rate': 0.5,
                                               'turn_radius': 2.0})
    assert got['steering_angle'] == pytest.approx(0.1636, abs=1e-4)
    assert got['turn_radius'] == pytest.approx(2.0, rel=1e-9)
    car = vehicle_car()
    expect, _ = expected_outputs('yaw_rate', 1.0, 5.0, car, 0.0)
    got = mapper.drive_until(twist(1.0, 5.0), expect)
    assert got['steering_angle'] == pytest.approx(0.4189, abs=1e-12)
    assert got['yaw_rate'] == pytest.approx(1.348, abs=1e-3)
    assert got['turn_radius'] == pytest.approx(0.742, abs=1e-3)


def test_mapper_ackermann_cmd_is_a_steering_angle_in_any_mode(ros):
    """/ackermann_cmd: drive.steering_angle [rad] and drive.speed [m/s], whatever ``mode`` is."""
    car = vehicle_car()
    mapper = Mapper(ros, {'mode': 'curvature', 'command_timeout': 5.0})
    held = 0.0
    for speed, steer in [(1.5, 0.25), (-1.0, -0.3), (2.0, 0.8), (12.0, -0.05), (3e38, 1.5),
                         (-3e38, -1.5)]:
        msg = AckermannDriveStamped()
        msg.drive.speed, msg.drive.steering_angle = speed, steer
        # drive.* are float32: the reference sees the values the node receives
        v, z = float(np.float32(speed)), float(np.float32(steer))
        expect, held = expected_outputs('steering_angle', v, z, car, held)
        mapper.drive_until(msg, expect, publisher=mapper.ack)
    # cmd_vel still reads angular.z in the configured mode
    expect, _ = expected_outputs('curvature', 1.0, 1.0, car, held)
    mapper.drive_until(twist(1.0, 1.0), expect)


# ------------------------------------------------------------------ steering rate and timeout,
# in lockstep with a simulated clock: the probe publishes /clock, the node's timer ticks once per
# clock step, so each output has a known time and the rate limit is checked exactly.
class SimClock:
    """The probe as the simulator: /clock published step by step."""

    def __init__(self, ros: Any, start_s: float) -> None:
        self.pub = ros.probe.publisher(Clock, '/clock')
        ros.probe.wait_matched(self.pub)
        self.ns = round(start_s * 1e9)
        for _ in range(10):  # best effort at the node: a first sample may be lost
            self.publish()
            time.sleep(0.05)

    def publish(self) -> None:
        msg = Clock()
        msg.clock.sec, msg.clock.nanosec = divmod(self.ns, 1_000_000_000)
        self.pub.publish(msg)

    @property
    def seconds(self) -> float:
        return self.ns * 1e-9

    def advance(self, step_s: float) -> None:
        self.ns += round(step_s * 1e9)
        self.publish()


def step_and_collect(mapper: Mapper, clock: SimClock, step_s: float,
                     timeout: float = 10.0) -> dict[str, float]:
    """Advance the clock one timer period and wait for the one output of that tick."""
    before = {k: len(b) for k, b in mapper.inbox.items()}
    clock.advance(step_s)

    def arrived() -> bool:
        if all(len(mapper.inbox[k]) > before[k] for k in OUTPUTS):
            return True
        clock.publish()  # /clock is best effort at the node: resend the same time (no new tick)
        return False
    wait_until(arrived, timeout, f'the output of the tick at t = {clock.seconds:.2f} s',
               period=0.05)
    time.sleep(0.02)  # the tick publishes once: nothing more may follow
    counts = {k: len(b) - before[k] for k, b in mapper.inbox.items()}
    assert set(counts.values()) == {1}, f'one tick published {counts} messages'
    return {k: v for k, v in mapper.last().items() if v is not None}


def test_mapper_steering_rate_limit_and_timeout_in_sim_time(ros):
    """|d delta/dt| <= max_steering_rate between outputs (exact, on the node's clock); after
    command_timeout without input the stop (omega 0, delta held) is published once, then
    nothing."""
    car = vehicle_car()
    rate_hz, timeout_s = 50.0, 0.5
    period = 1.0 / rate_hz
    mapper = Mapper(ros, {'use_sim_time': True, 'mode': 'steering_angle',
                          'publish_rate': rate_hz, 'command_timeout': timeout_s})
    clock = SimClock(ros, 100.0)
    # first command: no previous output, so not rate limited (the ticks that follow keep it)
    mapper.drive_until(twist(1.0, 0.3), {'steering_angle': 0.3, 'rear_wheel_speed': 20.0},
                       timeout=20.0)
    first = [m.data for m in mapper.inbox['steering_angle'].messages]
    assert first[0] == 0.3, f'first output {first[0]} was rate limited'
    for _ in range(3):  # a few ticks on the clock grid
        step_and_collect(mapper, clock, period)
    mapper.cmd.publish(twist(1.0, -0.3))  # one command, then silence
    wait_until(lambda: mapper.inbox['rear_wheel_speed'].last() is not None, 5, 'output')
    time.sleep(0.5)
    mapper.clear()
    t_cmd = clock.seconds  # the command arrived while the clock stood at t_cmd
    delta = 0.3
    step = car.steer_rate * period
    ticks = 0
    while True:
        out = step_and_collect(mapper, clock, period)
        ticks += 1
        elapsed = clock.seconds - t_cmd
        if elapsed > timeout_s + 1e-9:
            break
        delta = max(delta - step, -0.3)  # the reference ramp, one clock period per tick
        assert out['steering_angle'] == pytest.approx(delta, abs=1e-12), (ticks, out)
        assert out['rear_wheel_speed'] == 20.0
        yaw, radius = achieved(delta, 20.0, car)
        assert out['yaw_rate'] == pytest.approx(yaw, rel=1e-9, abs=1e-12)
        assert out['turn_radius'] == pytest.approx(radius, rel=1e-9)
    # the first tick more than command_timeout after the command: the stop, steering held
    assert ticks == math.floor(timeout_s / period + 1e-9) + 1
    assert out['rear_wheel_speed'] == 0.0
    assert out['steering_angle'] == pytest.approx(-0.3, abs=1e-12)
    assert out['yaw_rate'] == 0.0
    # then silence for many more ticks (2 s of simulated time)
    mapper.clear()
    for _ in range(100):
        clock.advance(period)
        time.sleep(0.005)
    time.sleep(1.0)
    assert {k: len(b) for k, b in mapper.inbox.items()} == dict.fromkeys(OUTPUTS, 0)
    # a new command is mapped again; a second silence gives a second single stop
    mapper.drive_until(twist(-0.5, 0.1), {'steering_angle': 0.1, 'rear_wheel_speed': -10.0})
    for _ in range(int(timeout_s / period) + 5):
        clock.advance(period)
        time.sleep(0.01)
    wait_until(lambda: close(mapper.last()['rear_wheel_speed'], 0.0), 10, 'the second stop')
    time.sleep(0.5)
    stops = [m.data for m in mapper.inbox['rear_wheel_speed'].messages if m.data == 0.0]
    assert len(stops) == 1


def test_mapper_timeout_still_stops_after_the_clock_jumps_back(ros):
    """A simulation reset sends /clock back (t = 100 s -> 1 s) while the car drives and the
    commands stop: command_timeout s of the new time later at most, the stop must come (the
    watchdog must not wait until the clock is back at the time of the last command)."""
    period, timeout_s = 0.02, 0.5
    mapper = Mapper(ros, {'use_sim_time': True, 'mode': 'steering_angle',
                          'publish_rate': 1 / period, 'command_timeout': timeout_s})
    clock = SimClock(ros, 100.0)
    mapper.drive_until(twist(1.0, 0.3), {'steering_angle': 0.3, 'rear_wheel_speed': 20.0})
    time.sleep(0.3)
    clock.ns = round(1.0e9)  # the reset; no command from now on
    mapper.clear()
    for _ in range(int(2 * timeout_s / period)):  # 1 s of the new time, tick by tick
        clock.advance(period)
        time.sleep(0.02)
    time.sleep(1.0)
    speeds = [m.data for m in mapper.inbox['rear_wheel_speed'].messages]
    assert speeds and speeds[-1] == 0.0, f'no stop after the clock jumped back: {speeds}'
    assert speeds.count(0.0) == 1
    assert len(speeds) <= timeout_s / period + 3  # no more than a timeout's worth of driving
    steering = [m.data for m in mapper.inbox['steering_angle'].messages]
    assert steering[-1] == pytest.approx(0.3, abs=1e-12)  # held


def test_mapper_timeout_stop_once_in_wall_time(ros):
    """Default clock: commands at 20 Hz, then silence: the outputs continue at publish_rate for
    command_timeout, one stop follows, then nothing."""
    mapper = Mapper(ros, {'command_timeout': 0.5})
    mapper.drive_until(twist(1.0, 0.5), {'rear_wheel_speed': 20.0, 'yaw_rate': 0.5})
    last_cmd = time.monotonic()
    wait_until(lambda: close(mapper.last()['rear_wheel_speed'], 0.0), 10, 'the stop')
    time.sleep(1.5)
    speeds = [(t, m.data) for t, m in mapper.inbox['rear_wheel_speed'].stamped if t > last_cmd]
    values = [w for _, w in speeds]
    assert values.count(0.0) == 1 and values[-1] == 0.0, values
    t_stop = speeds[-1][0]
    assert t_stop - last_cmd > 0.3  # not before the timeout (the last command: 50 ms before)
    steer = mapper.inbox['steering_angle'].messages
    assert steer[-1].data == pytest.approx(math.atan(vehicle_car().L * 0.5), abs=1e-12)
    assert all(math.isfinite(m.data) for m in steer)


# ------------------------------------------------------------------ bad start-up parameters
@pytest.mark.parametrize(('params', 'message'), [
    ({'mode': 'spin'}, 'mode: must be one of curvature, radius, steering_angle, yaw_rate'),
    ({'max_steering_angle': 1.3}, 'than half the track width'),
    ({'max_steering_angle': 3.0}, 'max_steering_angle'),
    ({'command_timeout': 'soon'}, 'command_timeout'),
    ({'vehicle_params_file': '/nonexistent/calib.yaml'}, '/nonexistent/calib.yaml'),
])
def test_mapper_bad_start_parameter_is_one_line_and_status_2(ros, params, message):
    node = ros.run('rc_sim_control', 'turning_command_mapper', params)
    assert message in node.user_error()


# ------------------------------------------------------------------ ros2 param set / get
SPIN = ('--no-daemon', '--spin-time', '3')


def param_set(ros: Any, node: str, name: str, value: str) -> str:
    done = ros.cli('param', 'set', *SPIN, node, name, value, check=False)
    return done.stdout + done.stderr


def param_get(ros: Any, node: str, name: str) -> str:
    return ros.cli('param', 'get', *SPIN, node, name).stdout.strip()


def param_dump(ros: Any, node: str) -> dict[str, Any]:
    text = ros.cli('param', 'dump', *SPIN, node).stdout
    return yaml.safe_load(text)[node]['ros__parameters']


def test_mapper_param_set_live(ros):
    """ros2 param set: a valid change takes effect on the outputs; an invalid one is refused
    with its reason (in the CLI output) and changes nothing; the node keeps running. The CLI
    itself sets, gets and is refused once; the other changes go through the same parameter
    services from the probe (a CLI call costs seconds)."""
    car = vehicle_car()
    mapper = Mapper(ros, {'command_timeout': 3.0})
    node = '/turning_command_mapper'
    mapper.drive_until(twist(1.0, 0.5), expected_outputs('yaw_rate', 1.0, 0.5, car, 0.0)[0])
    assert 'String value is: yaw_rate' in param_get(ros, node, 'mode')

    # valid: the mode (angular.z is now a steering angle), a smaller steering limit, the wheel
    out = param_set(ros, node, 'mode', 'steering_angle')
    assert 'Set parameter successful' in out, out
    params = ros.probe.parameters(node)
    assert params.get('mode') == 'steering_angle'
    mapper.drive_until(twist(1.0, 0.3),
                       expected_outputs('steering_angle', 1.0, 0.3, car, 0.0)[0])
    assert params.set('max_steering_angle', 0.2) == (True, '')
    small = Car(**{**car.__dict__, 'delta_max': 0.2})
    mapper.drive_until(twist(1.0, 0.3), expected_outputs('steering_angle', 1.0, 0.3, small,
                                                         0.0)[0])
    assert params.set('wheel_radius', 0.1)[0]
    bigger = Car(**{**small.__dict__, 'r': 0.1})
    mapper.drive_until(twist(2.0, -0.1), expected_outputs('steering_angle', 2.0, -0.1, bigger,
                                                          0.0)[0])
    before = params.all()

    # invalid: each refused with its reason (the node's own rules and rclpy's descriptor checks)
    out = param_set(ros, node, 'mode', 'spin')
    assert 'Setting parameter failed' in out and (
        'mode: must be one of curvature, radius, steering_angle, yaw_rate') in out, out
    refused = {
        ('max_steering_angle', 1.3): 'than half the track width',
        ('max_steering_angle', 0.0): 'max_steering_angle: must be in (0, pi/2)',
        ('max_steering_angle', 3.0): 'max_steering_angle',
        ('use_ackermann_cmd', False): 'read-only',
        ('mode', 3): "Wrong parameter type, expected 'Type.STRING'",
    }
    for (name, value), reason in refused.items():
        ok, why = params.set(name, value)
        assert not ok and reason in why, (name, value, why)
    assert mapper.node.alive(), mapper.node.output()
    assert params.all() == before
    log = mapper.node.output()
    assert 'rejected parameter change: mode: must be one of' in log
    # still mapping with the accepted settings
    mapper.drive_until(twist(2.0, 0.15), expected_outputs('steering_angle', 2.0, 0.15, bigger,
                                                          0.0)[0])
    # publish_debug off: the debug topics fall silent, the commands go on
    assert params.set('publish_debug', False)[0]
    time.sleep(0.5)
    mapper.clear()
    mapper.drive_until(twist(1.0, 0.1), {'steering_angle': 0.1, 'rear_wheel_speed': 10.0})
    assert len(mapper.inbox['yaw_rate']) == 0 and len(mapper.inbox['turn_radius']) == 0
    assert mapper.node.interrupt() == 0, mapper.node.output()


# ------------------------------------------------------------------ hostile input over DDS
WARN = re.compile(r'\[WARN\].*dropped (\S+) message: (.*)')


def warnings_by_topic(output: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for topic, reason in WARN.findall(output):
        found.setdefault(topic, []).append(reason)
    return found


STAMPED_WARN = re.compile(r'\[WARN\] \[(\d+\.\d+)\] \[[^\]]*\]: dropped (\S+) message')


def warning_gaps(output: str) -> dict[str, list[float]]:
    """Per topic, the seconds between successive drop warnings (from the log stamps)."""
    stamps: dict[str, list[float]] = {}
    for stamp, topic in STAMPED_WARN.findall(output):
        stamps.setdefault(topic, []).append(float(stamp))
    return {t: list(np.diff(s)) for t, s in stamps.items()}


def dropped_so_far(output: str, topic: str) -> int:
    """The largest drop count the node's warnings about ``topic`` reported."""
    counts = [int(n) for n in re.findall(rf'dropped {topic} message: .*\((\d+) dropped so far\)',
                                         output)]
    return max(counts, default=0)


def flood(publisher: Any, messages: Sequence[Any], count: int) -> float:
    """Publish ``count`` messages (cycling through ``messages``) as fast as possible; seconds."""
    t0 = time.monotonic()
    for k in range(count):
        publisher.publish(messages[k % len(messages)])
    return time.monotonic() - t0


def test_mapper_hostile_cmd_vel(ros):
    """NaN/inf twist fields are dropped with throttled warnings naming the topic; out-of-range
    values saturate; a flood of thousands of messages crashes nothing; correct afterwards."""
    car = vehicle_car()
    mapper = Mapper(ros, {'mode': 'yaw_rate', 'command_timeout': 5.0})
    mapper.drive_until(twist(1.0, 0.5), expected_outputs('yaw_rate', 1.0, 0.5, car, 0.0)[0])
    bad = [twist(NAN, 0.1), twist(1.0, NAN), twist(INF, 0.0), twist(1.0, -INF),
           twist(-INF, NAN)]
    t0 = time.monotonic()
    mapper.clear()
    for msg in bad:  # one at a time: each dropped, nothing published
        mapper.cmd.publish(msg)
        time.sleep(0.05)
    time.sleep(0.5)
    assert all(m.data == 20.0 for m in mapper.inbox['rear_wheel_speed'].messages)
    assert all(math.isfinite(m.data) for m in mapper.inbox['steering_angle'].messages)
    wait_until(lambda: 'dropped cmd_vel message' in mapper.node.output(), 10, 'a warning')
    # out of range but finite: saturated, no NaN anywhere
    for v, z in [(1e300, 1e300), (0.1, 1e308), (-1e308, -1e-300), (0.06, -1e308)]:
        expect, _ = expected_outputs('yaw_rate', v, z, car, 0.0)
        mapper.drive_until(twist(v, z), expect)
    # unused fields are not read: NaN in linear.y / angular.x does not block a command
    mapper.drive_until(twist(1.0, 0.5, linear_y=NAN, angular_x=INF),
                       expected_outputs('yaw_rate', 1.0, 0.5, car, 0.0)[0])
    # flood: 4000 bad and 4000 valid messages back to back as fast as the probe can send them,
    # then 3 s of bad messages without a pause
    flood(mapper.cmd, bad, 4000)
    flood(mapper.cmd, [twist(1.0, -0.5), twist(2.0, 0.4)], 4000)
    t_flood = time.monotonic()
    sent = 0
    while time.monotonic() - t_flood < 3.0:
        flood(mapper.cmd, bad, 100)
        sent += 100
    # one more bad message after the throttle period: its warning reports the total so far
    time.sleep(1.2)
    mapper.cmd.publish(bad[0])
    try:
        wait_until(lambda: dropped_so_far(mapper.node.output(), 'cmd_vel') > 50, 30,
                   'a warning counting the flood')
    except AssertionError as exc:
        raise AssertionError(f'{exc}:\n{mapper.node.output()[-3000:]}') from None
    expect, _ = expected_outputs('yaw_rate', 0.5, 0.2, car, 0.0)
    mapper.drive_until(twist(0.5, 0.2), expect)
    elapsed = time.monotonic() - t0
    assert mapper.node.alive(), mapper.node.output()
    out = mapper.node.output()
    warned = warnings_by_topic(out)
    assert set(warned) == {'cmd_vel'}, out[-3000:]
    # throttled: at most one warning per second (plus the first), each with its reason
    assert 1 <= len(warned['cmd_vel']) <= elapsed / 1.0 + 2, warned
    # exactly throttled: one line a second at most, yet a line each second of a long flood
    # (log stamps are taken when the line is written: a loaded machine delays some by ~0.1 s)
    assert min(warning_gaps(out)['cmd_vel']) >= 0.8, warning_gaps(out)
    assert len(warned['cmd_vel']) >= 4, warned  # the single ones, >= 2 in 3 s of flood, the last
    assert all(re.search(r'(linear\.x|angular\.z) is (nan|inf|-inf) \(\d+ dropped so far\)', r)
               for r in warned['cmd_vel']), warned
    assert 'Traceback' not in out
    assert mapper.node.interrupt() == 0, out


def test_mapper_hostile_ackermann_cmd_is_named_during_a_cmd_vel_flood(ros):
    """Each topic's bad input is reported: a flood of bad /cmd_vel must not hide a bad
    /ackermann_cmd (the throttle is per topic)."""
    car = vehicle_car()
    mapper = Mapper(ros, {'command_timeout': 5.0})
    bad_ack = AckermannDriveStamped()
    bad_ack.drive.speed, bad_ack.drive.steering_angle = 1.0, NAN
    stop = threading.Event()

    def bad_cmd_vel() -> None:
        while not stop.is_set():
            flood(mapper.cmd, [twist(NAN, 0.0)], 50)
            time.sleep(0.01)
    flooder = threading.Thread(target=bad_cmd_vel, daemon=True)
    flooder.start()
    try:
        wait_until(lambda: 'dropped cmd_vel message' in mapper.node.output(), 10,
                   'cmd_vel warning')
        time.sleep(0.3)  # inside the throttle period of the cmd_vel warning
        mapper.ack.publish(bad_ack)
        wait_until(lambda: 'dropped ackermann_cmd message' in mapper.node.output(), 5,
                   'the ackermann_cmd warning during the cmd_vel flood')
    finally:
        stop.set()
        flooder.join(5)
    reason = warnings_by_topic(mapper.node.output())['ackermann_cmd'][0]
    assert reason.startswith('drive.steering_angle is nan'), reason
    good = AckermannDriveStamped()
    good.drive.speed, good.drive.steering_angle = 1.0, 0.2
    expect, _ = expected_outputs('steering_angle', 1.0, float(np.float32(0.2)), car, 0.0)
    mapper.drive_until(good, expect, publisher=mapper.ack)
    assert mapper.node.interrupt() == 0
