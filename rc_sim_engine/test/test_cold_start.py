"""The first minutes: a command compiles only the kernel sets it needs, the independent ones on
separate processes, says so in one line, and the run that follows loads every kernel from the
cache (issue 29: the demo compiled the calibrator's rollout and waited 86 s in silence)."""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

import pytest

from rc_sim_engine.sim import warmup

RUN_SETS = {'chassis', 'vehicle', 'imu', 'lidar', 'collisions', 'loop'}


def test_each_command_names_what_it_needs() -> None:
    assert set(warmup.sets_for('run')) == RUN_SETS
    assert 'rollout' not in warmup.sets_for('run')  # the calibrator's, not the demo's
    assert 'lidar_errors' in warmup.sets_for('run', lidar_errors=True)
    assert set(warmup.sets_for('fit')) == {'chassis', 'vehicle', 'rollout'}
    assert set(warmup.sets_for('all')) == set(warmup.KERNEL_SETS)


def test_independent_sets_are_split_over_the_cores_and_the_loop_comes_after() -> None:
    waves = warmup.plan_waves(sorted(RUN_SETS), 2)
    assert [sorted(s for b in wave for s in b) for wave in waves] == [
        sorted(RUN_SETS - {'loop'}), ['loop']]
    first = waves[0]
    assert len(first) == 2  # two processes
    cost = [sum(warmup.KERNEL_SETS[s].cost_s for s in b) for b in first]
    assert max(cost) <= 1.3 * min(cost)  # about equal shares
    chain = next(b for b in first if 'chassis' in b)  # the vehicle model follows its integrator
    assert chain.index('vehicle') == chain.index('chassis') + 1
    single = warmup.plan_waves(sorted(RUN_SETS), 1)
    assert len(single[0]) == 1 and set(single[0][0]) == RUN_SETS - {'loop'}
    assert warmup.plan_waves(['vehicle', 'loop'], 2) == [[['vehicle', 'loop']]]  # one chain


def test_the_parallel_compile_hands_one_share_to_a_worker(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    here: list[str] = []
    workers: list[list[str]] = []

    class Done:
        stderr = None

        @staticmethod
        def wait() -> int:
            return 0

    monkeypatch.setattr(warmup, 'run_jobs', lambda sets: here.extend(sets))
    monkeypatch.setattr(warmup, '_start_worker', lambda sets: workers.append(list(sets)) or Done)
    warmup.compile_kernels(warmup.sets_for('run'), workers=2)
    assert len(workers) == 1 and set(here) | set(workers[0]) == RUN_SETS
    assert here[-1] == 'loop' and 'loop' not in workers[0]
    assert not set(here) & set(workers[0])  # disjoint shares


def test_a_failed_worker_leaves_its_share_to_this_process(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    here: list[str] = []

    class Failed:
        stderr = None

        @staticmethod
        def wait() -> int:
            return 1

    monkeypatch.setattr(warmup, 'run_jobs', lambda sets: here.extend(sets))
    monkeypatch.setattr(warmup, '_start_worker', lambda sets: Failed)
    warmup.compile_kernels(warmup.sets_for('run'), workers=2)
    assert set(here) == RUN_SETS


def test_one_line_says_what_where_and_how_long() -> None:
    line = warmup.compile_message('run', sorted(RUN_SETS))
    assert line.startswith(warmup.MESSAGE) and 'rcsim run' in line
    for label in ('chassis integrator', 'vehicle model', 'IMU', 'lidar rays', 'collisions',
                  'simulation loop'):
        assert label in line
    assert 'rollout' not in line and 'about ' in line and ' s...' in line
    assert '\n' not in line


def test_compiled_once_per_source_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    compiled: list[list[str]] = []
    monkeypatch.setattr(warmup, '_stamp_path', lambda: tmp_path / 'stamp')
    monkeypatch.setattr(warmup, 'compile_kernels',
                        lambda sets, **_: compiled.append(list(sets)) or 1.0)
    assert warmup.ensure_compiled(said.append, 'run') >= 0.0
    assert len(said) == 1 and said[0].startswith(warmup.MESSAGE)
    assert set(compiled[0]) == RUN_SETS and warmup.kernels_compiled()
    assert warmup.ensure_compiled(said.append, 'run') == 0.0 and len(said) == 1
    # the fit needs only the rollout on top of what is there
    warmup.ensure_compiled(said.append, 'fit')
    assert compiled[-1] == ['rollout'] and 'rollout' in said[-1]
    (tmp_path / 'stamp').write_text('a digest of other sources\nvehicle\n')
    warmup.ensure_compiled(said.append, 'run')
    assert set(compiled[-1]) == RUN_SETS  # stale sources: compiled again


def test_a_run_after_the_warm_up_compiles_nothing(tmp_path: Path) -> None:
    """The warm-up's kernels have exactly the argument types a run passes: a new process that
    runs ``rcsim run`` (lidar, collisions, IMU, loop) loads every kernel from the cache."""
    warmup.ensure_compiled(None, 'run')
    script = (
        'import gc, sys\n'
        'from rc_sim_engine.cli import main\n'
        'code = main(sys.argv[1:])\n'
        'from numba.core.registry import CPUDispatcher\n'
        'missed = sorted(o.py_func.__qualname__ for o in gc.get_objects()\n'
        '                if isinstance(o, CPUDispatcher) and sum(o.stats.cache_misses.values()))\n'
        'print("MISSED", missed, code)\n')
    done = subprocess.run([sys.executable, '-c', script, 'run', '--world', 'basic_track',
                           '--scenario', 'basic_track_lap', '--duration', '2', '--no-plots',
                           '--out', str(tmp_path / 'r')], capture_output=True, text=True,
                          timeout=900)
    assert 'MISSED [] 0' in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert warmup.MESSAGE not in done.stderr
