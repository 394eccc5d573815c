"""The racing step's argument plumbing: one float64 buffer carved into views, and the compiled
entry point that skips numba's per-call dispatch (its results equal the dispatcher's)."""

from __future__ import annotations

from numba import njit
import numpy as np

from rc_sim_engine.compiled.cache import compiled_entry
from rc_sim_engine.racing.race_kernels import carve, views_of


def test_carve_views_share_one_buffer() -> None:
    buf, views, ints, f32s = carve([(2, 3), (1, 4), (3, 1)], [(1, 2), (2, 1)], [(1, 3)])
    i64 = buf.view(np.int64)
    # the layout rows of all six arrays (offsets in elements of their own type), then the
    # int64, the float64 and the float32 arrays, each on a whole word
    assert i64[:18].reshape(6, 3).tolist() == [[22, 2, 3], [28, 1, 4], [32, 3, 1],
                                               [18, 1, 2], [20, 2, 1], [70, 1, 3]]
    assert buf.shape == (37,) and not buf[18:].any()
    assert [v.shape for v in views] == [(2, 3), (1, 4), (3, 1)]
    assert [v.shape for v in ints] == [(1, 2), (2, 1)]
    assert [v.dtype for v in (*views, *ints, *f32s)] == [np.float64] * 3 + [np.int64] * 2 + [
        np.float32]
    views[1][0, 2] = 7.0
    views[2][2, 0] = -1.0
    ints[1][1, 0] = 5
    f32s[0][0, 2] = 0.5
    assert buf[30] == 7.0 and buf[34] == -1.0 and i64[21] == 5
    assert buf.view(np.float32)[72] == 0.5
    assert all(np.shares_memory(v, buf) for v in (*views, *ints, *f32s))
    again = views_of(buf, 3, 2, 1)
    assert all(np.array_equal(a, b) for a, b in zip([*again[0], *again[1], *again[2]],
                                                    [*views, *ints, *f32s]))


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
    from rc_sim_engine.racing.race_core import RaceCore
    from rc_sim_engine.world.track import load_track

    core = RaceCore(load_track('chicane_track'), lidar=False)
    for name in ('states', 'packed', 'buf', 'actions', 'cfg', 'footprints', 'mount', 'base',
                 'rect', 'obs', 'normal', 'cos_beam', 'sin_beam'):
        assert np.shares_memory(getattr(core, name), core._f64), name
    for name in ('delay', 'primed', 'active', 'head', 'other', 'scans'):
        assert np.shares_memory(getattr(core, name), core._buf), name
    # the track's cell planes: one array behind the grid's skip distances and both indices
    cells = core.track.cells
    for view in (core.track.grid.skip, core.track.lidar.lut_index, core.track.line_index):
        assert np.shares_memory(view, cells)


def test_the_racing_compile_is_announced_once(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rc_sim_engine.racing.race_core import RaceCore
    from rc_sim_engine.sim import warmup
    from rc_sim_engine.world.track import load_track

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

    from rc_sim_engine.racing.race_core import RaceCore
    from rc_sim_engine.world.track import load_track

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


def test_step_takes_any_array_like_the_numpy_copy() -> None:
    """Actions reach the compiled step directly only as a C-contiguous (n, 2) float64 array
    (the compiled code reads them as one, whatever their strides or dtype); lists, float32,
    views with other strides, Fortran order and (2,) rows step exactly as the same values
    copied the numpy way, and a shape numpy cannot broadcast is refused."""
    import pytest

    from rc_sim_engine.racing.race_core import RaceCore
    from rc_sim_engine.world.track import load_track

    track = load_track('chicane_track')
    core = RaceCore(track, n_worlds=3, lidar=False)
    poses = np.repeat(np.asarray(track.start_pose)[None], 3, axis=0)
    values = np.array([[0.05, 1.5], [-0.1, 2.0], [0.2, 0.5]])
    wide = np.zeros((3, 4))
    wide[:, ::2] = values
    forms = [values.copy(), values.tolist(), values.astype(np.float32), wide[:, ::2],
             np.asfortranarray(values), values.astype('>f8')]
    results = []
    for form in forms:
        core.reset_cars(np.arange(3), poses, speed=1.0)
        for _ in range(4):
            core.step(form)
        np.testing.assert_array_equal(core.actions, values.astype(np.float32)
                                      if isinstance(form, np.ndarray) and form.dtype == np.float32
                                      else values)
        results.append(core.states.copy())
    for k in (1, 3, 4, 5):
        np.testing.assert_array_equal(results[k], results[0])
    np.testing.assert_allclose(results[2], results[0], rtol=1e-5, atol=1e-6)  # float32 commands
    one = RaceCore(track, lidar=False)
    one.reset_cars([0], [track.start_pose], speed=1.0)
    one.step(np.array([0.05, 1.5]))  # a (2,) row broadcasts
    np.testing.assert_array_equal(one.actions, [[0.05, 1.5]])
    with pytest.raises(ValueError):
        core.step(np.zeros((2, 2)))  # 2 rows for 3 cars
    before = core.states.copy()
    with pytest.raises(ValueError):
        core.step(np.zeros((3, 3)))  # refused by the compiled step, then by numpy
    np.testing.assert_array_equal(core.states, before)
