"""ament_python package rc_sim_sensors; also installs with plain pip (no ROS needed)."""

from glob import glob
import os

from setuptools import find_packages, setup

package_name = 'rc_sim_sensors'
DATA_DIRS = ['config', 'config/lidar_errors', 'launch']

ENTRY_POINTS = [
    'lidar_error_injector = rc_sim_sensors.nodes.lidar_error_injector:main',
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
    install_requires=['setuptools', 'numpy>=1.23', 'numba>=0.58', 'pyyaml>=6', 'rosbags>=0.10.3',
                      'rc_sim_description'],
    python_requires='>=3.10',
    zip_safe=False,
    maintainer='rc-sim maintainers',
    maintainer_email='maintainers@rc-sim.dev',
    description='2D lidar with injectable, reproducible errors (noise, bias walk, dropout, saturation, quantization and more).',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': ENTRY_POINTS,
    },
)
