"""The analytic trajectories by name (the ``--trajectory`` choices), old aliases, and limits."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from rc_sim_control.trajectory_base import (
    Trajectory,
)
from rc_sim_control.trajectory_shapes import (
    Circle,
    CurtateCycloid,
    Lemniscate,
    Line,
    Parabola,
)
from rc_sim_description.errors import ConfigError

__all__ = [
    'TRAJECTORY_ALIASES',
    'TRAJECTORY_NAMES',
    'FigureEight',
    'canonical_trajectory',
    'make_trajectory',
    'trajectory_limits',
]

_FACTORIES: Mapping[str, Callable[..., Trajectory]] = {
    'line': Line,
    'parabola': Parabola,
    'circle': Circle,
    'lemniscate': Lemniscate,
    'cycloid': CurtateCycloid,
}
TRAJECTORY_NAMES: tuple[str, ...] = tuple(_FACTORIES)
#: Old trajectory names that still work: old name -> new name (the CLIs print a deprecation note).
TRAJECTORY_ALIASES: dict[str, str] = {'figure_eight': 'lemniscate'}
#: Former name of :class:`Lemniscate`.
FigureEight = Lemniscate


def canonical_trajectory(name: str) -> tuple[str, str | None]:
    """(current name, deprecation note or None) of a trajectory name that may be an old alias."""
    new = TRAJECTORY_ALIASES.get(name)
    if new is None:
        return name, None
    return new, (f'trajectory {name!r} is now called {new!r} (lemniscate of Gerono); the old '
                 'name still works but will be removed')


def make_trajectory(name: str, **parameters: float) -> Trajectory:
    """An analytic trajectory by name (or old alias) with validated keyword parameters."""
    name, _ = canonical_trajectory(name)
    if name not in _FACTORIES:
        raise ConfigError(f'unknown trajectory {name!r} (known: {", ".join(TRAJECTORY_NAMES)})')
    try:
        return _FACTORIES[name](**parameters)
    except TypeError:
        import inspect

        known = list(inspect.signature(_FACTORIES[name]).parameters)
        bad = sorted(set(parameters) - set(known))
        raise ConfigError(f'trajectory {name!r}: unknown parameter(s) {", ".join(bad)} '
                          f'(known: {", ".join(known)})') from None


def trajectory_limits(trajectory: Trajectory, duration: float,
                      n: int = 4001) -> tuple[float, float]:
    """(max speed [m/s], max |curvature| [1/m]) of ``trajectory`` over [0, duration]."""
    s = trajectory.sample(np.linspace(0.0, duration, n))
    return float(np.max(s.speed)), float(np.max(np.abs(s.curvature)))
