"""ament_python package rc_sim_description; also installs with plain pip (no ROS needed)."""

import os
from glob import glob

from setuptools import find_packages, setup

package_name = 'rc_sim_description'
DATA_DIRS = ['config', 'urdf', 'worlds', 'launch', 'rviz']

ENTRY_POINTS = [
    'bag_recorder = rc_sim_description.nodes.bag_recorder:main',
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
    install_requires=['setuptools', 'pyyaml>=6', 'numpy>=1.23', 'rich>=13', 'xacro>=2.0.8',
                      'rosbags>=0.11', 'mcap>=1.1', 'lz4>=4', 'zstandard>=0.21'],
    python_requires='>=3.10',
    zip_safe=False,
    maintainer='rc-sim maintainers',
    maintainer_email='maintainers@rc-sim.dev',
    description='1:10 Ackermann RC car (xacro/URDF), test tracks (SDF), spawn launch, ros_gz bridge config and the one vehicle parameter file.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': ENTRY_POINTS,
    },
)
