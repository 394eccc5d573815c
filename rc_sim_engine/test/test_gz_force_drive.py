"""The gz path of a throttle or acceleration car (issue 27), statically: the bridge's integrated
drive model (rc_sim_control.drive_twin) equals the engine's on a straight line, the bridge
publishes its speed, clips a normalised car's angle to the ends of its map, and the URDF's wheel
loop is the stiff follower gz_gains derives (the xacro's own constants held equal)."""

from __future__ import annotations

import math
from pathlib import Path
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml

from rc_sim_control.ackermann import BridgeState
from rc_sim_control.drive_twin import (
    GZ_FORCE_DRIVE_LAG,
    V_STEER_DRAG,
    V_STICK,
    V_STOPPED,
    LongitudinalTwin,
    drive_twin_of,
    normalised_steering_range,
)
from rc_sim_control.node_params import bridge_config, bridge_specs
from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.params import VehicleParams, load_vehicle_params
from rc_sim_description.paths import share_path
from rc_sim_description.urdf import expand_car
from rc_sim_engine.vehicle import drive_models
from rc_sim_engine.vehicle.car import Car
from rc_sim_engine.vehicle.gz_gains import drive_effective_inertia, gz_wheel_gains
from rc_sim_engine.vehicle.state import VX

BASE = load_vehicle_params()
DART = BASE.with_values(
    wheelbase=0.1735, cg_to_front_axle=0.0805, track_width=0.08, mass=1.58,
    yaw_inertia=0.00316, steering_command='normalised', steering_offset=-0.00975,
    steering_gain_left=0.387, steering_gain_right=0.416, steering_curvature_left=0.56,
    steering_curvature_right=0.64, drive_model='throttle', motor_force_gain=17.98,
    motor_back_emf_gain=2.41, rolling_resistance=3.04, viscous_resistance=0.204,
    drag_coefficient=0.0096, steering_drag=7.47, throttle_dead_band=0.0747,
    throttle_time_constant=0.0462, tyre_model='fiala', cornering_stiffness_front=59.1,
    cornering_stiffness_rear=64.2)
ACCEL = BASE.with_values(drive_model='acceleration', acceleration_gain=0.85,
                         acceleration_time_constant=0.06, max_acceleration=2.5,
                         max_deceleration=4.0)


def test_the_constants_are_the_engines() -> None:
    assert (V_STICK, V_STOPPED, V_STEER_DRAG) == (drive_models.V_STICK, drive_models.V_STOPPED,
                                                  drive_models.V_STEER_DRAG)
    xacro = share_path('urdf/rc_car_params.xacro').read_text()
    lag = re.search(r'name="rc_force_follow_lag" value="([0-9.]+)"', xacro)
    assert lag is not None and float(lag.group(1)) == GZ_FORCE_DRIVE_LAG
    assert f'{GRAVITY_MPS2}' in xacro


def _profile(t: float) -> tuple[float, float]:
    """(target speed [m/s], steering angle [rad]): start, faster, a turn, a stop."""
    if t < 3.0:
        return 1.0, 0.0
    if t < 6.0:
        return 2.2, 0.0
    if t < 8.0:
        return 1.5, 0.12
    return 0.0, 0.0


@pytest.mark.parametrize('car', [DART, ACCEL], ids=['throttle', 'acceleration'])
def test_the_bridge_integrates_the_engines_drive_model(car: VehicleParams) -> None:
    """Straight ahead the engine's car and the bridge's 1-D model answer the same target with
    the same speed (to 2 mm/s: the 1-D model leaves out the chassis's lateral coupling, so the
    turn is left out here); at the end both stand still."""
    p = car.with_values(command_latency=0.0, steering_drag=0.0)
    r = p.effective_wheel_radius
    engine = Car(p, dt=1e-3)
    twin = LongitudinalTwin(p)
    dt, errors = 1e-3, []
    for k in range(10_000):
        target, _ = _profile(k * dt)
        engine.step(0.0, target / r)
        omega = twin.advance(target / r, 0.0, dt)
        errors.append(abs(engine.state[0, VX] - omega * r))
    assert max(errors) < 2e-3
    assert twin.speed == 0.0 and engine.state[0, VX] == 0.0


def test_the_steering_drag_slows_the_twin_as_it_slows_the_engine() -> None:
    """In the profile's turn (0.12 rad at 1.5 m/s) the drag C_rd sin^2(delta) costs both the
    same speed, within the single track's own losses (Fy_f sin(delta), 1 cm/s here)."""
    p = DART.with_values(command_latency=0.0)
    r = p.effective_wheel_radius
    engine, twin = Car(p, dt=1e-3), LongitudinalTwin(p)
    for k in range(7_500):
        target, delta = _profile(k * 1e-3)
        engine.step(delta, target / r)
        twin.advance(target / r, delta, 1e-3)
    assert twin.speed == pytest.approx(engine.state[0, VX], abs=0.03)


def test_bridge_state_publishes_the_models_speed_and_the_maps_angles() -> None:
    values = {s.name: s.default for s in bridge_specs(DART)}
    state = BridgeState(bridge_config(values), **drive_twin_of(DART))
    lo, hi = normalised_steering_range(DART)  # type: ignore[misc]
    lim = DART.steering.max_steering_angle  # the map's right end lies beyond the mechanical limit
    assert (lo, hi) == pytest.approx((max(-0.00975 - 0.416, -lim), -0.00975 + 0.387))
    state.set_steering_angle(-0.6)
    r = DART.effective_wheel_radius
    twin = LongitudinalTwin(DART)
    out = []
    for k in range(1, 301):  # 50 Hz for 6 s, the bridge's default publish rate
        t = 0.02 * k
        state.set_wheel_speed(1.2 / r, t)
        cmd = state.commands(t)
        out.append(float(cmd.rear_left_wheel))
        if k > 1:  # the first call only starts the clock
            twin.advance(1.2 / r, lo, 0.02)
    assert out[-1] * r == pytest.approx(1.2, rel=0.01)  # the controller holds the target
    assert out[-1] == pytest.approx(twin.speed / r, rel=1e-9)
    assert out[0] == 0.0 and all(b >= a - 1e-9 for a, b in zip(out, out[10:]))  # no jump
    left, right = (float(c) for c in (cmd.front_left_steering, cmd.front_right_steering))
    tan_delta = math.tan(lo)  # the map's right end, not the mapper's -0.6 or -max_steering
    half = 0.5 * DART.geometry.track_width * tan_delta
    L = DART.geometry.wheelbase
    assert left == pytest.approx(math.atan(L * tan_delta / (L - half)))
    assert right == pytest.approx(math.atan(L * tan_delta / (L + half)))


def test_a_speed_loop_car_keeps_the_plain_bridge() -> None:
    assert drive_twin_of(BASE) == {}
    p = BASE.with_values(drive_model='first_order')
    values = {s.name: s.default for s in bridge_specs(p)}
    state = BridgeState(bridge_config(values), **drive_twin_of(p))
    state.set_wheel_speed(17.0, 0.0)
    assert float(state.commands(0.01).rear_left_wheel) == 17.0


@pytest.mark.parametrize('car', [DART, ACCEL], ids=['throttle', 'acceleration'])
def test_urdf_wheel_loop_follows_the_integrated_speed(car: VehicleParams, tmp_path: Path
                                                      ) -> None:
    """The xacro car of a force-drive vehicle file: Kp = J_eff / T, T = 20 ms, torque limits
    +-J_eff mu1 g / R (hand-computed here), as gz_gains says."""
    over = tmp_path / 'car.yaml'
    over.write_text(yaml.safe_dump(car.to_dict()))
    robot = ET.fromstring(expand_car(params_file=over))
    j_eff = 0.5 * (car.mass_properties.mass * car.effective_wheel_radius ** 2
                   + 4 * 0.5 * car.mass_properties.wheel_mass * car.geometry.wheel_radius ** 2)
    assert drive_effective_inertia(car) == pytest.approx(j_eff)
    torque = j_eff * car.friction.mu1 * 9.80665 / car.effective_wheel_radius
    want = gz_wheel_gains(car)
    assert (want.p, want.i, want.d) == pytest.approx((j_eff / 0.02, 0.0, 0.0))
    assert (want.cmd_max, want.cmd_min) == pytest.approx((torque, -torque))
    plugins = [p for g in robot.findall('gazebo') for p in g.findall('plugin')
               if p.get('name') == 'gz::sim::systems::JointController']
    assert len(plugins) == 2
    for plugin in plugins:
        got = [float(plugin.findtext(tag) or 'nan') for tag in
               ('p_gain', 'i_gain', 'd_gain', 'cmd_max', 'cmd_min')]
        assert np.allclose(got, [want.p, want.i, want.d, want.cmd_max, want.cmd_min],
                           rtol=1e-12, atol=1e-15)
