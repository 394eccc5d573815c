"""Timed command sequences (scenarios): signal generators, named manoeuvres, YAML files.

A :class:`CommandSequence` is a zero-order-hold command signal: sample ``k`` holds from ``t[k]`` to
``t[k + 1]`` and the last sample holds forever. ``angular_z`` is read in the sequence's ``mode``
(:data:`~rc_sim_control.ackermann.MAPPER_MODES`), exactly like ``/cmd_vel`` by the mapper, so the
embedded engine (``rcsim run --scenario file.yaml``) and the real car
(``rear_wheel_speed_publisher``) play the same files. The manoeuvres are the usual vehicle test
set (straight line, steady-state circles, two tangent circles, steering and speed steps up to the
limits, slalom, steering chirp) and take every limit from vehicle.yaml.

Absurd values are refused with a one-line error giving the limit: times beyond
:data:`MAX_SEQUENCE_TIME`, speeds beyond :data:`MAX_COMMAND_SPEED`, ``angular_z`` beyond
:data:`MAX_ANGULAR_Z` of its mode, generated sequences of more than
:data:`MAX_SEQUENCE_SAMPLES` samples, and manoeuvre arguments that would need them.

File format (YAML mapping; ``t`` [s] strictly increasing, same length lists)::

    name: circle_left
    description: free text
    mode: steering_angle
    t: [0.0, 0.02, ...]
    linear_x: [0.0, 0.04, ...]
    angular_z: [0.3, 0.3, ...]
This module re-exports the public names of its parts: sequences and signals
(:mod:`rc_sim_control.command_sequence`), manoeuvres (:mod:`rc_sim_control.manoeuvres`) and the
YAML files (:mod:`rc_sim_control.sequence_files`).
"""

from __future__ import annotations

from rc_sim_control.command_sequence import (
    MAX_ANGULAR_Z,
    MAX_COMMAND_SPEED,
    MAX_LAPS,
    MAX_RATE_HZ,
    MAX_SEQUENCE_SAMPLES,
    MAX_SEQUENCE_TIME,
    CommandSequence,
    SequencePlayer,
    chirp,
    concatenate,
    constant,
    ramp,
    sample,
    sine,
    step,
    time_grid,
)
from rc_sim_control.manoeuvres import (
    MANOEUVRE_ALIASES,
    MANOEUVRES,
    canonical_manoeuvre,
    manoeuvre,
)
from rc_sim_control.sequence_files import (
    load_sequence,
    save_sequence,
    sequence_from_mapping,
)

__all__ = [
    'MANOEUVRES',
    'MANOEUVRE_ALIASES',
    'MAX_ANGULAR_Z',
    'MAX_COMMAND_SPEED',
    'MAX_LAPS',
    'MAX_RATE_HZ',
    'MAX_SEQUENCE_SAMPLES',
    'MAX_SEQUENCE_TIME',
    'CommandSequence',
    'SequencePlayer',
    'canonical_manoeuvre',
    'chirp',
    'concatenate',
    'constant',
    'load_sequence',
    'manoeuvre',
    'ramp',
    'sample',
    'save_sequence',
    'sequence_from_mapping',
    'sine',
    'step',
    'time_grid',
]
