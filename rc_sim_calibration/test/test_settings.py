"""Fit settings: packaged defaults, bounds forms, priors and one-line errors."""

import numpy as np
import pytest

from rc_sim_calibration.errors import CalibrationError
from rc_sim_calibration.settings import (
    apply_values,
    load_fit_settings,
    override_values,
    resolve_free,
)
from rc_sim_description.params import load_vehicle_params


@pytest.fixture(scope='module')
def base():
    return load_vehicle_params()


def test_default_free_set_follows_the_commands_and_the_structures(base):
    from rc_sim_calibration.fit import candidates

    s = load_fit_settings()
    assert s.free_auto and s.servo_models == ('first_order', 'second_order')
    assert s.delay_options == (True,)    # a transport delay is always fitted (bound 0)
    assert s.relax_options == (False,)   # relaxed tyres on request (docs/calibration.md)
    cands = candidates(s, ('angle', 'wheel_speed'), base, fit_offset=False)
    assert len(cands) == 2
    first = cands[0]
    assert 'mu2' in first.names and 'cg_height' in first.names and 'drive_delay' in first.names
    assert first.structure == {'servo_model': 'first_order', 'drive_model': 'first_order',
                               'tyre_model': 'fiala', 'relaxation_length_front': 0.0,
                               'relaxation_length_rear': 0.0}
    for name in ('steering_gain', 'steering_offset', 'command_latency', 'servo_time_constant',
                 'effective_wheel_radius', 'drive_time_constant', 'cornering_stiffness_front',
                 'steering_linkage_quadratic', 'steering_linkage_cubic'):
        assert name in first.names
    assert 'relaxation_length_front' not in first.names
    with_relax = load_fit_settings(overrides={'structures': {'tyre_relaxation': [False, True]}})
    both = candidates(with_relax, ('angle', 'wheel_speed'), base, fit_offset=False)
    assert len(both) == 4                # 2 servos x (instantaneous, relaxed tyres)
    relaxed = both[2]
    assert relaxed.key == ('first_order', True, True)
    assert {'relaxation_length_front', 'relaxation_length_rear'} <= set(relaxed.names)
    assert relaxed.structure['relaxation_length_rear'] == base.geometry.wheel_radius  # start
    # a relaxed candidate warm-starts from its fitted instantaneous twin
    from rc_sim_calibration.structures import warm_start

    assert warm_start(relaxed, {('first_order', True, False): {'steering_gain': 1.1}}) == \
        {'steering_gain': 1.1}
    assert 'mass' not in first.names and 'wheelbase' not in first.names  # measured
    with_none = load_fit_settings(overrides={'structures': {'delay': [True, False]}})
    no_delay = candidates(with_none, ('angle', 'wheel_speed'), base, fit_offset=False)[2]
    assert no_delay.key == ('first_order', False, False)
    assert 'command_latency' not in no_delay.names   # the delayed ones come first (warm starts)
    assert no_delay.structure['command_latency'] == 0.0
    assert 'servo_natural_frequency' in cands[1].names
    free = {f.name: f for f in resolve_free(s, base, first.names)}
    cf = free['cornering_stiffness_front']
    v0 = base.tyres.cornering_stiffness_front
    assert (cf.start, cf.lower, cf.upper) == (v0, pytest.approx(0.2 * v0), pytest.approx(5 * v0))
    assert free['effective_wheel_radius'].start == base.geometry.wheel_radius  # null -> caliper
    assert free['command_latency'].lower == 0.0                             # a physical limit
    throttle = candidates(s, ('normalised', 'throttle'), base, fit_offset=True)[0]
    for name in ('steering_gain_left', 'steering_curvature_right', 'motor_force_gain',
                 'throttle_dead_band', 'pose_offset_x', 'pose_offset_yaw'):
        assert name in throttle.names
    assert throttle.structure['drive_model'] == 'throttle' and 'steering_gain' not in \
        throttle.names and 'steering_linkage_cubic' not in throttle.names
    drag = {f.name: f for f in resolve_free(s, base, throttle.names)}['steering_drag']
    assert (drag.start, drag.lower, drag.prior_mean, drag.prior_std) == (0.0, 0.0, 0.0, 3.0)
    assert 'steering_drag' not in first.names  # a speed loop absorbs it


def test_start_values_are_clipped_into_the_bounds_and_priors_centre_on_the_base(base):
    s = load_fit_settings(free=['yaw_inertia', 'steering_offset'])
    free = resolve_free(s, base, start={'yaw_inertia': 100.0, 'steering_offset': 0.02})
    v0 = base.mass_properties.yaw_inertia
    assert free[0].start == pytest.approx(5.0 * v0)            # clipped to the upper bound
    assert free[0].prior_mean == v0 and free[0].prior_std == pytest.approx(v0)  # base-centred
    assert free[1].start == 0.02


def test_structure_settings_are_checked(tmp_path):
    for text, match in (('structures: {servo: [pd_joint]}', 'structures.servo'),
                        ('structures: {delay: [maybe]}', 'structures.delay'),
                        ('structures: {tyre_relaxation: [1]}', 'structures.tyre_relaxation'),
                        ('structures: {holdout_every: 1}', 'holdout_every'),
                        ('verdict: {worse_tolerance: 2}', 'worse_tolerance')):
        cfg = tmp_path / 'fit.yaml'
        cfg.write_text(text)
        with pytest.raises(CalibrationError, match=match):
            load_fit_settings(cfg)


def test_user_yaml_merges_over_defaults(tmp_path, base):
    cfg = tmp_path / 'fit.yaml'
    cfg.write_text('free: [mass, pacejka_lateral.B]\n'
                   'bounds: {mass: {absolute: [3.0, 4.5]}}\n'
                   'priors: {mass: {relative_std: 0.1}}\n'
                   'optimizer: {budget: 50}\n')
    s = load_fit_settings(cfg)
    assert s.budget == 50 and s.optimizer == 'cma'  # the rest from the defaults
    free = resolve_free(s, base)
    assert (free[0].lower, free[0].upper) == (3.0, 4.5)
    assert free[0].prior_mean == base.mass_properties.mass
    assert free[0].prior_std == pytest.approx(0.1 * base.mass_properties.mass)
    b = base.tyres.pacejka_lateral.B
    assert (free[1].lower, free[1].upper) == (pytest.approx(0.5 * b), pytest.approx(2 * b))


def test_apply_values_and_override_values(base):
    p = apply_values(base, ['steering_gain', 'pacejka_lateral.B'], np.array([0.9, 5.0]))
    assert p.steering.steering_gain == 0.9 and p.tyres.pacejka_lateral.B == 5.0
    assert p.tyres.pacejka_lateral.C == base.tyres.pacejka_lateral.C
    vals = override_values(p, ['steering_gain', 'pacejka_lateral.B'])
    assert vals['steering_gain'] == 0.9 and vals['pacejka_lateral']['B'] == 5.0


@pytest.mark.parametrize('free, yaml_text, match', [
    (['steering_gian'], '', r"unknown vehicle parameter 'steering_gian' \(did you mean "
                            r"'steering_gain'\?\)"),
    (['tyre_model'], '', 'is not a number'),
    (['pacejka_lateral.F'], '', 'dotted names'),
    (['steering_gain'], 'bounds: {steering_gain: {absolute: [1.1, 1.5]}}',
     r'start value 1 is outside its bounds \[1.1, 1.5\]'),
    (['steering_gain'], 'bounds: {steering_gain: [0.5, 2]}', 'must be one of'),
    (['steering_gain'], 'bounds: {steering_gain: {absolute: [2, 1]}}', 'must be below'),
    (['command_latency'], 'bounds: {}\n', 'base value 0 and no bounds'),
    (['mass'], 'priors: {mass: {mean: 3.0, std: 0.0}}', 'standard deviation'),
])
def test_bad_free_parameters(tmp_path, base, free, yaml_text, match):
    cfg = tmp_path / 'fit.yaml'
    cfg.write_text(yaml_text)
    s = load_fit_settings(cfg, free=free)
    if 'command_latency' in free:  # drop its packaged bounds
        s = type(s)(**{**s.__dict__, 'bounds': {}})
    with pytest.raises(CalibrationError, match=match):
        resolve_free(s, base)


@pytest.mark.parametrize('yaml_text, match', [
    ('optimiser: {}', "unknown key 'optimiser'"),
    ('cost: {horizon: -1}', 'horizon'),
    ('optimizer: {budget: 0}', 'budget'),
    ('simulation: {dt: 0.5}', 'dt'),
    ('data: {rate: 10}', 'data.rate'),
    ('free: [a, a]', 'twice'),
    ('[1, 2]', 'top level'),
    ('cost: {weights: {position: [1]}}', 'cost'),
    ('optimizer: {budget: 1', 'malformed YAML'),
])
def test_bad_fit_yaml(tmp_path, yaml_text, match):
    cfg = tmp_path / 'fit.yaml'
    cfg.write_text(yaml_text)
    with pytest.raises(CalibrationError, match=match):
        load_fit_settings(cfg)


def test_missing_fit_yaml(tmp_path):
    with pytest.raises(CalibrationError, match='file not found'):
        load_fit_settings(tmp_path / 'nope.yaml')


def test_measured_values_centre_tighter_priors(base):
    """Issue 27 item 4: a measured wheel radius is a 3 % prior of the rolling radius; a measured
    value without a listed measured prior keeps the fit YAML's (centred on it)."""
    from dataclasses import replace

    from rc_sim_calibration.settings import resolve_free

    s = load_fit_settings()
    p = base.with_values(wheel_radius=0.0508, yaw_inertia=0.0687)
    free = ['effective_wheel_radius', 'yaw_inertia']
    plain = {f.name: f for f in resolve_free(s, p, free)}
    assert plain['effective_wheel_radius'].prior_std is None
    measured = {f.name: f for f in resolve_free(s, p, free, measured={'wheel_radius': 0.0508,
                                                                        'yaw_inertia': 0.0687})}
    f = measured['effective_wheel_radius']
    assert f.prior_mean == 0.0508 and f.prior_std == pytest.approx(0.03 * 0.0508)
    assert measured['yaw_inertia'].prior_std == plain['yaw_inertia'].prior_std
    strict = replace(s, measured_priors={'default': 0.1})
    g = {f.name: f for f in resolve_free(strict, p, free, measured={'yaw_inertia': 0.0687})}
    assert g['yaw_inertia'].prior_std == pytest.approx(0.00687)


@pytest.mark.parametrize('text, match', [
    ('cost: {prior_strength: [1, 30]}', None),
    ('cost: {prior_strength: []}', 'a number or a list'),
    ('structures: {drive: [fitted, nominal]}', None),
    ('structures: {drive: [measured]}', 'structures.drive: a list of fitted, nominal'),
    ('verdict: {hold_out: days}', 'verdict.hold_out: recordings or windows'),
    ('measured_priors: {effective_wheel_radius: 0}', r'in \(0, 10\]'),
    ('measured_priors: {wheel_radus: 0.1}', 'wheel_radus'),
])
def test_regularisation_settings(tmp_path, text, match):
    cfg = tmp_path / 'fit.yaml'
    cfg.write_text(text + '\n')
    if match is None:
        s = load_fit_settings(cfg)
        assert s.prior_strengths in ((1.0,), (1.0, 30.0))
        assert s.drive_options == ('fitted', 'nominal')
        return
    with pytest.raises(CalibrationError, match=match):
        load_fit_settings(cfg)
