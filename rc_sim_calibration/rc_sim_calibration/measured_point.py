"""Where the measured pose sits on the car: its offset in base_link, known or estimated.

The pose of a recording is that of its *measured frame* (a mocap marker body, the point a particle
filter tracks), mounted at ``offset = (x, y, yaw)`` in base_link (rear-axle centre, REP 103).
Sources, first found wins: ``--odom-offset``; the recording description's ``pose.offset``; a
``/tf_static`` chain base_link -> measured frame; an Odometry whose ``child_frame_id`` is
base_link (offset 0). Otherwise the offset is unknown and the fit estimates it.

Lever-arm signature (rigid body, planar): the measured point moves with
``v_m = R(-o_yaw) (v_b + r x o)``; at the rear axle ``v_by`` is the rear tyres' slip velocity,
which is proportional to the lateral acceleration ``v r`` (linear tyres, steady state). So in the
measured frame's axes, to first order in the small angle ``o_yaw``,

    v_my = o_x r - o_yaw v_bx + c v r,       v_mx = v_bx - o_y r,

and a least-squares regression of ``v_my`` on ``(r, v, v r)`` estimates ``o_x`` and ``o_yaw``
without knowing the tyres (Gillespie, *Fundamentals of Vehicle Dynamics*, SAE 1992, ch. 6 for
the sideslip of a rigid body). ``o_y`` needs a measured wheel speed (``v_bx = R omega``) and is
otherwise left to the fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np

from rc_sim_calibration.bagread import StaticTransform

__all__ = [
    'LeverArm',
    'OffsetInfo',
    'lever_arm_regression',
    'parse_offset',
    'resolve_offset',
    'static_chain',
]

Array = np.ndarray
_BASE_NAMES = ('base_link', 'base_footprint')


@dataclass(frozen=True)
class OffsetInfo:
    """The measured frame's offset in base_link and where it came from ('' source: unknown)."""

    offset: tuple[float, float, float]
    source: str

    @property
    def known(self) -> bool:
        """True when the offset was given or read from the bag."""
        return bool(self.source)


def parse_offset(text: str) -> tuple[float, float, float]:
    """``'x,y'`` or ``'x,y,yaw'`` [m, m, rad] -> (x, y, yaw); CalibrationError when malformed."""
    from rc_sim_calibration.errors import CalibrationError

    parts = [p.strip() for p in text.split(',')]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) not in (2, 3) or not all(math.isfinite(v) for v in values) or \
            any(abs(v) > 10.0 for v in values[:2]) or (len(values) == 3 and abs(values[2]) > 4):
        raise CalibrationError(f'--odom-offset {text!r}: expected X,Y or X,Y,YAW in m and rad '
                               '(the measured frame in base_link, |x|, |y| <= 10 m)')
    return (values[0], values[1], values[2] if len(values) == 3 else 0.0)


def _is_base(frame: str) -> bool:
    leaf = frame.strip('/').rsplit('/', 1)[-1]
    return leaf in _BASE_NAMES


def static_chain(transforms: Sequence[StaticTransform], frame: str
                 ) -> tuple[float, float, float] | None:
    """Pose of ``frame`` in base_link composed along ``/tf_static`` (None when not connected)."""
    if not frame:
        return None
    by_child = {t.child: t for t in transforms}
    x, y, yaw = 0.0, 0.0, 0.0
    node, seen = frame, set()
    while not _is_base(node):
        t = by_child.get(node)
        if t is None or node in seen:
            return None
        seen.add(node)
        c, s = math.cos(t.yaw), math.sin(t.yaw)      # (x, y, yaw) expressed in t.parent
        x, y, yaw = t.x + c * x - s * y, t.y + s * x + c * y, t.yaw + yaw
        node = t.parent
    return (x, y, yaw)


def resolve_offset(*, explicit: tuple[float, float, float] | None, declared: bool,
                   recording_offset: tuple[float, float, float], frame: str,
                   static_tf: Sequence[StaticTransform]) -> OffsetInfo:
    """The offset by the precedence of the module docstring."""
    if explicit is not None:
        return OffsetInfo(tuple(explicit), '--odom-offset')  # type: ignore[arg-type]
    if declared:
        return OffsetInfo(recording_offset, 'recording pose.offset')
    chain = static_chain(static_tf, frame)
    if chain is not None and not _is_base(frame):
        return OffsetInfo(chain, f'/tf_static base_link -> {frame}')
    if frame and _is_base(frame):
        return OffsetInfo((0.0, 0.0, 0.0), f'pose frame {frame}')
    return OffsetInfo((0.0, 0.0, 0.0), '')


@dataclass(frozen=True)
class LeverArm:
    """Least-squares lever-arm estimate (module docstring): o_x [m], o_yaw [rad], their standard
    errors, and the number of samples used."""

    x: float
    yaw: float
    x_se: float
    yaw_se: float
    samples: int

    @property
    def significant(self) -> bool:
        """True when the data show an offset: |o_x| > 2 cm and > 4 standard errors."""
        return abs(self.x) > 0.02 and abs(self.x) > 4.0 * self.x_se


def lever_arm_regression(vx_m: Array, vy_m: Array, yaw_rate: Array, *,
                         min_speed: float = 0.3) -> LeverArm | None:
    """Regress the measured frame's lateral velocity on (r, v, v r) (module docstring).

    ``vx_m, vy_m`` [m/s]: the measured point's velocity in its own axes; ``yaw_rate`` [rad/s].
    Samples slower than ``min_speed`` are left out (the pose noise dominates there). None when
    fewer than 50 samples are left or the yaw rate does not vary.
    """
    v = np.asarray(vx_m, dtype=float)
    r = np.asarray(yaw_rate, dtype=float)
    vy = np.asarray(vy_m, dtype=float)
    use = (np.abs(v) > min_speed) & np.isfinite(v) & np.isfinite(vy) & np.isfinite(r)
    if use.sum() < 50 or float(np.std(r[use])) < 0.05:
        return None
    a = np.column_stack([r[use], v[use], v[use] * r[use]])
    coef, *_ = np.linalg.lstsq(a, vy[use], rcond=None)
    res = vy[use] - a @ coef
    dof = max(int(use.sum()) - 3, 1)
    s2 = float(res @ res) / dof
    try:
        cov = s2 * np.linalg.inv(a.T @ a)
    except np.linalg.LinAlgError:
        return None
    # samples are correlated in time (50 Hz grid, smoothed velocities): inflate by ~sqrt(10)
    se = np.sqrt(np.maximum(np.diag(cov), 0.0)) * math.sqrt(10.0)
    return LeverArm(x=float(coef[0]), yaw=float(-coef[1]), x_se=float(se[0]),
                    yaw_se=float(se[1]), samples=int(use.sum()))
