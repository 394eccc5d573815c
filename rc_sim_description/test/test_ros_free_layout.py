"""Layout rules: every package is ament_python; nodes fail in one line without ROS.

(Where ROS may be imported, and the dependency direction, are checked by test_layering.py.)
"""

from __future__ import annotations

import ast
from pathlib import Path
import xml.etree.ElementTree as ET

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ['rc_sim_description', 'rc_sim_control', 'rc_sim_sensors', 'rc_sim_engine',
            'rc_sim_calibration']


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


#: Modules only a ROS 2 install has (besides every ``*_msgs`` / ``*_srvs`` package).
ROS_MODULES = {'rclpy', 'launch', 'launch_ros', 'launch_testing', 'launch_testing_ros',
               'launch_pytest', 'ament_index_python', 'ros2cli', 'rosidl_runtime_py'}


def _ros_module(name: str) -> bool:
    top = name.split('.')[0]
    return top in ROS_MODULES or top.endswith(('_msgs', '_srvs', '_interfaces'))


def test_package_tests_skip_when_any_ros_module_is_missing() -> None:
    """A package test imports a ROS module only after ``pytest.importorskip`` of that very module
    (checking rclpy alone let 7 tests fail where rclpy existed without tf2_msgs or launch).
    Tests that need ROS 2 live in tests_live/, whose conftest skips them as a whole."""
    bad = []
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg / 'test').rglob('*.py')):
            tree = ast.parse(path.read_text(encoding='utf-8'))
            guarded: dict[str, int] = {}  # module -> first line of its importorskip
            for node in ast.walk(tree):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == 'importorskip' and node.args
                        and isinstance(node.args[0], ast.Constant)):
                    guarded.setdefault(str(node.args[0].value).split('.')[0], node.lineno)
                if isinstance(node, ast.For) and isinstance(node.iter, ast.Tuple):
                    for elt in node.iter.elts:  # for m in ('a', 'b'): importorskip(m)
                        if isinstance(elt, ast.Constant) and 'importorskip' in ast.unparse(node):
                            guarded.setdefault(str(elt.value).split('.')[0], node.lineno)
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ''] if isinstance(node, ast.ImportFrom) else [])
                for name in names:
                    top = name.split('.')[0]
                    if _ros_module(name) and guarded.get(top, 10 ** 9) > node.lineno:
                        bad.append(f'{path.relative_to(REPO)}:{node.lineno}: {name}')
    assert not bad, 'ROS imports without their own importorskip:\n' + '\n'.join(bad)
