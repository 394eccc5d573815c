"""Preallocated buffers of the compiled loop (:mod:`.loop_kernel`), sized for about
one chunk of recordings: the loop's schedule, state snapshots and the cars' poses at the lidar
scan times. A stretch of the loop stops before a step whose events could overflow one; the
simulator then empties them.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_engine.sim import loop_kernel as lk
from rc_sim_engine.sim.sensor_sampling import LidarRig
from rc_sim_engine.vehicle.state import N_STATE

__all__ = ['SNAP_CAPACITY', 'LoopBuffers']

FloatArray = NDArray[np.float64]
#: Snapshots per buffer (about 10 s at the default 100 Hz IMU).
SNAP_CAPACITY = 1024
#: Lidar buffer: scans of this much simulated time at most.
SCAN_SECONDS = 10.0


@dataclass
class LoopBuffers:
    """The buffers one car set's compiled loop writes into (see :func:`LoopBuffers.allocate`)."""

    sched: NDArray[np.int64]
    snap_states: FloatArray
    snap_steps: NDArray[np.int64]
    scan_steps: NDArray[np.int64]
    scan_poses: FloatArray
    no_plan: tuple[FloatArray, NDArray[np.int64]]

    @classmethod
    def allocate(cls, n: int, record: bool, lidar: LidarRig | None, scan_period_s: float,
                 chunk_bytes: float) -> LoopBuffers:
        """Buffers for ``n`` cars: snapshots only when recording; scan poses of at most
        :data:`SCAN_SECONDS` and ``chunk_bytes`` of scans."""
        snap_states = np.empty((SNAP_CAPACITY if record else 1, n, N_STATE))
        capacity = 1
        if lidar is not None:
            by_time = math.ceil(SCAN_SECONDS / scan_period_s)
            capacity = int(max(2, min(by_time, chunk_bytes // max(lidar.scan_bytes, 1))))
        return cls(np.zeros(lk.S_SIZE, dtype=np.int64), snap_states,
                   np.empty(len(snap_states), dtype=np.int64),
                   np.zeros(capacity, dtype=np.int64), np.zeros((capacity, n, 3)),
                   (np.zeros((1, n)), np.zeros(1, dtype=np.int64)))

    @property
    def nbytes(self) -> int:
        """Memory of the large buffers [bytes]."""
        return self.snap_states.nbytes + self.scan_poses.nbytes
