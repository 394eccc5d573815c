"""ament_python package rc_sim_engine; also installs with plain pip (no ROS needed)."""

import os
from glob import glob

from setuptools import find_packages, setup

package_name = 'rc_sim_engine'
DATA_DIRS = ['config', 'config/scenarios', 'config/maps', 'launch']

ENTRY_POINTS = [
    'rcsim = rc_sim_engine.cli:main',
    'sim_node = rc_sim_engine.nodes.sim_node:main',
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
    install_requires=['setuptools', 'numpy>=1.23', 'pyyaml>=6', 'rosbags>=0.10.3', 'matplotlib>=3.6', 'numba>=0.58', 'scipy>=1.10', 'rich>=13', 'pillow>=9', 'contourpy>=1.0', 'rc_sim_description', 'rc_sim_control', 'rc_sim_sensors'],
    python_requires='>=3.10',
    zip_safe=False,
    maintainer='rc-sim maintainers',
    maintainer_email='maintainers@rc-sim.dev',
    description='Embedded fast physics backend: single-track dynamics, tyre models, actuators, 2D lidar ray casting on the SDF worlds, rosbag2 output and the rcsim CLI.',
    license='Apache-2.0',
    # The Gymnasium interface (rc_sim_engine.racing.gym_env) is optional: the simulator, the CLI and the
    # ROS node never need it, so neither plain nor ROS installs should have to carry it.
    extras_require={'gym': ['gymnasium>=1.0'], 'campaign': ['dask[distributed]>=2024.1']},
    tests_require=['pytest'],
    entry_points={
        'console_scripts': ENTRY_POINTS,
    },
)
