"""Bag sets of a car: six training bags, two held-out bags, measured.yaml and truth.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .bags import write_bag
from .base import RefCar
from .manoeuvres import HELD_OUT, MANOEUVRES, TRAINING, make_manoeuvre
from .trace import Trace

__all__ = ['bag_name', 'held_out_set', 'plain', 'storage_for', 'training_set', 'write_car_files',
           'write_manoeuvre_bag']


def plain(value: Any) -> Any:
    """numpy scalars/arrays and tuples -> plain Python (for YAML)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def storage_for(index: int, storage: str) -> str:
    """Storage of bag number ``index`` (0-based): ``mixed`` alternates sqlite3 / mcap."""
    if storage == 'mixed':
        return 'sqlite3' if index % 2 == 0 else 'mcap'
    return storage


def bag_name(name: str) -> str:
    """Directory name of manoeuvre ``name`` in a set: ``01_line`` .. ``08_steering_chirp``."""
    return f'{MANOEUVRES.index(name) + 1:02d}_{name}'


def write_manoeuvre_bag(car: RefCar, name: str, out_dir: str | Path, *,
                        interface: str | None = None, storage: str = 'mixed',
                        force: bool = False, **sim: Any) -> tuple[Path, Trace]:
    """Simulate manoeuvre ``name`` on ``car`` and write it as ``out_dir/<bag_name(name)>``."""
    index = MANOEUVRES.index(name)
    manoeuvre = make_manoeuvre(name, wheelbase=car.measured['wheelbase'])
    trace = car.simulate(manoeuvre, interface, bag_index=index, **sim)
    path = write_bag(trace, Path(out_dir) / bag_name(name),
                     storage=storage_for(index, storage), force=force)
    return path, trace


def _write_set(car: RefCar, names: tuple[str, ...], out_dir: str | Path, interface: str | None,
               storage: str, force: bool, **sim: Any) -> list[Path]:
    return [write_manoeuvre_bag(car, name, out_dir, interface=interface, storage=storage,
                                force=force, **sim)[0] for name in names]


def training_set(car: RefCar, out_dir: str | Path, *, interface: str | None = None,
                 storage: str = 'mixed', force: bool = False, **sim: Any) -> list[Path]:
    """Write the six training bags ``01_line`` .. ``06_speed_steps`` under ``out_dir``.

    ``storage``: ``sqlite3``, ``mcap`` or ``mixed`` (alternating, sqlite3 first). Extra keyword
    arguments go to :meth:`RefCar.simulate` (``noise``, ``tf_static``, ``joint_states``).
    """
    return _write_set(car, TRAINING, out_dir, interface, storage, force, **sim)


def held_out_set(car: RefCar, out_dir: str | Path, *, interface: str | None = None,
                 storage: str = 'mixed', force: bool = False, **sim: Any) -> list[Path]:
    """Write the two held-out bags ``07_slalom`` and ``08_steering_chirp`` under ``out_dir``."""
    return _write_set(car, HELD_OUT, out_dir, interface, storage, force, **sim)


def write_car_files(car: RefCar, out_dir: str | Path, *,
                    yaw_inertia: bool = False) -> tuple[Path, Path]:
    """Write ``measured.yaml`` (vehicle override for ``--params``) and ``truth.yaml``."""
    from rc_sim_description.atomic import atomic_write_text

    out = Path(out_dir)
    measured, truth = out / 'measured.yaml', out / 'truth.yaml'
    atomic_write_text(measured, car.measured_params_yaml(yaw_inertia=yaw_inertia))
    header = (f'# Ground truth of reference car {car.name} (definitions: '
              'rc_sim_calibration/test/refcars/README.md)\n')
    atomic_write_text(truth, header + yaml.safe_dump(plain(car.truth()), sort_keys=False))
    return measured, truth
