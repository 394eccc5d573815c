"""Documented limits on what rc-sim reads and allocates, checked before any large allocation.

Hard limits protect the process from hostile or corrupt input (a YAML alias bomb, a deeply nested
SDF, an integer literal too large for a float); they are far beyond anything a real file needs.
Soft limits bound sizes that a user may legitimately want to raise (a longer run, a bigger lidar);
their error message names the environment variable that raises them. See docs/limits.md.
"""

from __future__ import annotations

from dataclasses import dataclass
import os

from rc_sim_description.errors import ConfigError

__all__ = [
    'MAX_BAG_GB',
    'MAX_CARS',
    'MAX_CONTROL_TICKS',
    'MAX_DURATION_S',
    'MAX_INT_DIGITS',
    'MAX_LIDAR_SAMPLES',
    'MAX_MEMORY_MB',
    'MAX_OBSTACLES',
    'MAX_PACED_WALL_S',
    'MAX_STEPS',
    'MAX_WORLD_EXTENT_M',
    'MAX_XML_BYTES',
    'MAX_XML_DEPTH',
    'MAX_XML_ELEMENTS',
    'MAX_YAML_BYTES',
    'MAX_YAML_DEPTH',
    'MAX_YAML_NODES',
    'SOFT_LIMITS',
    'SoftLimit',
    'soft_limit',
]

#: A YAML file larger than this is refused (vehicle overrides, scenarios, configs and bag
#: metadata are a few kB; a metadata.yaml of a bag split into thousands of files is < 1 MiB).
MAX_YAML_BYTES = 8 * 1024 * 1024
#: Nesting depth of YAML collections (rc-sim's deepest file nests 4 levels).
MAX_YAML_DEPTH = 64
#: Nodes of a YAML document with every alias expanded (a "billion laughs" expands to 10^9).
MAX_YAML_NODES = 2_000_000
#: Decimal digits of an integer literal (a float holds about 1e308: 309 digits; an int64 19).
MAX_INT_DIGITS = 19
#: An SDF/URDF/XML file larger than this is refused (the generated worlds are < 100 kB).
MAX_XML_BYTES = 32 * 1024 * 1024
#: Element nesting depth of an XML document (SDF worlds nest < 12 levels).
MAX_XML_DEPTH = 100
#: Elements of an XML document.
MAX_XML_ELEMENTS = 2_000_000


def soft_limit(name: str, default: float) -> float:
    """The soft limit ``default``, or the value of the environment variable ``name`` when set.

    An unparsable or non-positive value is a one-line :class:`ConfigError` naming the variable.
    """
    raw = os.environ.get(name)
    if raw is None or raw.strip() == '':
        return float(default)
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f'environment variable {name}={raw!r}: expected a number') from None
    if not value > 0.0 or value != value or value == float('inf'):
        raise ConfigError(f'environment variable {name}={raw!r}: expected a positive finite '
                          'number')
    return value


def _number(value: float) -> str:
    """Readable number for messages: thousands separators, no trailing zeros."""
    if value != value or value in (float('inf'), float('-inf')):
        return str(value)
    if abs(value) >= 1e9 or (value != 0 and abs(value) < 1e-3):
        return f'{value:.3g}'
    if float(value).is_integer():
        return f'{int(value):,}'
    return f'{value:,.3f}'.rstrip('0').rstrip('.')


@dataclass(frozen=True)
class SoftLimit:
    """A documented soft limit: its default, unit and the environment variable that raises it."""

    env: str
    default: float
    unit: str
    what: str

    @property
    def value(self) -> float:
        """The limit in force (the environment variable when set, else the default)."""
        return soft_limit(self.env, self.default)

    def check(self, value: float, subject: str) -> None:
        """One-line :class:`ConfigError` when ``value`` exceeds the limit (or is not a number)."""
        limit = self.value
        if not value <= limit:  # NaN fails too
            raise ConfigError(f'{subject}: {_number(value)} {self.unit} exceeds the limit of '
                              f'{_number(limit)} {self.unit} {self.what} (raise it with the '
                              f'environment variable {self.env})')


# Sizes a simulation run allocates or produces (checked by rc_sim_engine before anything is
# allocated; docs/limits.md explains each default).
#: Simulated time of one run: a day. Longer runs are legitimate (raise it), but at the default
#: sensors a simulated hour writes about 0.8 GB of bag.
MAX_DURATION_S = SoftLimit('RC_SIM_MAX_DURATION_S', 86_400.0, 's', 'of simulated time per run')
#: Physics steps of one run (duration / dt): a day at 1 kHz is 8.6e7.
MAX_STEPS = SoftLimit('RC_SIM_MAX_STEPS', 1e8, 'steps', 'of physics per run (duration / dt)')
#: Estimated bag size of one run.
MAX_BAG_GB = SoftLimit('RC_SIM_MAX_BAG_GB', 64.0, 'GB', 'of estimated bag size per run')
#: Memory a run may allocate up front for its plan, buffers and in-memory recordings.
MAX_MEMORY_MB = SoftLimit('RC_SIM_MAX_MEMORY_MB', 1024.0, 'MB',
                          'of memory for the recordings and buffers of a run')
#: Beams of one lidar scan (real 2D lidars have 360 to about 3,600).
MAX_LIDAR_SAMPLES = SoftLimit('RC_SIM_MAX_LIDAR_SAMPLES', 16_384.0, 'beams', 'per lidar scan')
#: Cars simulated together in one world.
MAX_CARS = SoftLimit('RC_SIM_MAX_CARS', 1024.0, 'cars', 'per simulation')
#: Obstacles of a world (every lidar scan visits each of them).
MAX_OBSTACLES = SoftLimit('RC_SIM_MAX_OBSTACLES', 100_000.0, 'obstacles', 'per world')
#: Distance of any obstacle or start pose from the world origin (float64 keeps sub-micrometre
#: resolution there; start-pose grids scale with the area).
MAX_WORLD_EXTENT_M = SoftLimit('RC_SIM_MAX_WORLD_EXTENT_M', 10_000.0, 'm',
                               'from the world origin')
#: Wall-clock time of a paced run (duration / realtime factor): a day.
MAX_PACED_WALL_S = SoftLimit('RC_SIM_MAX_PACED_WALL_S', 86_400.0, 's',
                             'of wall-clock time for a paced run (duration / realtime factor)')

#: Calls of a Python controller in a closed-loop run (duration x control rate): a day at the
#: default 50 Hz is 4.3e6; each call costs about a millisecond.
MAX_CONTROL_TICKS = SoftLimit('RC_SIM_MAX_CONTROL_TICKS', 1e7, 'ticks',
                              'of the closed-loop controller per run (duration x control rate)')

#: Every soft limit (docs/limits.md lists them).
SOFT_LIMITS: tuple[SoftLimit, ...] = (MAX_DURATION_S, MAX_STEPS, MAX_BAG_GB, MAX_MEMORY_MB,
                                      MAX_LIDAR_SAMPLES, MAX_CARS, MAX_OBSTACLES,
                                      MAX_WORLD_EXTENT_M, MAX_PACED_WALL_S, MAX_CONTROL_TICKS)
