"""Layout rules: ROS imports only under <pkg>/<pkg>/nodes/ and launch/; every package is ament_python.

The ROS-free core must import on a machine without ROS; this test parses every module (it does not
import them) so it also guards modules that no other test reaches.
"""

from __future__ import annotations

import ast
from pathlib import Path
import xml.etree.ElementTree as ET

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ['rc_sim_description', 'rc_sim_control', 'rc_sim_sensors', 'rc_sim_engine',
            'rc_sim_calibration']
ROS_MODULES = {'rclpy', 'launch', 'launch_ros', 'launch_testing', 'launch_testing_ros',
               'launch_pytest', 'rosidl_runtime_py', 'tf2_ros', 'message_filters'}


def ros_imports(path: Path) -> list[str]:
    """Top-level names of ROS modules imported anywhere in ``path`` (including inside functions)."""
    tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            top = name.split('.')[0]
            if top in ROS_MODULES or name.endswith(('.msg', '.srv', '.action')):
                found.append(name)
    return found


def core_modules() -> list[Path]:
    files = []
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg / pkg).rglob('*.py')):
            if 'nodes' not in path.relative_to(REPO / pkg / pkg).parts:
                files.append(path)
    return files


def test_detector_sees_ros_imports(tmp_path: Path) -> None:
    probe = tmp_path / 'probe.py'
    probe.write_text('import os\ndef f():\n    from rclpy.node import Node\n'
                     '    from std_msgs.msg import Float64\n')
    assert ros_imports(probe) == ['rclpy.node', 'std_msgs.msg']


@pytest.mark.parametrize('path', core_modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_core_module_is_ros_free(path: Path) -> None:
    assert ros_imports(path) == [], f'{path} imports ROS outside nodes/ or launch/'


@pytest.mark.parametrize('pkg', PACKAGES)
def test_package_is_ament_python(pkg: str) -> None:
    root = REPO / pkg
    xml = ET.parse(root / 'package.xml').getroot()
    assert xml.get('format') == '3'
    assert xml.findtext('name') == pkg
    assert xml.find('export/build_type').text == 'ament_python'
    assert (root / 'resource' / pkg).is_file()
    assert (root / 'setup.cfg').read_text().count(f'$base/lib/{pkg}') == 2
    assert (root / pkg / '__init__.py').is_file()


def test_no_root_python_project() -> None:
    """colcon would take the repository root for one package if it had a setup.py/pyproject."""
    for name in ('setup.py', 'pyproject.toml', 'setup.cfg'):
        assert not (REPO / name).exists()


@pytest.mark.parametrize('pkg', PACKAGES)
def test_node_entry_points_fail_in_one_line_without_ros(pkg: str) -> None:
    """A node started on a plain pip install prints one line and exits 2 (no ImportError trace)."""
    import subprocess
    import sys

    probe = ('import importlib.util, sys\n'
             'real = importlib.util.find_spec\n'
             'importlib.util.find_spec = lambda n, *a: None if n == "rclpy" else real(n, *a)\n'
             f'sys.argv[0] = "some_node"\nimport {pkg}.nodes\n')
    out = subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 2
    assert out.stderr.startswith('error: some_node is a ROS 2 node and needs rclpy')
    assert out.stderr.count('\n') == 1
