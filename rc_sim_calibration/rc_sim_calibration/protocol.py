"""The recommended acquisition protocol (docs/calibration.md, "Recording"): the same scenario
files drive the real car (``rear_wheel_speed_publisher``) and the engine (``rcsim run
--scenario``).

Scenarios (all built by :func:`rc_sim_control.commands.manoeuvre` from the vehicle limits, mode
``steering_angle`` so the real car and the engine get identical steering commands): a straight
line; circles both ways at two radii (2 and 3 R_min) and two speeds; a figure eight; steering
steps up to full lock; straight speed steps; a slalom and a steering chirp (transients for yaw
inertia, latency and servo response).
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
from typing import Any

from rc_sim_control.commands import CommandSequence, manoeuvre, save_sequence
from rc_sim_description.params import VehicleParams

__all__ = ['ProtocolStep', 'protocol_sequences', 'protocol_steps', 'write_protocol']


@dataclass(frozen=True)
class ProtocolStep:
    """One scenario of the protocol: file stem, manoeuvre name and its keyword arguments."""

    stem: str
    manoeuvre: str
    kwargs: dict[str, Any]
    purpose: str


def protocol_steps(params: VehicleParams, *, speed: float = 1.0) -> list[ProtocolStep]:
    """The protocol for a car (radii from its minimum turning radius; ``speed`` in m/s)."""
    r_min = params.min_turning_radius
    fast = 2.0 * speed
    v_max = params.max_speed
    speed_levels = tuple(round(min(f * speed / v_max, 1.0), 4) for f in (0.5, 1.0, 2.0, 3.0))
    steps = [ProtocolStep('01_line', 'line', {'speed': speed, 'duration': 8.0},
                          'straight-line tracking, steering offset')]
    i = 2
    for radius_factor in (2.0, 3.0):
        for v in (speed, fast):
            for side in ('left', 'right'):
                steps.append(ProtocolStep(
                    f'{i:02d}_circle_{side}_r{radius_factor:g}rmin_{v:g}mps', f'circle_{side}',
                    {'speed': v, 'radius': round(radius_factor * r_min, 4), 'laps': 1.5},
                    'steady-state cornering: steering gain, understeer (tyres)'))
                i += 1
    steps += [
        ProtocolStep(f'{i:02d}_figure_eight', 'figure_eight', {'speed': speed, 'laps': 1.0},
                     'both turn directions, transitions'),
        ProtocolStep(f'{i + 1:02d}_steering_steps', 'steering_steps',
                     {'speed': speed, 'levels': [0.25, 0.5, 0.75, 1.0], 'step_duration': 1.5},
                     'steering steps up to full lock: servo slew, latency, yaw inertia'),
        ProtocolStep(f'{i + 2:02d}_speed_steps', 'speed_steps',
                     {'levels': list(speed_levels), 'step_duration': 2.0},
                     'speed steps: drive response'),
        ProtocolStep(f'{i + 3:02d}_slalom', 'slalom',
                     {'speed': fast, 'amplitude': 0.6, 'frequency': 0.5, 'duration': 12.0},
                     'slalom: lateral transients (tyres, yaw inertia)'),
        ProtocolStep(f'{i + 4:02d}_steering_chirp', 'steering_chirp',
                     {'speed': speed, 'amplitude': 0.4, 'f_start': 0.2, 'f_end': 2.0,
                      'duration': 15.0}, 'frequency response: latency, servo'),
    ]
    return steps


def protocol_sequences(params: VehicleParams, *, speed: float = 1.0,
                       rate_hz: float = 50.0) -> list[tuple[ProtocolStep, CommandSequence]]:
    """Every protocol step with its command sequence (validated against the vehicle limits)."""
    return [(s, manoeuvre(s.manoeuvre, params, mode='steering_angle', rate_hz=rate_hz,
                          **s.kwargs)) for s in protocol_steps(params, speed=speed)]


def _instructions(items: list[tuple[ProtocolStep, CommandSequence]],
                  params: VehicleParams) -> str:
    rows = '\n'.join(f'| `{s.stem}.yaml` | {s.manoeuvre} | {seq.duration:.1f} | {s.purpose} |'
                     for s, seq in items)
    total = sum(seq.duration for _, seq in items)
    diameter = 2 * 3.0 * params.min_turning_radius + params.geometry.chassis_length
    return f'''# Calibration acquisition protocol

Play each scenario on the real car and record one bag per scenario (see docs/calibration.md):

    ros2 bag record -o bags/<scenario> --topics /steering_angle /rear_wheel_speed /odom /imu \\
        /joint_states /cmd_vel
    ros2 run rc_sim_control rear_wheel_speed_publisher \\
        --ros-args -p sequence_file:=$PWD/<scenario>.yaml

(`--topics` is Jazzy's form; on Humble list the topics without it.)

Needs a free area of about {diameter:.1f} m x {diameter:.1f} m (largest circle), a pose source on
`/odom` (motion capture or fused odometry) and the IMU on `/imu`. Start every run at standstill and
let the car rest 1 s before the first command (the calibrator estimates the gyro bias there).
Total driving time: {total:.0f} s.

What each part identifies (docs/calibration.md): the circles at two speeds give the steering gain,
trim and the understeer (tyres); the line and the constant-speed parts the effective rolling
radius; the speed steps the ESC; the steering steps (held 1.5 s) and the chirp separate the
transport delay (a shift of the whole response) from the servo lag (a rounded, attenuated one).
Where is the pose measured? If `/odom` is not the rear-axle centre (a mocap body, a tracked
point), give its offset (`--odom-offset X,Y,YAW`, the recording description's pose offset, or
`/tf_static` base_link -> its frame); otherwise the fit estimates it.

Then fit, holding out some scenarios for validation (exit status 3 and no calibrated.yaml when
the held-out error rises):

    rcsim fit --bag bags/02_* --bag bags/03_* ... --validate bags/10_* --out calibrated.yaml \\
        --report report/

The same files run in the engine (the open `flat_track` world: the circles need the space):
`rcsim run --world flat_track --scenario <scenario>.yaml --out runs/<scenario>`.
{_own_commands(params)}
| file | manoeuvre | duration [s] | purpose |
| --- | --- | --- | --- |
{rows}
'''


def _own_commands(params: VehicleParams) -> str:
    """PROTOCOL.md's section for a car whose own commands are not a steering angle and a speed
    (a normalised servo, a throttle, an acceleration): what to record, and the coasting runs a
    duty-driven motor needs (empty for an angle + speed car)."""
    steer = params.steering.steering_command
    drive = params.drive_command_kind
    if steer == 'angle' and drive in ('wheel_speed', 'speed'):
        return ''
    own = {'normalised': 'a normalised servo command in [-1, 1]', 'angle': 'a steering angle'}
    kinds = {'throttle': 'an ESC duty', 'acceleration': 'an acceleration [m/s^2]',
             'force': 'a longitudinal force [N]', 'wheel_speed': 'a wheel speed',
             'speed': 'a speed'}
    coast = ('\nThe motor model needs several duty levels (the speed steps) and coasting: after '
             'each\nspeed step of `speed_steps` let the car roll out with the duty at 0 (the '
             'deadman off)\nfor 2 s; the resistances are fitted there.\n'
             if drive == 'throttle' else '')
    return f'''
This car takes {own[steer]} and {kinds[drive]}
(`steering_command: {steer}`, drive command `{drive}`): drive the scenarios through the car's own
chain (its code turns the
steering angles and speeds into its commands: the inverse of its servo map, its speed loop, as
the simulator's twin of it does) and record the commands as the car receives them, with the
deadman, then describe the topics for the fit (docs/recordings.md), for example:

    ros2 bag record -o bags/<scenario> --topics <steering topic> <drive topic> <deadman topic> \\
        <pose topic> /imu
    # car.yaml: steering: {{topic: <steering topic>, kind: {steer}}}
    #           drive: {{topic: <drive topic>, kind: {drive}}}
    #           enable: {{topic: <deadman topic>}}
    #           pose: {{topic: <pose topic>, offset: [x, y, yaw]}}
    rcsim fit --bag bags/* --recording car.yaml --params measured.yaml --out calibrated.yaml
{coast}'''


def write_protocol(out_dir: str | os.PathLike[str], params: VehicleParams, *,
                   speed: float = 1.0, rate_hz: float = 50.0, force: bool = False) -> list[Path]:
    """Write the scenario YAMLs and PROTOCOL.md into ``out_dir`` atomically; returns the paths."""
    from rc_sim_description.atomic import atomic_output_dir

    items = protocol_sequences(params, speed=speed, rate_hz=rate_hz)
    target = Path(out_dir)
    with atomic_output_dir(target, force=force) as tmp:
        tmp.mkdir()
        for step, seq in items:
            save_sequence(seq, tmp / f'{step.stem}.yaml')
        (tmp / 'PROTOCOL.md').write_text(_instructions(items, params), encoding='utf-8')
    return sorted(target.iterdir())
