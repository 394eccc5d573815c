"""rc-sim's racing step against F1TENTH gym, rounds alternating (prints figures; not a test).

Both tools' figures drift with the machine's state from minute to minute (F1TENTH gym's by up to
40 % on a shared 2-core machine), so a ratio is only meaningful between runs taken back to back.
Each round runs ``bench_racing_map.py`` (this interpreter) and then ``bench_f1tenth_gym.py``
(``--f1tenth-python``: an interpreter with F1TENTH gym installed, see that script's docstring),
each in a fresh process on the same map, and prints both best-block rates and their ratio; the
last line gives the median and the range over the rounds (target: >= 30x).

Run: python benchmarks/bench_racing_vs_f1tenth.py --f1tenth-python /tmp/f1t_venv/bin/python
     [--rounds 5] [--map MAP.yaml]   (the map needs a centerline CSV for F1TENTH gym's pure
     pursuit: ``rcsim map centerline MAP.yaml --out line.csv`` and ``centerline: line.csv``)
"""

from __future__ import annotations

import argparse
from pathlib import Path
import re
import statistics
import subprocess
import sys

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _racing_common import bench_map  # noqa: E402


def rate(cmd: list[str], pattern: str) -> float:
    """The number that ``pattern``'s group matches in the command's output [steps/s]."""
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=HERE.parent).stdout
    match = re.search(pattern, out)
    if match is None:
        sys.exit(f'no {pattern!r} figure in the output of {" ".join(cmd)}:\n{out}')
    return float(match.group(1).replace(',', ''))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--f1tenth-python', required=True,
                        help='interpreter with F1TENTH gym installed (bench_f1tenth_gym.py)')
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--map', help='map YAML with a centerline CSV (default: the generated '
                        '1000 x 1000 bench_circuit)')
    args = parser.parse_args()
    map_yaml = str(bench_map(args.map))  # the generated bench_circuit, written once
    ours = [sys.executable, str(HERE / 'bench_racing_map.py'), '--map', map_yaml]
    gym = [args.f1tenth_python, str(HERE / 'bench_f1tenth_gym.py'), '--map', map_yaml]
    ratios = []
    for k in range(args.rounds):
        a = rate(ours, r'RaceCore\.step\s+([\d,]+) steps/s')
        b = rate(gym, r'steps/s\s+([\d,]+) best')
        ratios.append(a / b)
        print(f'round {k + 1}: rc-sim {a:,.0f} steps/s, F1TENTH gym {b:,.0f} steps/s, '
              f'{a / b:.1f}x', flush=True)
    print(f'ratio over {len(ratios)} rounds: median {statistics.median(ratios):.1f}x, '
          f'{min(ratios):.1f}-{max(ratios):.1f}x (target >= 30x)')


if __name__ == '__main__':
    main()
