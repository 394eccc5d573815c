"""rcsim lidar apply|stats on small rosbag2 bags written with rosbags in tmp_path (db3 and mcap)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip('rosbags')
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from rc_sim_description.bags import BagError as LidarBagError
from rc_sim_description.cli_support import run_cli
from rc_sim_sensors import cli
from rc_sim_sensors.bag_tools import (
    apply_errors_to_bag,
    read_scan_series,
    scan_statistics,
)
from rc_sim_sensors.lidar_config import LidarErrorConfig
from rc_sim_sensors.lidar_errors import LidarErrorModel
from rc_sim_sensors.scan_geometry import incidence_from_ranges
from rc_sim_sensors.scene import room_scan

TS = get_typestore(Stores.ROS2_JAZZY)
SCAN = 'sensor_msgs/msg/LaserScan'
TWIST = 'geometry_msgs/msg/Twist'
BEAMS = 181
ANGLE_MIN, ANGLE_MAX = -math.radians(135), math.radians(135)
T0_NS = 1_700_000_000_000_000_000


def _scan_msg(k: int, ranges: np.ndarray) -> object:
    Header = TS.types['std_msgs/msg/Header']
    Time = TS.types['builtin_interfaces/msg/Time']
    LaserScan = TS.types[SCAN]
    t = T0_NS + k * 25_000_000
    return LaserScan(
        header=Header(stamp=Time(sec=t // 10**9, nanosec=t % 10**9), frame_id='laser'),
        angle_min=ANGLE_MIN, angle_max=ANGLE_MAX,
        angle_increment=(ANGLE_MAX - ANGLE_MIN) / (BEAMS - 1), time_increment=0.0,
        scan_time=0.025, range_min=0.06, range_max=30.0,
        ranges=ranges.astype(np.float32), intensities=np.full(BEAMS, 1.5, dtype=np.float32))


def make_bag(path: Path, storage: str = 'sqlite3', scans: int = 40) -> Path:
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    angles = np.linspace(ANGLE_MIN, ANGLE_MAX, BEAMS)
    ranges, _ = room_scan(angles)
    Twist = TS.types[TWIST]
    Vector3 = TS.types['geometry_msgs/msg/Vector3']
    with Writer(path, version=8, storage_plugin=plugin) as w:
        cs = w.add_connection('/scan_raw', SCAN, typestore=TS)
        cc = w.add_connection('/cmd_vel', TWIST, typestore=TS)
        for k in range(scans):
            t = T0_NS + k * 25_000_000
            w.write(cs, t, TS.serialize_cdr(_scan_msg(k, ranges), SCAN))
            cmd = Twist(linear=Vector3(x=0.1 * k, y=0.0, z=0.0), angular=Vector3(x=0.0, y=0.0, z=0.2))
            w.write(cc, t + 1, TS.serialize_cdr(cmd, TWIST))
    return path


def read_scans(bag: Path, topic: str) -> tuple[np.ndarray, np.ndarray]:
    scans = read_scan_series(bag, topic).scans
    return np.vstack([s.ranges for s in scans]), np.array([s.stamp for s in scans])


def read_all(bag: Path) -> dict[str, list[tuple[int, bytes]]]:
    out: dict[str, list[tuple[int, bytes]]] = {}
    with Reader(bag) as r:
        for conn, t, raw in r.messages():
            out.setdefault(conn.topic, []).append((t, bytes(raw)))
    return out


def rcsim(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog='rcsim')
    cli.register(parser.add_subparsers(dest='command'))
    args = parser.parse_args(list(argv))
    return run_cli(lambda: int(args.func(args)))


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_ideal_preset_copies_the_bag_unchanged(tmp_path, storage):
    bag = make_bag(tmp_path / 'in', storage)
    out = tmp_path / 'out'
    assert rcsim('lidar', 'apply', '--bag', str(bag), '--out', str(out), '--preset', 'ideal',
                 '--topic', '/scan_raw') == 0
    ext = 'mcap' if storage == 'mcap' else 'db3'
    # the bag's files, beside its summary page (index.html and its pictures)
    files = sorted(p.name for p in out.iterdir() if p.suffix not in ('.html', '.png'))
    assert files == sorted(['metadata.yaml', f'out.{ext}'])
    assert (out / 'index.html').is_file()
    assert f'- out.{ext}' in (out / 'metadata.yaml').read_text()
    assert 'version: 8' in (out / 'metadata.yaml').read_text()
    a, b = read_all(bag), read_all(out)
    assert a['/cmd_vel'] == b['/cmd_vel']
    sa = [TS.deserialize_cdr(raw, SCAN) for _, raw in a['/scan_raw']]
    sb = [TS.deserialize_cdr(raw, SCAN) for _, raw in b['/scan_raw']]
    assert len(sa) == len(sb) == 40
    for x, y in zip(sa, sb):
        np.testing.assert_array_equal(x.ranges, y.ranges)
        np.testing.assert_array_equal(x.intensities, y.intensities)
        assert x.header.stamp.sec == y.header.stamp.sec
        assert x.header.stamp.nanosec == y.header.stamp.nanosec


def test_apply_matches_the_model_and_is_reproducible(tmp_path):
    bag = make_bag(tmp_path / 'in')
    config = LidarErrorConfig.from_preset('harsh').with_values(scan_loss_probability=0.0)
    r1 = apply_errors_to_bag(bag, tmp_path / 'o1', config, topic='/scan_raw', seed=3)
    apply_errors_to_bag(bag, tmp_path / 'o2', config, topic='/scan_raw', seed=3)
    apply_errors_to_bag(bag, tmp_path / 'o3', config, topic='/scan_raw', seed=4)
    assert (r1.scans_in, r1.scans_out, r1.other_messages) == (40, 40, 40)
    o1, o2, o3 = (read_all(tmp_path / n)['/scan_raw'] for n in ('o1', 'o2', 'o3'))
    assert o1 == o2
    assert o1 != o3
    # independent path: run the model on the input scans directly
    ranges_in, stamps = read_scans(bag, '/scan_raw')
    model = LidarErrorModel(config, 3)
    # the angles a LaserScan carries: angle_min / angle_increment are float32 on the wire (with
    # float64 angles, equality held only by luck of the seed: 1 beam crosses a quantum when the
    # Gauss-Markov bias changes slightly)
    f32 = np.float32
    angles = float(f32(ANGLE_MIN)) + float(f32((ANGLE_MAX - ANGLE_MIN) / (BEAMS - 1))) * \
        np.arange(BEAMS)
    intens = np.full(BEAMS, 1.5, dtype=np.float32)
    ranges_out, _ = read_scans(tmp_path / 'o1', '/scan_raw')
    increment = float(f32((ANGLE_MAX - ANGLE_MIN) / (BEAMS - 1)))
    for k in range(40):
        # harsh has an incidence dropout: the tool takes incidence angles from the scan itself
        incidence = incidence_from_ranges(ranges_in[k], increment, config.depth_edge_threshold)
        expected = model.apply(ranges_in[k], angles, stamps[k], intens, incidence).ranges
        np.testing.assert_array_equal(ranges_out[k], expected)
    # latency (harsh: 50 ms) delays header stamps and bag timestamps; limits are rewritten
    first = TS.deserialize_cdr(o1[0][1], SCAN)
    t = first.header.stamp.sec * 10**9 + first.header.stamp.nanosec
    assert t == T0_NS + 50_000_000 and o1[0][0] == T0_NS + 50_000_000
    assert first.range_min == pytest.approx(0.1) and first.range_max == pytest.approx(8.0)


def test_lost_scans_are_left_out(tmp_path):
    bag = make_bag(tmp_path / 'in', scans=200)
    config = LidarErrorConfig.from_mapping({'scan_loss_probability': 0.5}, 't')
    report = apply_errors_to_bag(bag, tmp_path / 'o', config, topic='/scan_raw', seed=1)
    n = 200
    assert abs(report.scans_out - n / 2) < 5 * math.sqrt(n * 0.25)
    assert len(read_all(tmp_path / 'o')['/scan_raw']) == report.scans_out


def test_storage_conversion_db3_to_mcap(tmp_path):
    bag = make_bag(tmp_path / 'in', 'sqlite3')
    assert rcsim('lidar', 'apply', '--bag', str(bag), '--out', str(tmp_path / 'o'), '--preset',
                 'hokuyo_ust10lx', '--topic', '/scan_raw', '--storage', 'mcap') == 0
    assert any((tmp_path / 'o').glob('*.mcap'))
    assert len(read_all(tmp_path / 'o')['/scan_raw']) == 40


def test_refuses_to_overwrite_without_force(tmp_path, capsys):
    bag = make_bag(tmp_path / 'in')
    out = tmp_path / 'o'
    out.mkdir()
    (out / 'keep.txt').write_text('x')
    args = ['lidar', 'apply', '--bag', str(bag), '--out', str(out), '--preset', 'harsh',
            '--topic', '/scan_raw']
    assert rcsim(*args) == 2
    err = capsys.readouterr().err
    assert 'exists already (use --force to overwrite)' in err and err.count('\n') == 1
    assert (out / 'keep.txt').exists()
    # issue 28: --force replaces only a bag, never a directory of other files
    assert rcsim(*args, '--force') == 2
    err = capsys.readouterr().err
    assert 'not a bag (no metadata.yaml): --force does not replace it' in err
    assert err.count('\n') == 1
    assert (out / 'keep.txt').read_text() == 'x'
    (out / 'keep.txt').unlink()
    out.rmdir()
    assert rcsim(*args) == 0
    assert rcsim(*args, '--force') == 0  # the bag it wrote is replaced
    assert (out / 'metadata.yaml').exists()


@pytest.mark.parametrize(('setup', 'argv_topic', 'fragment'), [
    ('missing', '/scan_raw', 'not found'),
    ('no_metadata', '/scan_raw', 'not a rosbag2 directory'),
    ('ok', '/scan', "no topic '/scan' (LaserScan topics in the bag: /scan_raw)"),
    ('ok', '/cmd_vel', "topic '/cmd_vel' is geometry_msgs/msg/Twist, not sensor_msgs/msg/LaserScan"),
    ('corrupt', '/scan_raw', 'cannot read bag'),
    ('bad_yaml', '/scan_raw', 'cannot read bag'),
])
def test_bag_errors_are_one_line_and_leave_nothing(tmp_path, capsys, setup, argv_topic, fragment):
    bag = tmp_path / 'in'
    if setup != 'missing':
        make_bag(bag)
    if setup == 'no_metadata':
        (bag / 'metadata.yaml').unlink()
    if setup == 'corrupt':
        db3 = next(bag.glob('*.db3'))
        db3.write_bytes(b'this is not sqlite' * 100)
    if setup == 'bad_yaml':
        (bag / 'metadata.yaml').write_text('rosbag2_bagfile_information: [unclosed\n')
    out = tmp_path / 'o'
    code = rcsim('lidar', 'apply', '--bag', str(bag), '--out', str(out), '--preset', 'harsh',
                 '--topic', argv_topic)
    err = capsys.readouterr().err
    assert code == 2
    assert fragment in err, err
    assert err.startswith('error: ') and err.count('\n') == 1
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith('.o.')] == []


def test_bad_config_and_set_overrides(tmp_path, capsys):
    bag = make_bag(tmp_path / 'in')
    cfg = tmp_path / 'e.yaml'
    cfg.write_text('dropout_probabilty: 0.1\n')
    assert rcsim('lidar', 'apply', '--bag', str(bag), '--out', str(tmp_path / 'o'),
                 '--config', str(cfg), '--topic', '/scan_raw') == 2
    assert "did you mean 'dropout_probability'" in capsys.readouterr().err
    assert rcsim('lidar', 'apply', '--bag', str(bag), '--out', str(tmp_path / 'o'),
                 '--preset', 'ideal', '--set', 'dropout_probability=2', '--topic',
                 '/scan_raw') == 2
    assert 'dropout_probability: must be a probability' in capsys.readouterr().err
    assert not (tmp_path / 'o').exists()
    assert rcsim('lidar', 'apply', '--bag', str(bag), '--out', str(tmp_path / 'o'),
                 '--preset', 'ideal', '--set', 'dropout_probability=1', '--topic',
                 '/scan_raw') == 0
    ranges, _ = read_scans(tmp_path / 'o', '/scan_raw')
    assert np.isposinf(ranges).all()


def test_stats_recover_noise_and_dropout_of_a_static_scene(tmp_path, capsys):
    bag = make_bag(tmp_path / 'in', scans=300)
    sigma, p = 0.01, 0.05
    config = LidarErrorConfig.from_mapping({'noise_stddev': sigma, 'dropout_probability': p}, 't')
    apply_errors_to_bag(bag, tmp_path / 'o', config, topic='/scan_raw', seed=2)
    stats = scan_statistics(tmp_path / 'o', '/scan_raw')
    n = 300 * BEAMS
    assert stats.scans == 300 and stats.beams_min == stats.beams_max == BEAMS
    assert stats.rate_hz == pytest.approx(40.0, rel=1e-6)
    assert abs(stats.dropout_estimate - p) < 5 * math.sqrt(p * (1 - p) / n)
    assert stats.pos_inf_fraction == pytest.approx(stats.dropout_estimate)
    # clipped-RMS sigma of scan-to-scan differences: relative standard error ~ 1.03 / sqrt(2 N)
    # for N independent normal values, x sqrt(1.5) as consecutive differences share a scan
    m = 299 * BEAMS * (1 - p) ** 2
    assert stats.noise_pairs == 299
    assert abs(stats.noise_estimate - sigma) < 5 * sigma * 1.03 * math.sqrt(1.5 / (2 * m))
    assert rcsim('lidar', 'stats', '--bag', str(tmp_path / 'o'), '--topic', '/scan_raw') == 0
    text = capsys.readouterr().out
    assert 'noise estimate' in text and 'dropout estimate' in text
    clean = scan_statistics(bag, '/scan_raw')
    assert clean.noise_estimate == 0.0 and clean.dropout_estimate == 0.0


def test_stats_errors(tmp_path):
    bag = make_bag(tmp_path / 'in')
    with pytest.raises(LidarBagError, match=r"no topic '/scan' \(LaserScan topics in the bag: /scan_raw\)"):
        scan_statistics(bag, '/scan')


def test_stats_dropout_ignores_beams_that_are_mostly_out_of_range(tmp_path):
    """UX review: beams finite in only a few scans (a moving car looking into open space) were
    counted as dropouts, so an ideal scan of a figure eight reported ~70 % dropout."""
    angles = np.linspace(ANGLE_MIN, ANGLE_MAX, BEAMS)
    ranges, _ = room_scan(angles)
    bag = tmp_path / 'open'
    with Writer(bag, version=8, storage_plugin=StoragePlugin.SQLITE3) as w:
        cs = w.add_connection('/scan', SCAN, typestore=TS)
        for k in range(20):
            r = ranges.copy()
            if k % 4:  # second half of the beams: open space in 3 scans out of 4
                r[BEAMS // 2:] = np.inf
            w.write(cs, T0_NS + k * 25_000_000, TS.serialize_cdr(_scan_msg(k, r), SCAN))
    stats = scan_statistics(bag, '/scan')
    assert stats.pos_inf_fraction > 0.3
    assert stats.dropout_estimate == 0.0


def test_stats_dropout_is_undefined_without_a_usually_valid_beam(tmp_path):
    """UX review: 0 % was printed when no beam could be judged (car looking into open space)."""
    angles = np.linspace(ANGLE_MIN, ANGLE_MAX, BEAMS)
    ranges, _ = room_scan(angles)
    bag = tmp_path / 'open'
    with Writer(bag, version=8, storage_plugin=StoragePlugin.SQLITE3) as w:
        cs = w.add_connection('/scan', SCAN, typestore=TS)
        for k in range(8):
            r = np.full(BEAMS, np.inf)
            r[k::8] = ranges[k::8]  # every beam finite in 1 scan out of 8
            w.write(cs, T0_NS + k * 25_000_000, TS.serialize_cdr(_scan_msg(k, r), SCAN))
    stats = scan_statistics(bag, '/scan')
    assert math.isnan(stats.dropout_estimate)
    assert '  dropout estimate n/a (no direction is valid in most scans)' in stats.lines()


# --------------------------------------------------------------------------- real-world scans
def _free_scan(k: int, angle_min: float, inc: float, ranges: np.ndarray,
               intensities: np.ndarray | None, range_min: float = 0.15,
               range_max: float = 12.0) -> object:
    Header = TS.types['std_msgs/msg/Header']
    Time = TS.types['builtin_interfaces/msg/Time']
    t = T0_NS + k * 100_000_000
    return TS.types[SCAN](
        header=Header(stamp=Time(sec=t // 10**9, nanosec=t % 10**9), frame_id='laser'),
        angle_min=angle_min, angle_max=angle_min + inc * (ranges.size - 1),
        angle_increment=inc, time_increment=0.0, scan_time=0.1, range_min=range_min,
        range_max=range_max, ranges=ranges.astype(np.float32),
        intensities=np.zeros(0, np.float32) if intensities is None else
        intensities.astype(np.float32))


def make_360_bag(path: Path, scans: int = 60, bad: dict[int, dict[str, object]] | None = None,
                 ) -> Path:
    """A low-cost 360 deg lidar: 224/225/226 beams, angle_min changing every scan, zeros for
    no return, intensities in most scans; ``bad`` overrides fields of some messages."""
    rng = np.random.default_rng(5)
    with Writer(path, version=8, storage_plugin=StoragePlugin.SQLITE3) as w:
        cs = w.add_connection('/scan', SCAN, typestore=TS)
        for k in range(scans):
            beams = (224, 225, 226)[k % 3]
            inc = 2 * math.pi / beams
            angle_min = -math.pi + rng.uniform(0.0, inc)
            angles = angle_min + inc * np.arange(beams)
            ranges, _ = room_scan(angles)
            ranges = ranges + rng.normal(0.0, 0.01, beams)
            ranges[rng.random(beams) < 0.05] = 0.0
            intensities = None if k % 10 == 9 else np.full(beams, 47.0)
            msg = _free_scan(k, angle_min, inc, ranges, intensities)
            for key, value in (bad or {}).get(k, {}).items():
                setattr(msg, key, value)
            w.write(cs, T0_NS + k * 100_000_000, TS.serialize_cdr(msg, SCAN))
    return path


def test_apply_keeps_every_scans_geometry_and_matches_the_model(tmp_path):
    bag = make_360_bag(tmp_path / 'in')
    config = LidarErrorConfig.from_preset('rplidar_a1')
    report = apply_errors_to_bag(bag, tmp_path / 'o', config, topic='/scan', seed=9)
    assert report.scans_in == 60 and report.skipped == 0
    src = read_scan_series(bag, '/scan').scans
    out = read_scan_series(tmp_path / 'o', '/scan').scans
    assert len(out) == report.scans_out == 60
    model = LidarErrorModel(config, 9)
    for a, b in zip(src, out):
        assert (b.beams, b.angle_min, b.angle_increment) == (a.beams, a.angle_min,
                                                             a.angle_increment)
        # independent path: driver zeros enter as "no return", incidence from the scan
        ranges = a.ranges.copy()
        ranges[(ranges < a.range_min) | (ranges > a.range_max)] = np.inf
        incidence = incidence_from_ranges(np.where(np.isfinite(ranges), ranges, np.nan),
                                          a.angle_increment, config.depth_edge_threshold)
        expected = model.apply(ranges, a.angles, a.stamp, a.intensities, incidence)
        np.testing.assert_array_equal(b.ranges, expected.ranges)
        assert (b.intensities is None) == (a.intensities is None)
        assert not np.isnan(b.ranges).any()


def test_stats_on_varying_geometry(tmp_path, capsys):
    bag = make_360_bag(tmp_path / 'in')
    stats = scan_statistics(bag, '/scan')
    assert (stats.beams_min, stats.beams_max) == (224, 226) and not stats.fixed_geometry
    assert stats.rate_hz == pytest.approx(10.0, rel=1e-6)
    # 5 % zeros written by the driver: invalid, counted below range_min, and they are the
    # dropout estimate (every direction is valid in most scans)
    n = stats.readings
    assert abs(stats.low_fraction - 0.05) < 5 * math.sqrt(0.05 * 0.95 / n)
    assert stats.dropout_estimate == pytest.approx(stats.low_fraction, abs=1e-3)
    # noise: sigma 10 mm, differences interpolated between grids; the walls are linear in
    # angle only approximately, so allow 10 % on top of the sampling band
    assert abs(stats.noise_estimate - 0.01) < 0.1 * 0.01 + 5 * 0.01 / math.sqrt(
        stats.noise_samples)
    assert rcsim('lidar', 'stats', '--bag', str(bag)) == 0
    text = capsys.readouterr().out
    assert '60 scans x 224-226 beams' in text and 'geometry varies' in text
    assert 'nan' not in text.replace('nan 0.0000%', '')


@pytest.mark.parametrize(('field', 'value', 'fragment'), [
    ('angle_increment', 0.0, 'angle_increment is 0.0'),
    ('angle_increment', float('nan'), 'angle_increment is nan'),
    ('angle_min', float('inf'), 'angle_min is inf'),
    ('range_min', 20.0, 'range_min 20 m is not below range_max 12 m'),
    ('intensities', np.ones(3, np.float32), '3 intensities for'),
])
@pytest.mark.parametrize('verb', ['apply', 'stats'])
def test_unusable_scans_are_one_line_or_skipped_with_a_count(tmp_path, capsys, field, value,
                                                              fragment, verb):
    bag = make_360_bag(tmp_path / 'in', scans=12, bad={7: {field: value}})
    out = tmp_path / 'o'
    args = ['lidar', verb, '--bag', str(bag)] + (
        ['--out', str(out), '--preset', 'rplidar_a1'] if verb == 'apply' else [])
    assert rcsim(*args) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: ') and err.count('\n') == 1, err
    assert '/scan: message 7 (0.700 s into the bag): ' + fragment in err, err
    assert '--skip-corrupt' in err
    assert not out.exists()
    assert rcsim(*args, '--skip-corrupt') == 0
    err = capsys.readouterr().err
    assert err.startswith('warning: ') and '/scan: 1 of 12 scans skipped (message 7: ' in err
    if verb == 'apply':
        assert len(read_scan_series(out, '/scan').scans) == 11


def test_beam_limit_refuses_before_allocating(tmp_path, capsys, monkeypatch):
    bag = make_bag(tmp_path / 'in', scans=3)
    monkeypatch.setenv('RC_SIM_MAX_SCAN_BEAMS', '100')
    assert rcsim('lidar', 'stats', '--bag', str(bag), '--topic', '/scan_raw') == 2
    err = capsys.readouterr().err
    assert ('181 beams per scan exceed the limit of 100 (raise it with the environment variable '
            'RC_SIM_MAX_SCAN_BEAMS)') in err and err.count('\n') == 1


def test_zero_mode_output_keeps_the_drivers_convention(tmp_path):
    bag = make_360_bag(tmp_path / 'in', scans=6)
    config = LidarErrorConfig.from_mapping({'noise_stddev': 0.01, 'out_of_range': 'zero',
                                            'range_min': 0.15, 'range_max': 12.0}, 't')
    apply_errors_to_bag(bag, tmp_path / 'o', config, topic='/scan', seed=1)
    for a, b in zip(read_scan_series(bag, '/scan').scans,
                    read_scan_series(tmp_path / 'o', '/scan').scans):
        # a driver's 0 never comes out as a (noisy) valid reading
        np.testing.assert_array_equal(b.ranges[a.ranges == 0.0], 0.0)
        assert np.isfinite(b.ranges).all()
    rep117 = config.with_values(out_of_range='rep117', range_min=0.0)
    apply_errors_to_bag(bag, tmp_path / 'r', rep117, topic='/scan', seed=1)
    for a, b in zip(read_scan_series(bag, '/scan').scans,
                    read_scan_series(tmp_path / 'r', '/scan').scans):
        assert np.isposinf(b.ranges[a.ranges == 0.0]).all()
