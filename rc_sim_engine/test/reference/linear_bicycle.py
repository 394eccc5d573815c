"""The linear single-track model with tyre relaxation, in closed form (an analytic check).

At a constant forward speed u, small angles and linear tyres, the lateral dynamics of the
single-track car (Rajamani, *Vehicle Dynamics and Control*, 2nd ed. 2012, §2.3, eq. 2.31) are

    m (dvy/dt + u r) = Fy_f + Fy_r,      Iz dr/dt = lf Fy_f - lr Fy_r,      Fy_a = C_a alpha'_a
    alpha_f = delta - (vy + lf r) / u,   alpha_r = -(vy - lr r) / u

and each axle with a relaxation length sigma_a > 0 lags its slip angle by the first-order
transient model of Pacejka (*Tire and Vehicle Dynamics*, 3rd ed. 2012, §7.2),
``sigma_a dalpha'_a/dt = u (alpha_a - alpha'_a)``; an axle with sigma_a = 0 has alpha'_a =
alpha_a. The state is (vy, r, alpha'_f, alpha'_r) (the relaxed axles only), the input the
actual steering angle delta. Nothing here is integrated: the system matrices, their eigenvalues
and the frequency response ``H(j w) = c (j w I - A)^-1 b`` are closed forms evaluated by numpy.
"""

from __future__ import annotations

import numpy as np

FloatArray = np.ndarray


def lateral_matrices(m: float, iz: float, lf: float, lr: float, c_front: float, c_rear: float,
                     speed: float, sigma_front: float = 0.0,
                     sigma_rear: float = 0.0) -> tuple[FloatArray, FloatArray]:
    """(A, b) of ``dx/dt = A x + b delta``, x = (vy, r[, alpha'_f][, alpha'_r])."""
    u = speed
    # slip angles as rows over (vy, r, delta)
    alpha_f = np.array([-1.0 / u, -lf / u, 1.0])
    alpha_r = np.array([-1.0 / u, lr / u, 0.0])
    relaxed = [(alpha_f, c_front, sigma_front), (alpha_r, c_rear, sigma_rear)]
    lagged = [i for i, (_, _, sigma) in enumerate(relaxed) if sigma > 0]
    n = 2 + len(lagged)
    # each axle force as a row over (x, delta): C alpha' for a relaxed axle, C alpha otherwise
    force = np.zeros((2, n + 1))
    for i, (alpha, c, sigma) in enumerate(relaxed):
        if sigma > 0:
            force[i, 2 + lagged.index(i)] = c
        else:
            force[i, [0, 1, n]] = c * alpha
    ab = np.zeros((n, n + 1))
    ab[0] = (force[0] + force[1]) / m
    ab[0, 1] -= u
    ab[1] = (lf * force[0] - lr * force[1]) / iz
    for k, i in enumerate(lagged):
        alpha, _, sigma = relaxed[i]
        ab[2 + k, [0, 1, n]] = u / sigma * alpha
        ab[2 + k, 2 + k] -= u / sigma
    return ab[:, :n], ab[:, n]


def yaw_rate_response(a: FloatArray, b: FloatArray, frequency_hz: FloatArray) -> FloatArray:
    """Complex yaw-rate response to the steering angle, r / delta [1/s], at each frequency."""
    s = 2j * np.pi * np.asarray(frequency_hz, dtype=float)
    n = a.shape[0]
    return np.array([np.linalg.solve(si * np.eye(n) - a, b)[1] for si in s.ravel()]).reshape(
        s.shape)
