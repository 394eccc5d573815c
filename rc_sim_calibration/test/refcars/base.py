"""Common part of the reference cars: geometry, command encoding, the run driver, truth.

Body states (first six entries of every car's state vector), planar rigid body at the CG,
body frame x forward, y left (REP 103): X, Y (CG in ``odom``), yaw, vx, vy (CG velocity in the
body frame), r (yaw rate). Kinematics: dX = vx cos(yaw) - vy sin(yaw), dY = vx sin(yaw) +
vy cos(yaw), d(yaw) = r (Rajamani 2012, ch. 2-3). base_link is the rear-axle centre:
p_rear = p_CG - lr (cos yaw, sin yaw), its lateral velocity vy - lr r.

Low-speed blend (every car except ``awd_relax``, whose tyre lag is well defined at rest): below
``V_BLEND_LOW`` the lateral and yaw states relax (20 ms) to the kinematic bicycle, r = vx tan(delta)
/ L, vy = lr r, and above ``V_BLEND_HIGH`` the dynamic model acts alone (smoothstep between),
as in the CommonRoad vehicle models (Althoff et al. 2017), which switch to the kinematic model at
low speed where the slip angles are singular. The lateral tyre forces' share of the longitudinal
equation (F_y sin(delta)) is blended with the same weight, so a car standing with steered wheels
is not pushed by a slip angle that does not exist.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cache
import math
from typing import Any, ClassVar
import zlib

import numpy as np

from . import sensors
from .integrate import Deriv, PostStep, held_inputs, rk4
from .manoeuvres import Manoeuvre
from .ranges import table
from .trace import TopicSeries, Trace

__all__ = ['V_BLEND_HIGH', 'V_BLEND_LOW', 'RefCar', 'blend_weight', 'yaw_rate_mapper']

GRAVITY = 9.80665
V_BLEND_LOW = 0.15   # m/s
V_BLEND_HIGH = 0.35  # m/s
KIN_RELAX = 0.02     # s
COMMAND_JITTER = 0.0003  # s, sigma of the publication-time jitter of commands (noise on)
STEERING_FIT_RANGE = 0.25  # rad: truth gain/trim = least squares over |delta_cmd| <= this
START_EPOCH_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z


def blend_weight(speed: float) -> float:
    """Smoothstep weight of the dynamic model: 0 below V_BLEND_LOW, 1 above V_BLEND_HIGH."""
    s = (abs(speed) - V_BLEND_LOW) / (V_BLEND_HIGH - V_BLEND_LOW)
    if s <= 0.0:
        return 0.0
    if s >= 1.0:
        return 1.0
    return s * s * (3.0 - 2.0 * s)


@cache
def mapper_settings() -> dict[str, float]:
    """The rc-sim ``yaw_rate`` mapper limits the car's on-board mapper uses (rc-sim defaults)."""
    from rc_sim_control.ackermann import DEFAULT_STANDSTILL_SPEED
    from rc_sim_description.params import load_vehicle_params

    steering = load_vehicle_params().steering
    return {'max_steering_angle': float(steering.max_steering_angle),
            'max_steering_rate': float(steering.max_steering_rate),
            'standstill_speed': float(DEFAULT_STANDSTILL_SPEED)}


def yaw_rate_mapper(t: np.ndarray, linear_x: np.ndarray, angular_z: np.ndarray, *,
                    wheelbase: float, max_steering_angle: float, max_steering_rate: float,
                    standstill_speed: float) -> np.ndarray:
    """On-board /cmd_vel mapping in ``yaw_rate`` mode (docs/control.md), one output per command.

    delta = atan(L psi_dot / v), clipped to the steering limit; held at |v| < standstill; rate
    limited to ``max_steering_rate`` between successive outputs (the first output is not).
    """
    out = np.empty(t.size)
    prev = 0.0
    for k in range(t.size):
        v = float(linear_x[k])
        if abs(v) < standstill_speed:
            delta = prev
        else:
            delta = math.atan(wheelbase * float(angular_z[k]) / v)
            delta = min(max(delta, -max_steering_angle), max_steering_angle)
        if k > 0:
            step = max_steering_rate * float(t[k] - t[k - 1])
            delta = min(max(delta, prev - step), prev + step)
        out[k] = prev = delta
    return out


class RefCar(ABC):
    """A reference car: parameters drawn once, its own ODE, RK4 at ``dt``, its own sensors."""

    name: ClassVar[str]
    interfaces: ClassVar[tuple[str, ...]] = ('steering_wheel', 'cmd_vel')
    default_interface: ClassVar[str] = 'steering_wheel'
    dt: ClassVar[float] = 0.001
    steering_fit_range: ClassVar[float] = STEERING_FIT_RANGE

    def __init__(self, params: dict[str, float], noise_seed: int) -> None:
        self.params = dict(params)
        p = self.params
        self.noise_seed = int(noise_seed)
        self.m = p['mass']
        self.L = p['wheelbase']
        self.lf = p['cg_fraction'] * self.L
        self.lr = self.L - self.lf
        self.h = p['cg_height']
        self.W = p['track_width']
        self.r_nom = round(p['wheel_radius_nominal'], 4)  # the caliper value (0.1 mm)
        self.r_eff = p['radius_factor'] * self.r_nom
        self.Iz = self.m * (p['gyration_ratio'] * self.L) ** 2
        self.mu = p['mu']
        self.latency = p['command_latency']
        self.delta_max = p['max_steering_angle']
        self.imu_mount_x = p['imu_mount_x']
        self.fz_front = self.m * GRAVITY * self.lr / self.L  # static axle loads [N]
        self.fz_rear = self.m * GRAVITY * self.lf / self.L
        self.sensor = {k: p[k] for k in (
            'pose_noise', 'yaw_noise', 'pose_transport', 'twist_noise', 'twist_rate_noise',
            'gyro_bias', 'gyro_bias_walk', 'gyro_noise', 'accel_noise', 'wheel_speed_noise')}
        for key in ('command_rate', 'pose_rate', 'imu_rate', 'joint_rate'):
            self.sensor[key] = float(round(p[key]))
        self.odom_offset = self._odom_offset()
        self._deriv = self._make_deriv()

    # -- car-specific parts -------------------------------------------------------------------
    def _odom_offset(self) -> tuple[float, float, float]:
        """Measured point (x, y [m], yaw [rad]) in base_link (rear-axle centre if not drawn)."""
        p = self.params
        if 'odom_offset_x' not in p:
            return 0.0, 0.0, 0.0
        side = 1.0 if p['odom_offset_y_sign'] >= 0.0 else -1.0
        return p['odom_offset_x'], side * p['odom_offset_y_abs'], p.get('odom_offset_yaw', 0.0)

    @abstractmethod
    def _make_deriv(self) -> Deriv:
        """The ODE right-hand side f(x, u) as a closure over the parameters."""

    def _post_step(self) -> PostStep | None:
        return None

    @abstractmethod
    def _initial_state(self, x: float, y: float, yaw: float) -> list[float]:
        """State at rest with the rear-axle centre at (x, y), heading ``yaw``."""

    @abstractmethod
    def _extra_outputs(self, X: np.ndarray, Xdot: np.ndarray) -> dict[str, np.ndarray]:
        """``delta`` and ``wheel_speed_left/right`` [rad/s] on the grid."""

    @abstractmethod
    def steady_steering(self, command: np.ndarray) -> np.ndarray:
        """Steady-state actual bicycle steering angle [rad] for a held steering command."""

    @abstractmethod
    def _truth_extra(self) -> dict[str, Any]:
        """Servo, drive and tyre truths of this car."""

    def _plant_input(self, delta_cmd: np.ndarray, wheel_speed_cmd: np.ndarray) -> np.ndarray:
        """Plant input rows per command (default: (delta_cmd, omega_cmd))."""
        return np.stack([delta_cmd, wheel_speed_cmd], axis=1)

    def _idle_input(self) -> tuple[float, ...]:
        return (0.0, 0.0)

    # -- measured values (scale, ruler, caliper) ------------------------------------------------
    @property
    def measured(self) -> dict[str, float]:
        """What a team measures: mass (5 g), wheelbase and track (1 mm), axle loads (5 g), r."""
        mass = round(self.m / 0.005) * 0.005
        front = round(self.m * self.lr / self.L / 0.005) * 0.005  # front axle load [kg]
        wheelbase = round(self.L, 3)
        return {'mass': round(mass, 3), 'wheelbase': wheelbase,
                'cg_to_front_axle': round(wheelbase * (1.0 - front / mass), 4),
                'track_width': round(self.W, 3), 'wheel_radius': self.r_nom}

    @property
    def measured_frame(self) -> str:
        """child_frame_id of /odom: base_link when the pose is the rear-axle centre."""
        return 'base_link' if self.odom_offset == (0.0, 0.0, 0.0) else 'mocap_body'

    # -- commands ------------------------------------------------------------------------------
    def _encode(self, interface: str, t: np.ndarray, v_ref: np.ndarray,
                d_ref: np.ndarray) -> tuple[list[TopicSeries], np.ndarray]:
        """Command topics for ``interface`` and the plant input rows they produce on board."""
        wheel = v_ref / self.r_nom
        if interface == 'steering_wheel':
            topics = [TopicSeries('/steering_angle', 'std_msgs/msg/Float64', t, {'data': d_ref}),
                      TopicSeries('/rear_wheel_speed', 'std_msgs/msg/Float64', t + 1e-5,
                                  {'data': wheel})]
            return topics, self._plant_input(d_ref, wheel)
        if interface == 'cmd_vel':
            wheelbase = self.measured['wheelbase']
            wz = v_ref * np.tan(d_ref) / wheelbase
            topics = [TopicSeries('/cmd_vel', 'geometry_msgs/msg/Twist', t,
                                  {'linear_x': v_ref, 'angular_z': wz})]
            delta = yaw_rate_mapper(t, v_ref, wz, wheelbase=wheelbase, **mapper_settings())
            return topics, self._plant_input(delta, wheel)
        raise ValueError(f'{self.name}: interface {interface!r} not supported '
                         f'(supported: {", ".join(self.interfaces)})')

    # -- run -----------------------------------------------------------------------------------
    def _seed_for(self, manoeuvre: str, interface: str) -> np.random.SeedSequence:
        key = zlib.crc32(f'{manoeuvre}/{interface}'.encode())
        return np.random.SeedSequence([self.noise_seed, key])

    def simulate(self, manoeuvre: Manoeuvre, interface: str | None = None, *,
                 noise: bool = True, joint_states: bool = True, tf_static: bool = False,
                 seed: int | None = None, bag_index: int = 0) -> Trace:
        """Run ``manoeuvre`` open loop; returns true states and the bag's topic series.

        ``noise=False``: ideal sensors (no noise, bias, dropouts or jitter), for geometry tests.
        The start pose, sensor clocks and noise come from the car's seed, the manoeuvre name and
        the interface (or ``seed``), so a run is reproducible.
        """
        interface = interface or self.default_interface
        if interface not in self.interfaces:
            raise ValueError(f'{self.name}: interface {interface!r} not supported '
                             f'(supported: {", ".join(self.interfaces)})')
        seq = self._seed_for(manoeuvre.name, interface) if seed is None else \
            np.random.SeedSequence(seed)
        pose_rng, clock_rng, sensor_rng = (np.random.default_rng(s) for s in seq.spawn(3))
        rate = self.sensor['command_rate']
        t_cmd = np.arange(math.floor(manoeuvre.duration * rate) + 1) / rate
        if noise:
            t_cmd = np.sort(t_cmd + np.clip(clock_rng.normal(0, COMMAND_JITTER, t_cmd.size),
                                            -0.001, 0.001))
            t_cmd[0] = max(t_cmd[0], 0.0)
        v_ref, d_ref = manoeuvre.sample(t_cmd)
        commands, plant_u = self._encode(interface, t_cmd, v_ref, d_ref)
        steps = round(manoeuvre.duration / self.dt)
        grid = np.arange(steps + 1) * self.dt
        inputs = tuple(held_inputs(grid[:-1] + off, t_cmd + self.latency, plant_u,
                                   self._idle_input()) for off in (0.0, 0.5 * self.dt, self.dt))
        x0 = self._initial_state(pose_rng.uniform(-1.5, 1.5), pose_rng.uniform(-1.5, 1.5),
                                 pose_rng.uniform(-math.pi, math.pi))
        X, Xdot = rk4(self._deriv, x0, inputs, self.dt, steps, self._post_step())
        true = self._outputs(grid, X, Xdot)
        measurements = sensors.measure(self, true, sensor_rng, noise=noise,
                                       joint_states=joint_states, tf_static=tf_static)
        return Trace(self.name, manoeuvre.name, interface,
                     START_EPOCH_NS + bag_index * 100_000_000_000, true, commands,
                     measurements, noise)

    def _outputs(self, grid: np.ndarray, X: np.ndarray, Xdot: np.ndarray) -> dict[str, np.ndarray]:
        yaw, vx, vy_cg, r = X[:, 2], X[:, 3], X[:, 4], X[:, 5]
        c, s = np.cos(yaw), np.sin(yaw)
        x_ra, y_ra = X[:, 0] - self.lr * c, X[:, 1] - self.lr * s
        vy = vy_cg - self.lr * r
        xo, yo, yaw_o = self.odom_offset
        vxb, vyb = vx - r * yo, vy + r * xo  # measured point, body frame
        true = {'t': grid, 'x': x_ra, 'y': y_ra, 'yaw': yaw, 'vx': vx, 'vy': vy, 'yaw_rate': r,
                'vx_cg': vx, 'vy_cg': vy_cg, 'yaw_acc': Xdot[:, 5],
                'ax': Xdot[:, 3] - vy_cg * r, 'ay': Xdot[:, 4] + vx * r,
                'x_meas': x_ra + c * xo - s * yo, 'y_meas': y_ra + s * xo + c * yo,
                'yaw_meas': yaw + yaw_o,
                'vx_meas': math.cos(yaw_o) * vxb + math.sin(yaw_o) * vyb,
                'vy_meas': -math.sin(yaw_o) * vxb + math.cos(yaw_o) * vyb}
        true.update(self._extra_outputs(X, Xdot))
        for side in ('left', 'right'):  # wheel angle = integral of the wheel speed (trapezoid)
            w = true[f'wheel_speed_{side}']
            true[f'wheel_angle_{side}'] = np.concatenate(
                [[0.0], np.cumsum(0.5 * (w[1:] + w[:-1]) * self.dt)])
        return true

    # -- truth ---------------------------------------------------------------------------------
    def steering_line(self) -> tuple[float, float, float]:
        """(gain, trim, max deviation) of the least-squares line through the steady steering
        map over commands uniform in [-steering_fit_range, steering_fit_range]."""
        cmd = np.linspace(-self.steering_fit_range, self.steering_fit_range, 201)
        actual = self.steady_steering(cmd)
        gain, trim = np.polyfit(cmd, actual, 1)
        dev = float(np.max(np.abs(actual - (gain * cmd + trim))))
        return float(gain), float(trim), dev

    def understeer_gradient(self) -> float:
        """Linear understeer gradient K_us = m/L (lr/C_f - lf/C_r) [rad/(m/s^2)] (Rajamani
        2012, ch. 3, steady-state cornering) from the axle cornering stiffnesses at static load."""
        cf, cr = self.axle_cornering_stiffness()
        return self.m / self.L * (self.lr / cf - self.lf / cr)

    @abstractmethod
    def axle_cornering_stiffness(self) -> tuple[float, float]:
        """(C_f, C_r) [N/rad]: dFy/dalpha at zero slip and static load, summed per axle."""

    def truth(self) -> dict[str, Any]:
        """What a perfect calibration finds, in rc-sim conventions (see README.md)."""
        gain, trim, dev = self.steering_line()
        cf, cr = self.axle_cornering_stiffness()
        xo, yo, yaw_o = self.odom_offset
        out: dict[str, Any] = {
            'car': self.name,
            'command_latency': self.latency,
            'steering_gain': gain, 'steering_offset': trim,
            'steering_fit_range': self.steering_fit_range,
            'steering_nonlinearity': dev,
            'wheel_radius_nominal': self.r_nom,
            'effective_rolling_radius': self.r_eff,
            'radius_factor': self.params['radius_factor'],
            'odom_offset': [xo, yo], 'odom_offset_yaw': yaw_o,
            'odom_child_frame': self.measured_frame,
            'mass': self.m, 'wheelbase': self.L, 'cg_to_front_axle': self.lf,
            'cg_height': self.h, 'track_width': self.W, 'yaw_inertia': self.Iz, 'mu': self.mu,
            'max_steering_angle': self.delta_max,
            'cornering_stiffness_front': cf, 'cornering_stiffness_rear': cr,
            'understeer_gradient': self.understeer_gradient(),
            'imu': {'gyro_bias_start': self.sensor['gyro_bias'],
                    'gyro_bias_walk': self.sensor['gyro_bias_walk'],
                    'gyro_noise': self.sensor['gyro_noise'], 'mount_x': self.imu_mount_x},
            'rates': {k: self.sensor[k] for k in
                      ('command_rate', 'pose_rate', 'imu_rate', 'joint_rate')},
            'pose_noise': self.sensor['pose_noise'], 'yaw_noise': self.sensor['yaw_noise'],
            'interfaces': list(self.interfaces), 'default_interface': self.default_interface,
            'measured': self.measured,
        }
        if 'cmd_vel' in self.interfaces:
            out['cmd_vel_mapper'] = {'mode': 'yaw_rate', 'wheelbase': self.measured['wheelbase'],
                                     **mapper_settings()}
        out.update(self._truth_extra())
        return out

    def measured_params_yaml(self, *, yaw_inertia: bool = False) -> str:
        """rc-sim vehicle override YAML with the measured values only (docs/vehicle_parameters)."""
        m = self.measured
        lines = ['# Measured with a scale, a ruler and a caliper (reference car '
                 f'{self.name}); everything else is left to the fit.',
                 'geometry:',
                 f'  wheelbase: {m["wheelbase"]}',
                 f'  cg_to_front_axle: {m["cg_to_front_axle"]}',
                 f'  track_width: {m["track_width"]}',
                 f'  wheel_radius: {m["wheel_radius"]}',
                 'mass_properties:',
                 f'  mass: {m["mass"]}']
        if yaw_inertia:  # box estimate m (L^2 + W^2) / 12, as teams do without a pendulum
            estimate = m['mass'] * (m['wheelbase'] ** 2 + m['track_width'] ** 2) / 12.0
            lines.append(f'  yaw_inertia: {estimate:.5f}')
        lines += self.known_layout()
        return '\n'.join(lines) + '\n'

    def known_layout(self) -> list[str]:
        """Override lines a team knows by looking at its car (e.g. the drivetrain)."""
        return []

    def parameter_table(self) -> dict[str, Any]:
        """The drawn values with their documented ranges (for reports)."""
        return {k: (self.params[k], r.low, r.high, r.unit) for k, r in table(self.name).items()}
