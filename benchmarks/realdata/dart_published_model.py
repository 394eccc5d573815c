"""The DART car builders' published physics model, re-implemented to predict prediction windows.

    python benchmarks/realdata/dart_published_model.py --bag B --recording R.yaml --out P.csv \
        [--horizon 1.0]

Source: github.com/Lorenzo-Lyons/DART, commit 4b52523294ad324efcfcb7d47f50ea8cbd1f6982 (MIT),
file ``DART_dynamic_models/DART_dynamic_models/dart_dynamic_models.py`` (cited below as ``ddm``):
measured numbers in ``directly_measured_model_parameters``, fitted ones in ``model_parameters``,
the equations in the methods of ``model_functions`` and in ``dyn_model_culomb_tires.forward``,
which the builders' own long-term prediction script
(``System_identification/9_1_validating_models_long_term_prediction copy.py``) uses as its
physics-based model with ``steering_friction_flag = True`` and ``pitch_dynamics_flag = False``.
This file is written from those equations; no code is copied.

Model (state at the centre of mass, body axes of base_link; s = normalised steering, d = throttle)
  actuators  first-order lags of the commands, d_f' = (d - d_f)/tau_d, s_f' = (s - s_f)/tau_s,
             tau_d = time_C_m = 0.0843 s, tau_s = k_stdn = 0.1285 s
             (``continuous_time_1st_order_dynamics``, ``throttle_dynamics_data_processing``,
             ``steering_dynamics_data_processing``); the throttle is 0 while the deadman is off
             (``merge_data_files_from_a_folder``, ``process_rosbag_data``)
  steering   delta = w b tanh(a (s_f + c)) + (1 - w) d tanh(e (s_f + c)), w = (tanh(30 (s_f + c)) + 1)/2
             (``steering_2_steering_angle``)
  drive      F_m = (a_m - b_m vx) w_m (d_f + c_m), w_m = (tanh(100 (d_f + c_m)) + 1)/2 (``motor_force``)
  friction   F_r = -(a_f tanh(b_f vx) + c_f vx + d_f vx^2) (``rolling_friction``)
             F_s = -(1 + tanh(20 (vx - 0.3)))/2 (e_st + d_st (vx - 0.5)) (a_st + b_st delta tanh(30 delta))
             (``F_friction_due_to_steering``)
             F_x = F_m + F_r + F_s, split front/rear by the static axle loads m_f/m, m_r/m
  tyres      slip angles with the builders' low-speed term: V_f = v_xf + exp(-3 v_xf^2),
             V_r = vx + exp(-3 vx^2), alpha = atan2(v_y,wheel, V) (``evaluate_slip_angles``);
             F_y = m_axle g D sin(C atan(B alpha)) (``lateral_tire_force``, g = 9.81)
  body       planar rigid body, vx' = F_X/m + r vy, vy' = F_Y/m - r vx, r' = M_z/J_z
             (``solve_rigid_body_dynamics``)
Integration: classical Runge-Kutta with a fixed 2.5 ms step from each window's measured initial
state (the builders integrate with forward Euler at their 100 Hz sample rate), output linearly
interpolated at the pose stamps and moved to the recording's measured frame.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
import sys

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate_predictions import EvaluationError, Recording, Signal, read_recording

from rc_sim_calibration.baselines import (
    PredictionTable,
    Windows,
    make_pose_track,
    make_windows,
    measured_from_reference,
    reference_from_measured,
    write_prediction_csv,
)

FloatArray = NDArray[np.float64]
SOURCE = 'Lorenzo-Lyons/DART@4b52523294ad324efcfcb7d47f50ea8cbd1f6982'
STEP = 0.0025  # [s] Runge-Kutta step


@dataclass(frozen=True)
class DartParameters:
    """The builders' numbers (``ddm`` = their dart_dynamic_models.py at SOURCE).

    Measured (``directly_measured_model_parameters``): wheelbase ``l``, mass ``m``, axle loads
    ``m_front_wheel``/``m_rear_wheel`` [kg], width ``l_width``. Fitted (``model_parameters``):
    motor ``a_m, b_m, c_m, time_C_m``; rolling friction ``a_f..d_f``; steering map ``a_s..e_s``
    (``c_s`` includes their -0.03 adjustment); tyres ``d_t_*, c_t_*, b_t_*``; steering friction
    ``a_stfr, b_stfr, d_stfr, e_stfr``; steering time constant ``k_stdn``.
    """

    wheelbase: float = 0.1735
    mass: float = 1.580
    mass_front: float = 0.847
    mass_rear: float = 0.733
    width: float = 0.08
    a_m: float = 25.35849952697754
    b_m: float = 4.815326690673828
    c_m: float = -0.16377617418766022
    tau_throttle: float = 0.0843319296836853
    a_f: float = 1.2659882307052612
    b_f: float = 7.666370391845703
    c_f: float = 0.7393041849136353
    d_f: float = -0.11231517791748047
    a_s: float = 1.392930030822754
    b_s: float = 0.36576229333877563
    c_s: float = 0.0029959678649902344 - 0.03
    d_s: float = 0.5147881507873535
    e_s: float = 1.0230425596237183
    d_t_f: float = -0.8406859636306763
    c_t_f: float = 0.8407371044158936
    b_t_f: float = 8.598039627075195
    d_t_r: float = -0.8546739816665649
    c_t_r: float = 0.959108829498291
    b_t_r: float = 11.54928207397461
    a_stfr: float = -0.11826395988464355
    b_stfr: float = 5.915864944458008
    d_stfr: float = 0.22619032859802246
    e_stfr: float = 0.7793111801147461
    tau_steering: float = 0.12851488590240479
    gravity: float = 9.81

    @property
    def cg_to_rear_axle(self) -> float:
        """lr = l / (1 + m_rear/m_front) = 0.0930 m (``ddm`` COM_positon)."""
        return self.wheelbase / (1.0 + self.mass_rear / self.mass_front)

    @property
    def cg_to_front_axle(self) -> float:
        """lf = l - lr = 0.0805 m."""
        return self.wheelbase - self.cg_to_rear_axle

    @property
    def yaw_inertia(self) -> float:
        """J_z = m (l^2 + width^2)/12 = 0.00481 kg m^2 (``ddm``, a uniform-plate estimate)."""
        return self.mass * (self.wheelbase**2 + self.width**2) / 12.0


PUBLISHED = DartParameters()


def steering_angle(s: FloatArray, p: DartParameters = PUBLISHED) -> FloatArray:
    """Front steering angle [rad] of the (lagged) normalised servo command: tanh blend."""
    u = np.asarray(s, dtype=float) + p.c_s
    w = 0.5 * (np.tanh(30.0 * u) + 1.0)
    return w * p.b_s * np.tanh(p.a_s * u) + (1.0 - w) * p.d_s * np.tanh(p.e_s * u)


def longitudinal_force(d: FloatArray, vx: FloatArray, delta: FloatArray,
                       p: DartParameters = PUBLISHED) -> FloatArray:
    """Total wheel force [N]: motor + rolling friction + friction due to steering."""
    u = d + p.c_m
    motor = (p.a_m - p.b_m * vx) * 0.5 * (np.tanh(100.0 * u) + 1.0) * u
    rolling = -(p.a_f * np.tanh(p.b_f * vx) + p.c_f * vx + p.d_f * vx**2)
    gate = 0.5 + 0.5 * np.tanh(20.0 * (vx - 0.3))
    steer = -gate * (p.e_stfr + p.d_stfr * (vx - 0.5)) * (
        p.a_stfr + p.b_stfr * delta * np.tanh(30.0 * delta))
    return motor + rolling + steer


def body_accelerations(vx: FloatArray, vy: FloatArray, r: FloatArray, d: FloatArray,
                       s: FloatArray, p: DartParameters = PUBLISHED
                       ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(vx', vy', r') at the centre of mass for lagged throttle ``d`` and steering ``s``."""
    lf, lr = p.cg_to_front_axle, p.cg_to_rear_axle
    delta = steering_angle(s, p)
    cd, sd = np.cos(delta), np.sin(delta)
    fx = longitudinal_force(d, vx, delta, p)
    fx_front, fx_rear = fx * p.mass_front / p.mass, fx * p.mass_rear / p.mass
    v_front_long = cd * vx + sd * (vy + lf * r)
    v_front_lat = -sd * vx + cd * (vy + lf * r)
    alpha_f = np.arctan2(v_front_lat, v_front_long + np.exp(-3.0 * v_front_long**2))
    alpha_r = np.arctan2(vy - lr * r, vx + np.exp(-3.0 * vx**2))
    fy_front = p.mass_front * p.gravity * p.d_t_f * np.sin(p.c_t_f * np.arctan(p.b_t_f * alpha_f))
    fy_rear = p.mass_rear * p.gravity * p.d_t_r * np.sin(p.c_t_r * np.arctan(p.b_t_r * alpha_r))
    force_x = fx_front * cd + fx_rear - fy_front * sd
    force_y = fx_front * sd + fy_front * cd + fy_rear
    moment = lf * (fx_front * sd + fy_front * cd) - lr * fy_rear
    return force_x / p.mass + r * vy, force_y / p.mass - r * vx, moment / p.yaw_inertia


@dataclass(frozen=True)
class LaggedCommand:
    """First-order lag x' = (u - x)/tau of a zero-order-held command, evaluated exactly.

    ``t`` are the command stamps (sorted), ``u`` the held values, ``x`` the lag's state at each
    stamp; before the first stamp the command and the state are ``u[0]``.
    """

    t: FloatArray
    u: FloatArray
    x: FloatArray
    tau: float

    def __call__(self, time: FloatArray) -> FloatArray:
        j = np.clip(np.searchsorted(self.t, time, side='right') - 1, 0, None)
        elapsed = np.maximum(time - self.t[j], 0.0)
        return self.u[j] + (self.x[j] - self.u[j]) * np.exp(-elapsed / self.tau)


def lagged_command(t: FloatArray, u: FloatArray, tau: float) -> LaggedCommand:
    """Lag state at every command stamp: x_{j+1} = u_j + (x_j - u_j) exp(-(t_{j+1} - t_j)/tau)."""
    order = np.argsort(t, kind='stable')
    t, u = np.asarray(t, dtype=float)[order], np.asarray(u, dtype=float)[order]
    x = np.empty_like(u)
    x[0] = u[0]
    decay = np.exp(-np.diff(t) / tau)
    for j in range(1, u.size):
        x[j] = u[j - 1] + (x[j - 1] - u[j - 1]) * decay[j - 1]
    return LaggedCommand(t=t, u=u, x=x, tau=tau)


def held_product(a: Signal, b: Signal) -> Signal:
    """Zero-order hold of a(t) * b(t) at the union of both channels' stamps."""
    t = np.union1d(a.t, b.t)

    def hold(sig: Signal) -> FloatArray:
        order = np.argsort(sig.t, kind='stable')
        ts, vs = sig.t[order], sig.value[order]
        return vs[np.clip(np.searchsorted(ts, t, side='right') - 1, 0, None)]

    return Signal(t=t, value=hold(a) * hold(b))


def rollout(windows: Windows, throttle: LaggedCommand, steering: LaggedCommand,
            offset: tuple[float, float, float], p: DartParameters = PUBLISHED,
            step: float = STEP) -> PredictionTable:
    """Predict every window open loop (RK4, all windows at once) at its pose stamps.

    ``offset`` = the measured frame in base_link (x, y, yaw); the model's state is at the centre
    of mass, lr ahead of the rear axle, so the measured frame sits at (ox - lr, oy, oyaw) from it.
    """
    off_cg = (offset[0] - p.cg_to_rear_axle, offset[1], offset[2])
    state = np.stack(reference_from_measured(windows.x0, windows.y0, windows.yaw0, windows.vx0,
                                             windows.vy0, windows.yaw_rate0, off_cg))
    n_steps = math.ceil(float(windows.tau.max(initial=0.0)) / step) + 1
    t0 = windows.start

    def deriv(time: FloatArray, z: FloatArray) -> FloatArray:
        _, _, yaw, vx, vy, r = z
        ax, ay, ar = body_accelerations(vx, vy, r, throttle(time), steering(time), p)
        c, s = np.cos(yaw), np.sin(yaw)
        return np.stack([c * vx - s * vy, s * vx + c * vy, r, ax, ay, ar])

    grid = np.empty((n_steps + 1, *state.shape))
    grid[0] = state
    for k in range(n_steps):
        time = t0 + k * step
        k1 = deriv(time, state)
        k2 = deriv(time + step / 2, state + step / 2 * k1)
        k3 = deriv(time + step / 2, state + step / 2 * k2)
        k4 = deriv(time + step, state + step * k3)
        state = state + step / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        grid[k + 1] = state
    j = windows.sample_window
    pos = windows.tau / step
    k = np.minimum(np.floor(pos).astype(int), n_steps - 1)
    frac = pos - k
    z = grid[k, :, j] * (1.0 - frac)[:, None] + grid[k + 1, :, j] * frac[:, None]
    xm, ym, yawm, vxm, vym, rm = measured_from_reference(z[:, 0], z[:, 1], z[:, 2], z[:, 3],
                                                         z[:, 4], z[:, 5], off_cg)
    return PredictionTable(window=windows.index[j], t=windows.sample_t.copy(), x=xm, y=ym,
                           yaw=yawm, vx=vxm, vy=vym, yaw_rate=rm)


def predict_recording(rec: Recording, windows: Windows, p: DartParameters = PUBLISHED
                      ) -> PredictionTable:
    """The published model on a recording read with roles steering, drive and (optional) enable."""
    for role in ('steering', 'drive'):
        if role not in rec.signals:
            raise EvaluationError(f'recording has no {role} channel (the DART model needs '
                                  'steering and drive)')
    if rec.offset is None:
        raise EvaluationError('recording description has no pose.offset (the DART model '
                              'predicts the centre of mass and needs the measured frame)')
    drive = rec.signals['drive']
    if 'enable' in rec.signals:
        enable = rec.signals['enable']
        drive = held_product(drive, Signal(t=enable.t, value=(enable.value != 0).astype(float)))
    throttle = lagged_command(drive.t, drive.value, p.tau_throttle)
    steer = rec.signals['steering']
    steering = lagged_command(steer.t, steer.value, p.tau_steering)
    return rollout(windows, throttle, steering, rec.offset, p)


def main(argv: list[str] | None = None) -> int:
    from rc_sim_description.cli_support import OneLineErrorParser, run_cli

    parser = OneLineErrorParser(prog='dart_published_model',
                                description="Predict windows with the DART builders' model.")
    parser.add_argument('--bag', type=Path, required=True)
    parser.add_argument('--recording', type=Path, required=True)
    parser.add_argument('--out', type=Path, required=True, help='prediction CSV')
    parser.add_argument('--horizon', type=float, default=1.0)
    args = parser.parse_args(argv)

    def run() -> int:
        if not (math.isfinite(args.horizon) and args.horizon > 0):
            raise EvaluationError(f'--horizon must be > 0 s, got {args.horizon}')
        rec = read_recording(args.bag, args.recording, ('steering', 'drive', 'enable'))
        windows = make_windows(make_pose_track(rec.t, rec.x, rec.y, rec.yaw), args.horizon)
        write_prediction_csv(str(args.out), predict_recording(rec, windows))
        return 0

    return run_cli(run)


if __name__ == '__main__':
    sys.exit(main())
