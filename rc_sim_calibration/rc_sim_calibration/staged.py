"""Staged identification: start values from the data, before the global search.

Each stage uses a model that is linear in the parameters it estimates, so it is solved by least
squares (and a small grid over the one or two time constants), on every training recording:

1. **Measured point** (offset unknown): the lever-arm regression of
   :mod:`rc_sim_calibration.measured_point` (o_x, o_yaw).
2. **Steering: delay, lag, gain, trim, understeer.** The "measured" bicycle angle of the
   kinematic single track with an understeer gradient K (Rajamani, *Vehicle Dynamics and
   Control*, 2012, eq. 3.15), ``delta = L r / v + K v r``, against the command delayed by T and
   lagged by tau: ``L r / v = offset + g (Lag_tau Delay_T c) - K v r``. For every (T, tau) of a
   grid the regression on ``(1, Lag Delay c, v r)`` gives g, offset, K and a residual; the best
   (T, tau) is kept. A transport delay shifts the response, a lag also smooths it, so steps and
   chirps separate the two. Normalised commands: the map ``offset + g_l phi_kl(s) + g_r
   phi_kr(s)`` (one column per side), with a grid over the shapes k_l, k_r.
3. **Tyres** from K (per-load cornering stiffnesses c_f, c_r; K g = 1/c_f - 1/c_r) with the base
   car's per-load front stiffness.
4. **Drive, speed commands** (speed-loop ESC): the effective rolling radius R = median of
   v / omega_cmd over straight segments where the command has been constant for 1 s; then the
   ESC's time constant and acceleration / braking limits by a grid simulation of the
   first-order, rate-limited wheel speed against the measured speed.
5. **Drive, throttle** (ESC + DC motor): ``m a + m (l_r/L) v r tan(delta) = C_m1 d - C_m2 d v -
   C_r0 - C_r1 v - C_r2 v|v| - (C_m1 - C_m2 v) d_0 sgn d`` with d the lagged duty (grid over its
   time constant), solved by non-negative least squares; coasting samples (duty 0, e.g. the
   deadman off) separate the resistances from the dead band d_0.

Speeds and yaw rates come from the measured pose (the same truth as the windows' cost), velocity
of the measured point in its axes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import math

import numpy as np

from rc_sim_calibration.dataset import Dataset
from rc_sim_calibration.measured_point import LeverArm, lever_arm_regression
from rc_sim_description.constants import GRAVITY_MPS2 as GRAVITY
from rc_sim_description.params import VehicleParams, load_vehicle_params

__all__ = ['Signals', 'StageResult', 'initial_values', 'sample_commands', 'signals']

Array = np.ndarray
CMD_DT = 0.002                       # [s] command grid of the stages
LATENCY_GRID = np.arange(0.0, 0.1201, 0.01)
LAG_GRID = np.array([0.0, 0.015, 0.03, 0.045, 0.06, 0.08, 0.1, 0.13, 0.16, 0.2])
SHAPE_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
MIN_SPEED = 0.5                      # [m/s] steering stage: kinematic relation valid above


@dataclass(frozen=True)
class Signals:
    """One dataset's signals on its grid: t, speed v and lateral velocity vy of the measured
    point (own axes), pose yaw rate r, longitudinal acceleration a; commands on a 2 ms grid
    (``tc``, ``steer``, ``drive`` gated by the deadman)."""

    t: Array
    v: Array
    vy: Array
    r: Array
    a: Array
    tc: Array
    steer: Array
    drive: Array


@dataclass
class StageResult:
    """Start values (parameter -> value) and one line per stage saying what it found."""

    values: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    lever: LeverArm | None = None
    residual: float = math.nan


def signals(ds: Dataset) -> Signals:
    """Savitzky-Golay pose derivatives (0.25 s, order 2) and the command grid of one dataset."""
    from scipy.signal import savgol_filter

    dt = float(np.median(np.diff(ds.t)))
    win = max(5, round(0.25 / dt) | 1)
    if win > ds.t.size:
        win = ds.t.size - (1 - ds.t.size % 2)
    r = savgol_filter(ds.pose_yaw, win, 2, deriv=1, delta=dt) if win >= 3 else 0 * ds.t
    a = savgol_filter(ds.mvx, win, 2, deriv=1, delta=dt) if win >= 3 else 0 * ds.t
    tc = np.arange(ds.t[0] - 0.3, ds.t[-1] + CMD_DT, CMD_DT)
    steer, drive = ds.commands_at(tc)
    return Signals(t=ds.t, v=ds.mvx, vy=ds.mvy, r=r, a=a, tc=tc, steer=steer, drive=drive)


def _lag(u: Array, tau: float) -> Array:
    """First-order lag of a zero-order-held series on the CMD_DT grid, started settled."""
    if tau <= 0:
        return u
    from scipy.signal import lfilter

    a = math.exp(-CMD_DT / tau)
    y, _ = lfilter([0.0, 1.0 - a], [1.0, -a], u, zi=[a * u[0]])
    return np.asarray(y)


def _delay(u: Array, latency: float) -> Array:
    n = round(latency / CMD_DT)
    return np.concatenate([np.full(n, u[0]), u[:u.size - n]]) if n else u


def _at(sig: Signals, u: Array) -> Array:
    """Values of a CMD_DT-grid series at the data grid times."""
    idx = np.clip(np.round((sig.t - sig.tc[0]) / CMD_DT).astype(int), 0, u.size - 1)
    return u[idx]


def sample_commands(sig: Signals) -> tuple[Array, Array]:
    """(steering, drive) commands at the data grid times (drive gated by the deadman)."""
    return _at(sig, sig.steer), _at(sig, sig.drive)


def _shape(s: Array, k: float) -> Array:
    return s if k < 1e-4 else np.tanh(k * s) / math.tanh(k)


def _side_columns(s: Array, kl: float, kr: float) -> tuple[Array, Array]:
    s = np.clip(s, -1.0, 1.0)
    return np.where(s >= 0, _shape(s, kl), 0.0), np.where(s < 0, _shape(s, kr), 0.0)


def _steering_stage(sigs: Sequence[Signals], wheelbase: float, kind: str,
                    fixed_latency: float | None) -> dict[str, float] | None:
    """Stage 2 (module docstring); None when too few moving samples."""
    ys, vr, use = [], [], []
    for s in sigs:
        ok = (s.v > MIN_SPEED) & np.isfinite(s.r)
        delta = np.arctan(wheelbase * s.r / np.where(ok, s.v, 1.0))
        ok &= np.abs(delta) < 0.6
        ys.append(delta)
        vr.append(s.v * s.r)
        use.append(ok)
    if sum(int(u.sum()) for u in use) < 100:
        return None
    y = np.concatenate([a[u] for a, u in zip(ys, use)])
    vr_c = np.concatenate([a[u] for a, u in zip(vr, use)])

    def columns(latency: float, tau: float, kl: float, kr: float) -> list[Array]:
        cols: list[list[Array]] = []
        for s, u in zip(sigs, use):
            cmd = _delay(s.steer, latency)
            parts: tuple[Array, ...] = _side_columns(cmd, kl, kr) if kind == 'normalised' \
                else (cmd,)
            cols.append([_at(s, _lag(p, tau))[u] for p in parts])
        return [np.concatenate([c[i] for c in cols]) for i in range(len(cols[0]))]

    def solve(cmd_cols: list[Array]) -> tuple[Array, float]:
        x = np.column_stack([*cmd_cols, np.ones_like(y), -vr_c])
        coef, *_ = np.linalg.lstsq(x, y, rcond=None)
        res = y - x @ coef
        return coef, float(res @ res)

    lat_grid = LATENCY_GRID if fixed_latency is None else np.array([fixed_latency])
    best = (math.inf, 0.0, 0.0)
    for lat in lat_grid:
        for tau in LAG_GRID:
            _, sse = solve(columns(float(lat), float(tau), 0.0, 0.0))
            if sse < best[0]:
                best = (sse, float(lat), float(tau))
    _, lat, tau = best
    out = {'command_latency': lat, 'servo_time_constant': tau, 'samples': float(y.size)}
    if kind == 'normalised':
        best_k = (math.inf, 0.0, 0.0, np.zeros(4))
        for kl in SHAPE_GRID:
            for kr in SHAPE_GRID:
                coef, sse = solve(columns(lat, tau, float(kl), float(kr)))
                if sse < best_k[0] and coef[0] > 0 and coef[1] > 0:
                    best_k = (sse, float(kl), float(kr), coef)
        sse, kl, kr, coef = best_k
        if not math.isfinite(sse):
            return None
        out.update(steering_gain_left=float(coef[0]), steering_gain_right=float(coef[1]),
                   steering_curvature_left=kl, steering_curvature_right=kr,
                   steering_offset=float(coef[2]), understeer=float(coef[3]))
    else:
        coef, sse = solve(columns(lat, tau, 0.0, 0.0))
        out.update(steering_gain=float(coef[0]), steering_offset=float(coef[1]),
                   understeer=float(coef[2]))
    out['rms'] = math.sqrt(sse / y.size)
    return out


def _radius_stage(sigs: Sequence[Signals], latency: float) -> tuple[float, int] | None:
    """Stage 4a: median v / omega_cmd on straight segments with a command constant for 1 s."""
    ratios: list[Array] = []
    for relax in (0.15, 1.0):
        ratios = []
        for s in sigs:
            cmd = _delay(s.drive, latency)
            n = round(1.0 / CMD_DT)
            kernel = np.ones(n) / n
            mean = np.convolve(cmd, kernel, mode='full')[:cmd.size]
            sq = np.convolve(cmd * cmd, kernel, mode='full')[:cmd.size]
            spread = np.sqrt(np.maximum(sq - mean * mean, 0.0))
            w = _at(s, cmd)
            steady = (_at(s, spread) < 0.01 * np.abs(w) + 1e-6) & (np.abs(w) > 1.0) & \
                (np.abs(s.r) < relax) & (s.v > 0.3) & (np.abs(s.a) < 0.3)
            steady &= np.arange(s.t.size) > 0
            ratios.append(s.v[steady] / w[steady])
        got = np.concatenate(ratios)
        if got.size >= 25:
            return float(np.median(got)), int(got.size)
    return None


def _esc_stage(sigs: Sequence[Signals], latency: float, radius: float
               ) -> tuple[float, float, float]:
    """Stage 4b: (tau, a_acc, a_brake) of the first-order rate-limited ESC by grid simulation."""
    taus = np.array([0.03, 0.05, 0.08, 0.12, 0.17, 0.25, 0.35, 0.5])
    accs = np.array([1.0, 2.0, 3.0, 4.5, 6.5, 10.0])
    tt, aa, bb = np.meshgrid(taus, accs, accs, indexing='ij')
    tau, acc, brk = tt.ravel(), aa.ravel(), bb.ravel()
    sse = np.zeros(tau.size)
    for s in sigs:
        target = radius * _at(s, _delay(s.drive, latency))
        dt = float(np.median(np.diff(s.t)))
        v = np.full(tau.size, s.v[0])
        decay = np.exp(-dt / tau)
        for k in range(1, s.t.size):
            free = target[k - 1] + (v - target[k - 1]) * decay
            dv = free - v
            up = np.abs(free) > np.abs(v)
            v = v + np.clip(dv, -np.where(up, acc, brk) * dt, np.where(up, acc, brk) * dt)
            moving = s.v[k] > 0.1
            sse += moving * (v - s.v[k]) ** 2
    i = int(np.argmin(sse))
    return float(tau[i]), float(acc[i]), float(brk[i])


def _throttle_stage(sigs: Sequence[Signals], latency: float, p: VehicleParams
                    ) -> dict[str, float] | None:
    """Stage 5 (module docstring): NNLS over a grid of duty time constants."""
    from scipy.optimize import nnls

    m, big_l = p.mass_properties.mass, p.geometry.wheelbase
    lr = p.geometry.cg_to_rear_axle
    best: tuple[float, float, Array, int] = (math.inf, 0.0, np.zeros(7), 0)
    for tau in (0.02, 0.04, 0.06, 0.08, 0.1, 0.13, 0.17):
        rows, targets = [], []
        n_coast = 0
        for s in sigs:
            d = _at(s, _lag(_delay(s.drive, latency), tau))
            v = s.v
            ok = (v > 0.2) & np.isfinite(s.a)
            delta = np.arctan(big_l * s.r / np.maximum(v, 0.2))
            force = m * s.a + m * lr / big_l * v * s.r * np.tan(delta)
            drv = np.abs(d) > 0.02
            coast = ~drv
            n_coast += int((coast & ok).sum())
            sg, sv = np.sign(d), np.sign(v)
            x = np.column_stack([
                np.where(drv, d, 0.0), np.where(drv, -sg * d * v, 0.0), -sv, -v, -v * np.abs(v),
                np.where(drv, -sg, 0.0), np.where(drv, v, 0.0)])
            rows.append(x[ok])
            targets.append(force[ok])
        x_all, y_all = np.vstack(rows), np.concatenate(targets)
        if y_all.size < 100:
            return None
        if n_coast < 50:                 # no coasting: the dead band is not separable
            x_all = x_all[:, :5]
        coef, rnorm = nnls(x_all, y_all)
        if rnorm < best[0]:
            best = (float(rnorm), tau, np.pad(coef, (0, 7 - coef.size)), n_coast)
    rnorm, tau, c, n_coast = best
    if not c[0] > 0:
        return None
    out = {'motor_force_gain': float(c[0]), 'motor_back_emf_gain': float(c[1]),
           'rolling_resistance': float(c[2]), 'viscous_resistance': float(c[3]),
           'drag_coefficient': float(c[4]), 'throttle_time_constant': tau,
           'throttle_dead_band': float(np.clip(c[5] / c[0], 0.0, 0.5)),
           'coast_samples': float(n_coast)}
    return out


def default_inertia_scaled(p: VehicleParams) -> float | None:
    """m L^2-scaled yaw inertia when the base kept vehicle.yaml's inertia but another car's
    mass or wheelbase (None otherwise)."""
    d = load_vehicle_params()
    if not math.isclose(p.mass_properties.yaw_inertia, d.mass_properties.yaw_inertia):
        return None
    m, big_l = p.mass_properties.mass, p.geometry.wheelbase
    m0, l0 = d.mass_properties.mass, d.geometry.wheelbase
    if math.isclose(m, m0) and math.isclose(big_l, l0):
        return None
    return d.mass_properties.yaw_inertia * (m / m0) * (big_l / l0) ** 2


def initial_values(datasets: Sequence[Dataset], base: VehicleParams, *, fit_offset: bool,
                   fixed_latency: float | None = None) -> StageResult:
    """Start values of the stages above for the command kinds of ``datasets``."""
    out = StageResult()
    sigs = [signals(ds) for ds in datasets]
    kind, drive_kind = datasets[0].steering_kind, datasets[0].drive_kind
    if fit_offset:
        lever = lever_arm_regression(np.concatenate([s.v for s in sigs]),
                                     np.concatenate([s.vy for s in sigs]),
                                     np.concatenate([s.r for s in sigs]))
        out.lever = lever
        if lever is not None:
            out.values['pose_offset_x'] = float(np.clip(lever.x, -0.3, 0.5))
            out.values['pose_offset_yaw'] = float(np.clip(lever.yaw, -0.1, 0.1))
            out.notes.append(f'measured point: lever-arm regression o_x = {lever.x:+.3f} m '
                             f'(se {lever.x_se:.3f}), o_yaw = {lever.yaw:+.4f} rad')
    big_l = base.geometry.wheelbase
    st = _steering_stage(sigs, big_l, kind, fixed_latency)
    latency = fixed_latency if fixed_latency is not None else base.timing.command_latency
    # the slew limit acts only above a rate: started (nearly) inactive, at 2.5 times the base
    # value, the fit lowers it where the data show it, instead of a limit too low from the
    # start that a shorter delay would then compensate
    out.values['max_steering_rate'] = 2.5 * base.steering.max_steering_rate
    out.values['steering_backlash'] = 0.002    # inside the play operator's smooth range
    if st is not None:
        latency = st['command_latency']
        out.values['command_latency'] = latency
        out.values['servo_time_constant'] = max(st['servo_time_constant'], 0.01)
        keys = ('steering_gain_left', 'steering_gain_right', 'steering_curvature_left',
                'steering_curvature_right', 'steering_offset') if kind == 'normalised' else \
            ('steering_gain', 'steering_offset')
        out.values.update({k: st[k] for k in keys})
        out.residual = st['rms']
        shown = ', '.join(f'{k} {st[k]:.4g}' for k in keys)
        out.notes.append(f'steering: delay {latency * 1e3:.0f} ms, lag '
                         f'{st["servo_time_constant"] * 1e3:.0f} ms, {shown}, understeer '
                         f'gradient {st["understeer"]:.4g} rad/(m/s^2) '
                         f'({st["samples"]:.0f} samples, rms {st["rms"]:.4f} rad)')
        _tyres_from_understeer(st['understeer'], base, out)
    else:
        out.notes.append('steering: too few samples above 0.5 m/s for the steering stage')
    if drive_kind == 'acceleration':  # no stage of its own: gain 1, the base's lag and limits
        out.notes.append('acceleration drive: starts from the base values (gain '
                         f'{base.drive.acceleration_gain:g}, lag '
                         f'{base.drive.acceleration_time_constant:g} s)')
    elif drive_kind == 'throttle':
        th = _throttle_stage(sigs, latency, base)
        if th is not None:
            n_coast = th.pop('coast_samples')
            out.values.update(th)
            out.notes.append('throttle drive: ' + ', '.join(f'{k} {v:.4g}' for k, v in th.items())
                             + f' ({n_coast:.0f} coasting samples)')
    else:
        rad = _radius_stage(sigs, latency)
        radius = base.effective_wheel_radius
        if rad is not None:
            radius = rad[0]
            out.values['effective_wheel_radius'] = radius
            out.notes.append(f'rolling radius {radius:.5g} m from {rad[1]} steady straight '
                             f'samples (nominal {base.geometry.wheel_radius:.5g} m)')
        tau, acc, brk = _esc_stage(sigs, latency, radius)
        out.values.update(drive_time_constant=tau, max_acceleration=acc, max_deceleration=brk)
        out.notes.append(f'speed-loop ESC: time constant {tau:.3g} s, limits {acc:.3g} / '
                         f'{brk:.3g} m/s^2')
    return out


def _tyres_from_understeer(k_us: float, p: VehicleParams, out: StageResult) -> None:
    """Cornering stiffnesses from K g = 1/c_f - 1/c_r (per-load stiffnesses): the front one
    stays at the base car's per-load value, the rear one follows from K."""
    g, m = p.geometry, p.mass_properties.mass
    fz_f = m * GRAVITY * g.cg_to_rear_axle / g.wheelbase
    fz_r = m * GRAVITY * g.cg_to_front_axle / g.wheelbase
    c_f = float(np.clip(p.tyres.cornering_stiffness_front / fz_f, 2.0, 20.0))
    inv_r = 1.0 / c_f - max(k_us, 0.0) * GRAVITY
    c_r = float(np.clip(1.0 / inv_r, c_f, 4.0 * c_f)) if inv_r > 0 else 4.0 * c_f
    out.values['cornering_stiffness_front'] = c_f * fz_f
    out.values['cornering_stiffness_rear'] = c_r * fz_r
    out.notes.append(f'tyres from the understeer gradient: C_f {c_f * fz_f:.4g}, C_r '
                     f'{c_r * fz_r:.4g} N/rad ({c_f:.3g} and {c_r:.3g} per unit load)')
