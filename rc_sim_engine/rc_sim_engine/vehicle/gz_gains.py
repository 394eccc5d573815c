"""gz controller gains equivalent to the selected actuator models (the xacro applies the same
formulas to the same vehicle.yaml keys; ``test_actuator_gz_gains.py`` holds them equal).

Steering (gz ``JointPositionController``: PD torque on the hinge, ``J_h d2(delta)/dt2 = Kp
(delta* - delta) - Kd d(delta)/dt``, so the closed loop is ``s^2 + (Kd / J_h) s + Kp / J_h``):

* ``pd_joint``: the ``servo_*_gain`` keys as they are.
* ``second_order``: ``Kp = J_h wn^2``, ``Kd = 2 zeta wn J_h`` (the model exactly).
* ``first_order``: a PD on an inertia is always second order. The gains put the closed-loop poles
  at ``a = (1 + 1/N) / tau`` and ``N a`` (N = :data:`GZ_FIRST_ORDER_POLE_RATIO`), which keeps the
  mean lag ``1/a + 1/(N a) = tau`` of the first-order model: ``Kp = J_h N a^2``,
  ``Kd = J_h (1 + N) a``. The step responses then differ by at most 6.1 % of the step (at the
  start, where the two-pole response is slower). gz's explicit PID needs ``Kd / J_h`` times its
  physics step below about 1: ``tau > 12 ms`` at a 1 ms step.

Drive (gz ``JointController`` in force mode on each rear wheel: ``tau_w = Kp (omega* - omega)``):

* ``pd_joint``: the ``wheel_*`` keys.
* ``throttle`` and ``acceleration`` (gz takes wheel-speed commands only): the
  ``rear_wheel_speed_bridge`` integrates the car's drive model into the wheel-speed command
  (:mod:`rc_sim_control.drive_twin`), and the wheels follow it as a stiff speed loop: ``Kp =
  J_eff / T`` with ``T`` = :data:`GZ_FORCE_DRIVE_LAG`, torque limits ``+-J_eff mu1 g / R`` (what
  the tyres can pass on).
* ``first_order``: ``Kp = J_eff / tau`` with ``J_eff = (m R^2 + 4 J_w) / 2``, the inertia of the
  whole car at speed ``R omega`` (translation plus the spin of four wheels) shared by the two
  driven wheels; ``cmd_max = J_eff a_acc / R``, ``cmd_min = -J_eff a_brake / R``. gz's limits are
  signed torques, so they equal the model's acceleration/braking limits when driving forwards and
  swap in reverse.

The dead band, the backlash and the tyre relaxation have no gz counterpart (engine only); the
normalised steering map and the force drives reach gz through the bridge (above).
"""

from __future__ import annotations

from dataclasses import dataclass

from rc_sim_control.drive_twin import FORCE_DRIVES, GZ_FORCE_DRIVE_LAG
from rc_sim_description.constants import GRAVITY_MPS2
from rc_sim_description.params import VehicleParams
from rc_sim_engine.vehicle.actuators import rear_wheel_inertia, steering_hinge_inertia

__all__ = ['GZ_FIRST_ORDER_POLE_RATIO', 'GZ_FORCE_DRIVE_LAG', 'PidGains',
           'drive_effective_inertia', 'gz_servo_gains', 'gz_wheel_gains']

#: Ratio N of the fast to the slow closed-loop pole of the gz servo standing in for a first-order
#: servo (also written in urdf/rc_car_params.xacro; the URDF test holds the two equal).
GZ_FIRST_ORDER_POLE_RATIO = 10.0


@dataclass(frozen=True)
class PidGains:
    """Gains and limits of a gz PID controller (the plugin's ``p_gain`` ... ``cmd_min``)."""

    p: float
    i: float
    d: float
    i_max: float
    cmd_max: float
    cmd_min: float


def drive_effective_inertia(p: VehicleParams) -> float:
    """Inertia per driven rear wheel of the whole car at speed R omega [kg m^2]:
    ``(m R^2 + 4 J_w) / 2`` with R the effective rolling radius and ``J_w = m_w r^2 / 2``."""
    radius = p.effective_wheel_radius
    return 0.5 * (p.mass_properties.mass * radius * radius + 4.0 * rear_wheel_inertia(p))


def gz_servo_gains(p: VehicleParams) -> PidGains:
    """JointPositionController gains for ``p.steering.servo_model`` (module docstring)."""
    s = p.steering
    if s.servo_model == 'pd_joint':
        return PidGains(s.servo_p_gain, s.servo_i_gain, s.servo_d_gain, s.servo_i_max,
                        s.servo_max_torque, -s.servo_max_torque)
    J = steering_hinge_inertia(p)
    if s.servo_model == 'second_order':
        wn, zeta = s.servo_natural_frequency, s.servo_damping_ratio
        kp, kd = J * wn * wn, 2.0 * zeta * wn * J
    else:
        n = GZ_FIRST_ORDER_POLE_RATIO
        a = (1.0 + 1.0 / n) / s.servo_time_constant
        kp, kd = J * n * a * a, J * (1.0 + n) * a
    return PidGains(kp, 0.0, kd, s.servo_i_max, s.servo_max_torque, -s.servo_max_torque)


def gz_wheel_gains(p: VehicleParams) -> PidGains:
    """JointController (force mode) gains of one rear wheel for ``p.drive.drive_model``."""
    d = p.drive
    if d.drive_model in FORCE_DRIVES:  # follow the bridge's integrated drive model
        j_eff = drive_effective_inertia(p)
        torque = j_eff * p.friction.mu1 * GRAVITY_MPS2 / p.effective_wheel_radius
        return PidGains(j_eff / GZ_FORCE_DRIVE_LAG, 0.0, 0.0, d.wheel_i_max, torque, -torque)
    if d.drive_model != 'first_order':
        return PidGains(d.wheel_p_gain, d.wheel_i_gain, d.wheel_d_gain, d.wheel_i_max,
                        d.wheel_max_torque, -d.wheel_max_torque)
    j_eff = drive_effective_inertia(p)
    radius = p.effective_wheel_radius
    return PidGains(j_eff / d.drive_time_constant, 0.0, 0.0, d.wheel_i_max,
                    j_eff * d.max_acceleration / radius, -j_eff * d.max_deceleration / radius)
