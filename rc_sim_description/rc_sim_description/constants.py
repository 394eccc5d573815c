"""Physical constants shared by every package (one definition each)."""

from __future__ import annotations

__all__ = ['GRAVITY_MPS2']

#: Standard acceleration of gravity g_n [m/s^2] (3rd CGPM, 1901; ISO 80000-3). The engine's
#: axle loads and friction limits, the IMU's specific force, the tracker's friction limit, the
#: plausibility checks, the calibration's synthetic IMU and the generated gz worlds'
#: ``<gravity>`` all use it.
GRAVITY_MPS2 = 9.80665
