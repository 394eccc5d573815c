"""Pacing of the loop against the wall clock: ``realtime_factor = 0`` runs as fast as possible,
``X > 0`` sleeps to keep simulated time at X times wall time (time compression)."""

from __future__ import annotations

import time

__all__ = ['Pacer']

#: Wall-clock seconds of simulation between two pacing checks (the loop runs in stretches).
PACE_INTERVAL_S = 0.01


class Pacer:
    """Sleeps so that simulated time advances at ``realtime_factor`` x wall time."""

    def __init__(self, realtime_factor: float, sim_time: float) -> None:
        self.realtime_factor = float(realtime_factor)
        self._sim0 = sim_time
        self._wall0 = time.perf_counter()

    def stretch_steps(self, dt: float) -> int:
        """Physics steps between two pacing checks (about :data:`PACE_INTERVAL_S` of wall
        time)."""
        return max(1, round(PACE_INTERVAL_S * self.realtime_factor / dt))

    def wait(self, sim_time: float) -> None:
        """Sleep while the simulation is more than a millisecond ahead of the wall clock."""
        ahead = (sim_time - self._sim0) / self.realtime_factor - (time.perf_counter()
                                                                   - self._wall0)
        if ahead > 1e-3:
            time.sleep(ahead)
