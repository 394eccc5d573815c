"""The recording protocol and the named scenarios for a car whose own commands are a normalised
servo and an ESC duty (issue 27 item 2): PROTOCOL.md says what to record, and every scenario
(steering angles and speeds) drives the twin through its own chain in the engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rc_sim_description.params import load_vehicle_params
from rc_sim_description.testing import DART_TWIN

DART = load_vehicle_params().with_values(**DART_TWIN)


def test_named_scenarios_and_the_protocol_run_for_a_throttle_twin(tmp_path: Path) -> None:
    """Every protocol scenario (steering angles and speeds) drives the DART-like twin through
    its own chain, in the engine as rcsim run plays it: it moves, without collisions, and
    PROTOCOL.md says what to record for such a car."""
    from rc_sim_calibration.protocol import protocol_sequences, write_protocol
    from rc_sim_engine.sim.simulator import SimConfig, Simulator
    from rc_sim_engine.world.sdf import World

    written = write_protocol(tmp_path / 'proto', DART)
    text = (tmp_path / 'proto' / 'PROTOCOL.md').read_text()
    assert 'This car takes a normalised servo command in [-1, 1] and an ESC duty' in text
    assert 'kind: throttle' in text and 'coasting' in text
    assert len(written) == 15
    for step, seq in protocol_sequences(DART):
        sim = Simulator(DART, World(name='open', source='test'), SimConfig(lidar=False))
        odom = sim.play(seq).streams['odom']
        x, y = odom['x'][:, 0], odom['y'][:, 0]
        travelled = float(np.hypot(np.diff(x), np.diff(y)).sum())
        # the commanded distance (the sequence's speeds over time), within 15 %
        dt = np.diff(seq.t, append=seq.t[-1] + (seq.t[1] - seq.t[0]))
        commanded = float(np.sum(np.abs(seq.linear_x) * dt))
        assert travelled == pytest.approx(commanded, rel=0.15), step.stem
