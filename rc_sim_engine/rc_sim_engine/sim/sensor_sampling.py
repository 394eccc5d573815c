"""Sensor sampling of the loop: the cars' lidars as arrays for the compiled loop, the lidar error
model applied to each batch of scans, and the instantaneous sensor values a live node publishes.

The compiled loop (:mod:`rc_sim_engine.sim.loop_kernel`) casts the ideal scans of a stretch into a
buffer; :meth:`LidarRig.finish` then passes each car's scans through its
``rc_sim_sensors`` error model in one batch (the model draws its random numbers scan after scan in
the same order as scan-by-scan calls, so the result is the same) and hands the samples on.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from rc_sim_description.errors import ConfigError
from rc_sim_description.limits import MAX_LIDAR_SAMPLES
from rc_sim_description.params import VehicleParams
from rc_sim_engine.sim.sensors import JOINT_NAMES, Lidar, imu_specific_force
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.world.sdf import World

__all__ = ['LidarRig', 'live_snapshot']

FloatArray = NDArray[np.float64]


class LidarRig:
    """The lidars of N cars (one per car, vehicle.yaml specs) for the compiled loop.

    Arrays: ``rows`` (N, 7) mount x, y, yaw, angle_min, increment, range_min, range_max;
    ``cos_beam``/``sin_beam`` (N, B); ``segments`` (N, S + 4 (N - 1), 4) world edges at each
    car's scan height plus room for the other cars' outlines, ``n_segments`` (N,); ``circles``
    (N, C, 3), ``n_circles`` (N,).
    """

    def __init__(self, params: list[VehicleParams], world: World, foot: FloatArray,
                 lidar_errors: Any = None) -> None:
        n = len(params)
        samples = {p.sensors.lidar_samples for p in params}
        for count in samples:
            MAX_LIDAR_SAMPLES.check(count, 'sensors.lidar_samples')
        if len(samples) != 1:
            raise ConfigError(f'cars with different lidar sample counts {sorted(samples)} cannot '
                              'share one simulation')
        self.lidars = [Lidar(p, world) for p in params]
        self.n_beams = self.lidars[0].fan.n_beams
        self.angles = self.lidars[0].angles
        self.rows = np.array([[p.sensors.lidar_mount_x, p.sensors.lidar_mount_y,
                               p.sensors.lidar_mount_yaw, lid.fan.angle_min,
                               lid.fan.angle_increment if lid.fan.n_beams > 1 else 0.0,
                               lid.range_min, lid.range_max]
                              for p, lid in zip(params, self.lidars)], dtype=np.float64)
        self.cos_beam = np.ascontiguousarray([lid.tables[0] for lid in self.lidars])
        self.sin_beam = np.ascontiguousarray([lid.tables[1] for lid in self.lidars])
        extra = 4 * (n - 1)
        s_max = max(len(lid.segments) for lid in self.lidars) + extra
        c_max = max(1, max(len(lid.circles) for lid in self.lidars))
        self.segments = np.zeros((n, max(s_max, 1), 4))
        self.circles = np.zeros((n, c_max, 3))
        self.n_segments = np.array([len(lid.segments) for lid in self.lidars], dtype=np.int64)
        self.n_circles = np.array([len(lid.circles) for lid in self.lidars], dtype=np.int64)
        for i, lid in enumerate(self.lidars):
            self.segments[i, :len(lid.segments)] = lid.segments
            self.circles[i, :len(lid.circles)] = lid.circles
        self.foot = np.ascontiguousarray(foot, dtype=np.float64)
        #: Bytes of one scan of every car being cast and recorded (float64 rays, float32 ranges,
        #: the ideal ranges too with an error model).
        self.scan_bytes = n * self.n_beams * (8 + 4 + (4 if lidar_errors is not None else 0))
        self.lidar_errors = lidar_errors
        # incidence angles only when the error model uses them (incidence dropout)
        self.want_incidence = (lidar_errors is not None and getattr(
            lidar_errors, 'incidence_dropout_probability', 0.0) > 0)
        self.error_models: list[Any] = []

    def reset(self, seed: int) -> None:
        """Fresh error models: every reset replays the same random sequence for the seed."""
        self.error_models = []
        if self.lidar_errors is not None:
            from rc_sim_sensors.lidar_errors import LidarErrorModel

            seeds = np.random.SeedSequence(seed).spawn(len(self.lidars))
            self.error_models = [LidarErrorModel(self.lidar_errors, np.random.default_rng(s))
                                 for s in seeds]

    def buffers(self, capacity: int) -> tuple[FloatArray, FloatArray, NDArray[np.int64]]:
        """(ideal scans (C, N, B), incidence (C, N, B) or a dummy, scan steps (C,))."""
        n = len(self.lidars)
        scans = np.empty((capacity, n, self.n_beams))
        incidence = (np.empty((capacity, n, self.n_beams)) if self.want_incidence
                     else np.zeros((1, 1, 1)))
        return scans, incidence, np.empty(capacity, dtype=np.int64)

    def cast(self, t_ns: NDArray[np.int64], poses: FloatArray
             ) -> tuple[dict[str, np.ndarray], FloatArray]:
        """Samples of the scans at ``t_ns`` (M,) with the cars' base_link poses (M, N, 3): rays
        cast in one call (:func:`rc_sim_engine.sim.loop_kernel.cast_scans`), then
        :meth:`finish`."""
        from rc_sim_engine.sim.loop_kernel import cast_scans

        scans, incidence, _ = self.buffers(len(poses))
        cast_scans(poses, self.rows, self.cos_beam, self.sin_beam, self.segments,
                   self.n_segments, self.circles, self.n_circles, self.foot,
                   self.want_incidence, scans, incidence)
        return self.finish(t_ns, scans, incidence if self.want_incidence else None)

    def finish(self, t_ns: NDArray[np.int64], ideal: FloatArray,
               incidence: FloatArray | None) -> tuple[dict[str, np.ndarray], FloatArray]:
        """Samples (arrays with a leading scan axis: ``t_ns``, ``stamp_ns``, ``ranges``
        float32, ``raw`` with an error model, ``lost``) and the ranges of the latest scan (N, B).
        """
        m, n = ideal.shape[:2]
        if not self.error_models:
            sample: dict[str, np.ndarray] = {
                't_ns': t_ns, 'stamp_ns': np.repeat(t_ns[:, None], n, axis=1),
                'ranges': ideal.astype(np.float32), 'lost': np.zeros((m, n), dtype=bool)}
            return sample, ideal[-1].copy()
        ranges = np.empty_like(ideal)
        stamps = np.empty((m, n), dtype=np.int64)
        lost = np.zeros((m, n), dtype=bool)
        for i, em in enumerate(self.error_models):
            out = em.apply(ideal[:, i], self.lidars[i].angles, t_ns * 1e-9,
                           incidence=None if incidence is None else incidence[:, i])
            ranges[:, i] = out.ranges
            stamps[:, i] = np.round(np.asarray(out.stamp) * 1e9).astype(np.int64)
            lost[:, i] = out.lost
        sample = {'t_ns': t_ns, 'stamp_ns': stamps, 'ranges': ranges.astype(np.float32),
                  'raw': ideal.astype(np.float32), 'lost': lost}
        return sample, ranges[-1].copy()


def live_snapshot(car: Car, params: list[VehicleParams], t_ns: int) -> dict[str, Any]:
    """Current sensor values of every car (N,) for live publishing: odom fields, IMU (``fx, fy,
    fz``, ``ax, ay``), joint ``position`` (N, 6) and ``velocity`` (N, 6: wheel joints from the
    wheel speeds, steering joints 0), and ``t_ns``."""
    n = car.n
    x, y, yaw = car.base_link_pose()
    vx, vy, r = car.base_link_twist()
    ax, ay = car.body_acceleration()
    fx, fy, fz = np.empty(n), np.empty(n), np.empty(n)
    for i, p in enumerate(params):
        a, b, c = imu_specific_force(ax[i:i + 1], ay[i:i + 1], r[i:i + 1], p)
        fx[i], fy[i], fz[i] = a[0], b[0], c[0]
    angles = car.wheel_angles()
    pos = np.stack([angles[name] for name in JOINT_NAMES], axis=-1)
    omega = car.wheel_speed()
    vel = np.zeros_like(pos)
    vel[:, 2:] = omega[:, None]  # rolling wheels (the front ones approximately)
    vel[:, 4] -= car.differential_rate()  # the rear wheels split by the differential
    vel[:, 5] += car.differential_rate()
    return {'t_ns': t_ns, 'x': x, 'y': y, 'yaw': (yaw + np.pi) % (2 * np.pi) - np.pi, 'vx': vx,
            'vy': vy, 'yaw_rate': r, 'speed': car.speed, 'steering': car.steering_angle(),
            'wheel_speed': omega, 'ax': ax, 'ay': ay, 'fx': fx, 'fy': fy, 'fz': fz,
            'position': pos, 'velocity': vel}
