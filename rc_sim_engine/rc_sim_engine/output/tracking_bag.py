"""Bags of tracking runs: ``/reference_path`` and ``/tracking_error`` beside the standard topics.

:func:`write_run_bag` writes what ``rcsim track`` and ``rcsim manoeuvre`` record: the simulator's
topics (:func:`rc_sim_engine.output.bags.write_sim_result`), one ``nav_msgs/Path`` per published
reference whose poses carry their own reference time stamps (as the ``trajectory_tracker`` node
publishes them) and ``/tracking_error`` (``geometry_msgs/Vector3Stamped``: ex, ey, |e| [m]).
:func:`load_evaluation` reads ``/odom`` and ``/reference_path`` back from any bag (engine, gz or
real car) and evaluates them (``rcsim evaluate``).
"""

from __future__ import annotations

from collections.abc import Sequence
import math
from pathlib import Path
from typing import Any

import numpy as np

from rc_sim_control.evaluation import EvaluatedRun, ReferencePath, evaluate_arrays
from rc_sim_description.errors import ConfigError
from rc_sim_description.params import VehicleParams
from rc_sim_engine.sim.simulator import SimResult

__all__ = ['load_evaluation', 'path_message', 'write_run_bag']


def path_message(t_pub_ns: int, t: np.ndarray, x: np.ndarray, y: np.ndarray,
                 yaw: np.ndarray) -> Any:
    """nav_msgs/Path whose poses carry their own reference time stamps (as the node publishes)."""
    from rc_sim_engine.output import bags as bagio

    types = bagio.typestore().types
    header, pose_t, point, quat = (types['std_msgs/msg/Header'], types['geometry_msgs/msg/Pose'],
                                   types['geometry_msgs/msg/Point'],
                                   types['geometry_msgs/msg/Quaternion'])
    poses = [types['geometry_msgs/msg/PoseStamped'](
        header=header(stamp=bagio.stamp(round(ti * 1e9)), frame_id='odom'),
        pose=pose_t(position=point(x=float(xi), y=float(yi), z=0.0),
                    orientation=quat(x=0.0, y=0.0, z=math.sin(0.5 * yi_), w=math.cos(0.5 * yi_))))
        for ti, xi, yi, yi_ in zip(t, x, y, (float(a) for a in yaw))]
    return types['nav_msgs/msg/Path'](header=header(stamp=bagio.stamp(t_pub_ns), frame_id='odom'),
                                      poses=poses)


def write_run_bag(bag: Any, result: SimResult, paths: Sequence[ReferencePath],
                  evaluation: EvaluatedRun | None = None) -> None:
    """The simulator's standard topics (:func:`bagio.write_sim_result`) plus ``/reference_path``
    (one message per published reference) and ``/tracking_error`` (Vector3Stamped: ex, ey, |e|)
    into an open :class:`rc_sim_engine.output.bags.BagWriter`."""
    from rc_sim_engine.output import bags as bagio

    types = bagio.typestore().types
    extra: list[tuple[str, str, int, Any]] = [
        ('/reference_path', 'nav_msgs/msg/Path', int(t_pub), path_message(int(t_pub), *rest))
        for t_pub, *rest in paths]
    if evaluation is not None and evaluation.timed:
        header, vec = types['std_msgs/msg/Header'], types['geometry_msgs/msg/Vector3']
        for ti, ex, ey in zip(evaluation.t_err, evaluation.ex, evaluation.ey):
            t_ns = round(ti * 1e9)
            extra.append(('/tracking_error', 'geometry_msgs/msg/Vector3Stamped', t_ns,
                          types['geometry_msgs/msg/Vector3Stamped'](
                              header=header(stamp=bagio.stamp(t_ns), frame_id='odom'),
                              vector=vec(x=float(ex), y=float(ey),
                                         z=float(math.hypot(ex, ey))))))
    bagio.write_sim_result(bag, result, extra=extra)


def _stamp_s(stamp: Any) -> float:
    return float(stamp.sec) + 1e-9 * float(stamp.nanosec)


def load_evaluation(bag_path: str | Path, params: VehicleParams, transient: float, *,
                    recording: str | None = None, skip_corrupt: bool = False) -> EvaluatedRun:
    """Read the pose (``/odom``, or the pose/odom role of ``recording``) and
    ``/reference_path`` from a bag and evaluate (one-line errors)."""
    from rc_sim_description.bags import BagError, open_bag, read_topic, require_topics
    from rc_sim_description.recording import (
        base_link_pose,
        extract,
        load_recording,
        recording_from_mapping,
    )

    rec = (load_recording(recording) if recording is not None else
           recording_from_mapping({'odom': {'topic': '/odom'}}, str(bag_path)))
    role = 'pose' if 'pose' in rec.roles else 'odom'
    if role not in rec.roles:
        raise BagError(f'{recording}: evaluate needs a pose or odom role')
    with open_bag(bag_path, skip_corrupt=skip_corrupt) as reader:
        require_topics(reader, [rec.roles[role].topic, '/reference_path'], bag_path)
        pose = extract(rec, reader, [role])[role]
        t_pub, path_msgs = read_topic(reader, '/reference_path')
    t = np.asarray(pose.t_ns * 1e-9, dtype=np.float64)
    x, y, yaw = base_link_pose(pose.values['x'], pose.values['y'], pose.values['yaw'],
                               rec.roles[role].offset)
    paths: list[ReferencePath] = []
    for t_ns, msg in zip(t_pub, path_msgs):
        if not msg.poses:
            continue
        pt = np.array([_stamp_s(p.header.stamp) for p in msg.poses])
        px = np.array([p.pose.position.x for p in msg.poses], dtype=float)
        py = np.array([p.pose.position.y for p in msg.poses], dtype=float)
        pub = round(_stamp_s(msg.header.stamp) * 1e9) or int(t_ns)
        paths.append((pub, pt, px, py, np.zeros_like(px)))
    if not paths:
        raise BagError(f'{bag_path}: /reference_path holds no poses')
    if t.size < 2 or not np.all(np.isfinite(x) & np.isfinite(y)):
        raise BagError(f'{bag_path}: /odom needs >= 2 finite poses')
    try:
        return evaluate_arrays(t, x, y, yaw, paths, params.geometry.cg_to_rear_axle, transient)
    except ConfigError as exc:
        raise BagError(f'{bag_path}: {exc}') from None
