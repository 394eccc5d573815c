"""``rcsim lidar apply|stats|fit``: inject lidar errors into a recorded bag, summarise a scan
topic, or fit an error config to static recordings of a real sensor.

Registered by ``rc_sim_engine.cli`` (``register(subparsers)``); rosbags is imported only when a
command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from rc_sim_description.errors import ConfigError

__all__ = ['StageProgress', 'command_apply', 'command_fit', 'command_stats', 'load_config',
           'register', 'scan_topic']


def register(subparsers: Any) -> None:
    """Add ``lidar apply``, ``lidar stats`` and ``lidar fit`` to the ``rcsim`` parser."""
    lidar = subparsers.add_parser(
        'lidar', help='inject reproducible lidar errors into a bag / scan statistics / fit '
        'errors to a real sensor',
        description='Lidar error model on bags: a rosbag2 directory, a .db3 or .mcap file or a '
        'ROS 1 .bag.')
    verbs = lidar.add_subparsers(dest='lidar_command', metavar='VERB')
    lidar.set_defaults(func=lambda _args: _help(lidar))

    apply = verbs.add_parser(
        'apply', help='copy a bag, applying the error model to one LaserScan topic',
        description='Copy BAG to OUT; the LaserScan TOPIC goes through the lidar error model, '
        'every other topic is copied unchanged. Same seed + same input = same output.')
    apply.add_argument('--bag', required=True, help='input bag: rosbag2 directory, .db3/.mcap '
                       'file or ROS 1 .bag')
    apply.add_argument('--out', required=True, help='output bag directory (--force replaces it; '
                       'missing parent directories are created)')
    source = apply.add_mutually_exclusive_group(required=True)
    source.add_argument('--config', help='lidar error YAML (docs/lidar_errors.md)')
    source.add_argument('--preset', help='shipped preset: ideal, hokuyo_ust10lx, '
                        'hokuyo_utm30lx, rplidar_a1, harsh')
    apply.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                       help='override one key (repeatable), e.g. --set noise_stddev=0.02')
    apply.add_argument('--topic', default=None, help='LaserScan topic (default: the scan role of '
                       '--recording, else /scan)')
    _bag_options(apply)
    apply.add_argument('--seed', type=int, default=None,
                       help='seed of the error generator (default: the config seed)')
    apply.add_argument('--storage', choices=('sqlite3', 'mcap'), default=None,
                       help='output storage (default: same as the input)')
    apply.add_argument('--force', action='store_true', help='overwrite OUT if it exists')
    apply.set_defaults(func=command_apply)

    stats = verbs.add_parser('stats', help='statistics of a LaserScan topic',
                             description='Validity, REP 117 values, dropout and noise '
                             'estimates (static scene) of a LaserScan topic.')
    stats.add_argument('--bag', required=True, help='bag: rosbag2 directory, .db3/.mcap file or '
                       'ROS 1 .bag')
    stats.add_argument('--topic', default=None, help='LaserScan topic (default: the scan role of '
                       '--recording, else /scan)')
    _bag_options(stats)
    stats.add_argument('--out', metavar='DIR', default=None,
                       help='also write DIR with stats.yaml, a plot of the ranges and '
                       'index.html')
    stats.add_argument('--force', action='store_true', help='overwrite DIR')
    stats.set_defaults(func=command_stats)

    fit = verbs.add_parser(
        'fit', help='fit a lidar error config to static recordings of a real sensor',
        description='Estimate range noise (constant + proportional, correlation between '
        'neighbouring beams), range quantum, offset drift, invalid returns (and how the driver '
        'writes them), mixed pixels, outliers and lost scans from recordings of a static scene, '
        'without a ground truth. Only the nearly static parts are used (small hand motions are '
        'compensated); the spans used are printed. OUT is a config for lidar apply --config.')
    fit.add_argument('--bag', required=True, nargs='+', metavar='BAG',
                     help='one or more bags of the sensor standing still (several distances '
                     'welcome): rosbag2 directory, .db3/.mcap file or ROS 1 .bag')
    fit.add_argument('--topic', default=None, help='LaserScan topic (default: the scan role of '
                     '--recording, else /scan)')
    _bag_options(fit)
    fit.add_argument('--out', required=True, help='fitted lidar error YAML')
    fit.add_argument('--report', metavar='DIR', default=None,
                     help='directory for report.md, estimates.yaml and plots')
    fit.add_argument('--seed', type=int, default=0,
                     help='seed of the simulation that checks the fit (default 0)')
    fit.add_argument('--force', action='store_true', help='overwrite OUT and DIR')
    fit.set_defaults(func=command_fit)


def _bag_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--recording', metavar='YAML', default=None,
                        help='recording description (docs/recordings.md); its scan role names '
                        'the LaserScan topic')
    parser.add_argument('--skip-corrupt', action='store_true',
                        help='read past corrupt or undecodable messages with a warning (default: '
                        'they are an error)')


def scan_topic(args: argparse.Namespace) -> str:
    """The LaserScan topic: --topic, else the recording's scan role, else /scan."""
    if args.topic is not None:
        return str(args.topic)
    if args.recording is not None:
        from rc_sim_description.recording import load_recording

        recording = load_recording(args.recording)
        if 'scan' not in recording.roles:
            raise ConfigError(f'{args.recording}: no scan role (add scan: {{topic: /scan}})')
        return recording.roles['scan'].topic
    return '/scan'


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 1


def load_config(config: str | None, preset: str | None, overrides: list[str]) -> Any:
    """LidarErrorConfig from a file or preset plus ``KEY=VALUE`` overrides (YAML values)."""
    import yaml

    from rc_sim_description.cli_support import split_key_value
    from rc_sim_sensors.lidar_config import LidarErrorConfig

    base = (LidarErrorConfig.from_yaml(config) if config is not None
            else LidarErrorConfig.from_preset(preset or 'ideal'))
    values: dict[str, Any] = {}
    for item in overrides:
        key, text = split_key_value(item, '--set')
        try:
            values[key] = yaml.safe_load(text)
        except yaml.YAMLError:
            raise ConfigError(f'--set {item!r}: value is not valid YAML') from None
    return base.with_values(**values) if values else base


def command_apply(args: argparse.Namespace) -> int:
    """``rcsim lidar apply``."""
    from rc_sim_description.atomic import check_output_path
    from rc_sim_description.cli_support import progress
    from rc_sim_sensors.bag_tools import apply_errors_to_bag, message_count

    check_output_path(args.out, force=args.force, kind='bag', inputs={
        '--bag': args.bag, '--config': args.config, '--recording': args.recording})
    config = load_config(args.config, args.preset, args.set)
    if args.seed is not None and args.seed < 0:
        raise ConfigError(f'--seed: must be >= 0, got {args.seed}')
    topic = scan_topic(args)
    total = message_count(args.bag, skip_corrupt=args.skip_corrupt)
    with progress('lidar apply', total) as bar:
        report = apply_errors_to_bag(args.bag, args.out, config, topic=topic, seed=args.seed,
                                     storage=args.storage, force=args.force,
                                     on_progress=bar.update, skip_corrupt=args.skip_corrupt)
    from rc_sim_sensors.lidar_pages import write_apply_page

    name = (args.preset or args.config or 'ideal') + ''.join(f' --set {s}' for s in args.set)
    page = write_apply_page(args.out, bag=args.bag, topic=topic, config=config,
                            config_name=name, seed=args.seed, report=report,
                            skip_corrupt=args.skip_corrupt)
    print(f'wrote {report.output} ({report.storage}): {report.scans_out}/{report.scans_in} '
          f'scans of {topic} kept, {report.other_messages} other messages copied '
          f'(summary page: {page})')
    return 0


def command_stats(args: argparse.Namespace) -> int:
    """``rcsim lidar stats``."""
    from rc_sim_sensors.bag_tools import read_scan_series
    from rc_sim_sensors.scan_stats import scan_stats

    if args.out is not None:
        from rc_sim_description.atomic import check_output_path

        check_output_path(args.out, force=args.force, kind='dir', label='--out',
                          names=LIDAR_STATS_FILES, inputs={'--bag': args.bag,
                                                           '--recording': args.recording})
    topic = scan_topic(args)
    series = read_scan_series(args.bag, topic, skip_corrupt=args.skip_corrupt)
    stats = scan_stats(series.scans, topic, skipped=series.skipped)
    for line in stats.lines():
        print(line)
    if args.out is not None:
        from pathlib import Path

        from rc_sim_description.atomic import atomic_output_dir
        from rc_sim_sensors.lidar_pages import write_stats_page

        with atomic_output_dir(args.out, force=args.force, names=LIDAR_STATS_FILES) as tmp:
            Path(tmp).mkdir(parents=True, exist_ok=True)
            write_stats_page(tmp, stats, bag=str(args.bag), scans=series.scans)
        print(f'wrote {args.out} (summary page: {Path(args.out) / "index.html"})')
    return 0


#: what ``lidar stats --out`` writes (``--force`` replaces only such a directory)
LIDAR_STATS_FILES = ('stats.yaml', 'ranges.png', 'index.html')


#: what ``lidar fit --report`` writes (``--force`` replaces only such a directory)
LIDAR_REPORT_FILES = ('report.md', 'estimates.yaml', '*.png', 'index.html')


def _check_fitted(text: str, out: Any) -> None:
    """The fitted YAML holds no NaN or infinity: a fit that degenerated is exit 3 naming the
    key, nothing written (``range_max: .inf`` means "no limit" and stays allowed)."""
    import math

    from rc_sim_description.errors import DegenerateError
    from rc_sim_description.finite import check_finite_tree
    from rc_sim_description.yamlio import load_yaml_text

    data = load_yaml_text(text, str(out))
    if isinstance(data, dict) and data.get('range_max') == math.inf:
        data = {**data, 'range_max': 0.0}
    check_finite_tree(data, str(out), error=DegenerateError,
                      hint=': the fit degenerated (do the recordings hold a static scene?); '
                      'nothing was written')


class StageProgress:
    """Progress of a command that runs in stages, called as ``(stage, done, total)``: on a
    terminal a bar per stage with its progress and time left; in CI logs (``$CI`` set, output
    not a terminal) one line per finished stage with its time; otherwise quiet."""

    def __init__(self, command: str) -> None:
        import os
        import sys

        from rc_sim_description.cli_support import is_interactive

        self.command = command
        self.live = is_interactive()
        self.log = not self.live and bool(os.environ.get('CI')) and not sys.stderr.isatty()
        self.stage: str | None = None
        self.started = 0.0
        self.total = 0.0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> StageProgress:
        if self.live:
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn(f'{self.command}: ' + '{task.description}'),
                                 BarColumn(), '[progress.percentage]{task.percentage:>3.0f}%',
                                 TimeRemainingColumn(), transient=True)
            self._bar.__enter__()
        return self

    def __call__(self, stage: str, done: float, total: float) -> None:
        import time

        if stage != self.stage:
            self._finish()
            self.stage, self.started = stage, time.monotonic()
            if self._bar is not None:
                self._task = self._bar.add_task(stage, total=max(total, 1e-9))
        self.total = total
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=max(total, 1e-9))

    def _finish(self) -> None:
        import sys
        import time

        if self.stage is None:
            return
        if self.log:
            print(f'{self.command}: {self.stage} done in {time.monotonic() - self.started:.1f} s',
                  file=sys.stderr, flush=True)
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=self._bar.tasks[-1].total)

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self._finish()
        if self._bar is not None:
            self._bar.__exit__(*exc)


def command_fit(args: argparse.Namespace) -> int:
    """``rcsim lidar fit``."""
    from pathlib import Path

    from rc_sim_description.atomic import atomic_output_dir, atomic_output_file, check_output_path
    from rc_sim_sensors.bag_tools import read_scan_series
    from rc_sim_sensors.lidar_config import LidarErrorConfig
    from rc_sim_sensors.lidar_fit import fit_lidar
    from rc_sim_sensors.lidar_fit_report import (
        compare_spans,
        fitted_yaml,
        summary_lines,
        write_report,
    )

    if args.seed < 0:
        raise ConfigError(f'--seed: must be >= 0, got {args.seed}')
    inputs = {'--bag': args.bag, '--recording': args.recording}
    out = check_output_path(args.out, force=args.force, kind='file', inputs=inputs)
    if args.report is not None:
        check_output_path(args.report, force=args.force, kind='dir', label='--report',
                          names=LIDAR_REPORT_FILES, inputs={**inputs, '--out': args.out})
    topic = scan_topic(args)
    recordings = []
    with StageProgress('lidar fit') as stages:
        for i, bag in enumerate(args.bag):
            stages('reading bags', i, len(args.bag))
            series = read_scan_series(bag, topic, skip_corrupt=args.skip_corrupt)
            recordings.append((str(bag), series.scans))
        stages('reading bags', len(args.bag), len(args.bag))
        fit = fit_lidar(recordings, progress=stages)
        comparisons = compare_spans(fit, args.seed, progress=stages)
    sources = [str(b) for b in args.bag]
    text = fitted_yaml(fit, sources)
    _check_fitted(text, out)
    with atomic_output_file(out) as tmp:
        tmp.write_text(text, encoding='utf-8')
        LidarErrorConfig.from_yaml(tmp)  # what lidar apply --config will read
    if args.report is not None:
        with atomic_output_dir(args.report, force=args.force,
                               names=LIDAR_REPORT_FILES) as tmp_dir:
            write_report(Path(tmp_dir), fit, comparisons, sources, seed=args.seed,
                         out_yaml=str(out))
    for line in summary_lines(fit, comparisons):
        print(line)
    print(f'wrote {out}' + (f' and {args.report}/' if args.report else ''))
    return 0
