"""The racing step's argument plumbing: one float64 buffer carved into views, and the compiled
entry point that skips numba's per-call dispatch (its results equal the dispatcher's)."""

from __future__ import annotations

from numba import njit
import numpy as np

from rc_sim_engine._jit_cache import compiled_entry
from rc_sim_engine.race_kernels import carve


def test_carve_views_share_one_buffer() -> None:
    f64, layout, views = carve([(2, 3), (1, 4), (3, 1)])
    assert f64.shape == (13,) and not f64.any()
    assert layout.tolist() == [[0, 2, 3], [6, 1, 4], [10, 3, 1]]
    assert [v.shape for v in views] == [(2, 3), (1, 4), (3, 1)]
    views[1][0, 2] = 7.0
    views[2][2, 0] = -1.0
    assert f64[8] == 7.0 and f64[12] == -1.0
    assert all(np.shares_memory(v, f64) for v in views)


@njit(cache=False)
def _scaled_sum(a: np.ndarray, out: np.ndarray, k: float) -> float:
    out[0] = k * a.sum()
    return out[0]


def test_compiled_entry_gives_the_dispatchers_result() -> None:
    a = np.arange(5.0)
    out = np.zeros(1)
    entry = compiled_entry(_scaled_sum, (a, out, 2.0))
    assert entry is not _scaled_sum  # the overload's own entry point
    assert entry(a, out, 3.0) == 30.0 and out[0] == 30.0
    assert _scaled_sum(a, out, 3.0) == entry(a, out, 3.0)


def test_compiled_entry_falls_back_to_the_callable() -> None:
    def plain(x: float) -> float:
        return 2 * x

    assert compiled_entry(plain, (1.0,)) is plain


def test_race_core_arrays_are_views_of_its_buffer() -> None:
    from rc_sim_engine.race_core import RaceCore
    from rc_sim_engine.track import load_track

    core = RaceCore(load_track('chicane_track'), lidar=False)
    for name in ('states', 'packed', 'buf', 'actions', 'cfg', 'footprints', 'mount', 'base',
                 'rect', 'obs', 'normal', 'cos_beam', 'sin_beam'):
        assert np.shares_memory(getattr(core, name), core._f64), name


def test_the_racing_compile_is_announced_once(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rc_sim_engine import warmup
    from rc_sim_engine.race_core import RaceCore
    from rc_sim_engine.track import load_track

    monkeypatch.delenv('RC_SIM_QUIET', raising=False)
    monkeypatch.setattr(warmup, '_race_stamp_path', lambda variant: tmp_path / variant)
    track = load_track('chicane_track')
    capsys.readouterr()
    RaceCore(track, lidar=False)
    assert warmup.RACE_MESSAGE in capsys.readouterr().err
    assert (tmp_path / 'serial').read_text() == warmup._digest(warmup.RACE_MODULES)
    RaceCore(track, lidar=False)
    assert warmup.RACE_MESSAGE not in capsys.readouterr().err
    (tmp_path / 'serial').write_text('a digest of other sources')
    RaceCore(track, lidar=False)
    assert warmup.RACE_MESSAGE in capsys.readouterr().err


def test_copies_and_pickles_step_on_their_own_buffer() -> None:
    """A deep copy or an unpickled core rebuilds its views of its own buffer: it steps as the
    original does, and neither moves the other."""
    import copy
    import pickle

    from rc_sim_engine.race_core import RaceCore
    from rc_sim_engine.track import load_track

    track = load_track('chicane_track')
    core = RaceCore(track)
    core.reset_cars([0], [track.start_pose], speed=1.0)
    core.step([[0.05, 1.5]])
    twins = [copy.deepcopy(core), pickle.loads(pickle.dumps(core))]
    before = core.states.copy()
    for twin in twins:
        assert np.shares_memory(twin.states, twin._f64) and not np.shares_memory(
            twin.states, core._f64)
        for _ in range(5):
            twin.step([[0.1, 2.0]])
        np.testing.assert_array_equal(core.states, before)  # the original did not move
    for _ in range(5):
        core.step([[0.1, 2.0]])
    for twin in twins:
        np.testing.assert_array_equal(twin.states, core.states)
        np.testing.assert_array_equal(twin.scans, core.scans)
        np.testing.assert_array_equal(twin.obs, core.obs)
