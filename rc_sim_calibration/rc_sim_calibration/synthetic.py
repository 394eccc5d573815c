"""Synthetic "real car" bags: the engine with hidden parameters plus realistic sensor noise.

Used by the round-trip tests and the benchmark. A command sequence (mode ``steering_angle``) is
mapped by the nominal mapper, preceded by ``rest`` seconds at standstill (the gyro bias is
estimated there), replayed by :func:`rc_sim_engine.vehicle.rollout.rollout` with the hidden
parameters (their ``command_latency`` included), then recorded like a lab setup: commands at 50 Hz
(receive times), motion-capture-like ``/odom`` at 100 Hz (Gaussian pose noise, occasional glitches,
twist with noise), ``/imu`` at 100 Hz (constant gyro bias + white noise), ``/joint_states`` at 50
Hz.
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path

import numpy as np

from rc_sim_control.ackermann import MapperConfig, map_sequence
from rc_sim_control.commands import CommandSequence
from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.params import VehicleParams

__all__ = ['NoiseModel', 'simulate_truth', 'write_synthetic_bag']

Array = np.ndarray

START_NS = 1_700_000_000 * 1_000_000_000  # bag clock origin (wall-clock-like)


@dataclass(frozen=True)
class NoiseModel:
    """Sensor noise and rates of the synthetic lab (SI units)."""

    pose_std: float = 0.003          # mocap position noise [m]
    yaw_std: float = 0.004           # mocap heading noise [rad]
    twist_std: float = 0.02          # odometry vx, vy noise [m/s]
    odom_yaw_rate_std: float = 0.02  # odometry yaw-rate noise [rad/s]
    glitch_probability: float = 0.002  # per odom message: a 0.3 m pose jump (mocap swap)
    gyro_bias: float = 0.03          # [rad/s]
    gyro_std: float = 0.01           # [rad/s]
    wheel_speed_std: float = 0.3     # [rad/s]
    cmd_rate_hz: float = 50.0
    odom_rate_hz: float = 100.0
    imu_rate_hz: float = 100.0
    joint_rate_hz: float = 50.0


def _commands(seq: CommandSequence, nominal: VehicleParams, rest: float, rate_hz: float
              ) -> tuple[Array, Array, Array]:
    config = MapperConfig.from_vehicle(nominal, mode=seq.mode)
    t = np.arange(0.0, rest + seq.duration + 1e-9, 1.0 / rate_hz)
    t_seq = np.clip(t - rest, 0.0, None)
    idx = np.clip(np.searchsorted(seq.t, t_seq, side='right') - 1, 0, len(seq.t) - 1)
    lin = np.where(t < rest, 0.0, seq.linear_x[idx])
    ang = np.where(t < rest, 0.0, seq.angular_z[idx])
    mapped = map_sequence(t, lin, ang, config)
    return t, np.asarray(mapped.steering_angle), np.asarray(mapped.wheel_speed)


def simulate_truth(seq: CommandSequence, truth: VehicleParams, nominal: VehicleParams, *,
                   rest: float = 1.0, rate_hz: float = 100.0, cmd_rate_hz: float = 50.0,
                   dt: float = 1e-3) -> dict[str, Array]:
    """Noise-free motion of the hidden car: commands and states at ``rate_hz``."""
    from rc_sim_engine.vehicle.rollout import rollout

    t_cmd, steer, wheel = _commands(seq, nominal, rest, cmd_rate_hz)
    t_out = np.arange(0.0, t_cmd[-1] + 0.5, 1.0 / rate_hz)
    res = rollout([truth], t_cmd, steer, wheel, None, t_out=t_out, dt=dt)
    return {'t_cmd': t_cmd, 'steering_cmd': steer, 'wheel_speed_cmd': wheel, 't': t_out,
            'x': res.x[0], 'y': res.y[0], 'yaw': res.yaw[0], 'vx': res.vx[0], 'vy': res.vy[0],
            'yaw_rate': res.yaw_rate[0], 'wheel_speed': res.wheel_speed[0]}


def write_synthetic_bag(path: str | os.PathLike[str], seq: CommandSequence, truth: VehicleParams,
                        nominal: VehicleParams, rng: np.random.Generator,
                        noise: NoiseModel | None = None, *, rest: float = 1.0,
                        storage: str = 'sqlite3') -> Path:
    """Write a noisy bag of ``seq`` driven by the hidden parameters ``truth``; returns its path."""
    from rc_sim_description.bags.writer import BagWriter
    from rc_sim_engine.output import bags as bagio

    nz = noise or NoiseModel()
    truth_t = simulate_truth(seq, truth, nominal, rest=rest, rate_hz=nz.odom_rate_hz,
                             cmd_rate_hz=nz.cmd_rate_hz)
    t = truth_t['t']
    n = t.size
    glitch = rng.random(n) < nz.glitch_probability
    ox = truth_t['x'] + rng.normal(0.0, nz.pose_std, n) + np.where(glitch, 0.3, 0.0)
    oy = truth_t['y'] + rng.normal(0.0, nz.pose_std, n)
    oyaw = truth_t['yaw'] + rng.normal(0.0, nz.yaw_std, n)
    ovx = truth_t['vx'] + rng.normal(0.0, nz.twist_std, n)
    ovy = truth_t['vy'] + rng.normal(0.0, nz.twist_std, n)
    owz = truth_t['yaw_rate'] + rng.normal(0.0, nz.odom_yaw_rate_std, n)
    t_imu = np.arange(0.0, t[-1], 1.0 / nz.imu_rate_hz)
    gyro = (np.interp(t_imu, t, truth_t['yaw_rate']) + nz.gyro_bias +
            rng.normal(0.0, nz.gyro_std, t_imu.size))
    yaw_imu = np.interp(t_imu, t, truth_t['yaw'])
    t_js = np.arange(0.0, t[-1], 1.0 / nz.joint_rate_hz)
    w_js = np.interp(t_js, t, truth_t['wheel_speed']) + rng.normal(0.0, nz.wheel_speed_std,
                                                                   t_js.size)
    names = ['rear_left_wheel_joint', 'rear_right_wheel_joint']

    def ns(tt: float) -> int:
        return START_NS + round(tt * 1e9)

    events: list[tuple[int, str, str, object]] = []
    for tc, s, w in zip(truth_t['t_cmd'], truth_t['steering_cmd'], truth_t['wheel_speed_cmd']):
        events.append((ns(tc), '/steering_angle', 'std_msgs/msg/Float64', bagio.float64_msg(s)))
        events.append((ns(tc), '/rear_wheel_speed', 'std_msgs/msg/Float64',
                       bagio.float64_msg(w)))
    for i in range(n):
        events.append((ns(t[i]), '/odom', 'nav_msgs/msg/Odometry', bagio.odometry_msg(
            ns(t[i]), ox[i], oy[i], oyaw[i], ovx[i], ovy[i], owz[i])))
    for i in range(t_imu.size):
        events.append((ns(t_imu[i]), '/imu', 'sensor_msgs/msg/Imu', bagio.imu_msg(
            ns(t_imu[i]), yaw_imu[i], gyro[i], 0.0, 0.0, GRAVITY_MPS2)))
    for i in range(t_js.size):
        events.append((ns(t_js[i]), '/joint_states', 'sensor_msgs/msg/JointState',
                       bagio.joint_state_msg(ns(t_js[i]), names, [0.0, 0.0],
                                             [w_js[i], w_js[i]])))
    events.sort(key=lambda e: e[0])
    out = Path(path)
    with BagWriter(out, storage=storage) as bag:
        for t_ns, topic, msgtype, msg in events:
            bag.write(topic, msgtype, t_ns, msg)
    return out
