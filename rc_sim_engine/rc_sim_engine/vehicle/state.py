"""Named layout of the engine state vector (no magic ``x[3]``); rows of shape (N, N_STATE).

Base quantities are at the centre of gravity (CG), as in the single-track literature (Rajamani,
*Vehicle Dynamics and Control*, §2.3); :class:`rc_sim_engine.vehicle.car.Car` converts to base_link
(rear axle).

| index | field | unit | meaning |
| --- | --- | --- | --- |
| X, Y | x, y | m | CG position in odom |
| YAW | yaw | rad | heading of the body x axis in odom (REP 103, counter-clockwise) |
| VX, VY | vx, vy | m/s | CG velocity in the body frame |
| YAW_RATE | yaw_rate | rad/s | body yaw rate |
| STEER | steer | rad | actual bicycle front steering angle (servo output) |
| STEER_RATE | steer_rate | rad/s | servo (hinge) angular velocity |
| WHEEL_SPEED | wheel_speed | rad/s | rear wheel spin speed |
| SERVO_INTEGRAL | servo_integral | rad s | integral of the hinge position error (PID I state) |
| WHEEL_INTEGRAL | wheel_integral | rad | integral of the rear wheel speed error (PID I state) |
| REAR_WHEEL_ANGLE | rear_wheel_angle | rad | rear wheel joint position (spin angle) |
| FRONT_LEFT_WHEEL_ANGLE, FRONT_RIGHT_WHEEL_ANGLE | ... | rad | front wheel joint positions |
| SERVO_ANGLE | servo_angle | rad | servo output before the backlash (= steer without backlash) |
| SERVO_TARGET | servo_target | rad | servo target after the dead band (play operator state) |
| DUTY | duty | - | ESC duty (throttle) or acceleration command after its lag |
| ALPHA_FRONT, ALPHA_REAR | alpha_front, ... | rad | transient tyre slip angles (relaxation) |
| SPEED_REFERENCE | speed_reference | m/s | speed controller's reference (drive_models) |
"""

from __future__ import annotations

__all__ = [
    'ALPHA_FRONT',
    'ALPHA_REAR',
    'DUTY',
    'FRONT_LEFT_WHEEL_ANGLE',
    'FRONT_RIGHT_WHEEL_ANGLE',
    'N_STATE',
    'REAR_WHEEL_ANGLE',
    'SERVO_ANGLE',
    'SERVO_INTEGRAL',
    'SERVO_TARGET',
    'SPEED_REFERENCE',
    'STATE_FIELDS',
    'STEER',
    'STEER_RATE',
    'VX',
    'VY',
    'WHEEL_INTEGRAL',
    'WHEEL_SPEED',
    'YAW',
    'YAW_RATE',
    'X',
    'Y',
]

STATE_FIELDS: tuple[str, ...] = (
    'x', 'y', 'yaw', 'vx', 'vy', 'yaw_rate', 'steer', 'steer_rate', 'wheel_speed',
    'servo_integral', 'wheel_integral', 'rear_wheel_angle', 'front_left_wheel_angle',
    'front_right_wheel_angle', 'servo_angle', 'servo_target', 'duty', 'alpha_front', 'alpha_rear',
    'speed_reference',
)

X = 0
Y = 1
YAW = 2
VX = 3
VY = 4
YAW_RATE = 5
STEER = 6
STEER_RATE = 7
WHEEL_SPEED = 8
SERVO_INTEGRAL = 9
WHEEL_INTEGRAL = 10
REAR_WHEEL_ANGLE = 11
FRONT_LEFT_WHEEL_ANGLE = 12
FRONT_RIGHT_WHEEL_ANGLE = 13
SERVO_ANGLE = 14
SERVO_TARGET = 15
DUTY = 16
ALPHA_FRONT = 17
ALPHA_REAR = 18
SPEED_REFERENCE = 19
N_STATE = len(STATE_FIELDS)
