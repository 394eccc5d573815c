"""ament_python package rc_sim_control; also installs with plain pip (no ROS needed)."""

import os
from glob import glob

from setuptools import find_packages, setup

package_name = 'rc_sim_control'
DATA_DIRS = ['config', 'launch']

ENTRY_POINTS = [
    'turning_command_mapper = rc_sim_control.nodes.turning_command_mapper:main',
    'rear_wheel_speed_bridge = rc_sim_control.nodes.rear_wheel_speed_bridge:main',
    'rear_wheel_speed_publisher = rc_sim_control.nodes.rear_wheel_speed_publisher:main',
    'wheel_odometry = rc_sim_control.nodes.wheel_odometry:main',
    'teleop_keyboard = rc_sim_control.nodes.teleop_keyboard:main',
    'trajectory_tracker = rc_sim_control.nodes.trajectory_tracker:main',
]


def data_files():
    """Install package.xml, the ament index marker and every data directory (no recursion in setuptools)."""
    files = [
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
    ]
    for sub in DATA_DIRS:
        found = [f for f in glob(os.path.join(sub, '*')) if os.path.isfile(f)]
        if found:
            files.append((os.path.join('share', package_name, sub), found))
    return files


setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*']),
    package_data={package_name: ['py.typed']},
    data_files=data_files(),
    install_requires=['setuptools', 'numpy>=1.23', 'pyyaml>=6', 'scipy>=1.10', 'rc_sim_description'],
    python_requires='>=3.10',
    zip_safe=False,
    maintainer='rc-sim maintainers',
    maintainer_email='maintainers@rc-sim.dev',
    description='From /cmd_vel to steering and rear-wheel joint commands: Ackermann mapping, bridge, test publisher, wheel odometry, teleop, trajectory tracking.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': ENTRY_POINTS,
    },
)
