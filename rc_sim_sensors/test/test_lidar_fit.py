"""rcsim lidar fit: parameters recovered from scans generated with a known config (tolerances from
sample sizes, z = 5 as in test_lidar_errors.py), the real Hokuyo recording (simulated stats must
match the real ones), and the command's one-line errors."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pytest

from rc_sim_description.cli_support import run_cli
from rc_sim_description.testing import realdata_dir
from rc_sim_sensors import cli
from rc_sim_sensors.fit_estimators import SCALE_SE
from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_errors import LidarErrorModel
from rc_sim_sensors.lidar_fit import LidarFitError, fit_lidar
from rc_sim_sensors.lidar_fit_report import compare_spans
from rc_sim_sensors.scan_geometry import Scan
from rc_sim_sensors.scene import DEFAULT_POSTS, room_scan

Z = 5.0


def room_from(x: float, y: float, yaw: float, angles: np.ndarray) -> np.ndarray:
    posts = tuple((px - x, py - y, r) for px, py, r in DEFAULT_POSTS)
    ranges, _ = room_scan(angles + yaw, x_min=-3.0 - x, x_max=5.0 - x, y_min=-2.5 - y,
                          y_max=3.0 - y, posts=posts)
    return ranges


def recording(config: LidarErrorConfig, scans: int, *, seed: int, beams: int | tuple[int, ...],
              fov: float, step_m: float = 0.0, step_rad: float = 0.0, period: float = 0.025,
              intensity=None, moving_from: int | None = None) -> list[Scan]:
    """Scans of the room through ``config``; the sensor wanders by a random walk of ``step_m``
    and ``step_rad`` per scan (a hand), and walks away fast from scan ``moving_from``."""
    rng = np.random.default_rng(seed)
    model = LidarErrorModel(config, seed)
    x = y = yaw = 0.0
    out = []
    for k in range(scans):
        n = beams if isinstance(beams, int) else beams[k % len(beams)]
        full = fov >= 2 * math.pi
        inc = fov / n if full else fov / (n - 1)
        angle_min = (-math.pi + rng.uniform(0, inc)) if full else -fov / 2
        angles = angle_min + inc * np.arange(n)
        ideal = room_from(x, y, yaw, angles)
        inten = None if intensity is None else intensity(angles + yaw).astype(np.float32)
        res = model.apply(ideal.astype(np.float32), angles, k * period, inten)
        if not res.lost:
            out.append(Scan(np.asarray(res.ranges, dtype=np.float32), angle_min, inc,
                            config.range_min, config.range_max, k * period,
                            None if res.intensities is None else res.intensities))
        x += rng.normal(0, step_m)
        y += rng.normal(0, step_m)
        yaw += rng.normal(0, step_rad)
        if moving_from is not None and k >= moving_from:
            x += 0.05
            yaw += 0.03
    return out


def sigma_se(sigma: float, n: int) -> float:
    return SCALE_SE * sigma / math.sqrt(n)


# --------------------------------------------------------------------------- known configs
def test_fixed_grid_handheld_parameters_are_recovered():
    """1081 beams over 270 deg at 40 Hz, a sensor held by hand (0.5 mm and 0.3 mrad random
    steps per scan), then carried away: the static part is found and the effects recovered."""
    truth = LidarErrorConfig.from_mapping({
        'noise_stddev': 0.004, 'noise_stddev_per_meter': 0.002, 'noise_beam_correlation': 0.3,
        'range_resolution': 0.001, 'dropout_probability': 0.02, 'range_min': 0.06,
        'range_max': 10.0, 'out_of_range': 'zero'}, 'truth')
    scans = recording(truth, 200, seed=11, beams=1081, fov=math.radians(270), step_m=5e-4,
                      step_rad=3e-4, moving_from=160)
    fit = fit_lidar([('synthetic', scans)])
    c = fit.config
    # the static part: scans 0..160 (the walk away starts after scan 160)
    assert len(fit.spans) == 1
    span = fit.spans[0]
    assert span.first <= 8 and 150 <= span.last <= 161
    assert c.range_resolution == 0.001 and c.out_of_range == 'zero'
    assert (c.range_min, c.range_max) == (0.06, 10.0)
    # noise line at the centres of the first and last range bins (quantisation removed)
    for b in (fit.noise_bins[0], fit.noise_bins[-1]):
        true = 0.004 + 0.002 * b.mean_range
        fitted = c.noise_stddev + c.noise_stddev_per_meter * b.mean_range
        assert abs(fitted - true) < Z * sigma_se(true, b.n), (b, fitted, true)
    rho = fit.estimates['noise_beam_correlation']
    assert abs(c.noise_beam_correlation - 0.3) < Z * (1 - 0.09) / math.sqrt(rho.samples) + 1e-3
    p = fit.estimates['dropout_probability']
    assert abs(c.dropout_probability - 0.02) < Z * math.sqrt(0.02 * 0.98 / p.samples)
    assert c.range_dropout_probability == 0 and c.incidence_dropout_probability == 0
    assert c.bias_markov_stddev == 0 and c.bias_walk_stddev == 0  # the truth has no drift
    assert c.scan_loss_probability == 0
    for comparison in compare_spans(fit):
        assert comparison.indistinguishable, [(f.figure, f.z) for f in comparison.figures]


def test_360_degree_varying_grid_with_intensity_dropout():
    """A low-cost 360 deg lidar (224-226 beams, angle_min changing every scan, 10 Hz),
    intensities that vary with direction, dropout growing as the return gets weaker."""
    def intensity(angles: np.ndarray) -> np.ndarray:
        return 110.0 + 90.0 * np.sin(3.0 * angles)

    truth = LidarErrorConfig.from_mapping({
        'noise_stddev': 0.01, 'dropout_probability': 0.01, 'intensity_dropout_limit': 100.0,
        'intensity_dropout_probability': 0.6, 'range_min': 0.15, 'range_max': 12.0,
        'scan_loss_probability': 0.05}, 'truth')
    scans = recording(truth, 600, seed=4, beams=(224, 225, 226), fov=2 * math.pi,
                      period=0.1, intensity=intensity)
    fit = fit_lidar([('lowcost', scans)])
    c = fit.config
    assert c.out_of_range == 'rep117' and c.range_resolution == 0.0
    n = fit.estimates['noise_stddev'].samples
    assert abs(c.noise_stddev - 0.01) < Z * sigma_se(0.01, n)
    assert c.noise_stddev_per_meter == 0.0
    # the weak-return law: p(I) = 1 - (1 - p0)(1 - p1 clip(1 - I / I_lim)); compare the fitted
    # curve with the truth where the directions are, within binomial bands of the readings
    # there (and the covariate grid: 20 candidate limits)
    assert c.intensity_dropout_probability > 0 and c.range_dropout_probability == 0
    readings = fit.estimates['dropout_probability'].samples
    def p_of(cfg: LidarErrorConfig, level: float) -> float:
        ramp = min(max(1.0 - level / cfg.intensity_dropout_limit, 0.0), 1.0)
        return 1 - (1 - cfg.dropout_probability) * (1 - cfg.intensity_dropout_probability * ramp)

    for level in (30.0, 70.0, 150.0):
        true = p_of(truth, level)
        share = 0.1  # at least a tenth of the readings lie near each level
        band = Z * math.sqrt(true * (1 - true) / (share * readings)) + 0.05 * true + 0.01
        assert abs(p_of(c, level) - true) < band, (level, p_of(c, level), true)
    loss = fit.estimates['scan_loss_probability']
    assert abs(c.scan_loss_probability - 0.05) < Z * math.sqrt(0.05 * 0.95 / loss.samples)
    for comparison in compare_spans(fit):
        assert comparison.indistinguishable, [(f.figure, f.z) for f in comparison.figures]


def test_drifting_offset_is_found():
    """A Gauss-Markov range offset (3 mm, tau 2 s) on a still sensor: the drift is detected and
    its size recovered within the likelihood's standard error."""
    truth = LidarErrorConfig.from_mapping({
        'noise_stddev': 0.003, 'bias_markov_stddev': 0.003, 'bias_correlation_time': 2.0,
        'range_max': 10.0}, 'truth')
    scans = recording(truth, 400, seed=2, beams=541, fov=math.radians(270), period=0.025)
    fit = fit_lidar([('drift', scans)])
    est = fit.estimates['bias_markov_stddev']
    assert fit.config.bias_markov_stddev > 0
    # 10 s of data at tau = 2 s: the stationary sigma is seen within a few standard errors
    # (the tau grid and the short record add a model error; allow 30 % on top)
    assert abs(est.value - 0.003) < Z * est.se + 0.3 * 0.003
    still = recording(truth.with_values(bias_markov_stddev=0.0), 200, seed=3, beams=541,
                      fov=math.radians(270))
    assert fit_lidar([('still', still)]).config.bias_markov_stddev == 0.0


def test_no_static_part_is_one_line():
    truth = LidarErrorConfig.from_mapping({'noise_stddev': 0.003, 'range_max': 10.0}, 't')
    scans = recording(truth, 40, seed=1, beams=541, fov=math.radians(270), moving_from=0)
    with pytest.raises(LidarFitError, match=r'moving: no static part \(needs at least 6 '):
        fit_lidar([('moving', scans)])


# --------------------------------------------------------------------------- the real sensor
HOKUYO = 'ccny_hokuyo/laser_scan_matcher_demo.bag'


@pytest.fixture(scope='module')
def hokuyo() -> Path:
    root = realdata_dir()
    if root is None or not (root / HOKUYO).is_file():
        pytest.skip('real-data corpus not available')
    return root / HOKUYO


def fit_dropout(path: Path) -> float:
    """The invalid-return rate of a fitted file at the median range of a 0.4-5 m scene: the
    constant rate, or the constant plus a range ramp."""
    c = LidarErrorConfig.from_yaml(path)
    d = 1.5
    ramp = min(max((d - c.range_dropout_start) / (c.range_max - c.range_dropout_start), 0.0),
               1.0) if c.range_dropout_probability > 0 else 0.0
    return 1.0 - (1.0 - c.dropout_probability) * (1.0 - c.range_dropout_probability * ramp)


def rcsim(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog='rcsim')
    cli.register(parser.add_subparsers(dest='command'))
    args = parser.parse_args(list(argv))
    return run_cli(lambda: int(args.func(args)))


def test_real_hokuyo_fit_simulates_indistinguishable_stats(hokuyo, tmp_path, capsys):
    """The ccny Hokuyo bag (URG-04LX class, handheld): its first ~3 s are nearly static. The
    fitted config, run on the static scene from every real scan's pose, gives lidar stats
    figures within 3 standard errors of the real ones, span by span."""
    out, report = tmp_path / 'fit' / 'hokuyo.yaml', tmp_path / 'report'
    assert rcsim('lidar', 'fit', '--bag', str(hokuyo), '--out', str(out), '--report',
                 str(report)) == 0
    text = capsys.readouterr().out
    assert 'verdict: simulated scans are statistically indistinguishable' in text
    config = LidarErrorConfig.from_yaml(out)
    assert config.range_resolution == 0.001          # the URG reports whole millimetres
    assert config.out_of_range == 'zero'              # and 0 (or codes below 20 mm) for no return
    assert (config.range_min, config.range_max) == (0.02, 5.6)
    assert 0.001 < config.noise_stddev < 0.006       # a few mm, as the sensor's class
    assert 0.2 < config.noise_beam_correlation < 0.6  # neighbouring beams share noise
    # invalid readings in directions valid in most scans (a constant rate, or with a range
    # ramp when one predicts each span from the other)
    assert 0.0 < fit_dropout(out) < 0.02
    assert sorted(p.name for p in report.iterdir()) == [
        'estimates.yaml', 'index.html', 'noise_vs_range.png', 'report.md', 'static_spans.png']
    # the spans: the first seconds (from 0 s to about 3 s) and the still end of the recording
    from rc_sim_sensors.bag_tools import read_scan_series

    scans = read_scan_series(hokuyo, '/scan').scans
    fit = fit_lidar([('hokuyo', scans)])
    first = fit.spans[0]
    assert first.first == 0 and 2.5 <= first.end <= 3.5
    for comparison in compare_spans(fit):
        bad = [(f.figure, round(f.z, 2)) for f in comparison.figures
               if not f.indistinguishable]
        assert not bad, bad
    # the fitted file drives lidar apply on the real bag
    assert rcsim('lidar', 'apply', '--bag', str(hokuyo), '--config', str(out), '--out',
                 str(tmp_path / 'sim')) == 0


@pytest.mark.parametrize(('extra', 'fragment'), [
    (['--topic', '/nope'], "no topic '/nope' (LaserScan topics in the bag: /scan)"),
    (['--seed', '-1'], '--seed: must be >= 0'),
])
def test_fit_errors_are_one_line_and_write_nothing(hokuyo, tmp_path, capsys, extra, fragment):
    out = tmp_path / 'x' / 'f.yaml'
    assert rcsim('lidar', 'fit', '--bag', str(hokuyo), '--out', str(out), *extra) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: ') and err.count('\n') == 1 and fragment in err, err
    assert not out.exists() and not out.parent.exists()


def test_fit_refuses_to_overwrite_and_same_report_path(hokuyo, tmp_path, capsys):
    out = tmp_path / 'f.yaml'
    out.write_text('keep\n')
    assert rcsim('lidar', 'fit', '--bag', str(hokuyo), '--out', str(out)) == 2
    assert 'exists already (use --force to overwrite)' in capsys.readouterr().err
    assert out.read_text() == 'keep\n'
    assert rcsim('lidar', 'fit', '--bag', str(hokuyo), '--out', str(tmp_path / 'g.yaml'),
                 '--report', str(tmp_path / 'g.yaml')) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: --report ') and '--out' in err and err.count('\n') == 1, err


def test_fit_takes_the_scan_role_of_a_recording_description(hokuyo, tmp_path, capsys):
    described = tmp_path / 'hokuyo.yaml'
    described.write_text('scan: {topic: /scan, note: "URG-04LX class, handheld"}\n')
    out = tmp_path / 'f.yaml'
    assert rcsim('lidar', 'fit', '--bag', str(hokuyo), '--recording', str(described), '--out',
                 str(out)) == 0
    assert LidarErrorConfig.from_yaml(out).range_resolution == 0.001
    capsys.readouterr()
    wrong = tmp_path / 'wrong.yaml'
    wrong.write_text('odom: {topic: /odom}\n')
    assert rcsim('lidar', 'fit', '--bag', str(hokuyo), '--recording', str(wrong), '--out',
                 str(tmp_path / 'g.yaml')) == 2
    err = capsys.readouterr().err
    assert 'no scan role' in err and err.count('\n') == 1
