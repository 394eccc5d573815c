"""Shared pieces of the suite's fuzz tests (hypothesis): bounded settings and the property.

Every loader fuzzed by the tests must return a valid result or raise an
:class:`~rc_sim_description.errors.RcSimError` whose message is one non-empty line; any other
exception, or an example slower than the deadline, fails the test. The settings are derandomised
(reproducible in CI) with a fixed example budget; ``RC_SIM_FUZZ_SCALE=10`` runs ten times as many
examples for a deeper local search.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
import os
from typing import Any, TypeVar

from rc_sim_description.errors import RcSimError

__all__ = ['fuzz_settings', 'result_or_one_line_error']

_T = TypeVar('_T')


def fuzz_settings(max_examples: int) -> Any:
    """hypothesis settings: ``max_examples`` (times ``RC_SIM_FUZZ_SCALE``), a 5 s deadline per
    example (a hang fails), derandomised, no example database."""
    from hypothesis import HealthCheck, settings

    scale = float(os.environ.get('RC_SIM_FUZZ_SCALE', '1') or 1)
    return settings(max_examples=max(1, int(max_examples * scale)),
                    deadline=timedelta(seconds=5), derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def result_or_one_line_error(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T | None:
    """``fn(*args, **kwargs)``; None after an RcSimError, which must be one non-empty line."""
    try:
        return fn(*args, **kwargs)
    except RcSimError as exc:
        text = str(exc)
        assert text.strip(), f'empty error message from {fn.__name__}'
        assert '\n' not in text and '\r' not in text, f'multi-line error: {text!r}'
        return None
