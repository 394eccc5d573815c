"""Every shipped configuration loads, and the fit's search box lies inside the vehicle ranges.

(Here rather than with the engine's range tests: only the calibration package may import the
fit settings.)
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rc_sim_calibration.settings import PSEUDO_NAMES, load_fit_settings, resolve_free
from rc_sim_control.commands import load_sequence
from rc_sim_description.params import load_vehicle_params, param_range
from rc_sim_description.recording import load_recording
from rc_sim_sensors.lidar_config import LidarErrorConfig

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_configurations_load_and_the_fit_box_is_inside_the_ranges() -> None:
    example = ROOT / 'rc_sim_calibration' / 'config' / 'example_different_car.yaml'
    cars = [load_vehicle_params(), load_vehicle_params(overrides=[example])]
    for path in sorted((ROOT / 'rc_sim_control' / 'config').glob('sequence*.yaml')) + \
            sorted((ROOT / 'rc_sim_engine' / 'config' / 'scenarios').glob('*.yaml')):
        assert len(load_sequence(path)) > 1
    for path in sorted((ROOT / 'docs' / 'recordings').glob('*.yaml')):
        load_recording(path)
    for path in sorted((ROOT / 'rc_sim_sensors' / 'config' / 'lidar_errors').glob('*.yaml')):
        LidarErrorConfig.from_yaml(path)
    measured = load_fit_settings(ROOT / 'rc_sim_calibration' / 'config' /
                                 'fit_measured_steering.yaml')
    assert {'steering_gain_left', 'steering_gain_right', 'steering_gain'} <= set(measured.priors)
    settings = load_fit_settings()
    every = dataclasses.replace(settings, free=tuple(  # not vehicle keys: no vehicle range
        n for n in settings.bounds if n not in PSEUDO_NAMES))
    for car in cars:
        for free in resolve_free(every, car):
            valid = param_range(free.name)
            assert valid.contains(free.lower) and valid.contains(free.upper), free.name
