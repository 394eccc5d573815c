"""Score a windowed-prediction CSV against a real recording, independently of rc-sim's own code.

    python benchmarks/realdata/evaluate_predictions.py --bag B --recording R.yaml --pred P.csv \
        [--horizon 1.0] [--per-window]

The window protocol is the one of ``docs/prediction_windows.md`` (also stated in
``rc_sim_calibration/baselines.py``). This module re-implements the part that defines the truth
(tiling, skips, the local fit that gives the measured yaw rate) on purpose, in a plain per-sample
form, so that it checks the product's predictions instead of trusting its code; it imports
nothing from rc_sim_calibration or rc_sim_engine.

Scoring. Scored samples are those of every used window with a stamp after the window's first
sample. Truth position: the raw measured position of the pose frame. Truth yaw rate: the slope of
the centred local quadratic fit of the unwrapped yaw at that sample (left out of the yaw-rate
figure where the fit is not valid). Errors: e_pos = |p_pred - p_meas| (Euclidean, m),
e_r = r_pred - r_meas (rad/s), e_yaw = wrap(yaw_pred - yaw_meas). Per window and overall the
RMSE is sqrt(mean e^2), the overall one pooled over all scored samples of all used windows (every
sample weighs the same, so a window counts in proportion to its samples).

The CSV must hold a row for every scored sample of every used window (matched by window number
and stamp within 0.1 ms); a row at a window's first stamp is allowed and ignored; rows of windows
the protocol skips are ignored and counted; any other row is an error. Bad input: one line, exit 2.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
import math
from pathlib import Path
import sys
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.cli_support import OneLineErrorParser, run_cli
from rc_sim_description.errors import RcSimError

FloatArray = NDArray[np.float64]
STAMP_TOLERANCE = 1e-4  # [s] CSV stamp vs pose stamp
CSV_COLUMNS = ['window', 't', 'x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate']
POSE_TYPES = {'geometry_msgs/msg/PoseWithCovarianceStamped': lambda m: m.pose.pose,
              'geometry_msgs/msg/PoseStamped': lambda m: m.pose,
              'nav_msgs/msg/Odometry': lambda m: m.pose.pose}
SCALAR_TYPES = ('std_msgs/msg/Float32', 'std_msgs/msg/Float64')
ARRAY_TYPES = ('std_msgs/msg/Float32MultiArray', 'std_msgs/msg/Float64MultiArray')
ACKERMANN = 'ackermann_msgs/msg/AckermannDriveStamped'
IMU = 'sensor_msgs/msg/Imu'


class EvaluationError(RcSimError):
    """A recording, description or prediction CSV cannot be evaluated."""


# ----------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class Signal:
    """A scalar channel: stamps [s] (header stamp when the message has one, else log time)."""

    t: FloatArray
    value: FloatArray


@dataclass(frozen=True)
class Recording:
    """Pose stream of the measured frame and the scalar channels of a recording."""

    t: FloatArray
    x: FloatArray
    y: FloatArray
    yaw: FloatArray
    offset: tuple[float, float, float] | None
    signals: dict[str, Signal] = field(default_factory=dict)


def read_description(path: Path) -> dict[str, Any]:
    """The recording description (YAML mapping role -> {topic, ...}); needs a ``pose`` role."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding='utf-8'))
    except (OSError, yaml.YAMLError) as exc:
        raise EvaluationError(f'{path}: cannot read recording description ({exc})') from None
    if not isinstance(data, dict) or not isinstance(data.get('pose'), dict) \
            or not isinstance(data['pose'].get('topic'), str):
        raise EvaluationError(f'{path}: recording description needs pose: {{topic: ...}}')
    offset = data['pose'].get('offset')
    if offset is not None and (not isinstance(offset, list) or len(offset) != 3 or not all(
            isinstance(v, (int, float)) and math.isfinite(v) for v in offset)):
        raise EvaluationError(f'{path}: pose.offset must be [x, y, yaw] (3 finite numbers)')
    return data


def _stamp(msg: Any, log_ns: int) -> float:
    header = getattr(msg, 'header', None)
    if header is None:
        return log_ns * 1e-9
    return float(header.stamp.sec) + 1e-9 * float(header.stamp.nanosec)


def read_recording(bag: Path, description: Path, roles: tuple[str, ...] = ()) -> Recording:
    """Read the pose and the scalar ``roles`` (e.g. steering, drive, enable) of a recording.

    The one function that touches the bag (rosbags' AnyReader, filtered to the connections the
    description names, so extra connections such as a second ``/rosout`` do not matter).
    Ackermann commands give two channels, ``<role>.steering_angle`` and ``<role>.speed``; an
    Imu gives its ``angular_velocity.z`` [rad/s] (the yaw rate when the IMU's z axis is up).
    """
    from rosbags.highlevel import AnyReader

    desc = read_description(description)
    wanted = {'pose': desc['pose']} | {r: desc[r] for r in roles if isinstance(desc.get(r), dict)}
    series: dict[str, list[tuple[float, ...]]] = {r: [] for r in wanted}
    try:
        with AnyReader([bag]) as reader:
            by_topic = {spec['topic']: role for role, spec in wanted.items()}
            conns = [c for c in reader.connections if c.topic in by_topic]
            for role, spec in wanted.items():
                found = [c for c in conns if c.topic == spec['topic']]
                if not found:
                    raise EvaluationError(f'{bag}: no topic {spec["topic"]} ({role})')
                if role == 'pose' and found[0].msgtype not in POSE_TYPES:
                    raise EvaluationError(f'{bag}: pose topic {spec["topic"]} has type '
                                          f'{found[0].msgtype}, expected one of '
                                          f'{", ".join(POSE_TYPES)}')
            for conn, log_ns, raw in reader.messages(connections=conns):
                role = by_topic[conn.topic]
                msg = reader.deserialize(raw, conn.msgtype)
                series[role].append(_decode(role, wanted[role], conn.msgtype, msg, log_ns))
    except EvaluationError:
        raise
    except Exception as exc:  # rosbags raises many types for a corrupt or foreign file
        raise EvaluationError(f'{bag}: cannot read ({type(exc).__name__}: {exc})') from None
    pose = np.array(series.pop('pose'), dtype=float).reshape(-1, 4)
    if pose.shape[0] < 5 or not np.all(np.isfinite(pose)):
        raise EvaluationError(f'{bag}: pose topic {desc["pose"]["topic"]} has fewer than 5 '
                              'messages or non-finite values')
    signals: dict[str, Signal] = {}
    for role, rows in series.items():
        arr = np.array(rows, dtype=float)
        if arr.size == 0:
            raise EvaluationError(f'{bag}: topic {wanted[role]["topic"]} ({role}) has no messages')
        names = [f'{role}.steering_angle', f'{role}.speed'] if arr.shape[1] == 3 else [role]
        for col, name in enumerate(names, start=1):
            signals[name] = Signal(t=arr[:, 0], value=arr[:, col])
    offset = desc['pose'].get('offset')
    return Recording(t=pose[:, 0], x=pose[:, 1], y=pose[:, 2], yaw=pose[:, 3],
                     offset=tuple(float(v) for v in offset) if offset else None,  # type: ignore[arg-type]
                     signals=signals)


def _decode(role: str, spec: dict[str, Any], msgtype: str, msg: Any, log_ns: int
            ) -> tuple[float, ...]:
    t = _stamp(msg, log_ns)
    if role == 'pose':
        pose = POSE_TYPES[msgtype](msg)
        q = pose.orientation
        yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
        return t, pose.position.x, pose.position.y, yaw
    if msgtype in SCALAR_TYPES:
        return t, float(msg.data)
    if msgtype in ARRAY_TYPES:
        index = spec.get('index')
        if not isinstance(index, int) or not 0 <= index < len(msg.data):
            raise EvaluationError(f'{spec["topic"]} ({role}): index {index!r} out of range')
        return t, float(msg.data[index])
    if msgtype == ACKERMANN:
        return t, float(msg.drive.steering_angle), float(msg.drive.speed)
    if msgtype == IMU:
        return t, float(msg.angular_velocity.z)
    raise EvaluationError(f'{spec["topic"]} ({role}): unsupported type {msgtype}')


# ----------------------------------------------------------------------------- the protocol's truth
@dataclass(frozen=True)
class TruthWindow:
    """Scored samples of one used window (stamps after its first sample) and their truth."""

    index: int
    start: float
    t: FloatArray
    x: FloatArray
    y: FloatArray
    yaw: FloatArray
    yaw_rate: FloatArray  # NaN where the local fit is not valid


@dataclass(frozen=True)
class Truth:
    windows: list[TruthWindow]
    skipped: dict[str, list[int]]
    n_grid: int


def _fit_at(t: FloatArray, v: FloatArray, i: int, half_width: float
            ) -> tuple[float, float] | None:
    """Value and slope of the least-squares quadratic over |t - t_i| <= w (None if too few)."""
    near = np.flatnonzero(np.abs(t - t[i]) <= half_width)
    if np.sum(near < i) < 2 or np.sum(near > i) < 2:
        return None
    tau = t[near] - t[i]
    coef = np.linalg.lstsq(np.column_stack([np.ones_like(tau), tau, tau**2]), v[near],
                           rcond=None)[0]
    return float(coef[0]), float(coef[1])


def protocol_truth(t: FloatArray, x: FloatArray, y: FloatArray, yaw: FloatArray,
                   horizon: float) -> Truth:
    """Windows of ``horizon`` s over the pose stream, their skips and truth (see the docs)."""
    order = np.argsort(t, kind='stable')
    t, x, y, yaw = t[order], x[order], y[order], yaw[order]
    first = np.concatenate(([True], np.diff(t) > 0))
    t, x, y, yaw = t[first], x[first], y[first], np.unwrap(yaw[first])
    dt_med = float(np.median(np.diff(t)))
    w = max(0.1, 4.5 * dt_med)
    g = max(0.25, 5.0 * dt_med)
    n_grid = math.floor((t[-1] - t[0]) / horizon)
    k_of = np.floor((t - t[0]) / horizon).astype(int)
    skipped: dict[str, list[int]] = {'gap': [], 'state': [], 'standing': []}
    windows: list[TruthWindow] = []
    for k in range(n_grid):
        members = np.flatnonzero(k_of == k)
        rel = t[members] - t[0]
        if members.size == 0 or rel[0] - k * horizon > g or (k + 1) * horizon - rel[-1] > g \
                or (members.size > 1 and np.diff(rel).max() > g):
            skipped['gap'].append(k)
            continue
        fits = [[_fit_at(t, v, int(i), w) for v in (x, y, yaw)] for i in members]
        if fits[0][0] is None:
            skipped['state'].append(k)
            continue
        start = [f[0] for f in fits[0]]  # type: ignore[index]
        ok = [f for f in fits if f[0] is not None]
        moved = max(math.hypot(f[0][0] - start[0], f[1][0] - start[1]) for f in ok)  # type: ignore[index]
        turned = max(abs(f[2][0] - start[2]) for f in ok)  # type: ignore[index]
        if moved < 0.05 * horizon and turned < 0.05 * horizon:
            skipped['standing'].append(k)
            continue
        rate = np.array([f[2][1] if f[2] is not None else np.nan for f in fits[1:]])
        rest = members[1:]
        windows.append(TruthWindow(index=k, start=float(t[members[0]]), t=t[rest], x=x[rest],
                                   y=y[rest], yaw=yaw[rest], yaw_rate=rate))
    return Truth(windows=windows, skipped=skipped, n_grid=n_grid)


# ----------------------------------------------------------------------------- the CSV and scores
def read_prediction_csv(path: Path) -> dict[int, FloatArray]:
    """Rows per window number: array (n, 7) of t, x, y, yaw, vx, vy, yaw_rate, sorted by t."""
    try:
        with path.open(newline='', encoding='utf-8') as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise EvaluationError(f'{path}: cannot read ({exc.strerror})') from None
    if not rows or [c.strip() for c in rows[0]] != CSV_COLUMNS:
        raise EvaluationError(f'{path}: header must be {",".join(CSV_COLUMNS)}')
    data: dict[int, list[list[float]]] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        try:
            values = [float(c) for c in row]
        except ValueError:
            raise EvaluationError(f'{path}: line {line} is not 8 numbers') from None
        if len(values) != 8 or not all(math.isfinite(v) for v in values) \
                or values[0] != int(values[0]):
            raise EvaluationError(f'{path}: line {line}: 8 finite numbers, window an integer')
        data.setdefault(int(values[0]), []).append(values[1:])
    out = {}
    for k, vals in data.items():
        arr = np.array(vals)
        out[k] = arr[np.argsort(arr[:, 0], kind='stable')]
    return out


@dataclass(frozen=True)
class Score:
    """Per-window rows (index, start, n, pos_rmse, yaw_rate_rmse, yaw_rmse, final_pos_error) and
    pooled figures."""

    per_window: list[tuple[int, float, int, float, float, float, float]]
    windows: int
    samples: int
    pos_rmse: float
    yaw_rate_rmse: float
    yaw_rmse: float
    skipped: dict[str, int]
    ignored_csv_windows: int


def score(truth: Truth, pred: dict[int, FloatArray], name: str = 'predictions') -> Score:
    """Match the CSV rows to the truth samples and pool the errors (module docstring)."""
    pos_sq: list[FloatArray] = []
    rate_sq: list[FloatArray] = []
    yaw_sq: list[FloatArray] = []
    per_window = []
    for win in truth.windows:
        rows = pred.get(win.index)
        if rows is None:
            raise EvaluationError(f'{name}: no rows for window {win.index} (starts at '
                                  f't={win.start:.3f})')
        if np.any(np.diff(rows[:, 0]) < STAMP_TOLERANCE):
            raise EvaluationError(f'{name}: window {win.index} has repeated stamps')
        body = rows[np.abs(rows[:, 0] - win.start) > STAMP_TOLERANCE]
        pos = np.searchsorted(body[:, 0], win.t)
        lo, hi = np.clip(pos - 1, 0, len(body) - 1), np.clip(pos, 0, len(body) - 1)
        best = np.where(np.abs(body[lo, 0] - win.t) <= np.abs(body[hi, 0] - win.t), lo, hi) \
            if len(body) else np.zeros(0, int)
        if len(body) != win.t.size or (win.t.size and np.any(
                np.abs(body[best, 0] - win.t) > STAMP_TOLERANCE)):
            raise EvaluationError(f'{name}: window {win.index} needs one row at each of its '
                                  f'{win.t.size} pose stamps after t={win.start:.6f}, has '
                                  f'{len(body)} rows that do not match them')
        p = body[best]
        e_pos = np.hypot(p[:, 1] - win.x, p[:, 2] - win.y)
        e_rate = (p[:, 6] - win.yaw_rate)[np.isfinite(win.yaw_rate)]
        e_yaw = np.angle(np.exp(1j * (p[:, 3] - win.yaw)))
        pos_sq.append(e_pos**2)
        rate_sq.append(e_rate**2)
        yaw_sq.append(e_yaw**2)
        per_window.append((win.index, win.start, int(win.t.size), _rms(e_pos), _rms(e_rate),
                           _rms(e_yaw), float(e_pos[-1]) if e_pos.size else float('nan')))
    used = {w.index for w in truth.windows}
    cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0))  # noqa: E731
    return Score(per_window=per_window, windows=len(truth.windows),
                 samples=int(sum(len(a) for a in pos_sq)),
                 pos_rmse=float(np.sqrt(np.mean(cat(pos_sq)))) if pos_sq else float('nan'),
                 yaw_rate_rmse=float(np.sqrt(np.mean(cat(rate_sq)))) if rate_sq else float('nan'),
                 yaw_rmse=float(np.sqrt(np.mean(cat(yaw_sq)))) if yaw_sq else float('nan'),
                 skipped={r: len(v) for r, v in truth.skipped.items()},
                 ignored_csv_windows=len(set(pred) - used))


def _rms(e: FloatArray) -> float:
    return float(np.sqrt(np.mean(e**2))) if e.size else float('nan')


def evaluate_files(bag: Path, description: Path, csv_path: Path, horizon: float) -> Score:
    """Read the recording and the CSV, build the truth and score (the CLI's work)."""
    rec = read_recording(bag, description)
    truth = protocol_truth(rec.t, rec.x, rec.y, rec.yaw, horizon)
    if not truth.windows:
        raise EvaluationError(f'{bag}: no window of {horizon} s to score')
    return score(truth, read_prediction_csv(csv_path), name=str(csv_path))


def format_score(s: Score) -> str:
    skipped = ', '.join(f'{r} {n}' for r, n in s.skipped.items())
    return (f'windows {s.windows} (skipped: {skipped}), samples {s.samples}: position RMSE '
            f'{s.pos_rmse:.3f} m, yaw-rate RMSE {s.yaw_rate_rmse:.3f} rad/s, '
            f'yaw RMSE {s.yaw_rmse:.3f} rad')


def main(argv: list[str] | None = None) -> int:
    parser = OneLineErrorParser(prog='evaluate_predictions', description=__doc__.split('\n')[0])
    parser.add_argument('--bag', type=Path, required=True)
    parser.add_argument('--recording', type=Path, required=True, help='recording description')
    parser.add_argument('--pred', type=Path, required=True, help='prediction CSV')
    parser.add_argument('--horizon', type=float, default=1.0, help='window length H [s]')
    parser.add_argument('--per-window', action='store_true', help='print every window')
    args = parser.parse_args(argv)

    def run() -> int:
        if not (math.isfinite(args.horizon) and args.horizon > 0):
            raise EvaluationError(f'--horizon must be > 0 s, got {args.horizon}')
        s = evaluate_files(args.bag, args.recording, args.pred, args.horizon)
        if args.per_window:
            print('window  start[s]  n  pos_rmse[m]  yaw_rate_rmse[rad/s]  final_pos_err[m]')
            for k, start, n, pe, re, _, fe in s.per_window:
                print(f'{k:6d} {start:.3f} {n:3d} {pe:11.4f} {re:21.4f} {fe:17.4f}')
        print(format_score(s))
        return 0

    return run_cli(run)


if __name__ == '__main__':
    sys.exit(main())
