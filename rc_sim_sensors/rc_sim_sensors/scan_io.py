"""ROS-free helpers shared by the lidar_error_injector node, its launch file and the bag tool.

They translate between LaserScan fields / ROS parameters and the error model: the beam angle grid,
stamps with latency, the reported range limits, the parameter schema of the node and the
validation of live parameter changes and launch-argument overrides.
"""

from __future__ import annotations

import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
import difflib
import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
import yaml

from rc_sim_description.errors import ConfigError
from rc_sim_sensors.lidar_config import LidarErrorConfig, config_fields, validate_value
from rc_sim_sensors.scan_geometry import Scan, incidence_from_ranges, scan_from_message

if TYPE_CHECKING:  # the launch file imports this module: no numba import for it
    from rc_sim_sensors.lidar_errors import LidarErrorModel

__all__ = ['LAUNCH_ARGUMENTS', 'SOURCE_PARAMETERS', 'ParameterSpec', 'ProblemThrottle',
           'base_config', 'beam_angles', 'corrupt_message', 'delayed_stamp', 'launch_overrides',
           'launch_parameters', 'misspelt_launch_argument', 'model_input', 'parameter_specs',
           'problem_kind', 'reported_limits', 'stamp_problem', 'stamp_seconds',
           'updated_config']

# Node parameters that choose the starting config (read once; the keys below then override it).
SOURCE_PARAMETERS: tuple[str, ...] = ('preset', 'config_file')


@dataclass(frozen=True)
class ParameterSpec:
    """One ROS parameter of the node: ``default``'s Python type fixes the ROS type."""

    name: str
    default: float | int | str
    description: str


def beam_angles(angle_min: float, angle_increment: float, count: int) -> NDArray[np.float64]:
    """theta_i = angle_min + i * angle_increment [rad] (LaserScan convention)."""
    return angle_min + angle_increment * np.arange(count, dtype=np.float64)


def model_input(scan: Scan, config: LidarErrorConfig
                ) -> tuple[NDArray[np.float32], NDArray[np.float64] | None]:
    """Ranges and incidence angles that enter the error model for a recorded scan.

    Readings the input marks invalid (0, other finite values below its range_min or above its
    range_max) enter as "no return" (+inf), so noise never turns a driver's 0 into a valid
    reading; +-inf and NaN pass as they are. Incidence angles (only when the config has an
    incidence dropout) come from the scan itself (:func:`incidence_from_ranges`).
    """
    ranges = np.array(scan.ranges, dtype=np.float32)
    valid = scan.valid()
    ranges[np.isfinite(ranges) & ~valid] = np.inf
    incidence = None
    if config.incidence_dropout_probability > 0:
        incidence = incidence_from_ranges(np.where(valid, ranges, np.nan), scan.angle_increment,
                                          config.depth_edge_threshold)
    return ranges, incidence


def stamp_seconds(sec: int, nanosec: int) -> float:
    """builtin_interfaces/Time as seconds."""
    return sec + 1e-9 * nanosec


def delayed_stamp(sec: int, nanosec: int, latency: float) -> tuple[int, int]:
    """(sec, nanosec) + latency, in integer nanoseconds (no float rounding of the epoch)."""
    total = sec * 1_000_000_000 + nanosec + round(latency * 1e9)
    s, ns = divmod(total, 1_000_000_000)
    return int(s), int(ns)


#: builtin_interfaces/Time.sec is an int32.
_SEC_MIN, _SEC_MAX = -2**31, 2**31 - 1


def stamp_problem(sec: int, nanosec: int, latency: float) -> str | None:
    """Why stamp + latency does not fit a builtin_interfaces/Time (int32 sec), or None."""
    sec_out, _ = delayed_stamp(sec, nanosec, latency)
    if not _SEC_MIN <= sec_out <= _SEC_MAX:
        return (f'header stamp {sec}.{nanosec:09d} s + latency {latency:g} s does not fit a '
                'ROS time (int32 seconds)')
    return None


def corrupt_message(model: LidarErrorModel, msg: Any) -> bool | str:
    """Apply ``model`` in place to a decoded sensor_msgs/LaserScan ``msg``: ranges (and
    intensities) corrupted, header stamp + latency, the tighter range limits
    (:func:`reported_limits`); the scan keeps its own geometry.

    Returns True when ``msg`` is to be published, False when the model lost the scan (scan loss),
    or the one-line reason the scan is unusable; then ``msg`` and the model's state are
    unchanged.
    """
    scan = scan_from_message(msg)
    if isinstance(scan, str):
        return scan
    config = model.config
    stamp = msg.header.stamp
    problem = stamp_problem(int(stamp.sec), int(stamp.nanosec), config.latency)
    if problem is not None:
        return problem
    ranges, incidence = model_input(scan, config)
    try:
        out = model.apply(ranges, scan.angles, scan.stamp, scan.intensities, incidence)
    except (ValueError, ConfigError) as exc:  # fields the checks above let through
        return ' '.join(str(exc).split())
    if out.lost:
        return False
    stamp.sec, stamp.nanosec = delayed_stamp(stamp.sec, stamp.nanosec, config.latency)
    msg.ranges = array.array('f', np.asarray(out.ranges, dtype=np.float32).tobytes())
    if scan.intensities is not None and out.intensities is not None:
        msg.intensities = array.array('f', np.asarray(out.intensities,
                                                      dtype=np.float32).tobytes())
    msg.range_min, msg.range_max = reported_limits(msg.range_min, msg.range_max, config)
    return True


_NUMBER = re.compile(r'(?<![\w.])[-+]?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|nan|inf)(?![\w.])',
                     re.IGNORECASE)


def problem_kind(reason: str) -> str:
    """A problem's kind: its reason with every number masked (``angle_increment is 0.0`` and
    ``angle_increment is nan`` are one kind)."""
    return _NUMBER.sub('#', reason)


@dataclass
class ProblemThrottle:
    """Throttles warnings about unusable input: each kind of problem (:func:`problem_kind`) is
    reported at most once per ``period_s``; the repeats in between are counted."""

    period_s: float = 5.0
    _kinds: dict[str, tuple[float, int]] = field(default_factory=dict)

    def report(self, reason: str, now_s: float) -> int | None:
        """None when this reason is to be held back at ``now_s`` [s] (monotonic); else how many
        of its kind were held back since it was last reported."""
        kind = problem_kind(reason)
        last, held = self._kinds.get(kind, (-math.inf, 0))
        if now_s - last < self.period_s:
            self._kinds[kind] = (last, held + 1)
            return None
        self._kinds[kind] = (now_s, 0)
        return held


def reported_limits(range_min: float, range_max: float,
                    config: LidarErrorConfig) -> tuple[float, float]:
    """LaserScan range_min/range_max after the model: the tighter of the message's and the
    config's limits (REP 117 consumers compare readings with them)."""
    low = max(float(range_min), config.range_min) if config.range_min > 0 else float(range_min)
    high = min(float(range_max), config.range_max) if math.isfinite(config.range_max) else \
        float(range_max)
    return low, high


def base_config(preset: str, config_file: str) -> LidarErrorConfig:
    """Starting config: ``config_file`` when set, else the ``preset`` (default ideal)."""
    if config_file:
        return LidarErrorConfig.from_yaml(config_file)
    return LidarErrorConfig.from_preset(preset or 'ideal')


def parameter_specs(config: LidarErrorConfig) -> list[ParameterSpec]:
    """One parameter per YAML key, defaulting to ``config``'s value (range_max may be inf)."""
    specs = []
    for f in config_fields():
        value = getattr(config, f.name)
        unit = f.metadata['unit']
        specs.append(ParameterSpec(f.name, value, f'[{unit}] {f.metadata["doc"]}'))
    return specs


def updated_config(config: LidarErrorConfig, changes: Mapping[str, Any]) -> LidarErrorConfig:
    """``config`` with the changed model keys (unrelated names ignored); raises ConfigError."""
    names = {f.name for f in config_fields()}
    relevant = {k: v for k, v in changes.items() if k in names}
    return config.with_values(**relevant) if relevant else config


def launch_overrides(arguments: Mapping[str, str]) -> dict[str, Any]:
    """Typed parameter overrides from launch-argument strings; empty strings are skipped.

    Values are parsed as YAML, floats keep float type even when written as ``1`` (rclpy
    parameters are statically typed by their default), and each value is range-checked alone
    (the combination is checked when the node builds its config).
    """
    kinds = {f.name: str(f.type) for f in config_fields()}
    out: dict[str, Any] = {}
    for name, text in arguments.items():
        if name not in kinds or text is None or str(text).strip() == '':
            continue
        try:
            value = yaml.safe_load(str(text))
        except yaml.YAMLError:
            raise ConfigError(f'launch argument {name}:={text!r}: not a valid value') from None
        if kinds[name] == 'float' and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        out[name] = validate_value(name, value, 'launch arguments')
    return out


# Launch arguments of lidar_error_injector.launch.py besides one per YAML key: name -> (default,
# description).
LAUNCH_ARGUMENTS: dict[str, tuple[str, str]] = {
    'preset': ('ideal', 'Starting lidar error preset (ideal, hokuyo_ust10lx, hokuyo_utm30lx, '
                        'rplidar_a1, harsh).'),
    'config_file': ('', 'Starting lidar error YAML; overrides preset when set.'),
    'input_topic': ('scan_raw', 'Ideal LaserScan input topic.'),
    'output_topic': ('scan', 'LaserScan output topic.'),
    'use_sim_time': ('true', 'Use /clock.'),
}


def misspelt_launch_argument(argv: Iterable[str], known: Iterable[str]) -> str | None:
    """The one-line complaint about a command-line ``name:=value`` whose name is not in ``known``
    but close to a known one (``noise_stdev:=0.02``: launch accepts any name silently, so the
    typo would run the preset's value), or None. Names unlike every known one pass: they may be
    the arguments of a launch file that includes this one."""
    names = list(known)
    for item in argv:
        name, sep, _ = str(item).partition(':=')
        if not sep or name in names:
            continue
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.8)
        if close:
            return f'launch argument {name}:=...: unknown (did you mean {close[0]!r}?)'
    return None


def launch_parameters(arguments: Mapping[str, str]) -> dict[str, Any]:
    """Node parameters from launch-argument strings: the source (preset / config_file), topics,
    use_sim_time and the typed, range-checked model keys that were given (non-empty). The
    starting config with the overrides is checked as a whole as well (range_min < range_max,
    ...), so a combination the node would refuse stops the launch instead."""
    params: dict[str, Any] = {}
    for name in ('preset', 'config_file', 'input_topic', 'output_topic'):
        text = str(arguments.get(name, '') or '').strip()
        if text:
            params[name] = text
    sim = str(arguments.get('use_sim_time', 'true')).strip().lower()
    if sim not in ('true', 'false'):
        raise ConfigError(f'launch argument use_sim_time:={sim!r}: must be true or false')
    params['use_sim_time'] = sim == 'true'
    base = base_config(params.get('preset', 'ideal'), params.get('config_file', ''))
    overrides = launch_overrides(arguments)
    LidarErrorConfig.from_mapping({**base.to_dict(), **overrides}, 'launch arguments')
    params.update(overrides)
    return params
