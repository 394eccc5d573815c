"""sim_node's input guard: a NaN on one command topic is dropped with a log line and never blocks
the other topic or later valid messages (it used to stick: one NaN steering angle made the
simulator refuse every later wheel-speed command too)."""

from __future__ import annotations

import math

from rc_sim_engine.live.inputs import CommandInputs


def test_a_nan_on_one_topic_is_dropped_and_the_last_valid_value_kept() -> None:
    inputs = CommandInputs()
    sent: list[tuple[float, float]] = []

    def steering(value: float) -> str | None:
        line = inputs.steering(value)
        if line is None:
            sent.append((inputs.steering_angle, inputs.wheel_speed))
        return line

    def wheel(value: float) -> str | None:
        line = inputs.wheel(value)
        if line is None:
            sent.append((inputs.steering_angle, inputs.wheel_speed))
        return line

    assert steering(0.2) is None
    assert steering(math.nan) == ('dropped steering_angle message: data is nan '
                                  '(1 dropped so far)')
    assert wheel(50.0) is None  # not blocked by the NaN steering message
    assert wheel(math.inf) == 'dropped rear_wheel_speed message: data is inf (1 dropped so far)'
    assert steering(-0.1) is None
    assert sent == [(0.2, 0.0), (0.2, 50.0), (-0.1, 50.0)]
    assert inputs.drops.total == 2


def test_cmd_vel_is_checked_in_the_mapper_mode() -> None:
    inputs = CommandInputs()
    assert inputs.twist(1.0, math.inf, 'radius') is None  # infinite radius: straight
    assert inputs.twist(1.0, math.inf, 'yaw_rate') == \
        'dropped cmd_vel message: angular.z is inf (1 dropped so far)'
    assert inputs.twist(math.nan, 0.0, 'steering_angle').startswith(
        'dropped cmd_vel message: linear.x is nan')
