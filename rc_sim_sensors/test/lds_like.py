"""Recordings of a low-cost 360 deg lidar that bins its returns by angle (LDS / RPLIDAR class),
for the lidar-fit tests and benchmark: not a copy of any driver, a model of what such drivers
publish.

The head turns at about ``hz`` (slowly varying, with per-packet jitter) and measures ``pps``
points per second in packets of 12; each packet reports its start and end angle in 0.01 deg
(with encoder noise), the points' angles are interpolated between them with a step truncated to
0.01 deg. A turn is closed when the reported angle wraps. The published scan has ``angle_min``
= the first point's angle, ``angle_increment`` = (last packet's speed [deg/s]) / ``pps``, ceil(
span / increment) beams; every point goes to beam floor((angle - angle_min) / increment),
keeping the nearest range when two fall into one beam; beams without a point are NaN;
``range_min`` 0, ``range_max`` 100 m; ranges in whole millimetres, 0 for no return;
intensities = a confidence. So the beam count (about 222-227 at 10 Hz) and ``angle_min``
change every scan, and a reading's true angle lies up to about an increment past its beam's.

The scene is a room with the sensor facing a wall (x = ``distance``) at angle 0 and three
posts; the range noise sigma(d) interpolates (0, 0.33), (0.5, 0.56), (1, 1.31), (2, 2.2),
(8, 7.5) mm, which gives about the front-beam stddev of a TurtleBot3 LDS facing a wall at
0.5 / 1 / 2 m (0.59 / 1.22 / 2.02 mm, millimetre quantum included; issue 27).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from rc_sim_sensors.scan_geometry import Scan
from rc_sim_sensors.scene import room_scan

POSTS = ((0.0, 1.2, 0.05), (-0.8, -0.9, 0.12), (-1.2, 0.6, 0.2))
NOISE_KNOTS = ((0.0, 0.5, 1.0, 2.0, 8.0), (0.33e-3, 0.56e-3, 1.31e-3, 2.2e-3, 7.5e-3))


def sigma_of(d: np.ndarray) -> np.ndarray:
    """Range noise stddev [m] at range d [m]."""
    return np.interp(d, NOISE_KNOTS[0], NOISE_KNOTS[1])


def lds_recording(distance: float, scans: int = 300, seed: int = 0, hz: float = 10.3,
                  pps: float = 2300.0, encoder_deg: float = 0.02, p_zero: float = 0.01,
                  noise_scale: float = 1.0) -> list[Scan]:
    """``scans`` consecutive scans (module docstring) of a sensor facing a wall at
    ``distance`` m; the first, partial turn is dropped."""
    rng = np.random.default_rng(seed)
    packets = int((scans + 2) / hz * pps / 12) + 2
    dt = 1.0 / pps
    t_pkt = np.arange(packets) * 12 * dt
    freq = hz * (1.0 + 0.01 * np.sin(2 * math.pi * t_pkt / 7.0)) + rng.normal(0, 0.02, packets)
    step_true = 360.0 * freq * dt  # deg per point within each packet
    start_true = rng.uniform(0, 360) + np.concatenate([[0.0], np.cumsum(12 * step_true)[:-1]])
    true = start_true[:, None] + step_true[:, None] * np.arange(12)[None, :]  # (P, 12) deg
    start_rep = np.rint(np.mod(true[:, 0] + rng.normal(0, encoder_deg, packets), 360) * 100)
    end_rep = np.rint(np.mod(true[:, -1] + rng.normal(0, encoder_deg, packets), 360) * 100)
    diff = np.mod(end_rep + 36000 - start_rep, 36000)
    step_rep = np.floor(diff / 11) / 100.0
    rep = start_rep[:, None] / 100.0 + step_rep[:, None] * np.arange(12)[None, :]
    rep = np.where(rep >= 360.0, rep - 360.0, rep).ravel()
    theta = np.radians(np.mod(true, 360.0)).ravel()
    ideal, incidence = room_scan(theta, x_min=-1.5, x_max=distance, y_min=-1.2, y_max=1.8,
                                 posts=POSTS)
    noisy = ideal + noise_scale * sigma_of(ideal) * rng.normal(size=ideal.size)
    mm = np.rint(noisy * 1000.0)
    grazing = np.clip((np.degrees(incidence) - 70.0) / 20.0, 0.0, 1.0)
    mm[rng.uniform(size=mm.size) < p_zero + 0.3 * grazing] = 0.0
    confidence = np.clip(200 - 20 * ideal - 60 * np.clip((np.degrees(incidence) - 50) / 40,
                                                         0, 1), 10, 255)
    speed = np.repeat(np.rint(freq * 360.0), 12)  # deg/s of each point's packet
    stamps = np.arange(rep.size) * dt
    wraps = np.nonzero(np.diff(rep) < -350.0)[0] + 1
    out: list[Scan] = []
    for a, b in itertools.pairwise(wraps):
        out.append(_to_scan(rep[a:b], mm[a:b], confidence[a:b], float(speed[b - 1]),
                            float(stamps[b - 1]), pps))
        if len(out) == scans:
            break
    return out


def _to_scan(rep_deg: np.ndarray, mm: np.ndarray, confidence: np.ndarray, speed: float,
             stamp: float, pps: float) -> Scan:
    order = np.argsort(rep_deg, kind='stable')
    rep, mm, confidence = rep_deg[order], mm[order], confidence[order]
    angle = np.radians(rep).astype(np.float32).astype(np.float64)
    angle_min, angle_max = float(angle[0]), float(angle[-1])
    inc = float(np.float32(math.radians(speed / pps)))
    beams = math.ceil((angle_max - angle_min) / inc)
    ranges = np.full(beams, np.inf)
    index = np.floor((angle - angle_min) / inc).astype(np.int64)
    inside = (index >= 0) & (index < beams)
    np.minimum.at(ranges, index[inside], mm[inside] / 1000.0)
    ranges[~np.isfinite(ranges)] = np.nan
    intensities = np.full(beams, np.nan)
    intensities[index[inside]] = confidence[inside]
    return Scan(ranges.astype(np.float32), angle_min, inc, 0.0, 100.0, stamp,
                intensities.astype(np.float32))


def front_beam(scans: list[Scan]) -> tuple[float, float, float, int]:
    """(mean [m], stddev [m], invalid fraction of all readings, front readings) of the valid
    reading nearest angle 0 of each scan."""
    values = []
    invalid = total = 0
    for s in scans:
        wrapped = np.mod(s.angles, 2 * math.pi)
        i = int(np.argmin(np.minimum(wrapped, 2 * math.pi - wrapped)))
        ok = s.valid()
        invalid += int((~ok).sum())
        total += s.beams
        if ok[i]:
            values.append(float(s.ranges[i]))
    v = np.array(values)
    return float(v.mean()), float(v.std(ddof=1)), invalid / max(total, 1), int(v.size)


def variable_from_fixed(scans: list[Scan], seed: int = 0, every: int = 3, drop: float = 0.03,
                        ) -> list[Scan]:
    """Variable-beam scans made from real fixed-grid ones, as a driver that bins returns by
    angle would publish them: per scan an increment of ``every`` source beams changed by up to
    +-1 %, ``angle_min`` at a random source beam of the first ``every``; beam i reports the
    first source reading at or past angle_min + i increment (so its true angle lies up to a
    source beam past the reported one), and a share ``drop`` of the beams is NaN (no point fell
    into them). Every range is a real reading."""
    rng = np.random.default_rng(seed)
    out = []
    for s in scans:
        src_inc = s.angle_increment
        inc = every * src_inc * (1.0 + rng.uniform(-0.01, 0.01))
        start = int(rng.integers(0, every))
        angle_min = s.angle_min + start * src_inc
        beams = int((s.angle_min + (s.beams - 1) * src_inc - angle_min) // inc) + 1
        wanted = angle_min + inc * np.arange(beams)
        index = np.ceil((wanted - s.angle_min) / src_inc - 1e-9).astype(np.int64)
        index = np.clip(index, 0, s.beams - 1)
        ranges = s.ranges[index].astype(np.float32).copy()
        ranges[rng.uniform(size=beams) < drop] = np.nan
        out.append(Scan(ranges, float(angle_min), float(inc), s.range_min, s.range_max,
                        s.stamp, None if s.intensities is None else s.intensities[index]))
    return out
