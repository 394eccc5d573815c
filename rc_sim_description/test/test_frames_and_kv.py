"""The shared helpers: yaw <-> quaternion (vectorised) and the KEY=VALUE argument parser."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rc_sim_description.cli_support import split_key_value
from rc_sim_description.errors import ConfigError, RcSimError
from rc_sim_description.frames import quaternion_to_yaw, yaw_to_quaternion


def test_yaw_quaternion_round_trip_and_known_values() -> None:
    yaw = np.linspace(-math.pi + 1e-9, math.pi, 101).reshape(1, 101)
    q = yaw_to_quaternion(yaw)
    assert q.shape == (1, 101, 4)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0)
    np.testing.assert_allclose(quaternion_to_yaw(*np.moveaxis(q, -1, 0)), yaw, atol=1e-12)
    np.testing.assert_allclose(yaw_to_quaternion(math.pi / 2),
                               [0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5)])
    # a pure roll of 90 deg has no yaw; a yaw of 90 deg after a roll keeps its yaw (ZYX)
    assert quaternion_to_yaw(math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5)) == pytest.approx(0.0)
    s = math.sqrt(0.5)
    qz = np.array([0.0, 0.0, s, s])
    qx = np.array([s, 0.0, 0.0, s])
    w1, x1, y1, z1 = qz[3], *qz[:3]
    w2, x2, y2, z2 = qx[3], *qx[:3]
    prod = (w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2)
    assert quaternion_to_yaw(*prod) == pytest.approx(math.pi / 2)


def test_split_key_value() -> None:
    assert split_key_value(' gain = 2=3', '--set') == ('gain', ' 2=3')
    for bad in ('gain', '=2', ' =2'):
        with pytest.raises(ConfigError, match=rf"^--set '{bad}': expected KEY=VALUE$"):
            split_key_value(bad, '--set')

    class OtherError(RcSimError):
        pass

    with pytest.raises(OtherError, match=r"^--topic 'x': expected ROLE=/topic$"):
        split_key_value('x', '--topic', 'ROLE=/topic', OtherError)
