"""Test helpers shared by the packages' test suites."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ['LINIGER_1_43', 'ONE_FIFTH', 'realdata_dir']

#: The 1:43 car of Liniger, Domahidi & Morari (2015): published mass, inertia, axle distances,
#: drive and Magic Formula (D converted from newtons to a friction coefficient: D / Fz). The
#: sizes of wheels and chassis are those of the car class (not published with the model).
LINIGER_1_43 = {
    'geometry': {'wheelbase': 0.062, 'cg_to_front_axle': 0.029, 'cg_height': 0.01,
                 'track_width': 0.045, 'wheel_radius': 0.0085, 'wheel_width': 0.006,
                 'chassis_length': 0.1, 'chassis_width': 0.045, 'chassis_height': 0.02,
                 'chassis_ground_clearance': 0.003},
    'mass_properties': {'mass': 0.041, 'yaw_inertia': 27.8e-6, 'wheel_mass': 0.001,
                        'steering_hinge_mass': 0.0003},
    'steering': {'max_steering_angle': 0.35, 'max_steering_rate': 6.0},
    'drive': {'max_wheel_speed': 400.0, 'drive_model': 'throttle', 'motor_force_gain': 0.287,
              'motor_back_emf_gain': 0.0545, 'rolling_resistance': 0.0518,
              'viscous_resistance': 0.0, 'drag_coefficient': 0.00035},
    'tyres': {'tyre_model': 'pacejka', 'cornering_stiffness_front': 0.594,
              'cornering_stiffness_rear': 0.746,
              'pacejka_lateral': {'B': 2.579, 'C': 1.2, 'D': 0.9, 'E': 0.0}},
    'sensors': {'lidar_mount_x': 0.05, 'lidar_mount_z': 0.03, 'imu_mount_x': 0.03,
                'imu_mount_z': 0.01},
}
#: A 1:5 off-road car of about 13 kg (typical of the class: wheelbase 0.6 m, tyres 0.2 m).
ONE_FIFTH = {
    'geometry': {'wheelbase': 0.6, 'cg_to_front_axle': 0.33, 'cg_height': 0.12,
                 'track_width': 0.48, 'wheel_radius': 0.1, 'wheel_width': 0.08,
                 'chassis_length': 0.85, 'chassis_width': 0.42, 'chassis_height': 0.2,
                 'chassis_ground_clearance': 0.05},
    'mass_properties': {'mass': 13.0, 'yaw_inertia': 0.9, 'wheel_mass': 0.5,
                        'steering_hinge_mass': 0.1},
    'steering': {'max_steering_angle': 0.45, 'servo_max_torque': 4.0},
    'drive': {'max_wheel_speed': 300.0, 'wheel_max_torque': 20.0},
    'tyres': {'cornering_stiffness_front': 900.0, 'cornering_stiffness_rear': 1000.0},
    'sensors': {'lidar_mount_x': 0.45, 'lidar_mount_z': 0.25, 'imu_mount_x': 0.3,
                'imu_mount_z': 0.1},
}


def realdata_dir() -> Path | None:
    """The real-recording corpus: ``$RC_SIM_REALDATA``, else ``/work/shared/realdata``; None when
    absent (callers skip)."""
    path = Path(os.environ.get('RC_SIM_REALDATA', '/work/shared/realdata'))
    return path if path.is_dir() else None
