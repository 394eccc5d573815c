"""Documented limits on what rc-sim reads and allocates, checked before any large allocation.

Hard limits protect the process from hostile or corrupt input (a YAML alias bomb, a deeply nested
SDF, an integer literal too large for a float); they are far beyond anything a real file needs.
Soft limits bound sizes that a user may legitimately want to raise (a longer run, a bigger lidar);
their error message names the environment variable that raises them. See docs/limits.md.
"""

from __future__ import annotations

import os

from rc_sim_description.errors import ConfigError

__all__ = [
    'MAX_INT_DIGITS',
    'MAX_XML_BYTES',
    'MAX_XML_DEPTH',
    'MAX_XML_ELEMENTS',
    'MAX_YAML_BYTES',
    'MAX_YAML_DEPTH',
    'MAX_YAML_NODES',
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
