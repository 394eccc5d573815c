"""Layout rules: every package is ament_python; nodes fail in one line without ROS.

(Where ROS may be imported, and the dependency direction, are checked by test_layering.py.)
"""

from __future__ import annotations

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
