"""ROS-free core of sim_node: parameter checks, simulator set-up, the messages of each step,
pacing and the lockstep gate. The node itself runs over DDS in tests_live/test_sim_node*.py."""

from __future__ import annotations

from collections import Counter
import math

import numpy as np
import pytest

from rc_sim_description.bags.cdr_bulk import clock as clock_rows
from rc_sim_description.errors import ConfigError
from rc_sim_engine.live.core import (
    NODE_PARAMETERS,
    LiveOutput,
    LivePacer,
    LockstepGate,
    build_simulator,
    car_namespaces,
    car_vector,
    collision_line,
    lockstep_waits_for,
    node_parameter_problem,
    output_topics,
)
from rc_sim_engine.live.inputs import Throttle
from rc_sim_engine.sim.sim_config import CollisionEvent


def defaults() -> dict:
    return {p.name: p.default for p in NODE_PARAMETERS}


def test_parameter_checks() -> None:
    for p in NODE_PARAMETERS:
        assert node_parameter_problem(p.name, p.default) is None, p.name
    assert node_parameter_problem('realtime_factor', 0.0) is None  # as fast as possible
    assert 'realtime_factor' in node_parameter_problem('realtime_factor', -1.0)
    assert 'finite' in node_parameter_problem('realtime_factor', math.inf)
    assert 'finite' in node_parameter_problem('x', math.nan)
    assert 'stop' in node_parameter_problem('collision_response', 'crash')
    assert 'yaw_rate' in node_parameter_problem('mapper_mode', 'speed')
    assert 'true or false' in node_parameter_problem('use_cmd_vel', 1)
    assert 'true or false' in node_parameter_problem('paused', 'yes')
    assert node_parameter_problem('use_sim_time', True) is None


def test_output_topics_name_the_ideal_scan_scan_raw() -> None:
    one = output_topics(1, lidar_errors=False)
    assert one['/scan'] == ('scan_raw', 'sensor_msgs/msg/LaserScan')
    assert one['/odom'] == ('odom', 'nav_msgs/msg/Odometry') and one['/clock'][0] == '/clock'
    both = output_topics(2, lidar_errors=True)
    assert both['/car_1/scan'] == ('car_1/scan', 'sensor_msgs/msg/LaserScan')
    assert both['/car_1/scan_raw'] == ('car_1/scan_raw', 'sensor_msgs/msg/LaserScan')
    assert both['/tf'][0] == '/tf' and '/car_0/joint_states' in both


def test_every_message_at_its_own_time_and_rate_whatever_the_step() -> None:
    """One 2 s step or two hundred 10 ms steps: the same messages, byte for byte, at the rates
    of vehicle.yaml and SimConfig (scan 40 Hz, IMU and /clock 100 Hz, odom/tf/joints 50 Hz)."""
    runs = []
    for steps in (1, 200):
        sim = build_simulator({**defaults(), 'x': -0.5, 'y': -1.875})
        out = LiveOutput(sim, lidar_errors=False)
        sim.command(0.2, 20.0)
        got: list[tuple[int, bytes]] = []
        for k in range(1, steps + 1):
            sim.step_to(2.0 * k / steps)
            idx, data = out.take()
            got += list(zip(idx, data))
        runs.append((out.names, got))
    (names, a), (_, b) = runs
    assert a == b
    counts = Counter(names[k] for k, _ in a)
    assert counts == {'/clock': 201, '/imu': 201, '/odom': 101, '/tf': 101,
                      '/joint_states': 101, '/scan': 81}
    clocks = [raw for k, raw in a if names[k] == '/clock']
    want = clock_rows(np.arange(201) * 10_000_000)
    assert [bytes(r) for r in want] == clocks  # /clock every 10 ms of sim time, in order
    assert not any(names[k] in ('/cmd_vel', '/steering_angle', '/rear_wheel_speed')
                   for k, _ in a)


def test_live_streaming_keeps_nothing() -> None:
    """An endless live run holds no samples: the recorder and the command log are drained."""
    sim = build_simulator({**defaults(), 'world': 'flat_track', 'use_cmd_vel': True})
    out = LiveOutput(sim, lidar_errors=True)
    for k in range(50):
        sim.command_twist(0.5, 0.2)
        sim.step_to(0.1 * (k + 1))
        out.take()
    recorder = sim._recorder
    assert recorder.streaming and recorder.blocks.nbytes == 0 and not recorder.blocks.scans
    assert not recorder.converter.keep
    assert sim.result().streams['odom']['t_ns'].size == 0


def test_build_simulator_with_errors_and_bad_values() -> None:
    values = {**defaults(), 'x': -0.5, 'y': -1.875, 'lidar_errors': 'hokuyo_ust10lx'}
    sim = build_simulator(values)
    assert sim.world.name == 'basic_track' and sim.config.record
    out = LiveOutput(sim, lidar_errors=True)
    sim.command(0.0, 10.0)
    sim.step_to(0.5)
    counts = Counter(out.names[k] for k in out.take()[0])
    assert counts['/scan_raw'] == 21 and 18 <= counts['/scan'] <= 21  # some may be lost
    with pytest.raises(ConfigError, match='unknown world'):
        build_simulator({**defaults(), 'world': 'nowhere'})
    with pytest.raises(ConfigError, match='sim_node parameter seed'):
        build_simulator({**defaults(), 'seed': -3})


def test_pacer_follows_wall_clock_and_never_spirals() -> None:
    pacer = LivePacer(2.0, now=10.0)
    assert pacer.target(10.1, 0.0) == pytest.approx(0.2)
    # far behind (the machine stalled 10 s): the schedule moves, at most max_lag ahead
    assert pacer.target(20.0, 0.2) == pytest.approx(0.2 + 2.0 * pacer.max_lag)
    assert pacer.slipped_s == pytest.approx(9.9 - pacer.max_lag)
    assert pacer.target(20.1, 0.7) == pytest.approx(0.9)
    pacer.set_realtime_factor(0.5, now=30.0, sim_time=1.0)
    assert pacer.target(30.2, 1.0) == pytest.approx(1.1)
    # no cap of the factor: 1000x covers 10 s of sim time per 10 ms of wall time
    fast = LivePacer(1000.0, now=0.0)
    assert fast.target(0.01, 0.0) == pytest.approx(10.0)
    free = LivePacer(0.0, now=0.0, chunk=0.05)
    assert free.target(123.0, 4.0) == pytest.approx(4.05)
    assert fast.achieved(2.0, 300.0) == 150.0


def test_lockstep_gate_takes_one_command_per_period_in_order() -> None:
    gate = LockstepGate(('steering_angle', 'rear_wheel_speed'))
    assert gate.take() is None
    gate.offer('steering_angle', 0.1)
    assert not gate.ready() and gate.take() is None  # half a command is no command
    gate.offer('rear_wheel_speed', 5.0)
    gate.offer('steering_angle', 0.2)
    gate.offer('rear_wheel_speed', 6.0)
    gate.offer('steering_angle', 0.3)
    assert gate.backlog() == 1
    assert gate.take() == {'steering_angle': (0.1,), 'rear_wheel_speed': (5.0,)}
    assert gate.take() == {'steering_angle': (0.2,), 'rear_wheel_speed': (6.0,)}
    assert gate.take() is None and gate.periods == 2
    twist = LockstepGate(('cmd_vel',))
    twist.offer('cmd_vel', 0.5, -0.1)
    assert twist.take() == {'cmd_vel': (0.5, -0.1)}


def test_lockstep_starts_only_when_the_controller_is_connected_both_ways() -> None:
    outputs = {'/odom': set(), '/clock': set(), '/scan_raw': set()}
    none = dict.fromkeys(outputs, 0)
    assert lockstep_waits_for({'/cmd_vel': set()}, {}, outputs, none) == 'a publisher of /cmd_vel'
    ctl = {'/cmd_vel': {'/lane'}}
    assert lockstep_waits_for(ctl, {'/cmd_vel': 0}, outputs, none) == (
        'the publishers of /cmd_vel to connect')
    assert lockstep_waits_for(ctl, {'/cmd_vel': 1}, outputs, none).startswith(
        '/lane to subscribe to one of')
    reads = {**outputs, '/odom': {'/lane', '/probe'}}
    assert lockstep_waits_for(ctl, {'/cmd_vel': 1}, reads, {**none, '/odom': 1}) == (
        'the subscribers of /odom to connect')  # the probe matched, the controller not yet
    assert lockstep_waits_for(ctl, {'/cmd_vel': 1}, reads, {**none, '/odom': 2}) is None
    pair = {'/steering_angle': {'/c'}, '/rear_wheel_speed': set()}
    assert lockstep_waits_for(pair, {'/steering_angle': 1}, reads, none) == (
        'a publisher of /rear_wheel_speed')


def test_throttle_is_per_key() -> None:
    throttle = Throttle(period_s=1.0)
    assert throttle.due('cmd_vel', now=10.0)
    assert not throttle.due('cmd_vel', now=10.5)
    assert throttle.due('steering_angle', now=10.5)  # a flood on one topic hides no other
    assert throttle.due('cmd_vel', now=11.0)


def test_collision_line_names_the_car_the_obstacle_and_the_response() -> None:
    event = CollisionEvent(t=3.25, car=1, obstacle='wall_north', kind='wall', depth=0.01,
                           normal_x=0.0, normal_y=-1.0, speed=-1.2, x=2.0, y=1.5)
    line = collision_line(event, ['car_0', 'car_1'], 'stop')
    assert line.startswith("car_1 hit wall 'wall_north' at t = 3.250 s")
    assert '1.20 m/s' in line and 'stopped' in line
    assert collision_line(event, ['', ''], 'ignore').startswith('the car hit')


def test_several_cars_live() -> None:
    """num_cars: car 0 at (x, y, yaw), the others lined up behind, namespaces car_<i>, and a
    command for one car leaves the others' commands alone."""
    values = {**defaults(), 'world': 'flat_track', 'num_cars': 3, 'yaw': 0.3}
    sim = build_simulator(values)
    assert sim.n == 3
    obs = sim.observe()
    assert (obs.x[0], obs.y[0]) == (0.0, 0.0) and np.all(obs.yaw == 0.3)
    behind = obs.x * math.cos(0.3) + obs.y * math.sin(0.3)
    assert behind[0] > behind[1] > behind[2]
    assert car_namespaces(1) == [''] and car_namespaces(3) == ['car_0', 'car_1', 'car_2']
    sim.command(car_vector(3, 1, 0.1), car_vector(3, 1, 20.0))
    sim.step_to(0.5)
    snap = sim.snapshot()
    assert snap['vx'][1] > 0.3 and snap['vx'][0] == 0.0 and snap['vx'][2] == 0.0
    assert snap['position'].shape == (3, 6) and sim.last_scan_sample['ranges'].shape[0] == 3
    with pytest.raises(ConfigError, match='num_cars'):
        build_simulator({**values, 'num_cars': 0})
    with pytest.raises(ConfigError, match='touches'):  # the grid behind the spawn hits a wall
        build_simulator({**defaults(), 'x': -0.5, 'y': -1.875, 'num_cars': 12})


def test_short_steps_of_several_cars_with_a_lossy_lidar() -> None:
    """10 ms steps of three cars with the harsh error model: a step in which every scan of a car
    is lost still serialises (it failed to shape zero beams)."""
    sim = build_simulator({**defaults(), 'world': 'flat_track', 'num_cars': 3,
                           'lidar_errors': 'harsh'})
    out = LiveOutput(sim, lidar_errors=True)
    names = Counter()
    for _ in range(200):
        sim.step_to(sim.time + 0.01)
        names.update(out.names[k] for k in out.take()[0])
    assert names['/car_2/scan_raw'] == 81 and 0 < names['/car_2/scan'] < 81
