"""Preallocated buffers of the compiled loop (:mod:`rc_sim_engine.loop_kernel`), sized for about
one chunk of recordings: the loop's schedule, state snapshots, lidar poses and scans. A stretch of
the loop stops before a step whose events could overflow one; the simulator then empties them.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from rc_sim_engine import loop_kernel as lk
from rc_sim_engine.sensor_sampling import LidarRig
from rc_sim_engine.state import N_STATE

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
    scans: FloatArray
    incidence: FloatArray
    scan_steps: NDArray[np.int64]
    scan_poses: FloatArray
    no_plan: tuple[FloatArray, NDArray[np.int64]]

    @classmethod
    def allocate(cls, n: int, record: bool, lidar: LidarRig | None, scan_period_s: float,
                 chunk_bytes: float) -> LoopBuffers:
        """Buffers for ``n`` cars: snapshots only when recording; scans of at most
        :data:`SCAN_SECONDS` and ``chunk_bytes``."""
        snap_states = np.empty((SNAP_CAPACITY if record else 1, n, N_STATE))
        if lidar is not None:
            per_scan = n * lidar.n_beams * 8 * (2 if lidar.want_incidence else 1)
            by_time = math.ceil(SCAN_SECONDS / scan_period_s)
            capacity = int(max(2, min(by_time, chunk_bytes // max(per_scan, 1))))
            scans, incidence, scan_steps = lidar.buffers(capacity)
        else:
            scans, incidence = np.zeros((1, n, 1)), np.zeros((1, 1, 1))
            scan_steps = np.zeros(1, dtype=np.int64)
        return cls(np.zeros(lk.S_SIZE, dtype=np.int64), snap_states,
                   np.empty(len(snap_states), dtype=np.int64), scans, incidence, scan_steps,
                   np.zeros((len(scan_steps), n, 3)),
                   (np.zeros((1, n)), np.zeros(1, dtype=np.int64)))

    @property
    def nbytes(self) -> int:
        """Memory of the large buffers [bytes]."""
        return (self.snap_states.nbytes + self.scans.nbytes + self.incidence.nbytes
                + self.scan_poses.nbytes)
