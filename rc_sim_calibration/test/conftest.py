"""Shared synthetic bags: the engine with hidden parameters plus realistic noise (session scope)."""

from pathlib import Path

import numpy as np
import pytest

from rc_sim_description.params import dump_override, load_vehicle_params

#: Hidden "real car" parameters (the other keys equal vehicle.yaml).
HIDDEN = {
    'steering_gain': 0.88,
    'steering_offset': 0.015,
    'cornering_stiffness_front': 70.0,
    'cornering_stiffness_rear': 140.0,
    'yaw_inertia': 0.065,
    'command_latency': 0.04,
}

#: name -> (manoeuvre, kwargs): train on the first three, validate on the figure eight.
SCENARIOS = {
    'slalom': ('slalom', {'speed': 1.5, 'duration': 8.0, 'amplitude': 0.6, 'frequency': 0.6}),
    'steps': ('steering_steps', {'speed': 1.2, 'levels': (0.5, 1.0), 'step_duration': 1.0}),
    'circle': ('circle_left', {'speed': 2.0, 'laps': 1.0}),
    'eight': ('figure_eight', {'speed': 1.5, 'laps': 1.0}),
}


@pytest.fixture(scope='session')
def synthetic(tmp_path_factory):
    """Bags of SCENARIOS driven by HIDDEN, the truth override YAML and the nominal params."""
    from rc_sim_calibration.synthetic import write_synthetic_bag
    from rc_sim_control.commands import manoeuvre

    root = tmp_path_factory.mktemp('synthetic')
    nominal = load_vehicle_params()
    truth = nominal.with_values(**HIDDEN)
    rng = np.random.default_rng(2024)
    bags = {name: write_synthetic_bag(root / name, manoeuvre(m, nominal, **kw), truth, nominal,
                                      rng)
            for name, (m, kw) in SCENARIOS.items()}
    truth_yaml = root / 'truth.yaml'
    dump_override(HIDDEN, truth_yaml)
    return {'bags': bags, 'truth_yaml': truth_yaml, 'nominal': nominal, 'truth': truth,
            'root': Path(root)}
