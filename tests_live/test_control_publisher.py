"""Live: rear_wheel_speed_publisher (ros2 run): fixed command, named manoeuvre, sequence file.

Sequences are checked in lockstep with a simulated clock (the probe publishes /clock and the
node's timer ticks once per step), so every output has a known sequence time and must equal the
reference exactly: the file's zero-order-hold sample at that time, mapped by eqs. (1), (3) of
references.py, with the steering-rate limit applied per tick. The expected samples are read from
the YAML file with plain yaml, and the manoeuvre is rebuilt from its documented definition
(docs/control.md), not from the package's generator.
"""

from __future__ import annotations

import math
from pathlib import Path
import time
from typing import Any

from ament_index_python.packages import get_package_share_directory
from live_harness import wait_until
import numpy as np
import pytest
from references import Car, map_command, zoh
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Float64
import yaml

from rc_sim_description.params import load_vehicle_params

TOPICS = ('steering_angle', 'rear_wheel_speed')


def vehicle_car(**changes: float) -> Car:
    p = load_vehicle_params()
    values = {'L': p.geometry.wheelbase, 'W': p.geometry.track_width,
              'r': p.geometry.wheel_radius, 'delta_max': p.steering.max_steering_angle,
              'omega_max': p.drive.max_wheel_speed, 'steer_rate': p.steering.max_steering_rate}
    values.update(changes)
    return Car(**values)


def start_publisher(ros: Any, params: dict[str, Any], subscribe: bool = True) -> tuple[Any, dict]:
    node = ros.run('rc_sim_control', 'rear_wheel_speed_publisher', params)
    boxes = {t: ros.probe.subscribe(Float64, f'/{t}') for t in TOPICS} if subscribe else {}
    return node, boxes


@pytest.mark.parametrize(('speed', 'steer'), [(1.5, 0.2), (-0.8, -0.3), (20.0, 0.9),
                                              (0.0, -1.5)])
def test_publisher_fixed_command(ros, speed, steer):
    """speed [m/s] and steering_angle [rad] parameters -> omega = v / r and delta, clipped."""
    car = vehicle_car()
    node, boxes = start_publisher(ros, {'speed': speed, 'steering_angle': steer})
    ref = map_command('steering_angle', speed, steer, car)
    for topic, value in (('steering_angle', ref.delta), ('rear_wheel_speed', ref.omega)):
        msgs = boxes[topic].wait(5, timeout=30)
        assert all(m.data == pytest.approx(value, rel=1e-12, abs=1e-15) for m in msgs), \
            (topic, [m.data for m in msgs], value)
    assert node.interrupt() == 0, node.output()


# ------------------------------------------------------------------ lockstep with /clock
class SimClock:
    """/clock from the probe, in integer nanoseconds."""

    def __init__(self, ros: Any, start_ns: int) -> None:
        self.pub = ros.probe.publisher(Clock, '/clock')
        ros.probe.wait_matched(self.pub)
        self.ns = start_ns

    def publish(self) -> None:
        msg = Clock()
        msg.clock.sec, msg.clock.nanosec = divmod(self.ns, 1_000_000_000)
        self.pub.publish(msg)


def play_in_lockstep(ros: Any, params: dict[str, Any], rate_hz: float,
                     duration_s: float) -> tuple[list[float], list[tuple[float, float]]]:
    """Run the publisher on a simulated clock advanced one timer period at a time; returns the
    sequence time of each output and the (steering, wheel speed) output of that tick."""
    node, boxes = start_publisher(ros, {**params, 'use_sim_time': True,
                                        'publish_rate': rate_hz})
    for t in TOPICS:
        ros.probe.wait_publishers(f'/{t}')
    period_ns = int(1e9 / rate_hz)  # rclpy's timer period, in whole nanoseconds
    clock = SimClock(ros, start_ns=50 * period_ns * 10)

    def outputs() -> int:
        return min(len(b) for b in boxes.values())

    times: list[float] = []
    out: list[tuple[float, float]] = []
    t_first: int | None = None
    deadline = time.monotonic() + 120.0
    while True:
        before = outputs()
        clock.publish()
        got = False
        wait_end = time.monotonic() + (3.0 if t_first is None else 10.0)
        resend = time.monotonic() + 0.3
        while time.monotonic() < wait_end:
            if outputs() > before:
                got = True
                break
            time.sleep(0.01)
            if time.monotonic() > resend:  # /clock is best effort at the node: resend the
                clock.publish()  # same time (no new tick)
                resend += 0.3
        if got:
            time.sleep(0.01)
            assert {len(b) for b in boxes.values()} == {before + 1}, \
                f'one tick published {[len(b) for b in boxes.values()]} messages'
            if t_first is None:
                t_first = clock.ns
            times.append((clock.ns - t_first) * 1e-9)
            out.append((boxes['steering_angle'].last().data,
                        boxes['rear_wheel_speed'].last().data))
            if times[-1] >= duration_s:
                break
        elif t_first is not None:
            raise AssertionError(f'no output for the tick at {clock.ns} ns:\n{node.output()}')
        assert time.monotonic() < deadline, node.output()
        clock.ns += period_ns
    assert node.alive(), node.output()
    return times, out


def reference_play(times: list[float], t_s: np.ndarray, v: np.ndarray, z: np.ndarray, mode: str,
                   car: Car) -> list[tuple[float, float]]:
    """Expected outputs: ZOH sample at each tick time -> eqs. (1), (3) -> rate limit per tick."""
    v_k, z_k = zoh(np.asarray(times), t_s, v), zoh(np.asarray(times), t_s, z)
    expect = []
    delta = None
    for k, t in enumerate(times):
        m = map_command(mode, float(v_k[k]), float(z_k[k]), car)
        target = m.delta if m.delta is not None else (delta or 0.0)
        if delta is None:
            delta = target  # the first output is not rate limited
        else:
            step = car.steer_rate * (t - times[k - 1])
            delta += min(max(target - delta, -step), step)
        expect.append((delta, m.omega))
    return expect


def assert_same_play(times: list[float], got: list[tuple[float, float]],
                     expect: list[tuple[float, float]]) -> None:
    for k, (t, g, e) in enumerate(zip(times, got, expect)):
        assert g[0] == pytest.approx(e[0], abs=1e-9), (k, t, 'steering', g, e)
        assert g[1] == pytest.approx(e[1], rel=1e-9, abs=1e-9), (k, t, 'wheel speed', g, e)


def sequence_example() -> tuple[Path, dict[str, Any]]:
    path = Path(get_package_share_directory('rc_sim_control')) / 'config' / \
        'sequence_example.yaml'
    return path, yaml.safe_load(path.read_text())


def test_publisher_sequence_file_in_lockstep(ros):
    """sequence_example.yaml played at 7.3 Hz (no tick near a sample time) with a slow
    steering rate (so the limit shows): every output equals the reference."""
    path, data = sequence_example()
    car = vehicle_car(steer_rate=1.0)
    times, got = play_in_lockstep(ros, {'sequence_file': str(path), 'max_steering_rate': 1.0},
                                  7.3, data['t'][-1] + 1.5)
    expect = reference_play(times, np.asarray(data['t'], float), np.asarray(data['linear_x'],
                            float), np.asarray(data['angular_z'], float), data['mode'], car)
    assert_same_play(times, got, expect)
    steering = [g[0] for g in got]
    assert {round(d, 12) for d in steering} >= {0.0, 0.15, -0.15}
    assert any(0 < abs(d) < 0.15 for d in steering)  # the rate limit shows between plateaus


def test_publisher_manoeuvre_circle_left_in_lockstep(ros):
    """manoeuvre:=circle_left (docs/control.md: speed 1 m/s, radius 2 R_min, ramp 1 s, sampled
    at 50 Hz, mode steering_angle): the first 4 s, tick by tick."""
    car = vehicle_car()
    times, got = play_in_lockstep(ros, {'manoeuvre': 'circle_left'}, 7.3, 4.0)
    t_s = np.arange(0, 5.0, 0.02)
    radius = 2 * car.r_min
    v = np.minimum(t_s / 1.0, 1.0)  # the ramp up of the documented speed profile
    z = np.full_like(t_s, math.atan(car.L / radius))
    expect = reference_play(times, t_s, v, z, 'steering_angle', car)
    assert_same_play(times, got, expect)
    assert got[-1][1] == pytest.approx(1.0 / car.r)


def test_publisher_sequence_waits_for_a_subscriber(ros):
    """A consumer that starts after the publisher still gets the whole sequence: the first
    output it sees is the file's first sample (v = 0 for 1 s), not a sample seconds in."""
    path, _ = sequence_example()
    node, _ = start_publisher(ros, {'sequence_file': str(path), 'publish_rate': 20.0},
                              subscribe=False)
    node.wait_output('publishing sequence', timeout=30)
    time.sleep(2.5)  # the car's bridge starts late
    boxes = {t: ros.probe.subscribe(Float64, f'/{t}') for t in TOPICS}
    speeds = boxes['rear_wheel_speed']
    wait_until(lambda: any(m.data > 0 for m in speeds.messages), 30, 'the car to start')
    stamped = speeds.stamped
    assert stamped[0][1].data == 0.0, [m.data for _, m in stamped[:5]]
    t_go = next(t for t, m in stamped if m.data > 0)
    assert t_go - stamped[0][0] > 0.6, 'the first second of the sequence was lost'
    assert node.interrupt() == 0, node.output()


@pytest.mark.parametrize(('params', 'message'), [
    ({'sequence_file': '/nonexistent/run.yaml'}, '/nonexistent/run.yaml'),
    ({'manoeuvre': 'circle_lefft'}, "unknown manoeuvre 'circle_lefft' (did you mean "
                                    "'circle_left'?)"),
    ({'manoeuvre': 'line', 'sequence_file': 'SEQ'}, 'set sequence_file or manoeuvre, not both'),
    ({'sequence_file': 'BAD'}, 'linear_x[2]: must be finite'),
    ({'publish_rate': 0.0}, 'publish_rate'),
])
def test_publisher_bad_start_parameter_is_one_line_and_status_2(ros, params, message):
    seq, _ = sequence_example()
    bad = ros.folder / 'bad.yaml'
    bad.write_text('mode: steering_angle\nt: [0, 1, 2]\nlinear_x: [0, 1, .nan]\n'
                   'angular_z: [0, 0, 0]\n')
    params = {k: {'SEQ': str(seq), 'BAD': str(bad)}.get(v, v) for k, v in params.items()}
    node = ros.run('rc_sim_control', 'rear_wheel_speed_publisher', params)
    assert message in node.user_error()
