"""pack_params packs a repeated parameter object once: the rows equal those of distinct copies."""

import numpy as np

from rc_sim_description.params import load_vehicle_params
from rc_sim_engine.vehicle.packed import pack_params


def test_repeated_objects_give_the_rows_of_distinct_copies():
    p = load_vehicle_params()
    q = p.with_values(servo_model='second_order', drive_model='first_order', mass=2.0)
    repeated = pack_params([p, q, p, q, q], substep=0.002)
    copies = pack_params([p, q, p.with_values(), q.with_values(), q.with_values()],
                         substep=0.002)
    np.testing.assert_array_equal(repeated, copies)
    assert not np.array_equal(repeated[0], repeated[1])
