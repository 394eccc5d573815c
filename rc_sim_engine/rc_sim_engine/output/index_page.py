"""The ``index.html`` of an engine output folder (``rcsim run``, ``track``, ``manoeuvre``,
``evaluate --out``): the command's summary mapping told in words.

:func:`write_index` turns the summary a command writes (``summary.yaml`` / ``metrics.json``)
into a :class:`~rc_sim_description.report_page.Page`: the inputs (world by name, scenario or
trajectory, controller, vehicle model, start pose, seed) go to "what ran" with the command line,
versions and the command's real wall time; one headline sentence; the numbers with labels in
words and SI units (per car where there are several; empty ones left out; every key of the
summary has a label here or a readable fallback from its name and unit suffix); the plots with
captions; the files. Cheap (milliseconds).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import math
import os
from pathlib import Path
import sys
from typing import Any

from rc_sim_description.report_page import (
    Page,
    Plot,
    command_wall_s,
    fmt_number,
    fmt_quantity,
    provenance,
    write_page,
)

__all__ = ['PLOT_CAPTIONS', 'describe', 'flatten', 'label_of', 'metrics_table', 'write_index']

#: Captions of the engine's pictures, in the order a page shows them.
PLOT_CAPTIONS: dict[str, str] = {
    'trajectory.png': 'Where the car drove: its path over the track (walls grey), the start '
                      'and one lidar scan taken at mid-run (red), with the car where it took it.',
    'tracking.png': "The reference path and the car's path, and the tracking error against "
                    'time.',
    'manoeuvre.png': 'The manoeuvre seen from above, and its signals against time.',
    'animation.gif': 'The run as an animation: the car outline, its trail and the lidar scan '
                     '(in real time up to 30 s; a longer run plays faster, as its title says).',
    'signals.png': 'Speed, yaw rate and steering angle against time: what was commanded '
                   '(dashed) and what the car did.',
}

_MODELS = {'single_track': 'single-track (dynamic bicycle with tyre forces)',
           'kinematic': 'kinematic bicycle', 'kinematic_4ws': 'kinematic, four-wheel steering'}
_CONTROLLERS = {'fl': 'feedback linearisation (fl)', 'kanayama': 'Kanayama (kanayama)',
                'pure_pursuit': 'pure pursuit (pure_pursuit)'}
_DECISIONS = {'avoid': 'change lane around the obstacle', 'stop': 'stop before the obstacle'}
#: Keys of the inputs (shown under "what ran"), with their labels, in display order.
_RAN = {'world': 'world', 'scenario': 'scenario', 'manoeuvre': 'manoeuvre',
        'trajectory': 'reference trajectory', 'controller': 'controller',
        'model': 'vehicle model', 'tyre_model': 'tyre model', 'bag': 'bag',
        'cars': 'cars', 'start': 'start pose', 'starts': 'start poses',
        'duration_s': 'run length', 'transient_s': 'start transient (left out of "after")',
        'error': 'tracking error measured as'}
_SKIP = {'seed', 'namespaces', 'realtime_factor', 'wall_time_s'}
#: Labels and units of result keys (dotted for nested ones). Unit 'cm' shows metres in cm.
_LABELS: dict[str, tuple[str, str]] = {
    'sim_time_s': ('simulated time', 's'),
    'distance_m': ('distance driven', 'm'),
    'max_speed_mps': ('top speed', 'm/s'),
    'max_lateral_acceleration_mps2': ('largest lateral acceleration', 'm/s²'),
    'collisions': ('collisions', ''),
    'reference.max_speed_mps': ('reference: top speed', 'm/s'),
    'reference.max_curvature_per_m': ('reference: largest curvature', '1/m'),
    'reference.max_lateral_acceleration_mps2': ('reference: largest lateral acceleration',
                                                'm/s²'),
    'rmse': ('RMSE of the position error', 'cm'),
    'ise': ('integral of the squared error (ISE)', 'm² s'),
    'max_error': ('largest position error', 'cm'),
    'final_error': ('position error at the end', 'cm'),
    'samples': ('error samples', ''),
    'decision': ('decision', ''),
    's_t_min': ('shortest lane shift the car can steer', 'm'),
    'gap_at_detection': ('free distance when the obstacle was seen', 'm'),
    'stop_distance': ('stopped this far before the obstacle', 'm'),
    'T': ('manoeuvre duration T', 's'),
    'T_star': ('steering time T*', 's'),
    'delta_max': ('largest steering angle', 'rad'),
    'final': ('final pose', 'pose'),
    'predicted': ('predicted final pose', 'pose'),
    'in_slot': ('ends inside the slot', ''),
}
_PARTS = {'whole_run': 'whole run', 'after_transient': 'after the start transient'}
_SUFFIXES = (('_mps2', 'm/s²'), ('_mps', 'm/s'), ('_per_m', '1/m'), ('_rad', 'rad'),
             ('_hz', 'Hz'), ('_deg', 'deg'), ('_m', 'm'), ('_s', 's'))


def flatten(data: Mapping[str, Any], prefix: str = '') -> list[tuple[str, str]]:
    """(dotted key, text) rows of a nested mapping; lists of scalars are joined with commas."""
    rows: list[tuple[str, str]] = []
    for key, value in data.items():
        name = f'{prefix}{key}'
        if isinstance(value, Mapping):
            rows += flatten(value, f'{name}.')
        elif isinstance(value, (list, tuple)) and value and all(
                isinstance(v, Mapping) for v in value):
            for i, item in enumerate(value):
                rows += flatten(item, f'{name}[{i}].')
        elif isinstance(value, (list, tuple)):
            rows.append((name, ', '.join(_fmt(v) for v in value)))
        else:
            rows.append((name, _fmt(value)))
    return rows


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f'{value:.6g}'
    return str(value)


def label_of(key: str) -> tuple[str, str]:
    """(label in words, unit) of a summary key (dotted when nested); a key without an entry in
    the table reads as its words, its unit suffix (``_m``, ``_mps`` ...) as the unit."""
    if key in _LABELS:
        return _LABELS[key]
    head, _, leaf = key.rpartition('.')
    if head in _PARTS and leaf in _LABELS:
        label, unit = _LABELS[leaf]
        return f'{label}, {_PARTS[head]}', unit
    for suffix, unit in _SUFFIXES:
        if leaf.endswith(suffix):
            words = f'{head.replace("_", " ")}: ' if head else ''
            return words + leaf[:-len(suffix)].replace('_', ' '), unit
    return (f'{head.replace("_", " ")}: ' if head else '') + leaf.replace('_', ' '), ''


def _value(value: Any, unit: str) -> str:
    """A value in words: numbers with their unit, poses as x, y, yaw, booleans yes / no."""
    if value is None:
        return ''
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, (int, float)):
        if unit == 'cm':
            return fmt_quantity(100.0 * value, 'cm')
        if unit == 'rad' and math.isfinite(value):
            return f'{fmt_quantity(value, "rad")} ({math.degrees(value):.1f}°)'
        return fmt_quantity(float(value), unit) if isinstance(value, float) else \
            f'{value:,}' + (f' {unit}' if unit else '')
    if isinstance(value, (list, tuple)) and unit == 'pose' and len(value) == 3:
        return _pose(value)
    return str(value)


def _pose(p: Sequence[float]) -> str:
    return (f'x = {float(p[0]):.3f} m, y = {float(p[1]):.3f} m, yaw = {float(p[2]):.3f} rad '
            f'({math.degrees(float(p[2])):.1f}°)')


def _per_car(values: Sequence[Any], unit: str, count: bool = False) -> str:
    if count:
        texts = ['none' if v == 0 else str(v) for v in values]
    else:
        texts = [_value(v, unit) for v in values]
    if len(texts) == 1:
        return texts[0]
    return '; '.join(f'car {i}: {t}' for i, t in enumerate(texts))


def _ran_value(key: str, value: Any) -> str:
    if key == 'world':
        text = str(value)
        return Path(text).stem if ('/' in text or text.endswith(('.sdf', '.yaml'))) else text
    if key == 'model':
        return _MODELS.get(str(value), str(value))
    if key == 'controller':
        return _CONTROLLERS.get(str(value), str(value))
    if key == 'start':
        return _pose(value)
    if key == 'starts':
        return '; '.join(f'car {i}: {_pose(p)}' for i, p in enumerate(value))
    if key == 'error':
        return {'time-indexed': 'distance to the reference point of the same time',
                'distance to path': 'distance to the nearest point of the path (no timing)'
                }.get(str(value), str(value))
    if key in ('duration_s', 'transient_s'):
        return fmt_quantity(float(value), 's')
    return str(value)


def describe(summary: Mapping[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(what-ran rows, result rows) of a summary mapping, in words and SI units."""
    several = 'starts' in summary
    ran = [(label, _ran_value(key, summary[key])) for key, label in _RAN.items()
           if summary.get(key) not in (None, '', []) and not (several and key == 'start')]
    results: list[tuple[str, str]] = []
    for key, value in summary.items():
        if key in _RAN or key in _SKIP or value is None:
            continue
        if key == 'collision_events':
            for i, e in enumerate(value or []):
                who = f'car {e["car"]} ' if 'car' in e else ''
                results.append((f'collision {i + 1}', f'{who}at t = {float(e["t"]):.2f} s with '
                                f'{e["obstacle"]} at {abs(float(e["speed"])):.2f} m/s'))
            continue
        if key == 'sim_time_s':
            results.append(('simulated time', fmt_quantity(float(value), 's')))
            continue
        if key in _PARTS:  # tracking metrics: a table of their own (metrics_table)
            continue
        if key == 'decision':
            results.append(('decision', _DECISIONS.get(str(value), str(value))))
            continue
        if isinstance(value, Mapping):
            for sub, item in value.items():
                if not isinstance(item, Mapping) and item is not None:
                    label, unit = label_of(f'{key}.{sub}')
                    results.append((label, _value(item, unit)))
            continue
        label, unit = label_of(key)
        if isinstance(value, (list, tuple)) and unit != 'pose':
            if not value:
                continue
            results.append((label, _per_car(value, unit, count=key == 'collisions')))
        elif key == 'collisions':
            results.append((label, 'none' if value == 0 else str(value)))
        else:
            results.append((label, _value(value, unit)))
    if 'sim_time_s' in summary:  # how fast it ran, after what it did
        results += _speed_rows(summary)
    return ran, [(k, v) for k, v in results if v]


def metrics_table(summary: Mapping[str, Any]) -> tuple[str, list[str], list[list[str]]]:
    """(title, header, rows) of the tracking metrics: one row per metric, one column per part
    (whole run, after the start transient); empty rows when there are none."""
    parts = [key for key in _PARTS if isinstance(summary.get(key), Mapping)]
    header = ['position error of the centre of mass', *(_PARTS[p] for p in parts)]
    rows: list[list[str]] = []
    if not parts:
        return '', header, rows
    for leaf in ('rmse', 'max_error', 'final_error', 'ise', 'samples'):
        label, unit = _LABELS[leaf]
        rows.append([label, *(_value(summary[p].get(leaf), unit) for p in parts)])
    rows.append(['scored from, to', *(f'{float(summary[p]["t_start"]):.1f} s, '
                                      f'{float(summary[p]["t_end"]):.1f} s' for p in parts)])
    return 'Tracking error', header, rows


def _speed_rows(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """How fast the command ran: the whole command, and its simulation loop alone."""
    rows = []
    sim = float(summary.get('sim_time_s') or 0.0)
    wall = command_wall_s()
    compile_s = _last_compile_s()
    if wall is not None and wall > 0:
        work = max(wall - compile_s, 1e-9)
        text = f'{fmt_quantity(work, "s", 2)} ({_times(sim / work)} real time)'
        if compile_s >= 0.5:
            text += f', plus {compile_s:.0f} s of one-time kernel compile'
        rows.append(('wall time of the whole command', text))
    loop = summary.get('wall_time_s')
    if isinstance(loop, (int, float)) and loop > 0:
        rows.append(('wall time of the simulation loop alone',
                     f'{fmt_quantity(float(loop), "s", 2)} ({_times(sim / loop)} real time)'))
    return rows


def _times(factor: float) -> str:
    if not math.isfinite(factor):
        return 'faster than'
    if factor >= 1:
        return f'{fmt_number(factor, 2 if factor < 10 else 3)}× faster than'
    return f'{fmt_number(1 / factor, 2)}× slower than'


def _last_compile_s() -> float:
    warmup = sys.modules.get('rc_sim_engine.sim.warmup')
    getter: Callable[[], float] | None = getattr(warmup, 'last_compile_s', None)
    return getter() if getter is not None else 0.0


def _kind(summary: Mapping[str, Any]) -> str:
    if 'manoeuvre' in summary:
        return 'manoeuvre'
    if 'trajectory' in summary and 'controller' in summary:
        return 'track'
    if 'bag' in summary and 'whole_run' in summary:
        return 'evaluate'
    if 'scenario' in summary and 'distance_m' in summary:
        return 'run'
    return ''


def _run_headline(summary: Mapping[str, Any]) -> tuple[str, bool]:
    distance = summary.get('distance_m') or [0.0]
    crashes = sum(summary.get('collisions') or [0])
    who = 'The car' if len(distance) == 1 else f'The {len(distance)} cars'
    drove = (fmt_quantity(float(distance[0]), 'm') if len(distance) == 1 else
             f'{fmt_quantity(float(sum(distance)), "m")} in all')
    text = (f'{who} drove {drove} in {fmt_quantity(float(summary["sim_time_s"]), "s")} of '
            f'simulated time, '
            + ('without a collision.' if crashes == 0 else
               f'with {crashes} collision{"s" if crashes > 1 else ""} (listed below).'))
    return text, crashes == 0


def _tracking_headline(summary: Mapping[str, Any]) -> tuple[str, bool]:
    part = summary.get('after_transient') or summary.get('whole_run') or {}
    when = ('after the start transient' if 'after_transient' in summary else 'over the whole run')
    rmse = part.get('rmse')
    what = (f'The {summary.get("controller", "controller")} controller tracked the '
            f'{summary.get("trajectory", "reference")}' if 'controller' in summary else
            'The car followed the reference path')
    if rmse is None:
        return what + '.', True
    crashes = summary.get('collisions', 0) or 0
    text = (f'{what} with a position error of {fmt_quantity(100 * float(rmse), "cm")} RMSE '
            f'{when} (largest {fmt_quantity(100 * float(part.get("max_error", math.nan)), "cm")})'
            + (f', {crashes} collision{"s" if crashes > 1 else ""}.' if crashes else '.'))
    return text, not crashes


def _manoeuvre_headline(summary: Mapping[str, Any]) -> tuple[str, bool]:
    crashes = int(summary.get('collisions') or 0)
    tail = ('no collision.' if not crashes else
            f'{crashes} collision{"s" if crashes > 1 else ""}.')
    decision = summary.get('decision')
    shift, free = summary.get('s_t_min'), summary.get('gap_at_detection')
    if decision is not None and isinstance(shift, (int, float)) and isinstance(free, (int, float)):
        if decision == 'stop':
            stop = summary.get('stop_distance')
            where = (f', {fmt_quantity(float(stop), "m")} before the obstacle'
                     if isinstance(stop, (int, float)) else '')
            text = (f'The car stopped{where}: the shortest lane shift it can steer '
                    f'({fmt_quantity(float(shift), "m")}) did not fit in the '
                    f'{fmt_quantity(float(free), "m")} free when it saw the obstacle; {tail}')
        else:
            text = (f'The car changed lane around the obstacle: the shortest lane shift it can '
                    f'steer ({fmt_quantity(float(shift), "m")}) fits in the '
                    f'{fmt_quantity(float(free), "m")} free when it saw the obstacle; {tail}')
        return text, not crashes
    if 'in_slot' in summary:
        inside = 'inside' if summary['in_slot'] else 'outside'
        final = summary.get('final')
        pose = f' at {_pose(final)}' if isinstance(final, (list, tuple)) else ''
        text = (f'The car parked and ended {inside} the slot{pose}; {tail}')
        return text, bool(summary['in_slot']) and not crashes
    return '', not crashes



def write_index(directory: str | os.PathLike[str], title: str, summary: Mapping[str, Any], *,
                command: Sequence[str] | None = None, notes: Sequence[str] = ()) -> Path:
    """Write ``directory/index.html`` atomically (see the module docstring); returns its path.

    ``title`` heads the page; ``notes`` are lines in words shown under the results (for a
    manoeuvre the first is the headline).
    """
    from rc_sim_description.report_page import command_started

    if command:
        command_started(command[1:], prog=command[0])
    kind = _kind(summary)
    ran, results = describe(summary)
    seed = summary.get('seed')
    if kind == 'run':
        world = _ran_value('world', summary.get('world', ''))
        title = f'rcsim run: {summary["scenario"]} on {world}'
    page = Page(title=title, ran=provenance(seed=seed if isinstance(seed, int) else None,
                                            inputs=ran, wall=kind != 'run'),
                results=results)
    lines = [str(n) for n in notes]
    if kind == 'run':
        page.lead = ('A simulation with the embedded engine. This folder is a rosbag2 bag '
                     '(ros2 bag play reads it) with the plots of the run.')
        page.verdict, page.verdict_ok = _run_headline(summary)
        lines = [n for n in lines if 'moved' in n]  # the start pose is above
    elif kind in ('track', 'evaluate'):
        page.lead = ('Closed-loop trajectory tracking in the embedded engine; this folder is a '
                     'rosbag2 bag with the metrics and plots.' if kind == 'track' else
                     "Tracking metrics of a bag's /odom against its /reference_path.")
        page.verdict, page.verdict_ok = _tracking_headline(summary)
        lines = []  # the evaluation's lines repeat the results table
    elif kind == 'manoeuvre':
        page.lead = ('An obstacle-avoidance or parking manoeuvre in the embedded engine; this '
                     'folder is a rosbag2 bag with the metrics and plots.')
        page.verdict, page.verdict_ok = _manoeuvre_headline(summary)
        if not page.verdict and lines:
            page.verdict = lines.pop(0)
        # what the printed lines add to the table (the search of a parking manoeuvre)
        lines = [n for n in lines if n.startswith('search')]
    page.notes = lines
    title_t, header, rows = metrics_table(summary)
    if rows:
        page.tables.append((title_t, header, rows))
    page.plots = [Plot(name, caption) for name, caption in PLOT_CAPTIONS.items()]
    return write_page(directory, page)
