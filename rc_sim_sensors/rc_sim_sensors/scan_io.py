"""ROS-free helpers shared by the lidar_error_injector node, its launch file and the bag tool.

They translate between LaserScan fields / ROS parameters and the error model: the beam angle grid,
stamps with latency, the reported range limits, the parameter schema of the node and the
validation of live parameter changes and launch-argument overrides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
import yaml

from rc_sim_description.errors import ConfigError
from rc_sim_sensors.lidar_config import LidarErrorConfig, config_fields, validate_value
from rc_sim_sensors.scan_geometry import Scan, incidence_from_ranges

__all__ = ['LAUNCH_ARGUMENTS', 'SOURCE_PARAMETERS', 'ParameterSpec', 'base_config', 'beam_angles',
           'delayed_stamp', 'launch_overrides', 'launch_parameters', 'model_input',
           'parameter_specs', 'reported_limits', 'stamp_seconds', 'updated_config']

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


def launch_parameters(arguments: Mapping[str, str]) -> dict[str, Any]:
    """Node parameters from launch-argument strings: the source (preset / config_file), topics,
    use_sim_time and the typed, range-checked model keys that were given (non-empty)."""
    params: dict[str, Any] = {}
    for name in ('preset', 'config_file', 'input_topic', 'output_topic'):
        text = str(arguments.get(name, '') or '').strip()
        if text:
            params[name] = text
    sim = str(arguments.get('use_sim_time', 'true')).strip().lower()
    if sim not in ('true', 'false'):
        raise ConfigError(f'launch argument use_sim_time:={sim!r}: must be true or false')
    params['use_sim_time'] = sim == 'true'
    base_config(params.get('preset', 'ideal'), params.get('config_file', ''))  # fail early
    params.update(launch_overrides(arguments))
    return params
