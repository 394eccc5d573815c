"""Gymnasium interface: the env checker, spaces, seeded determinism, termination, truncation,
next-step autoreset of the vector env, and batched == single stepping."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

gym = pytest.importorskip('gymnasium')

from gymnasium.utils.env_checker import check_env  # noqa: E402

from rc_sim_engine.racing.gym_env import RaceEnv, RaceVectorEnv, RewardInput  # noqa: E402
from rc_sim_engine.world.track import load_track  # noqa: E402


@pytest.fixture(scope='module')
def track():  # type: ignore[no-untyped-def]
    return load_track('chicane_track', lidar_mode='exact')


@pytest.mark.parametrize(('action_mode', 'lidar', 'random_start'),
                         [('steering', True, False), ('curvature', True, True),
                          ('steering', False, True)])
def test_env_checker(track, action_mode: str, lidar: bool,  # type: ignore[no-untyped-def]
                     random_start: bool) -> None:
    env = RaceEnv(track, action_mode=action_mode, lidar=lidar, random_start=random_start)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # advice on unbounded / non-normalised boxes
        check_env(env, skip_render_check=True)


def test_spaces_and_observation_content(track) -> None:  # type: ignore[no-untyped-def]
    env = RaceEnv(track)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert obs['scan'].shape == (env.core.params[0].sensors.lidar_samples,)
    np.testing.assert_allclose(obs['pose'], track.start_pose, atol=1e-6)
    assert obs['progress'][1] == pytest.approx(0.0, abs=0.01)
    assert info['laps'] == 0 and not info['wall_collision']
    high = env.action_space.high
    assert high[0] == pytest.approx(env.core.params[0].steering.max_steering_angle)
    assert high[1] == pytest.approx(env.core.params[0].max_speed)
    with pytest.raises(Exception, match='finite'):
        env.step(np.array([np.nan, 1.0], dtype=np.float32))


def test_seeded_resets_are_deterministic(track) -> None:  # type: ignore[no-untyped-def]
    def run(seed: int) -> list[np.ndarray]:
        env = RaceVectorEnv(track, n_worlds=2, n_cars=2, random_start=True)
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        out = [obs['pose']]
        for _ in range(30):
            obs, *_ = env.step(env.action_space.sample())
            out.append(obs['scan'])
        return out

    a, b, c = run(7), run(7), run(8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])


def test_wall_termination_reward_and_autoreset(track) -> None:  # type: ignore[no-untyped-def]
    env = RaceVectorEnv(track, n_worlds=2, max_episode_time=100.0)
    obs, _ = env.reset(seed=0)
    left = np.array([[env.single_action_space.high[0], 2.0], [0.0, 0.0]], dtype=np.float32)
    terminated = np.zeros(2, dtype=bool)
    for _ in range(600):
        obs, reward, terminated, _, info = env.step(left)
        if terminated[0]:
            break
    assert terminated[0] and info['wall_collision'][0] and not terminated[1]
    assert reward[0] < 0  # collision penalty outweighs the progress of the step
    obs, reward, terminated, _, info = env.step(left)  # next step: car 0 reset
    assert reward[0] == 0.0 and not terminated[0]
    np.testing.assert_allclose(obs['pose'][0], track.start_pose, atol=1e-6)
    assert info['time'][0] == 0.0 and info['time'][1] > 0.5


def test_truncation_by_time(track) -> None:  # type: ignore[no-untyped-def]
    env = RaceEnv(track, max_episode_time=0.05)
    env.reset(seed=0)
    flags = [env.step(np.array([0.0, 0.0], dtype=np.float32))[3] for _ in range(5)]
    assert flags == [False, False, False, False, True]


def test_pluggable_reward(track) -> None:  # type: ignore[no-untyped-def]
    seen: list[RewardInput] = []

    def speed_reward(inp: RewardInput) -> np.ndarray:
        seen.append(inp)
        return inp.speed * inp.dt

    env = RaceEnv(track, reward=speed_reward)
    env.reset(seed=0)
    for _ in range(50):
        _, reward, *_ = env.step(np.array([0.0, 2.0], dtype=np.float32))
    assert reward == pytest.approx(float(seen[-1].speed[0]) * 0.01)
    assert seen[-1].actions[0, 1] == 2.0


def test_vector_env_equals_single_envs(track) -> None:  # type: ignore[no-untyped-def]
    """One batched call gives bitwise the same episodes as separate single-car envs."""
    vec = RaceVectorEnv(track, n_worlds=3)
    vec.reset(seed=0)
    singles = [RaceEnv(track) for _ in range(3)]
    for env in singles:
        env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        actions = np.stack([rng.uniform(-0.2, 0.2, 3), rng.uniform(0.5, 3.0, 3)],
                           axis=1).astype(np.float32)
        vobs, vrew, *_ = vec.step(actions)
        for i, env in enumerate(singles):
            obs, rew, *_ = env.step(actions[i])
            assert rew == vrew[i]
            for key in obs:
                assert np.array_equal(obs[key], vobs[key][i])


def test_gym_make_registration() -> None:
    env = gym.make('rc_sim/Race-v0', track='chicane_track',
                   track_options={'lidar_mode': 'exact'})
    obs, _ = env.reset(seed=1)
    assert math.isfinite(float(obs['pose'][0]))
    env.close()
