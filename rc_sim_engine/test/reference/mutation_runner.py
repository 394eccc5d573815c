"""Mutation testing of the engine's physics modules (docs/engine.md, "Mutation testing").

Two commands, from the repository root::

    # the test selection alone (what every mutant is judged by), pure Python
    .venv/bin/python rc_sim_engine/test/reference/mutation_runner.py [pytest args]

    # mutate: mutmut's mutation operators, one mutant at a time, in a scratch copy
    .venv/bin/python rc_sim_engine/test/reference/mutation_runner.py mutate \\
        --scratch /tmp/rcsim-mutants --results mutants.json \\
        rc_sim_engine/rc_sim_engine/vehicle/models.py rc_sim_engine/rc_sim_engine/vehicle/tyres.py ...

The selection runs, fail-fast and cheapest first, the physics tests that judge the engine
against independent truths (closed forms, conservation, symmetry, the scipy reference,
CommonRoad) WITHOUT the unit tests that compare a function with a copy of its own formula
(``RE_DERIVING``), in pure Python (``NUMBA_DISABLE_JIT=1``): a mutant then costs the tests' run
time instead of a 20-40 s recompile of every numba kernel (the kernels inline the mutated
module, so numba's cache is invalidated by any mutant).

``mutate`` uses mutmut 2's mutation engine (``pip install 'mutmut<3'``; mutmut 3 skips decorated
functions, i.e. every numba kernel, and mutmut 2.5.1's own runner crashes on files with repeated
source lines). It copies the working tree to ``--scratch`` (the repository is never touched),
applies each mutant there, runs the selection with that copy first on ``PYTHONPATH``, restores
the file and records ``killed``/``survived``/``timeout`` with the mutated line in ``--results``
(JSON; an interrupted run resumes; ``--retest`` re-runs the survivors, e.g. after new tests).
Mutants on decorator lines (numba compile options) and in ``__all__`` are not generated.
Not collected by pytest (not a ``test_*`` file).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys
import time
from types import SimpleNamespace

TEST_DIR = Path(__file__).resolve().parents[1]
REPO = TEST_DIR.parents[1]

#: in this order: fast unit-level truths first, the reference comparisons last
FILES = ('test_physics_tyres.py', 'test_physics_properties.py', 'test_physics_kinematic.py',
         'test_physics_actuators.py', 'test_physics_energy.py', 'test_physics_models.py',
         'test_physics_integrators.py', 'test_physics_batch_latency.py',
         'test_physics_standstill.py', 'test_physics_errors.py', 'test_physics_commonroad.py',
         'reference/test_engine_vs_reference.py', 'reference/test_engine_vs_commonroad.py')

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


def run_selection(argv: list[str]) -> int:
    """The test selection, in-process."""
    _pure_python_numba()
    import pytest

    args = ['-x', '-q', '--no-header', *(os.path.relpath(TEST_DIR / f) for f in FILES)]
    for node in RE_DERIVING:  # node ids are relative to the rootdir (the repository root)
        args += ['--deselect', os.path.relpath(TEST_DIR / node)]
    return int(pytest.main([*args, *argv]))


# --------------------------------------------------------------------------- mutants
def _skipped_lines(source: str) -> set[int]:
    """0-based numbers of decorator lines and of the ``__all__`` block."""
    skip, inside = set(), False
    for i, line in enumerate(source.splitlines()):
        if line.lstrip().startswith('@'):
            skip.add(i)
        if line.startswith('__all__'):
            inside = True
        if inside:
            skip.add(i)
            inside = not (']' in line or ')' in line)
    return skip


def list_mutants(path: Path) -> list[tuple[object, str]]:
    """(mutmut mutation id, mutated source) of every mutant of ``path`` worth running."""
    import mutmut

    types = set(mutmut.mutations_by_type) - {'decorator'}
    config = SimpleNamespace(mutation_types_to_apply=types, covered_lines_by_filename=None)
    source = path.read_text()
    ctx = mutmut.Context(source=source, filename=str(path), config=config)
    ids = mutmut.list_mutations(ctx)
    skip = _skipped_lines(source)
    out = []
    for mid in ids:
        if mid.line_number in skip:
            continue
        c = mutmut.Context(source=source, mutation_id=mid, filename=str(path), config=config)
        mutated, n = mutmut.mutate(c)
        if n == 1:
            out.append((mid, mutated))
    return out


def _copy_tree(scratch: Path) -> None:
    ignore = shutil.ignore_patterns('.git', '.venv', '__pycache__', '.mypy_cache', '.ruff_cache',
                                    '.hypothesis', 'runs')
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(REPO, scratch, ignore=ignore)


def _env(scratch: Path) -> dict[str, str]:
    env = dict(os.environ)
    pkgs = ['rc_sim_description', 'rc_sim_control', 'rc_sim_sensors', 'rc_sim_engine',
            'rc_sim_calibration']
    env['PYTHONPATH'] = os.pathsep.join(str(scratch / p) for p in pkgs)
    env['NUMBA_DISABLE_JIT'] = '1'
    return env


def _run(scratch: Path, timeout: float | None) -> tuple[str, float]:
    cmd = [sys.executable, str(scratch / 'rc_sim_engine/test/reference/mutation_runner.py')]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=scratch, env=_env(scratch), timeout=timeout,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return 'timeout', time.monotonic() - start
    return ('survived' if proc.returncode == 0 else 'killed'), time.monotonic() - start


def mutate(files: list[str], scratch: Path, results_path: Path, retest: bool,
           sample: int = 0, seed: int = 0) -> int:
    """Run every mutant of ``files`` (repository-relative paths), or a seeded uniform sample of
    ``sample`` mutants per file; results as JSON."""
    _copy_tree(scratch)
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    status, baseline = _run(scratch, None)
    if status != 'survived':
        print('the test selection fails without mutants', file=sys.stderr)
        return 2
    timeout = 4 * baseline + 30
    print(f'baseline {baseline:.0f} s, timeout {timeout:.0f} s', flush=True)
    for rel in files:
        target = scratch / rel
        original = target.read_text()
        done = results.setdefault(rel, {})
        mutants = list_mutants(target)
        print(f'{rel}: {len(mutants)} mutants', flush=True)
        if 0 < sample < len(mutants):   # seeded: the same sample on every run (resumable)
            import random
            keep = sorted(random.Random(f'{seed}:{rel}').sample(range(len(mutants)), sample))
            mutants = [mutants[i] for i in keep]
            print(f'{rel}: sampled {sample} (seed {seed})', flush=True)
        for mid, mutated in mutants:
            key = f'{mid.line_number + 1}:{mid.index}'
            if key in done and not (retest and done[key]['status'] == 'survived'):
                continue
            diff = [ln for ln in difflib.unified_diff(original.splitlines(),
                                                      mutated.splitlines(), lineterm='', n=0)
                    if ln[:1] in '+-' and not ln.startswith(('+++', '---'))]
            try:
                target.write_text(mutated)
                result, seconds = _run(scratch, timeout)
            finally:
                target.write_text(original)
            done[key] = {'status': result, 'seconds': round(seconds, 1), 'diff': diff}
            tmp = results_path.with_suffix('.tmp')
            tmp.write_text(json.dumps(results, indent=1, sort_keys=True))
            tmp.replace(results_path)
            print(f'{rel}:{key} {result} ({seconds:.0f} s) {diff[-1].strip() if diff else ""}',
                  flush=True)
    for rel in files:
        counts: dict[str, int] = {}
        for r in results[rel].values():
            counts[r['status']] = counts.get(r['status'], 0) + 1
        print(rel, counts)
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] != 'mutate':
        return run_selection(argv)
    parser = argparse.ArgumentParser(prog='mutation_runner.py mutate')
    parser.add_argument('files', nargs='+', help='repository-relative module paths')
    parser.add_argument('--scratch', type=Path, required=True,
                        help='scratch directory for the copy of the working tree (replaced)')
    parser.add_argument('--results', type=Path, required=True, help='results JSON (resumed)')
    parser.add_argument('--retest', action='store_true', help='run the survivors again')
    parser.add_argument('--sample', type=int, default=0,
                        help='a seeded uniform sample of N mutants per file (0: all)')
    parser.add_argument('--seed', type=int, default=0, help='seed of --sample')
    args = parser.parse_args(argv[1:])
    scratch = args.scratch.resolve()
    if scratch == REPO or REPO in scratch.parents or (scratch / '.git').exists():
        parser.error('--scratch must be outside the repository')
    return mutate(args.files, scratch, args.results.resolve(), args.retest, args.sample,
                  args.seed)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
