"""N >= 1 simulated cars stepped together: the engine's stateful shell over the compiled kernels.

Command chain per physics step (same order as the real car and the gz launch): commands (by
default the mapper outputs ``/steering_angle`` [rad] and ``/rear_wheel_speed`` [rad/s]; or a
normalised servo command, an ESC duty, an acceleration or a force, see ``steering_kind`` /
``drive_kind``) -> pure ``command_latency`` delay (rounded to whole steps) -> steering trim or
normalised map (an angle to a normalised car: through the inverse of its map first) +
saturation + dead band -> servo model (+ backlash); the drive command scaled to the drive
model's input (a speed to a throttle or acceleration car: through its speed controller) -> drive
model -> model + integrator.
"""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams
from rc_sim_engine.vehicle import _kernels
from rc_sim_engine.vehicle.actuators import latency_steps
from rc_sim_engine.vehicle.integrators import get_integrator, substeps
from rc_sim_engine.vehicle.models import get_model
from rc_sim_engine.vehicle.packed import P_L, P_LR, P_R, P_TRACK, pack_params, resolve_drive_kind
from rc_sim_engine.vehicle.state import (
    ALPHA_FRONT,
    ALPHA_REAR,
    DUTY,
    FRONT_LEFT_WHEEL_ANGLE,
    FRONT_RIGHT_WHEEL_ANGLE,
    N_STATE,
    REAR_WHEEL_ANGLE,
    SPEED_REFERENCE,
    STEER,
    VX,
    VY,
    WHEEL_INTEGRAL,
    WHEEL_SPEED,
    YAW,
    YAW_RATE,
    X,
    Y,
)

__all__ = ['Car', 'as_param_list', 'batch_array']

FloatArray = NDArray[np.float64]

#: From this many cars on, Car.step spreads the cars over threads (numba prange).
PARALLEL_MIN_CARS = 8


def as_param_list(params: VehicleParams | Sequence[VehicleParams],
                  n: int | None = None) -> list[VehicleParams]:
    """One VehicleParams per car: a single set is repeated ``n`` times (default 1)."""
    if isinstance(params, VehicleParams):
        return [params] * (1 if n is None else int(n))
    plist = list(params)
    if not plist:
        raise ConfigError('params: need at least one VehicleParams')
    if n is not None and n != len(plist):
        raise ConfigError(f'n={n} does not match the {len(plist)} parameter sets given')
    for i, p in enumerate(plist):
        if not isinstance(p, VehicleParams):
            raise ConfigError(f'params[{i}]: expected VehicleParams, got {type(p).__name__}')
    return plist


def batch_array(value: ArrayLike, n: int, name: str) -> FloatArray:
    """``value`` (scalar or (n,)) as a finite float (n,) array; else a one-line ConfigError."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(f'{name}: expected a number or an array of {n}, got '
                          f'{type(value).__name__}') from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    elif arr.shape != (n,):
        raise ConfigError(f'{name}: expected a scalar or shape ({n},), got shape {arr.shape}')
    if not np.all(np.isfinite(arr)):
        raise ConfigError(f'{name}: must be finite, got {arr[~np.isfinite(arr)][0]!r}')
    return np.ascontiguousarray(arr)


class Car:
    """N >= 1 cars stepped together (arrays have a leading batch axis N).

    Args:
        params: one VehicleParams (repeated ``n`` times) or one per car.
        model: name in :data:`rc_sim_engine.vehicle.models.MODELS`.
        integrator: name in :data:`rc_sim_engine.vehicle.integrators.INTEGRATORS`.
        dt: physics step [s] (split internally into sub-steps of at most MAX_SUBSTEP).
        n: number of cars when ``params`` is a single set.
        tyre_model: override of ``params.tyres.tyre_model`` (also ``fiala_unsaturated``).
        load_transfer: shift axle loads by ``m ax h / L``.
        steering_kind: ``'angle'``: steering commands are angles [rad] (trim ``steering_gain``,
            ``steering_offset``; to a car whose ``steering_command`` is normalised: through the
            inverse of its map, as the car's own code does); ``'normalised'``: servo commands
            s in [-1, 1] through the left/right map of vehicle.yaml.
        drive_kind: ``'wheel_speed'`` [rad/s] (the mapper's), ``'speed'`` [m/s],
            ``'throttle'`` (ESC duty in [-1, 1], needs ``drive.drive_model: throttle``),
            ``'acceleration'`` [m/s^2] or ``'force'`` [N] (``drive_model: acceleration``).
            Wheel speeds and speeds to a throttle or acceleration car go through its speed
            controller (:mod:`rc_sim_engine.vehicle.drive_models`).
    """

    def __init__(self, params: VehicleParams | Sequence[VehicleParams], *,
                 model: str = 'single_track', integrator: str = 'rk4', dt: float = 1e-3,
                 n: int | None = None, tyre_model: str | None = None,
                 load_transfer: bool = False, steering_kind: str = 'angle',
                 drive_kind: str = 'wheel_speed') -> None:
        self.params = as_param_list(params, n)
        self.n = len(self.params)
        self.model = get_model(model)
        self._integ_id = get_integrator(integrator)
        self.dt = float(dt)
        self._n_sub = substeps(self.dt)
        self.steering_kind = steering_kind
        self.drive_kind = resolve_drive_kind(self.params, drive_kind)
        self._p = pack_params(self.params, tyre_model=tyre_model, load_transfer=load_transfer,
                              substep=self.dt / self._n_sub, steering_kind=steering_kind,
                              drive_kind=drive_kind)
        self._delay = np.array([latency_steps(p.timing.command_latency, self.dt)
                                for p in self.params], dtype=np.int64)
        self._buf = np.zeros((self.n, int(np.max(self._delay)) + 1, 2))
        self._steer_cmd = np.zeros(self.n)
        self._wheel_cmd = np.zeros(self.n)
        self.state: FloatArray = np.zeros((self.n, N_STATE))
        self.time = 0.0
        self.reset()

    # ------------------------------------------------------------------ control
    def reset(self, x: ArrayLike = 0.0, y: ArrayLike = 0.0, yaw: ArrayLike = 0.0,
              speed: ArrayLike = 0.0) -> None:
        """Base_link pose in odom and forward speed [m/s]; wheels rolling (speed / effective
        radius), steering centred, ESC duty lag primed by the first command."""
        n = self.n
        xs, ys = batch_array(x, n, 'x'), batch_array(y, n, 'y')
        yaws, v = batch_array(yaw, n, 'yaw'), batch_array(speed, n, 'speed')
        lr = self._p[:, P_LR]
        self.state[:] = 0.0
        self.state[:, X] = xs + lr * np.cos(yaws)
        self.state[:, Y] = ys + lr * np.sin(yaws)
        self.state[:, YAW] = yaws
        self.state[:, VX] = v
        self.state[:, WHEEL_SPEED] = v / self._p[:, P_R]
        self.state[:, SPEED_REFERENCE] = v  # a speed controller starts settled on the speed
        self.time = 0.0
        self._head = 0
        self._primed = False

    def step(self, steering_angle_cmd: ArrayLike, wheel_speed_cmd: ArrayLike,
             n_steps: int = 1) -> None:
        """Hold the commands (scalar or (N,)) for ``n_steps`` physics steps.

        The commands are of the kinds given to the constructor: ``steering_angle_cmd`` is an
        angle [rad] or a normalised command, ``wheel_speed_cmd`` a wheel speed [rad/s] or a duty.

        One compiled call whatever ``n_steps``; a scalar float command costs no array allocation,
        so a single car stepped once per call stays cheap (a few microseconds, see the benchmark).
        """
        steer = self._command(steering_angle_cmd, self._steer_cmd, 'steering_angle_cmd')
        wheel = self._command(wheel_speed_cmd, self._wheel_cmd, 'wheel_speed_cmd')
        if n_steps < 0:
            raise ConfigError(f'n_steps must be >= 0, got {n_steps!r}')
        if not self._primed:  # commands before the first one are taken equal to it
            self._buf[:, :, 0] = steer[:, None]
            self._buf[:, :, 1] = wheel[:, None]
            if self.drive_kind == 'throttle':  # the duty lag starts settled on it
                self.state[:, DUTY] = np.clip(wheel, -1.0, 1.0)
            self._primed = True
        kernel = _kernels.step_cars_parallel if self.n >= PARALLEL_MIN_CARS else _kernels.step_cars
        self._head = kernel(
            self.state, self._p, steer, wheel, self.dt, self._n_sub, int(n_steps),
            self.model.kernel_id, self._integ_id, self.model.project_kinematic, self._buf,
            self._delay, self._head)
        self.time += n_steps * self.dt

    def _command(self, value: ArrayLike, out: FloatArray, name: str) -> FloatArray:
        if isinstance(value, (float, int)):  # fast path for scalars (also numpy float64)
            if not math.isfinite(value):
                raise ConfigError(f'{name}: must be finite, got {value!r}')
            out.fill(value)
        else:
            out[:] = batch_array(value, self.n, name)
        return out

    def stop(self, mask: ArrayLike) -> None:
        """Collision 'stop': zero velocities, tyre slips, wheel speed and wheel PID integral in
        ``mask``.

        The steering state is kept; commands keep flowing, so a car told to drive on drives on.
        """
        m = np.asarray(mask, dtype=bool)
        self.state[m, VX] = 0.0
        self.state[m, VY] = 0.0
        self.state[m, YAW_RATE] = 0.0
        self.state[m, WHEEL_SPEED] = 0.0
        self.state[m, WHEEL_INTEGRAL] = 0.0
        self.state[m, ALPHA_FRONT] = 0.0
        self.state[m, ALPHA_REAR] = 0.0

    def set_pose(self, mask: ArrayLike, x: ArrayLike, y: ArrayLike, yaw: ArrayLike) -> None:
        """Move the base_link of the cars in ``mask`` to (x, y, yaw) (arrays of mask.sum() or
        scalars)."""
        m = np.asarray(mask, dtype=bool)
        yaws = np.broadcast_to(np.asarray(yaw, dtype=float), (int(m.sum()),))
        lr = self._p[m, P_LR]
        self.state[m, X] = np.asarray(x, dtype=float) + lr * np.cos(yaws)
        self.state[m, Y] = np.asarray(y, dtype=float) + lr * np.sin(yaws)
        self.state[m, YAW] = yaws

    # ------------------------------------------------------------------ compiled loops
    def stepping(self) -> tuple[FloatArray, FloatArray, int, int, int, bool, FloatArray,
                                NDArray[np.int64], bool]:
        """What a compiled loop that steps these cars in place needs (as :meth:`step` calls
        the kernels): state, packed parameters, sub-steps, model and integrator ids, kinematic
        projection, delay ring (N, K, 2), delays (N,), throttle drive. See :meth:`stepped`."""
        return (self.state, self._p, self._n_sub, self.model.kernel_id, self._integ_id,
                self.model.project_kinematic, self._buf, self._delay,
                self.drive_kind == 'throttle')

    @property
    def delay_head(self) -> tuple[int, bool]:
        """(next write slot of the delay ring, whether the ring was primed by a first step)."""
        return self._head, self._primed

    def stepped(self, n_steps: int, head: int, primed: bool) -> None:
        """Book-keeping after a compiled loop advanced the cars ``n_steps`` steps."""
        self._head = head
        self._primed = primed
        self.time += n_steps * self.dt

    @property
    def base_link_offset(self) -> FloatArray:
        """Distance CG -> base_link (rear axle) along the body x axis [m] (N,)."""
        return self._p[:, P_LR].copy()

    # ------------------------------------------------------------------ outputs
    def base_link_pose(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(x, y, yaw) of base_link (rear axle centre) in odom, each (N,)."""
        s, lr = self.state, self._p[:, P_LR]
        yaw = s[:, YAW].copy()
        return s[:, X] - lr * np.cos(yaw), s[:, Y] - lr * np.sin(yaw), yaw

    def base_link_twist(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(vx, vy, yaw_rate) of base_link in its own frame, each (N,): vy = vy_cg - lr r."""
        s, lr = self.state, self._p[:, P_LR]
        return s[:, VX].copy(), s[:, VY] - lr * s[:, YAW_RATE], s[:, YAW_RATE].copy()

    def body_acceleration(self) -> tuple[FloatArray, FloatArray]:
        """(ax, ay) at the CG in the body frame [m/s^2], each (N,) (IMU without gravity)."""
        out = np.empty((self.n, 2))
        _kernels.accelerations(self.state, self._p, self.model.kernel_id, out)
        return out[:, 0], out[:, 1]

    def steering_angle(self) -> FloatArray:
        """Actual bicycle front steering angle [rad] (N,)."""
        return self.state[:, STEER].copy()

    def wheel_speed(self) -> FloatArray:
        """Actual rear wheel speed [rad/s] (N,)."""
        return self.state[:, WHEEL_SPEED].copy()

    def differential_offset(self) -> FloatArray:
        """Half the rear wheels' spin-angle difference [rad] (N,): ``W / (2 r) psi``.

        The rear axle's open differential turns its wheels at ``omega -+ W r_yaw / (2 r)``
        (W track width, r effective wheel radius, r_yaw the yaw rate; rigid body, no lateral
        slip of the axle: the wheels' ground speeds are ``vx -+ r_yaw W / 2``) around the
        drive's mean spin ``omega`` (the state's one rear wheel). Integrated, the difference
        is ``W / r`` times the heading ``psi`` (unwrapped), so no extra state is needed; a
        constant offset does not matter to an encoder. Wheel odometry on the rear encoders
        (docs/control.md eq. 6) then recovers ``dpsi = r (dtheta_r - dtheta_l) / W`` exactly.
        """
        return 0.5 * self._p[:, P_TRACK] / self._p[:, P_R] * self.state[:, YAW]

    def differential_rate(self) -> FloatArray:
        """Rate of :meth:`differential_offset` [rad/s] (N,): ``W / (2 r) r_yaw``."""
        return 0.5 * self._p[:, P_TRACK] / self._p[:, P_R] * self.state[:, YAW_RATE]

    def wheel_angles(self) -> dict[str, FloatArray]:
        """Joint positions for /joint_states (docs/conventions.md names), each (N,); the rear
        wheels split by the differential (:meth:`differential_offset`)."""
        from rc_sim_control.ackermann import ackermann_split

        s = self.state
        left, right = ackermann_split(s[:, STEER], self._p[:, P_L],  # type: ignore[arg-type]
                                      self._p[:, P_TRACK])  # type: ignore[arg-type]
        split = self.differential_offset()
        return {
            'front_left_steering_joint': np.asarray(left, dtype=float),
            'front_right_steering_joint': np.asarray(right, dtype=float),
            'front_left_wheel_joint': s[:, FRONT_LEFT_WHEEL_ANGLE].copy(),
            'front_right_wheel_joint': s[:, FRONT_RIGHT_WHEEL_ANGLE].copy(),
            'rear_left_wheel_joint': s[:, REAR_WHEEL_ANGLE] - split,
            'rear_right_wheel_joint': s[:, REAR_WHEEL_ANGLE] + split,
        }

    @property
    def speed(self) -> FloatArray:
        """Signed base_link speed ``sign(vx) hypot(vx, vy_base_link)`` [m/s] (N,)."""
        vx, vy, _ = self.base_link_twist()
        return np.copysign(np.hypot(vx, vy), vx)

    def __repr__(self) -> str:
        return (f'Car(n={self.n}, model={self.model.name!r}, dt={self.dt}, '
                f'time={self.time:.6g}, substeps={self._n_sub}, '
                f'latency_steps={self._delay.tolist() if self.n < 5 else "..."})')
