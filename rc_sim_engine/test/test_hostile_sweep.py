"""Hostile-input sweep: every class of bad input through the ``rcsim`` subcommands that read it.

Each case generates its bad input (nothing stored), runs ``rcsim`` in a child process under an
address-space limit of 1.5 GB and a time limit (``sweep_runner.py``; many cases per child, so
the sweep is fast) and asserts the contract: exit status 2, exactly one line on stderr
(``error: ...``, naming the culprit file or argument where the case says which), no traceback,
no output left behind, no memory blow-up, no hang.

Classes: YAML alias bombs, huge integer literals and deep nesting in every YAML the CLI takes
(--params, scenario, fit --config, lidar --config, --recording, a bag's metadata.yaml); deeply
nested and entity-declaring SDF; NaN, infinite and absurd values in vehicle overrides, scenario
files and CLI numbers. Issue 28 added: outputs over their own inputs (same path, a directory
holding the input, a path inside the input bag, a symbolic link or a hard link to an input, with
and without --force); --force onto what the command did not write (a character device, a
symbolic link to a directory, a directory of other files, an empty directory); names longer than
the file system allows and symbolic link loops in the output path; duplicated YAML keys, floats
too large and alias expansion inside a value (the key path is named); worlds whose walls enclose
every start pose and start poses inside a wall (the world element is named); NaN in input bags.
Besides the names, every file of the case directory must be unchanged (an input is never
touched). Cases whose fix belongs to another part of the suite and still fail are
``xfail(strict=True)`` with the owner named, so they turn into failures once fixed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import hashlib
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
MEMORY_LIMIT = 1536 * 1024 * 1024  # RLIMIT_AS of the child [bytes]
CASE_TIMEOUT = 20  # [s] per case (a clean refusal takes well under a second)

BOMB = '\n'.join(['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'] +
                 [f'a{k}: &a{k} [' + ', '.join([f'*a{k - 1}'] * 10) + ']' for k in range(1, 9)])
DEEP = 'a: ' + '[' * 5000 + ']' * 5000 + '\n'
HUGE_INT = '9' * 400


@dataclass(frozen=True)
class Case:
    """One bad input: files to write into the case directory, the argv, what to expect."""

    id: str
    files: dict[str, str]
    argv: list[str]
    culprit: str = ''  # a word the one-line error must contain (the file or argument)
    owner: str = ''  # set: xfail(strict) while another part of the suite still fails it
    bag: str = ''  # copy the shared good bag here first (metadata.yaml then overwritten)
    timeout: int = CASE_TIMEOUT  # [s]; short for known hangs owned by others
    setup: tuple[str, ...] = field(default=())  # recipes of _SETUPS run in the case directory


def _params(text: str) -> dict[str, str]:
    return {'p.yaml': text}


def _cases() -> list[Case]:
    out: list[Case] = []
    yaml_inputs: dict[str, tuple[str, list[str], str]] = {
        # name -> (file name, argv using it, bag copy name or '')
        'run-params': ('p.yaml', ['run', '--scenario', 'line', '--params', 'p.yaml', '--out',
                                  'out', '--no-plots'], ''),
        'describe-params': ('p.yaml', ['describe', '--params', 'p.yaml', '--out', 'out'], ''),
        'protocol-params': ('p.yaml', ['protocol', '--params', 'p.yaml', '--out', 'out'], ''),
        'track-params': ('p.yaml', ['track', '--params', 'p.yaml', '--out', 'out',
                                    '--no-plots'], ''),
        'run-scenario': ('s.yaml', ['run', '--world', 'flat_track', '--scenario', 's.yaml',
                                    '--out', 'out', '--no-plots'], ''),
        'fit-config': ('f.yaml', ['fit', '--bag', '@BAG', '--config', 'f.yaml', '--out',
                                  'out.yaml'], ''),
        'fit-recording': ('r.yaml', ['fit', '--bag', '@BAG', '--recording', 'r.yaml', '--out',
                                     'out.yaml'], ''),
        'lidar-config': ('l.yaml', ['lidar', 'apply', '--bag', '@BAG', '--config', 'l.yaml',
                                    '--out', 'out'], ''),
        'lidar-recording': ('r.yaml', ['lidar', 'stats', '--bag', '@BAG', '--recording',
                                       'r.yaml'], ''),
        'inspect-metadata': ('bag/metadata.yaml', ['inspect', '--bag', 'bag'], 'bag'),
        'fit-metadata': ('bag/metadata.yaml', ['fit', '--bag', 'bag', '--out', 'out.yaml'],
                         'bag'),
    }
    for name, (fname, argv, bag) in yaml_inputs.items():
        culprit = Path(fname).name
        for kind, text in (('alias-bomb', BOMB), ('deep-nesting', DEEP),
                           ('huge-int', f'a: {HUGE_INT}\n')):
            out.append(Case(f'{kind}/{name}', {fname: text}, argv, culprit, bag=bag))
    # huge integers and absurd numbers where each file is read for real
    out += [
        Case('huge-int/params-value', _params(f'mass_properties: {{mass: {HUGE_INT}}}\n'),
             ['run', '--scenario', 'line', '--params', 'p.yaml', '--out', 'out'], 'p.yaml'),
        Case('huge-int/scenario-time', {'s.yaml': f'mode: steering_angle\nt: [0, {HUGE_INT}]\n'
                                        'linear_x: [0, 0]\nangular_z: [0, 0]\n'},
             ['run', '--scenario', 's.yaml', '--out', 'out'], 's.yaml'),
        Case('huge-int/metadata-count', {}, ['inspect', '--bag', 'bag'], 'metadata.yaml',
             bag='bag-count'),
    ]
    # vehicle overrides: NaN, infinite, absurd, meaningless combinations
    for key, section, value, culprit in (
            ('mass-nan', 'mass_properties', 'mass: .nan', 'mass'),
            ('mass-inf', 'mass_properties', 'mass: .inf', 'mass'),
            ('mass-1e308', 'mass_properties', 'mass: 1.0e+308', '[0.01, 100] kg'),
            ('mass-1e308-yaml11', 'mass_properties', 'mass: 1e308', 'write 1.0e+308'),
            ('mass-negative', 'mass_properties', 'mass: -3', 'mass'),
            ('yaw-inertia-tiny', 'mass_properties', 'yaw_inertia: 1.0e-6', 'engine step'),
            ('stiffness-huge', 'tyres', 'cornering_stiffness_front: 1.0e+5', 'engine step'),
            ('top-speed', 'drive', 'max_wheel_speed: 9000', '150 m/s'),
            ('lidar-millions', 'sensors', 'lidar_samples: 5000000', 'lidar_samples'),
            ('wheelbase-string', 'geometry', 'wheelbase: long', 'wheelbase'),
            ('servo-undamped', 'steering', 'servo_d_gain: 0', 'servo_d_gain')):
        text = f'{section}:\n  {value}\n'
        out.append(Case(f'override/{key}', _params(text),
                        ['run', '--scenario', 'line', '--params', 'p.yaml', '--out', 'out'],
                        culprit))
    out.append(Case('override/fit-params-nan', _params('tyres: {cornering_stiffness_rear: .nan}'),
                    ['fit', '--bag', '@BAG', '--params', 'p.yaml', '--out', 'out.yaml'],
                    'cornering_stiffness_rear'))
    # scenario files with absurd values
    seq = 'mode: steering_angle\nt: [0, {t}]\nlinear_x: [0, {v}]\nangular_z: [0, {z}]\n'
    for key, t, v, z, culprit in (('end-1e9-s', '1.0e+9', 1, 0, 't[1]'),
                                  ('speed-1e6', 1, '1.0e+6', 0, 'linear_x'),
                                  ('nan-speed', 1, '.nan', 0, 'linear_x'),
                                  ('steer-100-rad', 1, 1, 100, 'angular_z'),
                                  ('time-backwards', -1, 1, 0, 't[1]')):
        out.append(Case(f'scenario/{key}', {'s.yaml': seq.format(t=t, v=v, z=z)},
                        ['run', '--world', 'flat_track', '--scenario', 's.yaml', '--out', 'out',
                         '--no-plots'], culprit))
    out.append(Case('scenario/end-2e5-s', {'s.yaml': seq.format(t='2.0e+5', v=1, z=0)},
                    ['run', '--world', 'flat_track', '--scenario', 's.yaml', '--out', 'out',
                     '--no-plots'], 'RC_SIM_MAX_DURATION_S'))
    # SDF worlds
    deep_sdf = ('<sdf version="1.9"><world name="w">' + '<model name="m">' * 20000 +
                '</model>' * 20000 + '</world></sdf>')
    lol = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
           '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
           '<sdf><world name="w">&lol2;</world></sdf>')
    nan_pose = ('<sdf version="1.9"><world name="w"><model name="m"><pose>nan 0 0 0 0 0</pose>'
                '</model></world></sdf>')
    huge_box = ('<sdf version="1.9"><world name="w"><model name="m"><link name="l"><collision '
                'name="c"><geometry><box><size>1e6 1e6 1</size></box></geometry></collision>'
                '</link></model></world></sdf>')
    for key, text, culprit, owner in (('deep-nesting', deep_sdf, 'w.sdf', ''),
                                      ('entity-bomb', lol, 'w.sdf', ''),
                                      ('nan-pose', nan_pose, 'w.sdf', ''),
                                      ('huge-area', huge_box, 'w.sdf', '')):
        out.append(Case(f'sdf/{key}', {'w.sdf': text},
                        ['run', '--world', 'w.sdf', '--scenario', 'line', '--out', 'out',
                         '--no-plots'], culprit, owner=owner))
    # CLI numbers
    run = ['run', '--world', 'flat_track', '--out', 'out', '--no-plots']
    for key, extra, culprit, owner in (
            ('speed-nan', ['--scenario', 'line', '--speed', 'nan'], '--speed', ''),
            ('speed-inf', ['--scenario', 'line', '--speed', 'inf'], '--speed', ''),
            ('speed-1e300', ['--scenario', 'circle_left', '--speed', '1e300'], 'speed', ''),
            ('radius-1e300', ['--scenario', 'circle_left', '--radius', '1e300'], '', ''),
            ('radius-nan', ['--scenario', 'circle_left', '--radius', 'nan'], '--radius', ''),
            ('duration-nan', ['--scenario', 'line', '--duration', 'nan'], '--duration', ''),
            ('duration-negative', ['--scenario', 'line', '--duration', '-1'], '--duration', ''),
            ('duration-1e7', ['--scenario', 'line', '--duration', '1e7'], '--duration', ''),
            ('realtime-1e-9', ['--scenario', 'line', '--realtime-factor', '1e-9'], 'RC_SIM_MAX_PACED_WALL_S', ''),
            ('start-far-away', ['--scenario', 'line', '--start', '1e9', '1e9', '0'], 'start pose', ''),
            ('start-nan', ['--scenario', 'line', '--start', 'nan', '0', '0'], '--start', '')):
        out.append(Case(f'cli/run-{key}', {}, run + extra, culprit, owner=owner,
                        timeout=5 if owner else CASE_TIMEOUT))
    track = ['track', '--out', 'out', '--no-plots']
    for key, extra, culprit in (
            ('set-radius-1e300', ['--trajectory', 'circle', '--set', 'radius=1e300'], 'radius'),
            ('set-duration-inf', ['--set', 'duration=inf'], 'duration'),
            ('set-kx-nan', ['--set', 'kx=nan'], 'kx'),
            ('set-amplitude-nan', ['--set', 'amplitude=nan'], 'amplitude')):
        out.append(Case(f'cli/track-{key}', {}, track + extra, culprit))
    out.append(Case('cli/track-duration-1e9', {}, [*track, '--duration', '1e9'], 'duration'))
    out.append(Case('cli/track-waypoints-huge', {'w.csv': 'x,y\n0,0\n1e300,0\n'},
                    [*track, '--trajectory', 'waypoints', '--waypoints', 'w.csv', '--set',
                     'waypoints_speed=1'], 'w.csv'))
    out += [
        Case('cli/protocol-speed-nan', {}, ['protocol', '--speed', 'nan', '--out', 'out'],
             'speed'),
        Case('cli/protocol-speed-1e300', {}, ['protocol', '--speed', '1e300', '--out', 'out'],
             'speed'),
        Case('cli/fit-dt-nan', {}, ['fit', '--bag', '@BAG', '--dt', 'nan', '--out', 'out.yaml'],
             'dt'),
        Case('cli/fit-horizon-inf', {}, ['fit', '--bag', '@BAG', '--horizon', 'inf', '--out',
                                         'out.yaml'], 'horizon'),
        Case('cli/fit-budget-huge', {}, ['fit', '--bag', '@BAG', '--budget', HUGE_INT, '--out',
                                         'out.yaml'], '--budget', timeout=5),
        Case('cli/lidar-set-nan', {}, ['lidar', 'apply', '--bag', '@BAG', '--preset', 'ideal',
                                       '--set', 'noise_stddev=nan', '--out', 'out'],
             'noise_stddev'),
    ]
    out += _issue28_cases()
    return out


def _issue28_cases() -> list[Case]:
    """Issue 28: inputs are sacred, --force targets, OS limits, YAML and world culprits."""
    out: list[Case] = []
    params = {'p.yaml': 'mass_properties: {mass: 3.0}\n'}
    # outputs over their own inputs: one line naming both, with or without --force
    for force in ((), ('--force',)):
        tag = '-force' if force else ''
        out += [
            Case(f'clobber/run-out-is-cmd-vel-bag{tag}', {},
                 ['run', '--cmd-vel-bag', 'bag', '--out', 'bag', '--no-plots', *force],
                 '--cmd-vel-bag bag', bag='bag'),
            Case(f'clobber/run-out-is-params{tag}', params,
                 ['run', '--scenario', 'line', '--params', 'p.yaml', '--out', 'p.yaml',
                  '--no-plots', *force], '--params p.yaml'),
            Case(f'clobber/lidar-out-is-bag{tag}', {},
                 ['lidar', 'apply', '--bag', 'bag', '--preset', 'ideal', '--out', 'bag',
                  *force], '--bag bag', bag='bag'),
            Case(f'clobber/replay-out-in-bag{tag}', {},
                 ['replay', '--bag', 'bag', '--out', 'bag/metadata.yaml', *force],
                 '--bag bag', bag='bag'),
            Case(f'clobber/fit-out-is-params{tag}', params,
                 ['fit', '--bag', '@BAG', '--params', 'p.yaml', '--out', 'p.yaml', *force],
                 '--params p.yaml'),
        ]
    out += [
        Case('clobber/lidar-out-holds-bag', {}, ['lidar', 'apply', '--bag', 'wrap/in', '--preset',
                                                 'ideal', '--out', 'wrap', '--force'],
             'contains the input --bag wrap/in', setup=('wrap',)),
        Case('clobber/run-out-holds-db3', {}, ['run', '--cmd-vel-bag', 'bag/bag.db3', '--out',
                                               'bag', '--force', '--no-plots'],
             'contains the input --cmd-vel-bag', bag='bag'),
        Case('clobber/run-out-is-link-to-bag', {}, ['run', '--cmd-vel-bag', 'bag', '--out',
                                                    'alias', '--force', '--no-plots'],
             '--cmd-vel-bag bag', bag='bag', setup=('alias',)),
        Case('clobber/run-out-is-hard-link', params,
             ['run', '--scenario', 'line', '--params', 'p.yaml', '--out', 'hl.yaml', '--force'],
             'hard link', setup=('hardlink',)),
        Case('clobber/inspect-recording-in-bag', {},
             ['inspect', '--bag', 'bag', '--write-recording', 'bag/r.yaml'],
             'lies inside the input --bag bag', bag='bag'),
        Case('clobber/evaluate-out-is-bag', {},
             ['evaluate', '--bag', 'bag', '--out', 'bag', '--force'], '--bag bag', bag='bag'),
        Case('clobber/describe-out-is-params', params,
             ['describe', '--params', 'p.yaml', '--out', 'p.yaml', '--force'], '--params'),
        Case('clobber/centerline-over-map-image', {},
             ['map', 'centerline', 'm/map.yaml', '--out', 'm/map.pgm', '--force'],
             'the input map m/map.pgm', setup=('map',)),
        Case('clobber/fit-report-is-out', {},
             ['fit', '--bag', '@BAG', '--out', 'r', '--report', 'r'], '--report r'),
    ]
    # --force only replaces what the command writes
    out += [
        Case('force/char-device', {}, ['inspect', '--bag', '@BAG', '--write-recording', 'null',
                                       '--force'], 'character device', setup=('device',)),
        Case('force/symlink-to-dir', {}, ['describe', '--out', 'link', '--force'],
             'symbolic link', setup=('precious', 'link')),
        Case('force/foreign-dir', {}, ['run', '--scenario', 'line', '--out', 'precious',
                                       '--force', '--no-plots'], 'precious',
             setup=('precious',)),
        Case('force/empty-dir', {}, ['describe', '--out', 'empty', '--force'], 'empty',
             setup=('empty',)),
        Case('force/file-for-a-bag', {'notes.txt': 'keep\n'},
             ['lidar', 'apply', '--bag', '@BAG', '--preset', 'ideal', '--out', 'notes.txt',
              '--force'], 'notes.txt is a file'),
    ]
    # OS limits up front
    out += [
        Case('oslimit/name-too-long', {}, ['describe', '--out', 'x' * 300], 'ENAMETOOLONG'),
        Case('oslimit/symlink-loop', {}, ['run', '--scenario', 'line', '--out', 'loop1/run',
                                          '--no-plots'], 'ELOOP', setup=('loop',)),
        Case('oslimit/symlink-loop-csv', {}, ['map', 'centerline', 'chicane_track', '--out',
                                              'loop1/c.csv'], 'ELOOP', setup=('loop',)),
    ]
    # config culprits: the key path and the file
    dup = 'mass_properties:\n  mass: 3.0\n  mass: 4.0\n'
    out += [
        Case('culprit/duplicated-key-params', {'p.yaml': dup},
             ['run', '--scenario', 'line', '--params', 'p.yaml', '--out', 'out'],
             'p.yaml: mass_properties.mass: duplicated key'),
        Case('culprit/duplicated-key-scenario', {'s.yaml': 'mode: steering_angle\nt: [0, 1]\n'
                                                 't: [0, 2]\nlinear_x: [0, 0]\n'
                                                 'angular_z: [0, 0]\n'},
             ['run', '--world', 'flat_track', '--scenario', 's.yaml', '--out', 'out'],
             's.yaml: t: duplicated key'),
        Case('culprit/duplicated-key-fit-config', {'f.yaml': 'optimizer:\n  budget: 5\n'
                                                   '  budget: 6\n'},
             ['fit', '--bag', '@BAG', '--config', 'f.yaml', '--out', 'o.yaml'],
             'optimizer.budget: duplicated key'),
        Case('culprit/duplicated-key-recording', {'r.yaml': 'scan: {topic: /scan}\n'
                                                  'scan: {topic: /x}\n'},
             ['lidar', 'stats', '--bag', '@BAG', '--recording', 'r.yaml'],
             'r.yaml: scan: duplicated key'),
        Case('culprit/float-too-large', {'p.yaml': 'geometry:\n  wheelbase: 1.0e+999\n'},
             ['run', '--scenario', 'line', '--params', 'p.yaml', '--out', 'out'],
             'p.yaml: geometry.wheelbase: 1.0e+999'),
        Case('culprit/int-too-large-key-path', {'p.yaml': f'geometry:\n  wheelbase: {HUGE_INT}\n'},
             ['describe', '--params', 'p.yaml'], 'p.yaml: geometry.wheelbase: integer literal'),
        Case('culprit/alias-in-a-value', {'p.yaml': BOMB + '\nsteering: {steering_gain: *a8}\n'},
             ['run', '--scenario', 'line', '--params', 'p.yaml', '--out', 'out'],
             'p.yaml: a6: the value'),
    ]
    # geometry culprits: the world element
    out += [
        Case('geometry/walls-enclose-every-start', {'w.sdf': _walled_cell()},
             ['run', '--world', 'w.sdf', '--scenario', 'line', '--out', 'out', '--no-plots'],
             "'north::l::c'"),
        Case('geometry/start-inside-a-wall', {'w.sdf': _walled_cell()},
             ['run', '--world', 'w.sdf', '--scenario', 'line', '--start', '0', '0.2', '0',
              '--out', 'out', '--no-plots'], "touches 'north::l::c'"),
    ]
    # NaN in input bags: refused naming the bag and topic, nothing written
    out += [
        Case('naninput/cmd-vel', {}, ['run', '--cmd-vel-bag', 'bag', '--out', 'out',
                                      '--no-plots'], '/cmd_vel', bag='bag-nan-cmd-vel'),
        Case('naninput/odom-evaluate', {}, ['evaluate', '--bag', 'bag', '--out', 'out'],
             '/odom', bag='track-nan-odom'),
    ]
    return out


def _walled_cell() -> str:
    """A world whose four walls close a cell smaller than the car around the spawn pose."""
    models = []
    for name, x, y, sx, sy in (('north', 0, 0.2, 0.5, 0.05), ('south', 0, -0.2, 0.5, 0.05),
                               ('east', 0.25, 0, 0.05, 0.45), ('west', -0.25, 0, 0.05, 0.45)):
        models.append(f'<model name="{name}"><static>true</static><pose>{x} {y} 0 0 0 0</pose>'
                      f'<link name="l"><collision name="c"><geometry><box><size>{sx} {sy} 1'
                      '</size></box></geometry></collision></link></model>')
    return '<sdf version="1.9"><world name="w">' + ''.join(models) + '</world></sdf>'


CASES = _cases()


def _mark(case: Case) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=case.owner)] if case.owner else []
    if 'device' in case.setup and os.geteuid() != 0:
        marks.append(pytest.mark.skip(reason='mknod of a character device needs root'))
    return pytest.param(case, id=case.id, marks=marks)


@pytest.fixture(scope='module')
def good_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small valid bag (the 6 s line manoeuvre) for the commands that need one; ``../track``
    beside it is a 3 s tracking run."""
    from rc_sim_engine.cli import main

    bag = tmp_path_factory.mktemp('goodbag') / 'bag'
    assert main(['run', '--world', 'flat_track', '--scenario', 'line', '--duration', '6',
                 '--no-plots', '--out', str(bag)]) == 0
    # and a tracking run's (with /reference_path, for rcsim evaluate) next to it
    assert main(['track', '--duration', '3', '--no-plots', '--out',
                 str(bag.parent / 'track')]) == 0
    return bag


def _nan_bag(good_bag: Path, out: Path, topic: str, field: str) -> None:
    """A copy of ``good_bag`` with ``field`` of one ``topic`` message 1 s in set to NaN."""
    import math

    from rc_sim_description.bags import open_bag
    from rc_sim_description.bags.writer import BagWriter

    with open_bag(good_bag) as reader, BagWriter(out) as writer:  # finite=False: forged
        start = reader.start_ns or 0
        done = False
        for conn, t_ns, raw in reader.messages():
            msg = reader.decode(conn, raw)
            if conn.topic == topic and not done and t_ns > start + 1_000_000_000:
                obj = msg
                parts = field.split('.')
                for part in parts[:-1]:
                    obj = getattr(obj, part)
                setattr(obj, parts[-1], math.nan)
                done = True
            writer.write(conn.topic, conn.msgtype, t_ns, msg)


def _setup(recipe: str, d: Path, good_bag: Path) -> None:
    """Hostile surroundings of a case (issue 28)."""
    if recipe == 'wrap':
        shutil.copytree(good_bag, d / 'wrap' / 'in')
        (d / 'wrap' / 'metadata.yaml').write_text('looks like a bag\n')
    elif recipe == 'alias':
        (d / 'alias').symlink_to('bag')
    elif recipe == 'hardlink':
        os.link(d / 'p.yaml', d / 'hl.yaml')
    elif recipe == 'device':
        import stat

        os.mknod(d / 'null', 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of its own
    elif recipe == 'precious':
        (d / 'precious').mkdir()
        (d / 'precious' / 'thesis.tex').write_text('keep\n')
    elif recipe == 'link':
        (d / 'link').symlink_to('precious')
    elif recipe == 'empty':
        (d / 'empty').mkdir()
    elif recipe == 'loop':
        (d / 'loop1').symlink_to('loop2')
        (d / 'loop2').symlink_to('loop1')
    elif recipe == 'map':
        from rc_sim_description.paths import share_path

        src = share_path('config/maps', package='rc_sim_engine')
        (d / 'm').mkdir()
        spec = (src / 'chicane_track.yaml').read_text()
        (d / 'm' / 'map.yaml').write_text(spec.replace('chicane_track.pgm', 'map.pgm'))
        shutil.copy(src / 'chicane_track.pgm', d / 'm' / 'map.pgm')
        for csv in src.glob('*.csv'):
            shutil.copy(csv, d / 'm' / csv.name)
    else:
        raise AssertionError(f'unknown setup {recipe!r}')


def _digest(d: Path) -> dict[str, str]:
    """Every entry below ``d``: kind and content hash (symbolic links by their target)."""
    out = {}
    for p in sorted(d.rglob('*')):
        rel = str(p.relative_to(d))
        if p.is_symlink():
            out[rel] = 'link:' + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha1(p.read_bytes()).hexdigest()
        elif p.is_dir():
            out[rel] = 'dir'
        else:
            out[rel] = f'special:{p.lstat().st_mode:o}'
    return out


def _prepare(case: Case, root: Path, good_bag: Path) -> dict[str, Any]:
    d = root / case.id.replace('/', '__')
    d.mkdir(parents=True)
    if case.bag == 'bag-nan-cmd-vel':
        _nan_bag(good_bag, d / 'bag', '/cmd_vel', 'linear.x')
    elif case.bag == 'track-nan-odom':  # a tracking run's bag (it has /reference_path)
        _nan_bag(good_bag.parent / 'track', d / 'bag', '/odom', 'pose.pose.position.x')
    elif case.bag:
        shutil.copytree(good_bag, d / 'bag')
        if case.bag == 'bag-count':
            meta = d / 'bag' / 'metadata.yaml'
            meta.write_text(meta.read_text().replace('message_count: ',
                                                     f'message_count: {HUGE_INT}', 1))
    for name, text in case.files.items():
        (d / name).write_text(text, encoding='utf-8')
    for recipe in case.setup:
        if recipe == 'device' and os.geteuid() != 0:
            continue
        _setup(recipe, d, good_bag)
    argv = [str(good_bag) if a == '@BAG' else a for a in case.argv]
    return {'id': case.id, 'dir': str(d), 'argv': argv, 'timeout': case.timeout}


@pytest.fixture(scope='module')
def sweep(tmp_path_factory: pytest.TempPathFactory, good_bag: Path) -> dict[str, Any]:
    """Run every case in as few children as possible; a dead child is replaced."""
    root = tmp_path_factory.mktemp('sweep')
    jobs = [_prepare(c, root, good_bag) for c in CASES]
    snapshots = {j['id']: sorted(p.name for p in Path(j['dir']).iterdir()) for j in jobs}
    digests = {j['id']: _digest(Path(j['dir'])) for j in jobs}
    results: dict[str, Any] = {}
    env = {**os.environ, 'RC_SIM_NO_PROGRESS': '1'}
    todo = jobs
    while todo:
        cases_file = root / 'cases.json'
        cases_file.write_text(json.dumps(todo))
        proc = subprocess.run(
            [sys.executable, str(HERE / 'sweep_runner.py'), str(cases_file), str(MEMORY_LIMIT),
             str(CASE_TIMEOUT)], capture_output=True, text=True, env=env,
            timeout=CASE_TIMEOUT * len(todo) + 120)
        done = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith('{')]
        results.update({r['id']: r for r in done})
        if len(done) < len(todo):  # the child died on the next case: record it, go on
            dead = todo[len(done)]
            results[dead['id']] = {'id': dead['id'], 'exit': f'killed ({proc.returncode})',
                                   'stderr': proc.stderr[-500:]}
            todo = todo[len(done) + 1:]
        else:
            todo = []
    for job in jobs:
        after = sorted(p.name for p in Path(job['dir']).iterdir())
        results[job['id']]['left_behind'] = sorted(set(after) - set(snapshots[job['id']]))
        now = _digest(Path(job['dir']))
        before = digests[job['id']]
        results[job['id']]['changed'] = sorted(k for k in set(now) | set(before)
                                               if now.get(k) != before.get(k))
    if os.environ.get('RC_SIM_SWEEP_REPORT'):  # a JSON table of every result, for reports
        Path(os.environ['RC_SIM_SWEEP_REPORT']).write_text(json.dumps(results, indent=1))
    return results


@pytest.mark.parametrize('case', [_mark(c) for c in CASES])
def test_hostile_input_is_one_line_exit_2(case: Case, sweep: dict[str, Any]) -> None:
    r = sweep[case.id]
    stderr = r.get('stderr', '')
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert r['exit'] == 2, f'exit {r["exit"]}: {r.get("exception", "")}{stderr[-300:]}'
    assert 'Traceback' not in stderr
    assert len(lines) == 1 and lines[0].startswith('error: '), stderr
    assert case.culprit in lines[0], lines[0]
    assert r['left_behind'] == [], r['left_behind']
    assert r['changed'] == [], r['changed']  # no input (nothing at all) was touched


def test_the_sweep_covers_every_class() -> None:
    classes = {c.id.split('/')[0] for c in CASES}
    assert classes == {'alias-bomb', 'deep-nesting', 'huge-int', 'override', 'scenario', 'sdf',
                       'cli', 'clobber', 'force', 'oslimit', 'culprit', 'geometry', 'naninput'}
    assert len(CASES) >= 115
