"""The xacro car: expansion, mass properties, limits and EVERY plugin parameter equal vehicle.yaml.

The expected values are computed here from ``load_vehicle_params`` (the typed loader) and textbook
formulas, never read back from the xacro, so a number duplicated or mistyped in the xacro fails.
"""

from __future__ import annotations

import math
from pathlib import Path
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml

from rc_sim_description.errors import ConfigError, VehicleParamsError
from rc_sim_description.params import VehicleParams, load_vehicle_params, section_of
from rc_sim_description.paths import share_path
from rc_sim_description.urdf import car_xacro, expand_car, parse_urdf

PKG = Path(__file__).resolve().parents[1]
JOINTS = ['front_left_steering_joint', 'front_right_steering_joint', 'front_left_wheel_joint',
          'front_right_wheel_joint', 'rear_left_wheel_joint', 'rear_right_wheel_joint']
LINKS = ['base_link', 'chassis_link', 'front_left_steering_hinge', 'front_right_steering_hinge',
         'front_left_wheel', 'front_right_wheel', 'rear_left_wheel', 'rear_right_wheel', 'laser',
         'imu_link']
WHEELS = ['front_left_wheel', 'front_right_wheel', 'rear_left_wheel', 'rear_right_wheel']


def perturbed_override(path: Path) -> Path:
    """Every number of vehicle.yaml changed (still valid), so a hard-coded default cannot pass."""
    values = load_vehicle_params().leaf_values()
    over: dict[str, object] = {}
    for key, value in values.items():
        if key == 'lidar_samples':
            over[key] = value + 3
        elif key == 'fdir1':
            over[key] = [0.0, 1.0, 0.0]
        elif isinstance(value, float):
            over[key] = value * 1.07 + 0.013
    over['roll_inertia'] = 0.011
    nested: dict[str, dict[str, object]] = {}
    for key, value in over.items():
        nested.setdefault(section_of(key), {})[key] = value
    path.write_text(yaml.safe_dump(nested))
    return path


@pytest.fixture(scope='module', params=['defaults', 'every value changed'])
def override(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    if request.param == 'defaults':
        return None
    return perturbed_override(tmp_path_factory.mktemp('perturbed') / 'perturbed.yaml')


@pytest.fixture(scope='module')
def params(override: Path | None) -> VehicleParams:
    p = load_vehicle_params(overrides=[override] if override else [])
    if override is not None:
        assert p.steering.servo_i_gain > 0 and p.sensors.lidar_mount_y != 0  # really changed
    return p


@pytest.fixture(scope='module')
def robot(override: Path | None) -> ET.Element:
    return ET.fromstring(expand_car(params_file=override))


def floats(text: str | None) -> list[float]:
    assert text is not None
    return [float(v) for v in text.split()]


def joint(robot: ET.Element, name: str) -> ET.Element:
    found = robot.find(f"joint[@name='{name}']")
    assert found is not None, name
    return found


def link(robot: ET.Element, name: str) -> ET.Element:
    found = robot.find(f"link[@name='{name}']")
    assert found is not None, name
    return found


def plugins(robot: ET.Element, name: str) -> list[ET.Element]:
    return [p for g in robot.findall('gazebo') for p in g.findall('plugin') if p.get('name') == name]


def sensor(robot: ET.Element, reference: str) -> ET.Element:
    for g in robot.findall('gazebo'):
        if g.get('reference') == reference and g.find('sensor') is not None:
            return g.find('sensor')  # type: ignore[return-value]
    raise AssertionError(f'no sensor on {reference}')


def children(elem: ET.Element) -> dict[str, str]:
    return {c.tag: (c.text or '').strip() for c in elem}


def assert_params(actual: dict[str, str], expected: dict[str, object]) -> None:
    """Exactly the expected parameters (no extra, unreviewed one) with the expected values."""
    assert set(actual) == set(expected)
    for key, value in expected.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert math.isclose(float(actual[key]), value, rel_tol=1e-12, abs_tol=1e-15), key
        else:
            assert actual[key] == value, key


# --------------------------------------------------------------------------- structure
def test_links_and_joints_follow_the_contract(robot: ET.Element) -> None:
    assert robot.get('name') == 'rc_car'
    assert sorted(e.get('name') for e in robot.findall('link')) == sorted(LINKS)
    names = {e.get('name'): e.get('type') for e in robot.findall('joint')}
    for j in JOINTS[:2]:
        assert names[j] == 'revolute'
        assert floats(joint(robot, j).find('axis').get('xyz')) == [0, 0, 1]
    for j in JOINTS[2:]:
        assert names[j] == 'continuous'
        assert floats(joint(robot, j).find('axis').get('xyz')) == [0, 1, 0]
    assert {n for n, t in names.items() if t == 'fixed'} == {'chassis_joint', 'imu_joint',
                                                            'laser_joint'}


def test_parse_urdf_reads_the_same_structure(robot: ET.Element) -> None:
    model = parse_urdf(expand_car())
    assert model.name == 'rc_car'
    assert {lk.name for lk in model.links} == set(LINKS)
    assert {j.name for j in model.moving_joints} == set(JOINTS)
    steer = model.joint('front_left_steering_joint')
    assert (steer.parent, steer.child) == ('chassis_link', 'front_left_steering_hinge')
    with pytest.raises(ConfigError, match='malformed URDF'):
        parse_urdf('<robot><link', 'broken.urdf')


def test_every_moving_link_has_positive_mass_and_valid_inertia(robot: ET.Element) -> None:
    moving = {joint(robot, j).find('child').get('link') for j in JOINTS} | {'chassis_link'}
    for name in moving:
        inertial = link(robot, name).find('inertial')
        assert inertial is not None, name
        mass = float(inertial.find('mass').get('value'))
        assert mass > 0, name
        i = inertial.find('inertia')
        tensor = np.array([[float(i.get('ixx')), float(i.get('ixy')), float(i.get('ixz'))],
                           [float(i.get('ixy')), float(i.get('iyy')), float(i.get('iyz'))],
                           [float(i.get('ixz')), float(i.get('iyz')), float(i.get('izz'))]])
        eig = np.linalg.eigvalsh(tensor)
        assert eig.min() > 0, name  # positive definite
        assert eig[2] <= eig[0] + eig[1] + 1e-15, name  # triangle inequality


def test_masses_add_up_and_chassis_inertia_agrees_with_params(robot: ET.Element,
                                                               params: VehicleParams) -> None:
    masses = {lk.get('name'): float(lk.find('inertial/mass').get('value'))
              for lk in robot.findall('link') if lk.find('inertial') is not None}
    assert math.isclose(sum(masses.values()), params.mass_properties.mass, rel_tol=1e-12)
    assert math.isclose(masses['chassis_link'], params.chassis_mass, rel_tol=1e-12)
    inertia = link(robot, 'chassis_link').find('inertial/inertia')
    got = (float(inertia.get('ixx')), float(inertia.get('iyy')), float(inertia.get('izz')))
    assert np.allclose(got, params.chassis_link_inertia, rtol=1e-12, atol=0)


def test_whole_car_centre_of_mass_matches_lf_and_cg_height(robot: ET.Element,
                                                           params: VehicleParams) -> None:
    """Composite CG from every link's mass at its inertial origin, placed through the joints."""
    parent_of = {j.find('child').get('link'): j for j in robot.findall('joint')}

    def link_origin(name: str) -> np.ndarray:
        if name not in parent_of:
            return np.zeros(3)  # root, base_link (all joint rpy are zero)
        j = parent_of[name]
        return link_origin(j.find('parent').get('link')) + floats(j.find('origin').get('xyz'))

    total = np.zeros(3)
    mass = 0.0
    for lk in robot.findall('link'):
        inertial = lk.find('inertial')
        if inertial is None:
            continue
        m = float(inertial.find('mass').get('value'))
        total += m * (link_origin(lk.get('name')) + floats(inertial.find('origin').get('xyz')))
        mass += m
    g = params.geometry
    expected = [g.cg_to_rear_axle, 0.0, g.cg_height - g.wheel_radius]  # base_link at axle height
    assert np.allclose(total / mass, expected, atol=1e-12)


def test_wheel_and_hinge_inertias_are_solid_cylinders(robot: ET.Element,
                                                       params: VehicleParams) -> None:
    m, r, w = params.mass_properties.wheel_mass, params.geometry.wheel_radius, params.geometry.wheel_width
    for name in WHEELS:
        i = link(robot, name).find('inertial/inertia')
        assert math.isclose(float(i.get('iyy')), 0.5 * m * r * r)  # spin axis y
        assert math.isclose(float(i.get('ixx')), m * (3 * r * r + w * w) / 12)
        cyl = link(robot, name).find('collision/geometry/cylinder')
        assert (float(cyl.get('radius')), float(cyl.get('length'))) == (r, w)
        assert floats(link(robot, name).find('collision/origin').get('rpy'))[0] == pytest.approx(math.pi / 2)
    mh = params.mass_properties.steering_hinge_mass
    a, length = 0.5 * w, r  # knuckle: diameter = wheel width, length = wheel radius
    for side in ('left', 'right'):
        i = link(robot, f'front_{side}_steering_hinge').find('inertial/inertia')
        assert math.isclose(float(i.get('izz')), 0.5 * mh * a * a)
        assert math.isclose(float(i.get('ixx')), mh * (3 * a * a + length * length) / 12)
        # the engine's and the gz gains' hinge inertia J_h is exactly this link plus the wheel
        # about its vertical diameter (one knuckle definition for both backends)
        wheel = link(robot, f'front_{side}_wheel').find('inertial/inertia')
        assert math.isclose(float(i.get('izz')) + float(wheel.get('izz')),
                            params.steering_hinge_inertia)


def test_joint_origins_and_limits_equal_vehicle_yaml(robot: ET.Element, params: VehicleParams) -> None:
    g, st, dr, s = params.geometry, params.steering, params.drive, params.sensors
    for side, y in (('left', 0.5 * g.track_width), ('right', -0.5 * g.track_width)):
        steer = joint(robot, f'front_{side}_steering_joint')
        assert floats(steer.find('origin').get('xyz')) == [g.wheelbase, y, 0.0]
        lim = steer.find('limit')
        assert float(lim.get('lower')) == pytest.approx(-params.max_wheel_steering_angle, rel=1e-12)
        assert float(lim.get('upper')) == pytest.approx(params.max_wheel_steering_angle, rel=1e-12)
        assert float(lim.get('effort')) == st.servo_max_torque
        assert float(lim.get('velocity')) == pytest.approx(params.max_wheel_steering_rate, rel=1e-12)
        rear = joint(robot, f'rear_{side}_wheel_joint')
        assert floats(rear.find('origin').get('xyz')) == [0.0, y, 0.0]
        assert float(rear.find('limit').get('effort')) == dr.wheel_max_torque
        assert float(rear.find('limit').get('velocity')) == dr.max_wheel_speed
        assert joint(robot, f'front_{side}_wheel_joint').find('limit') is None  # free wheel
    laser = joint(robot, 'laser_joint').find('origin')
    assert floats(laser.get('xyz')) == [s.lidar_mount_x, s.lidar_mount_y, s.lidar_mount_z]
    assert floats(laser.get('rpy')) == [0.0, 0.0, s.lidar_mount_yaw]
    imu = joint(robot, 'imu_joint').find('origin')
    assert floats(imu.get('xyz')) == [s.imu_mount_x, s.imu_mount_y, s.imu_mount_z]


def test_chassis_box_from_geometry(robot: ET.Element, params: VehicleParams) -> None:
    g = params.geometry
    collision = link(robot, 'chassis_link').find('collision')
    assert floats(collision.find('geometry/box').get('size')) == [
        g.chassis_length, g.chassis_width, g.chassis_height]
    x, _, z = floats(collision.find('origin').get('xyz'))
    assert math.isclose(x, 0.5 * g.wheelbase)
    # bottom of the box at the ground clearance (ground is at z = -r in base_link)
    assert math.isclose(z - 0.5 * g.chassis_height + g.wheel_radius, g.chassis_ground_clearance)


# --------------------------------------------------------------------------- gz plugins
def test_every_plugin_parameter_equals_vehicle_yaml(robot: ET.Element, params: VehicleParams) -> None:
    dr, st = params.drive, params.steering
    wheel = plugins(robot, 'gz::sim::systems::JointController')
    assert {p.findtext('joint_name') for p in wheel} == {'rear_left_wheel_joint',
                                                          'rear_right_wheel_joint'}
    for p in wheel:
        side = p.findtext('joint_name').split('_')[1]
        assert p.get('filename') == 'gz-sim-joint-controller-system'
        assert_params(children(p), {
            'joint_name': f'rear_{side}_wheel_joint', 'topic': f'/joint_commands/rear_{side}_wheel',
            'use_force_commands': 'true', 'p_gain': dr.wheel_p_gain, 'i_gain': dr.wheel_i_gain,
            'd_gain': dr.wheel_d_gain, 'i_max': dr.wheel_i_max, 'i_min': -dr.wheel_i_max,
            'cmd_max': dr.wheel_max_torque, 'cmd_min': -dr.wheel_max_torque})
    servo = plugins(robot, 'gz::sim::systems::JointPositionController')
    assert len(servo) == 2
    for p in servo:
        side = p.findtext('joint_name').split('_')[1]
        assert p.get('filename') == 'gz-sim-joint-position-controller-system'
        assert_params(children(p), {
            'joint_name': f'front_{side}_steering_joint',
            'topic': f'/joint_commands/front_{side}_steering',
            'p_gain': st.servo_p_gain, 'i_gain': st.servo_i_gain, 'd_gain': st.servo_d_gain,
            'i_max': st.servo_i_max, 'i_min': -st.servo_i_max,
            'cmd_max': st.servo_max_torque, 'cmd_min': -st.servo_max_torque})
    (jsp,) = plugins(robot, 'gz::sim::systems::JointStatePublisher')
    assert jsp.get('filename') == 'gz-sim-joint-state-publisher-system'
    assert_params(children(jsp), {'topic': '/joint_states'})
    (odom,) = plugins(robot, 'gz::sim::systems::OdometryPublisher')
    assert odom.get('filename') == 'gz-sim-odometry-publisher-system'
    assert_params(children(odom), {'odom_frame': 'odom', 'robot_base_frame': 'base_link',
                                   'odom_topic': '/odom', 'tf_topic': '/tf', 'dimensions': 3})
    all_plugins = [p for g in robot.findall('gazebo') for p in g.findall('plugin')]
    assert len(all_plugins) == 6  # nothing unreviewed


def test_sensors_equal_vehicle_yaml(robot: ET.Element, params: VehicleParams) -> None:
    s = params.sensors
    lidar = sensor(robot, 'laser')
    assert lidar.get('type') == 'gpu_lidar'
    assert_params({k: v for k, v in children(lidar).items() if k != 'lidar'}, {
        'always_on': 'true', 'visualize': 'false', 'update_rate': s.lidar_update_rate,
        'topic': '/scan_raw', 'gz_frame_id': 'laser'})
    assert lidar.find('lidar/noise') is None  # ideal ranges: errors live in rc_sim_sensors
    assert_params(children(lidar.find('lidar/scan/horizontal')), {
        'samples': s.lidar_samples, 'resolution': 1, 'min_angle': -0.5 * s.lidar_fov,
        'max_angle': 0.5 * s.lidar_fov})
    assert_params(children(lidar.find('lidar/range')), {
        'min': s.lidar_range_min, 'max': s.lidar_range_max,
        'resolution': s.lidar_range_resolution})
    imu = sensor(robot, 'imu_link')
    assert imu.get('type') == 'imu'
    assert_params(children(imu), {'always_on': 'true', 'update_rate': s.imu_update_rate,
                                  'topic': '/imu', 'gz_frame_id': 'imu_link'})


def test_wheel_friction_equals_vehicle_yaml(robot: ET.Element, params: VehicleParams) -> None:
    f = params.friction
    refs = {g.get('reference'): g for g in robot.findall('gazebo') if g.find('mu1') is not None}
    assert set(refs) == set(WHEELS)
    for g in refs.values():
        assert_params(children(g), {'mu1': f.mu1, 'mu2': f.mu2, 'fdir1': ' '.join(
            repr(c) for c in f.fdir1)})


# --------------------------------------------------------------------------- arguments
def test_lidar_false_removes_frame_and_sensor() -> None:
    robot = ET.fromstring(expand_car(lidar=False))
    assert robot.find("link[@name='laser']") is None
    assert robot.find("joint[@name='laser_joint']") is None
    assert not [s for s in robot.iter('sensor') if s.get('type') == 'gpu_lidar']
    assert [s.get('type') for s in robot.iter('sensor')] == ['imu']


def test_namespace_prefixes_gz_topics_and_frames() -> None:
    robot = ET.fromstring(expand_car(namespace='/car1/'))
    topics = [t.text for t in robot.iter('topic')] + [t.text for t in robot.iter('odom_topic')]
    assert topics and all(t.startswith('/car1/') for t in topics)
    assert robot.find('.//odom_frame').text == 'car1/odom'
    assert robot.find('.//robot_base_frame').text == 'car1/base_link'
    assert {e.text for e in robot.iter('gz_frame_id')} == {'car1/laser', 'car1/imu_link'}
    # link names are not prefixed (robot_state_publisher's frame_prefix does that)
    assert robot.find("link[@name='base_link']") is not None


def structure(text: str) -> dict[str, str]:
    """Every element path + attribute/text of a URDF, for diffing two expansions."""
    out: dict[str, str] = {}

    def walk(elem: ET.Element, path: str) -> None:
        key = f"{path}/{elem.tag}[{elem.get('name') or elem.get('reference') or elem.findtext('joint_name') or ''}]"
        n = 0
        while f'{key}#{n}' in out or f'{key}#{n}@text' in out:
            n += 1
        key = f'{key}#{n}'
        for attr, value in elem.attrib.items():
            out[f'{key}@{attr}'] = value
        if elem.text and elem.text.strip():
            out[f'{key}@text'] = elem.text.strip()
        out.setdefault(key, '')
        for child in elem:
            walk(child, key)

    walk(ET.fromstring(text), '')
    return out


def diff(a: str, b: str) -> dict[str, tuple[str | None, str | None]]:
    sa, sb = structure(a), structure(b)
    return {k: (sa.get(k), sb.get(k)) for k in set(sa) | set(sb) if sa.get(k) != sb.get(k)}


def test_wheelbase_change_in_vehicle_yaml_moves_only_what_depends_on_it(tmp_path: Path) -> None:
    """Edit the wheelbase in a copy of the package data: the URDF follows, no other file changes."""
    for sub in ('urdf', 'config'):
        shutil.copytree(PKG / sub, tmp_path / sub)
    data = yaml.safe_load((tmp_path / 'config' / 'vehicle.yaml').read_text())
    data['geometry']['wheelbase'] = 0.40
    (tmp_path / 'config' / 'vehicle.yaml').write_text(yaml.safe_dump(data))
    base = expand_car()
    changed = expand_car(xacro_file=tmp_path / 'urdf' / 'rc_car.urdf.xacro')
    d = diff(base, changed)
    new = load_vehicle_params().with_values(wheelbase=0.40)
    # only: the two steering joints (origin; Ackermann hinge limits lower/upper/velocity, which
    # depend on L), the chassis box centre and the chassis centre of mass
    assert {k.split('/')[2] for k in d} == {
        'joint[front_left_steering_joint]#0', 'joint[front_right_steering_joint]#0',
        'link[chassis_link]#0'}
    assert len(d) == 11
    robot = ET.fromstring(changed)
    for side in ('left', 'right'):
        assert floats(joint(robot, f'front_{side}_steering_joint').find('origin').get('xyz'))[0] == 0.40
    assert floats(link(robot, 'chassis_link').find('collision/origin').get('xyz'))[0] == 0.20
    inertia = link(robot, 'chassis_link').find('inertial/inertia')
    assert np.allclose([float(inertia.get(k)) for k in ('ixx', 'iyy', 'izz')],
                       new.chassis_link_inertia, rtol=1e-12)
    # the same change through an override file gives the same URDF
    over = tmp_path / 'over.yaml'
    over.write_text('geometry:\n  wheelbase: 0.40\n')
    assert diff(expand_car(params_file=over), changed) == {}


def test_override_with_explicit_roll_and_pitch_inertia(tmp_path: Path) -> None:
    over = tmp_path / 'inertia.yaml'
    over.write_text('mass_properties:\n  roll_inertia: 0.01\n  pitch_inertia: 0.04\n')
    p = load_vehicle_params(overrides=[over])
    robot = ET.fromstring(expand_car(params_file=over))
    inertia = link(robot, 'chassis_link').find('inertial/inertia')
    got = [float(inertia.get(k)) for k in ('ixx', 'iyy', 'izz')]
    k = p.chassis_mass / p.mass_properties.mass
    assert np.allclose(got, [0.01 * k, 0.04 * k, p.mass_properties.yaw_inertia * k], rtol=1e-12)


def test_calibration_like_override_changes_gains_and_limits(tmp_path: Path) -> None:
    over = tmp_path / 'cal.yaml'
    over.write_text('steering:\n  max_steering_angle: 0.35\n  servo_p_gain: 4.5\n'
                    'drive:\n  wheel_p_gain: 0.8\n')
    robot = ET.fromstring(expand_car(params_file=over))
    lim = joint(robot, 'front_left_steering_joint').find('limit')
    expected = load_vehicle_params(overrides=[over]).max_wheel_steering_angle
    assert expected > 0.35  # inner wheel at full lock of a 0.35 rad bicycle angle
    assert float(lim.get('lower')) == pytest.approx(-expected, rel=1e-12)
    assert float(lim.get('upper')) == pytest.approx(expected, rel=1e-12)
    servo = plugins(robot, 'gz::sim::systems::JointPositionController')
    assert {float(p.findtext('p_gain')) for p in servo} == {4.5}
    wheel = plugins(robot, 'gz::sim::systems::JointController')
    assert {float(p.findtext('p_gain')) for p in wheel} == {0.8}


def test_invalid_override_is_one_line_naming_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / 'bad.yaml'
    bad.write_text('steering:\n  max_steering_angle: 2.0\n')
    with pytest.raises(VehicleParamsError) as info:
        expand_car(params_file=bad)
    assert str(info.value).startswith(f'{bad}: steering.max_steering_angle: must be in (0, pi/2)')
    assert '\n' not in str(info.value)
    with pytest.raises(VehicleParamsError, match='file not found'):
        expand_car(params_file=tmp_path / 'missing.yaml')
    with pytest.raises(ConfigError, match='not found'):
        expand_car(xacro_file=tmp_path / 'nope.xacro')


def test_pypi_xacro_cli_expands_with_relative_params_file(tmp_path: Path) -> None:
    """Plain `xacro` (no ROS, no $(find)); a relative params_file is relative to the cwd."""
    (tmp_path / 'over.yaml').write_text('geometry:\n  track_width: 0.3\n')
    exe = Path(sys.executable).with_name('xacro')
    cmd = [str(exe)] if exe.exists() else [sys.executable, '-m', 'xacro']
    result = subprocess.run([*cmd, str(car_xacro()), 'params_file:=over.yaml', 'lidar:=false'],
                            cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ''  # no deprecation warning (it would break launch's Command)
    robot = ET.fromstring(result.stdout)
    assert floats(joint(robot, 'rear_left_wheel_joint').find('origin').get('xyz'))[1] == 0.15
    assert car_xacro() == share_path('urdf/rc_car.urdf.xacro')
