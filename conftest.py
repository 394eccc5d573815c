"""Repository-wide pytest set-up (not a package: colcon still sees five packages).

pytest's importlib mode names a test file after its path (``rc_sim_description.test.test_x``) and,
when the parent is not imported yet, registers ``rc_sim_description`` as a *namespace* package on
the outer package directory, which shadows modules whose names equal a data directory there
(``rc_sim_description.urdf`` vs ``rc_sim_description/urdf/``). Importing the real packages first
avoids that, for pytest runs from the repository root and for colcon's per-package runs alike.
"""

import contextlib
import importlib
import os

# CI runners set CI, which turns the fit's and the lidar fit's progress into log lines on stderr.
# The tests check what a user gets by default (no terminal, no CI); those about the CI mode set
# it themselves. CI still makes the static tools (ign, check_urdf) required, not skipped.
if os.environ.get('CI', '').strip():
    os.environ.setdefault('RC_SIM_REQUIRE_TOOLS', os.environ['CI'])
    del os.environ['CI']

for _package in ('rc_sim_description', 'rc_sim_control', 'rc_sim_sensors', 'rc_sim_engine',
                 'rc_sim_calibration'):
    # a package not installed in this environment: its own tests will say so
    with contextlib.suppress(ImportError):
        importlib.import_module(_package)
