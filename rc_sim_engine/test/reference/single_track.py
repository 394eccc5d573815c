"""Reference single-track car from the published equations, integrated by scipy (Radau).

Written from ``docs/engine.md`` (the engine's specification) and the sources it cites, without the
engine's source code:

- chassis: dynamic single-track ("bicycle") model at the CG (Rajamani, *Vehicle Dynamics and
  Control*, 2nd ed. 2012, ch. 2) with the rear drive force added to the longitudinal balance ``m (dvx/dt - vy r) = Fx_r - Fy_f sin(delta)``; exact slip-angle geometry (atan2, no
  small-angle linearisation) as in CommonRoad's STD model (Althoff et al. 2020, §6);
- lateral tyres (``tyre_laws``): linear, Fiala's brush model (Pacejka, *Tire and Vehicle
  Dynamics* 3rd ed. 2012, §3.2), the Magic Formula (Pacejka & Bakker 1987);
- longitudinal: slip ratio ``kappa = (R omega - vx) / max(|vx|, 0.2 m/s)``, ``Fx_r = Fz_r MF(kappa)``;
  the lumped rear wheels ``2 J_w d(omega)/dt = 2 tau - R Fx_r`` with ``J_w = m_w R^2 / 2`` and the
  gz ``JointController`` speed loop ``tau = sat(Kp (omega* - omega) + Ki int(omega* - omega))``;
- integral terms clamped like gz-math's PID (``|Ki I| <= i_max``, no wind-up); the wheel loop's
  D term acts on the measured speed, ``-Kd d(omega)/dt``, i.e. adds ``2 Kd`` to the lumped
  inertia (gz differentiates the error, the same while the target is held);
- hinge servo: gz ``JointPositionController``, ``J_h d2(delta)/dt2 = Kp e + Ki int(e) - Kd
  d(delta)/dt``, ``J_h = m_w (3 R^2 + w^2) / 12 + m_k (w/2)^2 / 2``. Its torque, slew-rate and
  angle limits are NOT modelled: :func:`check_servo_linear` proves they stay inactive in a run;
- longitudinal load transfer ``Fz_r = m g lf / L + m ax h / L`` (Rajamani ch. 4; the same law
  as CommonRoad's ST model) with ``ax = Fx_r / m`` iterated ``load_passes`` times from the static load
  (engine.md: "one fixed-point pass"; ``math.inf`` gives the exact fixed point); the cornering
  stiffness of the linear AND the Fiala law scales with ``Fz / Fz_static`` (engine.md names only
  the linear law; in the brush model ``C = 2 c_p a^2`` grows with the contact length, Pacejka
  §3.2, and the engine does scale Fiala's C: a documentation gap);
- low speed: the kinematic bicycle blended in below 1 m/s with a C1 smoothstep in ``|vx|``;
  its rates are the constraint's derivative at the held steering angle plus the documented 20 ms
  relaxation (engine.md documents only the relaxation: with it alone the yaw rate lags the
  constraint by 20 ms x its rate of change, 1.3e-2 rad/s in a gentle accelerating turn, which
  the engine does not show: a documentation gap);
- tyre relaxation (Pacejka 2012 §7.2, ``sigma dalpha'/dt + |V_x| alpha' = -V_sy``) in
  engine.md's form, see ``relaxation``; v_x is the contact velocity along the wheel (front: along
  the steered wheel; rear: vx). An axle with sigma > 0 takes its lateral force (same law and load
  scaling) at alpha' in place of alpha; with sigma = 0 alpha' is unused and its rate 0. It runs
  at every speed (alpha' keeps following alpha through the kinematic blend); :func:`initial_state`
  starts alpha' at alpha (the steady state).

Everything is vectorised over a batch of N independent cars (state-major layout), so one Radau
solve integrates a whole set of manoeuvres with a block-diagonal Jacobian pattern.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
import math

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import root
from scipy.sparse import csr_matrix

from rc_sim_description.params import VehicleParams

from .relaxation import RELAXATION_SPEED_FLOOR, relaxation_rate
from .tyre_laws import TYRE_LAWS, Coefficients, lateral_force, magic_formula
from .tyre_laws import fiala as fiala  # re-exported: the reference's public tyre laws

#: Gravity of the axle loads: the standard 9.80665 m/s^2 that docs/engine.md states (a
#: published constant, not the engine's code).
G = 9.80665

V_BLEND_LOW = 0.5  # m/s: purely kinematic rates below (engine.md)
V_BLEND_HIGH = 1.0  # m/s: purely dynamic rates above
KAPPA_SPEED_FLOOR = 0.2  # m/s: denominator floor of the slip ratio
KINEMATIC_TAU = 0.02  # s: relaxation of vy and r onto the kinematic constraint

# reference state layout (one row per quantity, one column per car)
X, Y, PSI, VX, VY, R, DELTA, DELTA_RATE, SERVO_INT, OMEGA, WHEEL_INT, ALPHA_F, ALPHA_R = range(13)
N_REF = 13
FIELDS = ('x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'steer', 'steer_rate', 'servo_integral',
          'wheel_speed', 'wheel_integral', 'alpha_front', 'alpha_rear')

FloatArray = np.ndarray
Command = Callable[[float], FloatArray]


@dataclass(frozen=True)
class RefParams:
    """Flat SI parameters of the reference (from ``VehicleParams``), plus the model options."""

    m: float
    iz: float
    lf: float
    lr: float
    h: float
    radius: float
    mu_lat: float
    c_front: float
    c_rear: float
    lateral: Coefficients
    longitudinal: Coefficients
    j_hinge: float
    j_wheel: float
    servo_kp: float
    servo_ki: float
    servo_kd: float
    servo_i_max: float
    servo_max_torque: float
    max_steering_rate: float
    max_steering_angle: float
    steering_gain: float
    steering_offset: float
    wheel_kp: float
    wheel_ki: float
    wheel_kd: float
    wheel_i_max: float
    wheel_max_torque: float
    max_wheel_speed: float
    tyre_model: str = 'linear'
    relaxation_length_front: float = 0.0  # sigma [m]; 0: no relaxation
    relaxation_length_rear: float = 0.0
    load_transfer: bool = False
    load_passes: float = 1
    fiala_stiffness_scales_with_load: bool = True
    g: float = G

    @classmethod
    def from_vehicle(cls, p: VehicleParams, tyre_model: str | None = None,
                     load_transfer: bool = False, **options: object) -> RefParams:
        g, mp, st, dr, ty = p.geometry, p.mass_properties, p.steering, p.drive, p.tyres
        r, w = g.wheel_radius, g.wheel_width

        def coeffs(c: object) -> Coefficients:
            return (float(c.B), float(c.C), float(c.D), float(c.E))  # type: ignore[attr-defined]

        base = cls(
            m=mp.mass, iz=mp.yaw_inertia, lf=g.cg_to_front_axle,
            lr=g.wheelbase - g.cg_to_front_axle, h=g.cg_height, radius=r, mu_lat=p.friction.mu2,
            c_front=ty.cornering_stiffness_front, c_rear=ty.cornering_stiffness_rear,
            lateral=coeffs(ty.pacejka_lateral), longitudinal=coeffs(ty.pacejka_longitudinal),
            j_hinge=(mp.wheel_mass * (3 * r ** 2 + w ** 2) / 12
                     + 0.5 * mp.steering_hinge_mass * (w / 2) ** 2),
            j_wheel=mp.wheel_mass * r ** 2 / 2,
            servo_kp=st.servo_p_gain, servo_ki=st.servo_i_gain, servo_kd=st.servo_d_gain,
            servo_i_max=st.servo_i_max, servo_max_torque=st.servo_max_torque,
            max_steering_rate=st.max_steering_rate, max_steering_angle=st.max_steering_angle,
            steering_gain=st.steering_gain, steering_offset=st.steering_offset,
            wheel_kp=dr.wheel_p_gain, wheel_ki=dr.wheel_i_gain, wheel_kd=dr.wheel_d_gain,
            wheel_i_max=dr.wheel_i_max,
            wheel_max_torque=dr.wheel_max_torque, max_wheel_speed=dr.max_wheel_speed,
            tyre_model=tyre_model or ty.tyre_model, load_transfer=load_transfer,
            relaxation_length_front=float(getattr(ty, 'relaxation_length_front', 0.0)),
            relaxation_length_rear=float(getattr(ty, 'relaxation_length_rear', 0.0)))
        out = replace(base, **options)  # type: ignore[arg-type]
        if out.tyre_model not in TYRE_LAWS:
            raise ValueError(f'unknown tyre model {out.tyre_model!r}')
        if st.steering_linkage_quadratic or st.steering_linkage_cubic:
            raise ValueError('the reference models a linear steering linkage only')
        return out

    @classmethod
    def stack(cls, cars: list[RefParams]) -> RefParams:
        """One RefParams whose per-car fields are (N, 1) arrays (N = len(cars)), for a batch."""
        shared = ('load_passes', 'fiala_stiffness_scales_with_load', 'g')
        values: dict[str, object] = {}
        for f in fields(cls):
            column = [getattr(c, f.name) for c in cars]
            if f.name in shared:
                if len(set(column)) != 1:
                    raise ValueError(f'{f.name} must be equal for every car of a batch')
                values[f.name] = column[0]
            elif f.name in ('lateral', 'longitudinal'):
                values[f.name] = tuple(np.array(c)[:, None] for c in zip(*column))
            else:
                values[f.name] = np.array(column)[:, None]
        return cls(**values)  # type: ignore[arg-type]

    @property
    def wheelbase(self) -> float:
        return self.lf + self.lr

    @property
    def fz_front_static(self) -> float:
        return self.m * self.g * self.lr / self.wheelbase

    @property
    def fz_rear_static(self) -> float:
        return self.m * self.g * self.lf / self.wheelbase


# ---------------------------------------------------------------------------------------------
# the model

@dataclass(frozen=True)
class Forces:
    """Tyre forces, loads and slips of one evaluation (arrays broadcast like the state)."""

    fx_rear: FloatArray
    fy_front: FloatArray
    fy_rear: FloatArray
    fz_front: FloatArray
    fz_rear: FloatArray
    alpha_front: FloatArray  # geometric slip angles
    alpha_rear: FloatArray
    kappa: FloatArray
    v_front_x: FloatArray  # front contact velocity along the wheel


def slip_angles(vx: FloatArray, vy: FloatArray, r: FloatArray, delta: FloatArray,
                p: RefParams, speed_floor: float = 0.0
                ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Slip angles (alpha_f, alpha_r) with |v_x| floored at ``speed_floor`` (0: the geometric
    angles; the relaxation's target floors it at 0.2 m/s, engine.md) and the front contact
    velocity along the wheel."""
    vfx = vx * np.cos(delta) + (vy + p.lf * r) * np.sin(delta)
    vfy = -vx * np.sin(delta) + (vy + p.lf * r) * np.cos(delta)
    return (-np.arctan2(vfy, np.maximum(np.abs(vfx), speed_floor)),
            -np.arctan2(vy - p.lr * r, np.maximum(np.abs(vx), speed_floor)), vfx)


def forces(vx: FloatArray, vy: FloatArray, r: FloatArray, delta: FloatArray,
           omega: FloatArray, p: RefParams,
           alpha_relaxed: tuple[FloatArray, FloatArray] | None = None) -> Forces:
    """Slip angles, slip ratio, axle loads (optionally shifted) and tyre forces.

    ``alpha_relaxed``: the transient slip angles (alpha'_f, alpha'_r), used by the lateral force
    of an axle whose relaxation length is > 0 (None: the geometric angles everywhere).
    """
    alpha_f, alpha_r, vfx = slip_angles(vx, vy, r, delta, p)
    slip_f, slip_r = alpha_f, alpha_r
    if alpha_relaxed is not None:
        slip_f = np.where(np.asarray(p.relaxation_length_front) > 0, alpha_relaxed[0], alpha_f)
        slip_r = np.where(np.asarray(p.relaxation_length_rear) > 0, alpha_relaxed[1], alpha_r)
    kappa = (p.radius * omega - vx) / np.maximum(np.abs(vx), KAPPA_SPEED_FLOOR)
    mu_x = magic_formula(kappa, p.longitudinal)
    fzf0, fzr0 = p.fz_front_static, p.fz_rear_static
    fz_r = fzr0 + 0.0 * mu_x
    if np.any(p.load_transfer):
        k = p.h / p.wheelbase  # load shift per newton of drive force: m ax h / L = Fx h / L
        if math.isinf(p.load_passes):  # exact: Fz_r = Fz_r0 + k Fz_r mu_x
            shifted = fzr0 / (1.0 - k * mu_x)
        else:
            shifted = fz_r
            for _ in range(int(p.load_passes)):
                shifted = fzr0 + k * shifted * mu_x
        fz_r = np.where(p.load_transfer, shifted, fz_r)
    fz_f = fzf0 + fzr0 - fz_r
    return Forces(fx_rear=fz_r * mu_x,
                  fy_front=lateral_force(slip_f, fz_f, fzf0, p.c_front, p),
                  fy_rear=lateral_force(slip_r, fz_r, fzr0, p.c_rear, p),
                  fz_front=fz_f, fz_rear=fz_r, alpha_front=alpha_f, alpha_rear=alpha_r,
                  kappa=kappa, v_front_x=vfx)


def blend_weight(vx: FloatArray) -> FloatArray:
    """Weight of the dynamic rates: 0 below V_BLEND_LOW, 1 above V_BLEND_HIGH, C1 smoothstep."""
    s = np.clip((np.abs(vx) - V_BLEND_LOW) / (V_BLEND_HIGH - V_BLEND_LOW), 0.0, 1.0)
    return s * s * (3.0 - 2.0 * s)


def velocity_rates(vx: FloatArray, vy: FloatArray, r: FloatArray, delta: FloatArray,
                   f: Forces, p: RefParams) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(dvx, dvy, dr): Newton-Euler in the rotating body frame, blended with the kinematic model.

    Kinematic rates: the kinematic bicycle at the held steering angle, ``dr = dvx tan(delta) / L``
    and ``dvy = lr dr`` (the time derivative of the constraint ``r = vx tan(delta) / L``, ``vy =
    lr r`` with delta constant, as in CommonRoad's KS-based low-speed rates without their
    steering-rate term), plus the documented 20 ms relaxation onto the constraint.
    """
    cd, sd = np.cos(delta), np.sin(delta)
    dvx_dyn = (f.fx_rear - f.fy_front * sd) / p.m + vy * r
    dvy_dyn = (f.fy_rear + f.fy_front * cd) / p.m - vx * r
    dr_dyn = (p.lf * f.fy_front * cd - p.lr * f.fy_rear) / p.iz
    tan_delta = np.tan(delta)
    r_kin = vx * tan_delta / p.wheelbase
    dvx_kin = f.fx_rear / p.m
    dr_kin = dvx_kin * tan_delta / p.wheelbase + (r_kin - r) / KINEMATIC_TAU
    dvy_kin = p.lr * dvx_kin * tan_delta / p.wheelbase + (p.lr * r_kin - vy) / KINEMATIC_TAU
    w = blend_weight(vx)
    return (w * dvx_dyn + (1 - w) * dvx_kin, w * dvy_dyn + (1 - w) * dvy_kin,
            w * dr_dyn + (1 - w) * dr_kin)


def steering_target(delta_cmd: FloatArray, p: RefParams) -> FloatArray:
    """Trim and saturation: clip(gain delta_cmd + offset, +-max_steering_angle)."""
    return np.clip(p.steering_gain * delta_cmd + p.steering_offset, -p.max_steering_angle,
                   p.max_steering_angle)


def servo_torque(z: FloatArray, target: FloatArray, p: RefParams) -> FloatArray:
    """Unsaturated hinge PID torque (the limits are checked, not modelled)."""
    integral = np.clip(p.servo_ki * z[SERVO_INT], -p.servo_i_max, p.servo_i_max)
    return p.servo_kp * (target - z[DELTA]) + integral - p.servo_kd * z[DELTA_RATE]


def wheel_torque(omega: FloatArray, integral: FloatArray, target: FloatArray,
                 p: RefParams) -> FloatArray:
    """Speed-loop torque on one rear wheel, saturated at wheel_max_torque."""
    i_term = np.clip(p.wheel_ki * integral, -p.wheel_i_max, p.wheel_i_max)
    return np.clip(p.wheel_kp * (target - omega) + i_term, -p.wheel_max_torque,
                   p.wheel_max_torque)


def _clamped_integral_rate(error: FloatArray, integral: FloatArray, ki: FloatArray,
                           i_max: FloatArray) -> FloatArray:
    """d/dt of a PID integral whose term ``Ki I`` is held within ``+-i_max`` (gz-math PID clamps
    the accumulated integral term: no wind-up beyond the limit)."""
    term = ki * integral
    held = ((term >= i_max) & (error > 0)) | ((term <= -i_max) & (error < 0))
    return np.where(held & (ki > 0), 0.0, error)


def rhs(z: FloatArray, delta_cmd: FloatArray, omega_cmd: FloatArray, p: RefParams) -> FloatArray:
    """dz/dt for states ``z`` of shape (N_REF, ...) and commands broadcasting to z[0]."""
    vx, vy, r, delta, omega = z[VX], z[VY], z[R], z[DELTA], z[OMEGA]
    f = forces(vx, vy, r, delta, omega, p, (z[ALPHA_F], z[ALPHA_R]))
    dvx, dvy, dr = velocity_rates(vx, vy, r, delta, f, p)
    target = steering_target(delta_cmd, p)
    omega_target = np.clip(omega_cmd, -p.max_wheel_speed, p.max_wheel_speed)
    tau = wheel_torque(omega, z[WHEEL_INT], omega_target, p)
    cpsi, spsi = np.cos(z[PSI]), np.sin(z[PSI])
    dz = np.empty(np.broadcast_shapes(z.shape, (N_REF, *np.shape(dvx))))
    dz[X] = vx * cpsi - vy * spsi
    dz[Y] = vx * spsi + vy * cpsi
    dz[PSI] = r
    dz[VX], dz[VY], dz[R] = dvx, dvy, dr
    dz[DELTA] = z[DELTA_RATE]
    dz[DELTA_RATE] = servo_torque(z, target, p) / p.j_hinge
    dz[SERVO_INT] = _clamped_integral_rate(target - delta, z[SERVO_INT], p.servo_ki,
                                           p.servo_i_max)
    # D on the measured speed: tau_D = -Kd d(omega)/dt adds 2 Kd to the lumped inertia
    dz[OMEGA] = (2 * tau - p.radius * f.fx_rear) / (2 * p.j_wheel + 2 * p.wheel_kd)
    dz[WHEEL_INT] = _clamped_integral_rate(omega_target - omega, z[WHEEL_INT], p.wheel_ki,
                                           p.wheel_i_max)
    target_f, target_r, _ = slip_angles(vx, vy, r, delta, p, RELAXATION_SPEED_FLOOR)
    dz[ALPHA_F] = relaxation_rate(target_f, z[ALPHA_F], f.v_front_x, p.relaxation_length_front)
    dz[ALPHA_R] = relaxation_rate(target_r, z[ALPHA_R], vx, p.relaxation_length_rear)
    return dz


def initial_state(p: RefParams, vx: FloatArray | float, delta: FloatArray | float = 0.0,
                  n: int | None = None) -> FloatArray:
    """Cars at rest or rolling straight with base_link at the origin (CG at x = lr), the
    transient slip angles at their targets (the steady state, as engine.md states)."""
    vx = np.asarray(vx, dtype=float)
    n = n if n is not None else max(vx.size, np.size(delta))
    z = np.zeros((N_REF, n))
    z[X] = np.reshape(p.lr, -1)
    z[VX] = vx
    z[DELTA] = delta
    z[OMEGA] = vx / np.reshape(p.radius, -1)
    alpha_f, alpha_r, _ = slip_angles(z[VX][:, None], z[VY][:, None], z[R][:, None],
                                      z[DELTA][:, None], p, RELAXATION_SPEED_FLOOR)
    z[ALPHA_F], z[ALPHA_R] = alpha_f[:, 0], alpha_r[:, 0]
    return z


@dataclass(frozen=True)
class Solution:
    """Reference histories: ``z`` is (N_REF, N, M) at times ``t`` (M,)."""

    t: FloatArray
    z: FloatArray
    params: RefParams
    delta_cmd: Command
    omega_cmd: Command

    def __getitem__(self, field: str) -> FloatArray:
        return self.z[FIELDS.index(field)]


def simulate(p: RefParams, z0: FloatArray, delta_cmd: Command, omega_cmd: Command,
             t_out: FloatArray, rtol: float = 1e-10, atol: float = 1e-11) -> Solution:
    """Integrate the batch with Radau (stiff wheel slip) and return it at ``t_out``.

    ``delta_cmd(t)`` and ``omega_cmd(t)`` return (N,) commands; they must be smooth (the engine
    receives them sampled at the middle of each physics step, see ``manoeuvres``). A batch without
    relaxation leaves its constant alpha' rows out of the solve (same steps as without them).
    """
    n = z0.shape[1]
    relaxed = bool(np.any(np.asarray(p.relaxation_length_front) > 0)
                   or np.any(np.asarray(p.relaxation_length_rear) > 0))
    k_n = N_REF if relaxed else ALPHA_F  # integrated states
    rows = (np.arange(k_n)[:, None, None] * n + np.arange(n)[None, None, :]).repeat(k_n, 1)
    cols = (np.arange(k_n)[None, :, None] * n + np.arange(n)[None, None, :]).repeat(k_n, 0)

    def full(y: FloatArray) -> FloatArray:
        z = y.reshape(k_n, n, -1)
        if relaxed:
            return z
        held = np.broadcast_to(z0[ALPHA_F:, :, None], (N_REF - k_n, n, z.shape[2]))
        return np.concatenate([z, held])

    def fun(t: float, y: FloatArray) -> FloatArray:
        dz = rhs(full(y), delta_cmd(t)[:, None], omega_cmd(t)[:, None], p)
        return dz[:k_n].reshape(y.shape)

    def jac(t: float, y: FloatArray) -> csr_matrix:
        """Forward differences, one state at a time for every car at once (cars independent)."""
        z = full(y[:, None])
        d, w = delta_cmd(t)[:, None], omega_cmd(t)[:, None]
        f0 = rhs(z, d, w, p)
        blocks = np.empty((k_n, k_n, n))  # [row state, column state, car]
        for k in range(k_n):
            step = 1e-7 * np.maximum(1.0, np.abs(z[k]))
            zk = z.copy()
            zk[k] += step
            blocks[:, k] = ((rhs(zk, d, w, p) - f0)[:k_n] / step)[..., 0]
        return csr_matrix((blocks.ravel(), (rows.ravel(), cols.ravel())),
                          shape=(k_n * n, k_n * n))

    sol = solve_ivp(fun, (float(t_out[0]), float(t_out[-1])), z0[:k_n].ravel(), method='Radau',
                    t_eval=t_out, rtol=rtol, atol=atol, vectorized=True, jac=jac)
    if not sol.success:
        raise RuntimeError(f'reference integration failed: {sol.message}')
    return Solution(t=sol.t, z=full(sol.y), params=p, delta_cmd=delta_cmd, omega_cmd=omega_cmd)


def check_servo_linear(sol: Solution, margin: float = 0.95) -> None:
    """Assert that the servo limits the reference omits were never reached in ``sol``."""
    p = sol.params
    target = np.stack([steering_target(sol.delta_cmd(t)[:, None], p)[:, 0] for t in sol.t],
                      axis=-1)  # (N, M)
    torque = servo_torque(sol.z, target, p)

    def within(value: FloatArray, limit: FloatArray | float) -> bool:
        return bool(np.all(np.max(np.abs(value), axis=-1) < margin * np.reshape(limit, -1)))

    assert within(torque, p.servo_max_torque), 'servo torque limit reached'
    assert within(sol['steer_rate'], p.max_steering_rate), 'slew limit reached'
    assert within(sol['steer'], p.max_steering_angle), 'steering stop reached'


def steady_state(p: RefParams, delta: float, omega_cmd: float,
                 guess: tuple[float, float, float, float] | None = None) -> dict[str, float]:
    """Steady cornering (dvx = dvy = dr = d(omega) = 0) at the actual steering angle ``delta``.

    With a proportional-only speed loop (``wheel_ki = 0``) the wheel settles where the loop torque
    carries the drive force, ``2 Kp (omega* - omega) = R Fx_r``. A relaxed axle adds alpha' as an
    unknown and ``dalpha'/dt = 0`` as an equation (nothing assumes alpha' = alpha). Solved to
    machine precision by Powell's hybrid method: no integration error at all.
    """
    if p.wheel_ki != 0.0:
        raise ValueError('steady_state needs a proportional speed loop (wheel_ki = 0)')
    v0 = p.radius * omega_cmd
    x0 = list(guess if guess is not None
              else (v0, 0.0, v0 * math.tan(delta) / p.wheelbase, omega_cmd))
    relaxed = [k for k, sigma in ((ALPHA_F, p.relaxation_length_front),
                                  (ALPHA_R, p.relaxation_length_rear)) if sigma > 0]
    x0 += [0.0] * len(relaxed)

    def state(u: FloatArray) -> FloatArray:
        z = np.zeros((N_REF, 1))
        z[VX], z[VY], z[R], z[DELTA], z[OMEGA] = u[0], u[1], u[2], delta, u[3]
        for i, k in enumerate(relaxed):
            z[k] = u[4 + i]
        return z

    def residual(u: FloatArray) -> FloatArray:
        dz = rhs(state(u), np.array([delta]), np.array([omega_cmd]), p)
        return np.array([dz[VX, 0], dz[VY, 0], dz[R, 0] * p.iz / p.m, dz[OMEGA, 0] * 1e-3,
                         *(dz[k, 0] * 1e-2 for k in relaxed)])

    res = root(residual, np.array(x0), method='hybr', tol=1e-13)
    if np.max(np.abs(residual(res.x))) > 1e-10:  # 'xtol too small' at machine precision is fine
        raise RuntimeError(f'steady state not found: {res.message}')
    z = state(res.x)
    f = forces(z[VX], z[VY], z[R], z[DELTA], z[OMEGA], p)
    z[ALPHA_F], z[ALPHA_R] = (z[k] if k in relaxed else a
                              for k, a in ((ALPHA_F, f.alpha_front), (ALPHA_R, f.alpha_rear)))
    return {q: float(z[FIELDS.index(q), 0]) for q in ('vx', 'vy', 'yaw_rate', 'wheel_speed',
                                                      'alpha_front', 'alpha_rear')}
