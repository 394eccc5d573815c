"""ament_python package rc_sim_calibration; also installs with plain pip (no ROS needed)."""

import os
from glob import glob

from setuptools import find_packages, setup

package_name = 'rc_sim_calibration'
DATA_DIRS = ['config']

ENTRY_POINTS = [
    'fit = rc_sim_calibration.cli:fit_main',
]
# rcsim plug-in point (docs/architecture.md): register(subparsers) adds fit, replay, protocol
RCSIM_COMMANDS = [
    'calibration = rc_sim_calibration.cli:register',
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
    install_requires=['setuptools', 'numpy>=1.23', 'pyyaml>=6', 'scipy>=1.10', 'rosbags>=0.10.3', 'cma>=3.3', 'optuna>=3.4', 'matplotlib>=3.6', 'rc_sim_description', 'rc_sim_control', 'rc_sim_engine'],
    python_requires='>=3.10',
    zip_safe=False,
    maintainer='rc-sim maintainers',
    maintainer_email='maintainers@rc-sim.dev',
    description='Fit the simulator parameters to real-car ros2 bags (replay, costs, CMA-ES/Bayesian/grid optimisers, identifiability, reports).',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': ENTRY_POINTS,
        'rc_sim.commands': RCSIM_COMMANDS,
    },
)
