"""Child process of test_hostile_sweep.py: runs ``rcsim`` cases in-process under a memory limit.

Usage: ``python sweep_runner.py CASES.json LIMIT_BYTES TIMEOUT_S``. Each case is
``{"id", "dir", "argv"}`` (optionally its own ``"timeout"``); for each, the child chdirs into ``dir``, runs
``rc_sim_engine.cli.main(argv)`` with stdout/stderr captured, and prints one JSON line: exit
status, stderr, escaped exception (a traceback), time, peak memory so far. An address-space
limit (RLIMIT_AS) turns runaway allocation into a MemoryError; SIGALRM turns a hang into a
"timeout" result. The parent re-runs the remaining cases in a new child if this one dies.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import sys
import time
import traceback


class _Timeout(BaseException):
    """Raised by SIGALRM: the case ran longer than its time limit."""


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> None:
    cases_file, limit, timeout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _alarm)
    with open(cases_file, encoding='utf-8') as fh:
        cases = json.load(fh)
    from rc_sim_engine.cli import main as rcsim  # imports under the limit too

    real_out = sys.stdout
    for case in cases:
        os.chdir(case['dir'])
        err, out = io.StringIO(), io.StringIO()
        result: dict[str, object] = {'id': case['id']}
        t0 = time.monotonic()
        signal.alarm(int(case.get('timeout', timeout)))
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                try:
                    code = rcsim(case['argv'])
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 1
            result['exit'] = code
        except _Timeout:
            result['exit'] = 'timeout'
        except MemoryError:
            result['exit'] = 'memory'
        except BaseException as exc:  # a traceback a user would see
            result['exit'] = 'exception'
            result['exception'] = ''.join(traceback.format_exception_only(type(exc), exc))
        finally:
            signal.alarm(0)
        result.update(stderr=err.getvalue(), seconds=time.monotonic() - t0,
                      peak_mb=_peak_mb())
        real_out.write(json.dumps(result) + '\n')
        real_out.flush()


if __name__ == '__main__':
    main()
