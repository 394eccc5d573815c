#!/usr/bin/env python3
"""Print the PyPI requirements of the five packages (their setup.py ``install_requires``).

colcon builds the packages but installs none of their Python dependencies (rosdep does that on a
ROS machine); ``scripts/setup_ros.sh`` pip-installs this list into the ROS venv. The setup.py files
stay the one source of truth: they are parsed (``ast``), not run. ``--hash`` prints a SHA-256 of
the list and the interpreter version instead (the setup script's "already installed" stamp).
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path
import sys

PACKAGES = ('rc_sim_description', 'rc_sim_control', 'rc_sim_sensors', 'rc_sim_engine',
            'rc_sim_calibration')
ROOT = Path(__file__).resolve().parent.parent


def requirements(root: Path = ROOT) -> list[str]:
    """Sorted, de-duplicated install_requires of the packages (not themselves, not setuptools)."""
    found: set[str] = set()
    for package in PACKAGES:
        tree = ast.parse((root / package / 'setup.py').read_text(encoding='utf-8'))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == 'install_requires':
                found.update(ast.literal_eval(node.value))
    return sorted(r for r in found
                  if not r.startswith(PACKAGES) and not r.startswith('setuptools'))


def main(argv: list[str]) -> int:
    reqs = requirements()
    if argv[1:] == ['--hash']:
        text = '\n'.join([*reqs, sys.version])
        print(hashlib.sha256(text.encode()).hexdigest())
    else:
        print('\n'.join(reqs))
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv))
