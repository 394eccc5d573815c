"""Racing on track maps: M worlds x N cars stepped by one compiled call, the Gymnasium envs
(optional ``gymnasium``) and reference racing policies.

May import: ``compiled``, ``vehicle``, ``world``, ``sim``.
"""

from rc_sim_description.lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    'gym_env': ('ProgressReward', 'RaceEnv', 'RaceVectorEnv', 'RewardInput'),
    'policies': ('follow_the_gap', 'pure_pursuit'),
    'race_core': ('ACTION_MODES', 'PARALLEL_MIN_CARS', 'RaceCore'),
    'race_kernels': ('carve', 'race_step', 'race_step_parallel', 'views_of', 'wrap_progress'),
})
