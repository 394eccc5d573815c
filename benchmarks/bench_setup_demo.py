"""The first minutes of a new user, timed (prints figures; not a test).

1. ``. scripts/setup_env.sh`` with nothing to do (venv current, kernels compiled): median of 3.
2. ``./scripts/demo`` warm (two laps of basic_track, bag, plots, index.html): median of 3.
3. With ``--cold``: ``git clone`` of this repository (its committed HEAD, or ``--worktree``: the
   working tree's files on top) into a temporary directory and ``./scripts/demo`` there: a fresh
   venv, the install (uv or pip, from the network or their caches), the one-time kernel compile
   and the run, split by the script's own progress lines (each time-stamped as it arrives):

       venv     until ">> install ..."      (python -m venv, and pip installing uv)
       install  until ">> compiling ..."    (the packages and their dependencies)
       compile  until ">> kernels compiled" (the kernels rcsim run needs, on every core)
       run      until the demo ends         (rcsim run: two laps, bag, plots, index.html)

   then a second, warm ``./scripts/demo`` in that clone. ``--installer pip`` measures the pip
   path (``RC_SIM_INSTALLER=pip``). The load average is printed before and after (other work on
   the machine slows every figure).

Targets (issue 29): cold < 60 s (90 s at most) on the 2-core machine, warm < 3 s, setup with
nothing to do < 2 s.

Run: python benchmarks/bench_setup_demo.py [--cold [--worktree] [--installer uv|pip]]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import shutil
import statistics
import subprocess
import tempfile
import time

REPO = Path(__file__).resolve().parents[1]
MARKS = (('venv', '>> install'), ('install', '>> compiling'),
         ('compile', '>> kernels compiled'))


def _wall(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0


def _split(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[dict[str, float], float]:
    """Wall time of ``cmd`` split at the progress lines of :data:`MARKS`."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    seen: dict[str, float] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        now = time.perf_counter() - t0
        for _, mark in MARKS:
            if line.startswith(mark) and mark not in seen:
                seen[mark] = now
        if os.environ.get('BENCH_VERBOSE'):
            print(f'  [{now:6.1f} s] {line.rstrip()}')
    if proc.wait() != 0:
        raise SystemExit(f'{" ".join(cmd)} failed')
    total = time.perf_counter() - t0
    parts: dict[str, float] = {}
    last = 0.0
    for name, mark in MARKS:
        if mark in seen:
            parts[name] = seen[mark] - last
            last = seen[mark]
    parts['run'] = total - last
    return parts, total


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f'load average {one:.1f} (1 min), {five:.1f} (5 min)'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--cold', action='store_true', help='also time a fresh clone')
    parser.add_argument('--worktree', action='store_true',
                        help='copy the working tree over the clone (uncommitted changes)')
    parser.add_argument('--installer', choices=('uv', 'pip'), default='uv')
    parser.add_argument('--repeat', type=int, default=3)
    args = parser.parse_args()
    print(_load())
    setup = ['bash', '-c', '. scripts/setup_env.sh']
    demo = ['./scripts/demo']
    _wall(demo, REPO)  # warm-up: venv current, kernels compiled
    setups = [_wall(setup, REPO) for _ in range(args.repeat)]
    demos = [_wall(demo, REPO) for _ in range(args.repeat)]
    print(f'. scripts/setup_env.sh, nothing to do   {statistics.median(setups):6.2f} s '
          '(target < 2 s)')
    print(f'./scripts/demo, warm                    {statistics.median(demos):6.2f} s '
          '(target < 3 s)')
    if args.cold:
        env = {k: v for k, v in os.environ.items()
               if k not in ('VIRTUAL_ENV', 'RC_SIM_VENV', 'RC_SIM_EXTRAS')}
        env['RC_SIM_INSTALLER'] = args.installer
        venv_bin = str(Path(os.environ.get('VIRTUAL_ENV', '/nonexistent')) / 'bin')
        env['PATH'] = os.pathsep.join(p for p in env.get('PATH', '').split(os.pathsep)
                                      if p != venv_bin)
        with tempfile.TemporaryDirectory() as tmp:
            clone = Path(tmp) / 'rc_sim'
            subprocess.run(['git', 'clone', '-q', str(REPO), str(clone)], check=True)
            if args.worktree:
                changed = subprocess.run(
                    ['git', 'ls-files', '-m', '-o', '--exclude-standard'], cwd=REPO,
                    check=True, capture_output=True, text=True).stdout.split()
                for name in changed:
                    if (REPO / name).is_file():
                        (clone / name).parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy2(REPO / name, clone / name)
            print(f'fresh clone, {args.installer}: {_load()}')
            parts, cold = _split(demo, clone, env)
            warm = _wall(demo, clone, env)
        split = ', '.join(f'{k} {v:.1f} s' for k, v in parts.items())
        print(f'./scripts/demo, fresh clone (cold)      {cold:6.2f} s ({split}; target < 60 s)')
        print(f'./scripts/demo, same clone again        {warm:6.2f} s')
        print(_load())


if __name__ == '__main__':
    main()
