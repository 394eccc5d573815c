"""The first minutes of a new user, timed (prints figures; not a test).

1. ``. scripts/setup_env.sh`` with nothing to do (venv current, kernels compiled): median of 3.
2. ``./scripts/demo`` warm (two laps of basic_track, bag, plots, index.html): median of 3.
3. With ``--cold``: ``git clone`` of this repository (its committed HEAD) into a temporary
   directory and ``./scripts/demo`` there: a fresh venv, pip (from the index or pip's cache), the
   one-time kernel compile and the run; then a second, warm ``./scripts/demo`` in that clone.

Targets: setup with nothing to do < 2 s; warm demo < 4 s.

Run: python benchmarks/bench_setup_demo.py [--cold]   (from the repository root)
"""

from __future__ import annotations

import argparse
from pathlib import Path
import statistics
import subprocess
import tempfile
import time

REPO = Path(__file__).resolve().parents[1]


def _wall(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--cold', action='store_true', help='also time a fresh clone')
    parser.add_argument('--repeat', type=int, default=3)
    args = parser.parse_args()
    setup = ['bash', '-c', '. scripts/setup_env.sh']
    demo = ['./scripts/demo']
    _wall(demo, REPO)  # warm-up: venv current, kernels compiled
    setups = [_wall(setup, REPO) for _ in range(args.repeat)]
    demos = [_wall(demo, REPO) for _ in range(args.repeat)]
    print(f'. scripts/setup_env.sh, nothing to do   {statistics.median(setups):6.2f} s '
          '(target < 2 s)')
    print(f'./scripts/demo, warm                    {statistics.median(demos):6.2f} s '
          '(target < 4 s)')
    if args.cold:
        with tempfile.TemporaryDirectory() as tmp:
            clone = Path(tmp) / 'rc_sim'
            subprocess.run(['git', 'clone', '-q', str(REPO), str(clone)], check=True)
            cold = _wall(demo, clone)
            warm = _wall(demo, clone)
        print(f'./scripts/demo, fresh clone (cold)      {cold:6.2f} s (venv, pip, kernel compile)')
        print(f'./scripts/demo, same clone again        {warm:6.2f} s')


if __name__ == '__main__':
    main()
