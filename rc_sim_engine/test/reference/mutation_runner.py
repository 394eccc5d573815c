"""Test command of the engine's mutation testing (docs/engine.md, "Mutation testing").

Runs, fail-fast and cheapest first, the physics tests that judge the engine against independent
truths (closed forms, conservation, symmetry, the scipy reference, CommonRoad), WITHOUT the unit
tests that recompute a module's own formula (listed in ``RE_DERIVING``), in pure Python
(``NUMBA_DISABLE_JIT=1``): a mutant then costs the tests' run time instead of a 20-40 s numba
recompile of every kernel. Usage, from the repository root::

    mutmut run --paths-to-mutate rc_sim_engine/rc_sim_engine/models.py \\
        --runner ".venv/bin/python rc_sim_engine/test/reference/mutation_runner.py"

Extra arguments are passed on to pytest. Not collected by pytest (not a ``test_*`` file).
"""

from __future__ import annotations

import os
from pathlib import Path
import sys

TEST_DIR = Path(__file__).resolve().parents[1]

#: in this order: fast unit-level truths first, the reference comparisons last
FILES = ('test_physics_tyres.py', 'test_physics_kinematic.py', 'test_physics_actuators.py',
         'test_physics_energy.py', 'test_physics_models.py', 'test_physics_integrators.py',
         'test_physics_batch_latency.py', 'test_physics_standstill.py', 'test_physics_errors.py',
         'test_physics_commonroad.py', 'reference/test_engine_vs_reference.py',
         'reference/test_engine_vs_commonroad.py')

#: tests that compare a module function with a copy of its own formula (kept in the suite, left
#: out of the mutation score, which must come from independent truths)
RE_DERIVING = (
    'test_physics_models.py::test_axle_loads_static_split_and_transfer',
    'test_physics_models.py::test_registry_and_pure_derivative',
    'test_physics_models.py::test_load_transfer_scales_the_linear_cornering_stiffness_with_axle_load',
    'test_physics_tyres.py::test_magic_formula_equals_formula_for_vehicle_yaml',
    'test_physics_tyres.py::test_fiala_small_angle_slope_saturation_and_continuity',
    'test_physics_tyres.py::test_linear_tyre',
    'test_physics_actuators.py::test_hinge_inertias_from_wheel_and_knuckle',
)


def _pure_python_numba() -> None:
    """``NUMBA_DISABLE_JIT=1`` makes ``njit`` the identity but ``vectorize`` still compiles (and
    fails on the now pure-Python inner functions once a mutant has invalidated the disk cache):
    turn it into ``numpy.vectorize`` too."""
    os.environ['NUMBA_DISABLE_JIT'] = '1'  # before anything imports numba
    import numba
    import numpy as np

    def vectorize(*_args: object, **_kwargs: object) -> object:
        return lambda f: np.vectorize(f, otypes=[np.float64])

    numba.vectorize = vectorize


def main(argv: list[str]) -> int:
    _pure_python_numba()
    import pytest

    args = ['-x', '-q', '--no-header', *(os.path.relpath(TEST_DIR / f) for f in FILES)]
    for node in RE_DERIVING:  # node ids are relative to the rootdir (the repository root)
        args += ['--deselect', os.path.relpath(TEST_DIR / node)]
    return int(pytest.main([*args, *argv]))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
