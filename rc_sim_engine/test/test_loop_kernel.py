"""The compiled loop against a plain reference: a :class:`Car` stepped from Python between the
same events gives bit-identical states; scans cast in a batch equal scans cast one by one."""

from __future__ import annotations

import math

import numpy as np

from rc_sim_description.params import load_vehicle_params
from rc_sim_description.paths import world_path
from rc_sim_engine.sim.sensors import Lidar
from rc_sim_engine.sim.simulator import SimConfig, Simulator
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.world.sdf import World, load_world

P = load_vehicle_params().with_values(command_latency=0.013)  # a delay line of 13 steps


def commands(t: float) -> tuple[float, float]:
    """Mapper outputs (steering angle [rad], wheel speed [rad/s]) of a wavy drive."""
    return 0.25 * math.sin(0.9 * t), 20.0 + 10.0 * math.cos(0.5 * t)


def test_states_equal_a_car_stepped_between_the_same_events() -> None:
    config = SimConfig(command_rate=50.0, odom_rate=25.0, joint_state_rate=50.0, lidar=False)
    sim = Simulator(P, World('empty', 'test'), config, start=(1.0, -2.0, 0.3))
    result = sim.run(6.0, lambda t, obs: commands(t), output='mapper')
    odom = result.streams['odom']
    car = Car(P, dt=config.dt)
    car.reset(1.0, -2.0, 0.3)
    imu_period = round(1.0 / (P.sensors.imu_update_rate * config.dt))  # 10 steps
    poses, times = [], []
    for k in range(0, 6001, imu_period):  # every snapshot time of the loop (IMU: 100 Hz)
        if k % 40 == 0:  # odometry at 25 Hz
            x, y, yaw = car.base_link_pose()
            poses.append((x[0], y[0], (yaw[0] + np.pi) % (2 * np.pi) - np.pi))
            times.append(k * 1_000_000)
        if k == 6000:
            break
        steer, wheel = commands((k // 20) * 20 * config.dt)  # held since the last tick
        car.step(steer, wheel, imu_period)
    np.testing.assert_array_equal(odom['t_ns'], times)
    np.testing.assert_array_equal(np.stack([odom['x'][:, 0], odom['y'][:, 0],
                                            odom['yaw'][:, 0]], axis=-1), np.array(poses))


def test_batch_scans_equal_single_scans() -> None:
    world = load_world(world_path('basic_track'))
    sim = Simulator(P, world, SimConfig(), start=(-0.5, -1.875, 0.0))
    seen = []

    def drive(t: float, obs: object) -> tuple[float, float]:
        seen.append((t, obs.x[0], obs.y[0], obs.yaw[0], obs.scan[0].copy()))  # type: ignore
        return 0.1, 25.0

    sim.run(1.0, drive, output='mapper')
    lidar = Lidar(P, world)
    checked = 0
    for t, x, y, yaw, scan in seen:
        if round(t / 0.001) % 25 == 0:  # a scan (40 Hz) was cast at this very step
            np.testing.assert_array_equal(scan, lidar.scan(float(x), float(y), float(yaw)))
            checked += 1
    assert checked >= 8
