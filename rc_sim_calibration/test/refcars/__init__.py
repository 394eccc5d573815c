"""Independent reference cars for the calibration acceptance tests (test support, not shipped).

Written from published vehicle-dynamics equations WITHOUT importing rc_sim_engine or
rc_sim_calibration: their own ODEs, their own RK4 integrator (1 ms), their own sensors and
rosbags writer. Use them to judge ``rcsim fit`` on cars the simulator did not generate.

    import numpy as np
    import refcars                              # see README.md for the import from a test file
    car = refcars.make_car('dc_double_track', np.random.default_rng(7))
    trace = car.simulate(refcars.make_manoeuvre('slalom'))          # default interface
    refcars.write_bag(trace, 'out/07_slalom', storage='mcap')
    refcars.training_set(car, 'out'); refcars.held_out_set(car, 'out')
    refcars.write_car_files(car, 'out')         # measured.yaml (--params), truth.yaml
    car.truth()                                 # what a perfect fit finds (README.md)

Cars (structures in each module's docstring, ranges in ``ranges.py`` and README.md):

| car | servo | drive | tyres / body | pose | commands |
| --- | --- | --- | --- | --- | --- |
| ``esc_fiala`` | delay + 1st-order lag + slew | ESC 1st-order wheel speed, accel/brake limits | Fiala, single track, long. load transfer | rear axle | steering_wheel (or cmd_vel) |
| ``dc_double_track`` | delay + 2nd order (wn, zeta) + slew + dead band + backlash | DC motor, PI ESC, gearbox, open diff, wheel spin | MF, double track, long. + lat. load transfer | offset x, y | cmd_vel (or steering_wheel) |
| ``awd_relax`` | delay + rate-limited servo + asymmetric nonlinear linkage | AWD spool, ESC with speed-dependent accel limit | MF with relaxation lengths, single track | offset x, y | steering_wheel (or cmd_vel) |
| ``throttle_duty`` | delay + tanh map (normalised) + 1st-order lag + slew | duty -> DC motor force (back-EMF), dead zone, deadman | MF, single track | offset x, y, yaw | normalised_throttle |

Parameter ranges: ``ranges.COMMON`` plus ``ranges.CAR_TABLES[name]`` (README.md lists them).
"""

from __future__ import annotations

import zlib

import numpy as np

from .bags import STORAGES, read_bag, write_bag
from .base import RefCar, yaw_rate_mapper
from .car_awd_relax import AwdRelaxCar
from .car_dc_double_track import DcDoubleTrackCar
from .car_esc_fiala import EscFialaCar
from .car_throttle_duty import ThrottleDutyCar
from .manoeuvres import (
    HELD_OUT,
    MANOEUVRES,
    TRAINING,
    Manoeuvre,
    held_out_manoeuvres,
    make_manoeuvre,
    training_manoeuvres,
)
from .ranges import CAR_TABLES, COMMON, Range, draw, markdown_table, table
from .sets import (
    bag_name,
    held_out_set,
    plain,
    storage_for,
    training_set,
    write_car_files,
    write_manoeuvre_bag,
)
from .trace import INTERFACES, TopicSeries, Trace

__all__ = ['CARS', 'CAR_NAMES', 'CAR_TABLES', 'COMMON', 'HELD_OUT', 'INTERFACES', 'MANOEUVRES',
           'STORAGES', 'TRAINING', 'Manoeuvre', 'Range', 'RefCar', 'TopicSeries', 'Trace',
           'bag_name', 'draw', 'held_out_manoeuvres', 'held_out_set', 'make_car',
           'make_manoeuvre', 'markdown_table', 'plain', 'read_bag', 'storage_for', 'table',
           'training_manoeuvres', 'training_set', 'write_bag', 'write_car_files',
           'write_manoeuvre_bag', 'yaw_rate_mapper']


def _range_tables() -> str:
    parts = ['\n\nParameter ranges (drawn uniformly once per car; README.md holds the same tables):',
             '\nCommon to every car:\n', markdown_table(COMMON)]
    for car_name, rows in CAR_TABLES.items():
        parts += [f'\n``{car_name}``:\n', markdown_table(rows)]
    return '\n'.join(parts) + '\n'


__doc__ = (__doc__ or '') + _range_tables()

CARS: dict[str, type[RefCar]] = {
    'esc_fiala': EscFialaCar,
    'dc_double_track': DcDoubleTrackCar,
    'awd_relax': AwdRelaxCar,
    'throttle_duty': ThrottleDutyCar,
}
CAR_NAMES = tuple(CARS)


def make_car(name: str, rng: np.random.Generator | int) -> RefCar:
    """Draw car ``name``'s parameters once from its documented ranges with ``rng``.

    ``rng``: a ``numpy.random.Generator`` (used as is) or an integer seed S (the generator is
    then seeded with (S, crc32(name)), so one seed gives four different cars). The draw order is
    fixed (table order), then one 63-bit noise seed is drawn: the same seed gives the same car
    and the same bags.
    """
    if name not in CARS:
        raise ValueError(f'unknown reference car {name!r}; known: {", ".join(CAR_NAMES)}')
    if isinstance(rng, np.random.Generator):
        gen = rng
    else:
        gen = np.random.default_rng(np.random.SeedSequence([int(rng), zlib.crc32(name.encode())]))
    params = draw(name, gen)
    noise_seed = int(gen.integers(0, 2 ** 63 - 1))
    return CARS[name](params, noise_seed)
