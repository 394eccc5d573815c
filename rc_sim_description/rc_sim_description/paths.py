"""Locate the installed data files of rc-sim packages (config, urdf, worlds), ROS or not."""

from __future__ import annotations

import os
from pathlib import Path
import sys

from rc_sim_description.errors import ConfigError

__all__ = ['ament_share', 'list_worlds', 'package_share', 'share_path', 'world_path']

_SOURCE_ROOT = Path(__file__).resolve().parents[1]  # rc_sim_description/ in a source checkout
_AMENT_PACKAGES = Path('share', 'ament_index', 'resource_index', 'packages')


def ament_share(package: str, prefixes: str | None = None) -> Path | None:
    """Share directory of ``package`` in a ROS 2 install (colcon), read from the ament index.

    The ament resource index marks an installed package with the
    file ``<prefix>/share/ament_index/resource_index/packages/<package>``, where ``<prefix>`` is
    one of ``AMENT_PREFIX_PATH`` (searched in order); its share directory is
    ``<prefix>/share/<package>``, what ``ament_index_python.get_package_share_directory``
    returns. Read directly, so the ROS-free core does not import ROS. None when not indexed.
    """
    if prefixes is None:
        prefixes = os.environ.get('AMENT_PREFIX_PATH', '')
    for prefix in prefixes.split(os.pathsep):
        if prefix and (Path(prefix) / _AMENT_PACKAGES / package).is_file():
            return Path(prefix) / 'share' / package
    return None


def package_share(package: str = 'rc_sim_description') -> Path:
    """Share directory of ``package``: source tree, ament index (ROS), or the pip prefix."""
    source_tree = _SOURCE_ROOT.parent / package
    if (source_tree / 'package.xml').is_file():
        return source_tree
    ament = ament_share(package)
    if ament is not None:
        return ament
    for prefix in (sys.prefix, sys.base_prefix, '/usr/local', '/usr'):
        candidate = Path(prefix) / 'share' / package
        if (candidate / 'package.xml').is_file():
            return candidate
    raise ConfigError(f'cannot find the installed data of package {package!r} '
                      '(reinstall it with pip or source your ROS workspace)')


def share_path(relative: str, package: str = 'rc_sim_description') -> Path:
    """Absolute path of a data file, e.g. ``share_path('config/vehicle.yaml')``."""
    return package_share(package) / relative


def list_worlds() -> list[str]:
    """Names of the shipped worlds (``worlds/<name>.sdf``)."""
    return sorted(p.stem for p in share_path('worlds').glob('*.sdf'))


def world_path(name_or_path: str) -> Path:
    """Resolve a world name (``basic_track``) or an SDF path; one-line error when unknown."""
    candidate = Path(name_or_path)
    if candidate.suffix == '.sdf' or candidate.is_file():
        if not candidate.is_file():
            raise ConfigError(f'world file {name_or_path!r} not found')
        return candidate
    path = share_path(f'worlds/{name_or_path}.sdf')
    if not path.is_file():
        from rc_sim_description.yamlio import did_you_mean

        names = list_worlds()
        raise ConfigError(f'unknown world {name_or_path!r}{did_you_mean(name_or_path, names)} '
                          f'(known: {", ".join(names) or "none installed"})')
    return path
