"""One ``index.html`` per output folder, read top to bottom: what ran, the result in words, the
plots, the files.

A static page (no script, no network: open it with any browser, or serve the folder). Its parts,
in order: the title and one sentence saying what the folder is; **what ran** (the command line as
typed, the inputs by name, the seed, the software versions, when, and the command's real wall
time: from the start of its process when that is the command, else from :func:`command_started`);
the **verdict** or headline sentence; the **results** (label, value in SI units; rows without a
value are left out); notes; every plot (animations first) at its natural size, with a caption;
the files with their sizes and what each holds. The commands build a :class:`Page` and call
:func:`write_page`; :func:`provenance` gives the "what ran" rows every page shares.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
import html
from importlib.metadata import PackageNotFoundError, version
import math
import os
from pathlib import Path
import shlex
import sys
import time

__all__ = ['FILE_NOTES', 'Page', 'Plot', 'command_line', 'command_started', 'command_wall_s',
           'fmt_number', 'fmt_quantity', 'provenance', 'render_page', 'software_versions',
           'write_page']

#: What a file of an output folder holds, by name or suffix (the files table says it).
FILE_NOTES: dict[str, str] = {
    '.db3': 'the rosbag2 bag (sqlite3; ros2 bag play / rcsim inspect read it)',
    '.mcap': 'the rosbag2 bag (mcap; ros2 bag play / rcsim inspect read it)',
    'metadata.yaml': "the bag's rosbag2 metadata (topics, counts, duration)",
    'summary.yaml': 'the numbers of this page, machine-readable',
    'metrics.json': 'the numbers of this page, machine-readable',
    'stats.yaml': 'the numbers of this page, machine-readable',
    'estimates.yaml': 'the estimates of this page with their standard errors, machine-readable',
    'report.md': 'the same report as text (Markdown)',
    '.png': 'a plot shown above',
    '.gif': 'the animation shown above',
}

_STYLE = '''
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;
 max-width:1000px;margin:1.5em auto;padding:0 1.2em;color:#1d1d1d;line-height:1.45;font-size:16px}
h1{font-size:1.7em;margin:.2em 0 .1em}
h2{font-size:1.25em;margin:1.6em 0 .5em;border-bottom:1px solid #ddd;padding-bottom:.2em}
p.lead{font-size:1.08em;color:#444;margin:.2em 0 1em}
p.verdict{font-size:1.15em;background:#eef6ee;border-left:5px solid #3a8f3a;padding:.6em .9em}
p.verdict.warn{background:#fdf3e6;border-left-color:#d88a1c}
table{border-collapse:collapse;margin:.4em 0 1em}
td,th{border-bottom:1px solid #e3e3e3;padding:.35em .9em .35em 0;text-align:left;
 vertical-align:top}
th{color:#555;font-weight:600}
table.kv{width:100%}
table.kv td:first-child{color:#555;padding-right:1.6em;width:36%}
td.note{color:#555;font-size:.9em}
code{background:#f2f2f2;padding:.1em .3em;border-radius:3px;font-size:.92em;
 overflow-wrap:anywhere}
figure{margin:1.2em 0 2em}
img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{color:#444;margin-top:.3em}
ul.notes li{margin:.2em 0}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
'''

_STARTED: list[float] = []   # wall clock (time.time) when the command started, if known
_ARGV: list[list[str]] = []  # the command's arguments, if set


def command_started(argv: Sequence[str] | None = None, prog: str = 'rcsim') -> None:
    """Note that a command starts now with ``argv`` (without the program name): its page shows
    this command line and the wall time from now on (or from the process start, when the
    process is this command: it includes the interpreter's start-up)."""
    _STARTED[:] = [time.time()]
    _ARGV[:] = [[prog, *(sys.argv[1:] if argv is None else list(argv))]]


def _process_start() -> float | None:
    """Wall clock time when this process started (Linux ``/proc``), else None."""
    try:
        stat = Path('/proc/self/stat').read_text()
        ticks = int(stat.rsplit(')', 1)[1].split()[19])  # field 22: start time after boot
        boot = next(float(line.split()[1]) for line in
                    Path('/proc/stat').read_text().splitlines() if line.startswith('btime'))
        return boot + ticks / os.sysconf('SC_CLK_TCK')
    except (OSError, ValueError, IndexError, StopIteration, AttributeError):
        return None


def _process_is_command() -> bool:
    """True when this process was started as the command itself (``rcsim ...`` or ``python -m
    rc_sim_engine``), not e.g. a test runner that calls it."""
    first = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    return first.name == 'rcsim' or (first.name == '__main__.py'
                                     and first.parent.name == 'rc_sim_engine')


def command_wall_s() -> float | None:
    """Seconds since the command started (see :func:`command_started`), None if unknown."""
    now = time.time()
    start = _process_start() if _process_is_command() else None
    if start is None or not (0 <= now - start < 7 * 86400):
        start = _STARTED[0] if _STARTED else None
    return None if start is None else max(0.0, now - start)


def command_line() -> str | None:
    """The command as typed (shell-quoted), if known."""
    if _ARGV:
        return shlex.join(_ARGV[0])
    if _process_is_command():
        return shlex.join(['rcsim', *sys.argv[1:]])
    return None


def software_versions() -> str:
    """'rc-sim 0.1.0 (git 1a2b3c4), Python 3.11.2, numpy 2.4.6, numba 0.68.1' (those found)."""
    parts = []
    try:
        rc = version('rc_sim_description')
    except PackageNotFoundError:
        rc = ''
    commit = _git_commit(Path(__file__).resolve().parents[2])
    if rc or commit:
        parts.append(f'rc-sim {rc}'.strip() + (f' (git {commit})' if commit else ''))
    parts.append(f'Python {sys.version.split()[0]}')
    for name in ('numpy', 'numba', 'matplotlib'):
        try:
            parts.append(f'{name} {version(name)}')
        except PackageNotFoundError:
            continue
    return ', '.join(parts)


def _git_commit(root: Path) -> str:
    """Short commit of the checkout at ``root`` (read from ``.git``; '' when not a checkout)."""
    git = root / '.git'
    try:
        if git.is_file():  # a worktree: "gitdir: PATH"
            git = (root / git.read_text().split(':', 1)[1].strip()).resolve()
        head = (git / 'HEAD').read_text().strip()
        if not head.startswith('ref:'):
            return head[:10]
        ref = head[4:].strip()
        path = git / ref
        if path.is_file():
            return path.read_text().strip()[:10]
        common = git / 'commondir'
        base = (git / common.read_text().strip()).resolve() if common.is_file() else git
        for line in (base / 'packed-refs').read_text().splitlines():
            if line.endswith(' ' + ref):
                return line.split()[0][:10]
    except (OSError, IndexError):
        pass
    return ''


def provenance(*, seed: int | None = None, inputs: Iterable[tuple[str, str]] = (),
               wall: bool = True) -> list[tuple[str, str]]:
    """The "what ran" rows: command, ``inputs`` (label, text), seed, software, when and (with
    ``wall``) the command's wall time."""
    rows: list[tuple[str, str]] = []
    line = command_line()
    if line:
        rows.append(('command', line))
    rows += [(k, v) for k, v in inputs if v not in ('', None)]
    if seed is not None:
        rows.append(('seed', str(seed)))
    rows.append(('software', software_versions()))
    rows.append(('written', datetime.now().astimezone().strftime('%Y-%m-%d %H:%M:%S %Z')))
    seconds = command_wall_s() if wall else None
    if seconds is not None:
        rows.append(('wall time of the command', fmt_quantity(seconds, 's', digits=2)))
    return rows


def fmt_number(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits, no exponent between 1e-4 and 1e7."""
    if not math.isfinite(value):
        return 'not available'
    if value == 0:
        return '0'
    magnitude = math.floor(math.log10(abs(value)))
    if -4 <= magnitude < 7:
        decimals = max(0, digits - 1 - magnitude)
        return f'{value:,.{decimals}f}'
    return f'{value:.{digits - 1}e}'


def fmt_quantity(value: float, unit: str, digits: int = 3) -> str:
    """``'1.23 m/s'``; non-finite values read 'not available'."""
    text = fmt_number(value, digits)
    return text if not math.isfinite(value) or not unit else f'{text} {unit}'


@dataclass
class Plot:
    """A picture of the folder (by file name) and its caption in words."""

    name: str
    caption: str = ''


@dataclass
class Page:
    """What an ``index.html`` shows, top to bottom (see the module docstring)."""

    title: str
    lead: str = ''
    ran: list[tuple[str, str]] = field(default_factory=list)
    verdict: str = ''
    verdict_ok: bool = True
    results: list[tuple[str, str]] = field(default_factory=list)
    results_title: str = 'Results'
    notes: list[str] = field(default_factory=list)
    tables: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    file_notes: dict[str, str] = field(default_factory=dict)


def _kv(rows: Sequence[tuple[str, str]]) -> list[str]:
    esc = html.escape
    out = ['<table class="kv">']
    for key, value in rows:
        if value in ('', None):
            continue
        cell = f'<code>{esc(value)}</code>' if key == 'command' else esc(value)
        out.append(f'<tr><td>{esc(key)}</td><td>{cell}</td></tr>')
    out.append('</table>')
    return out


def _size(n: int) -> str:
    size = float(n)
    for unit in ('B', 'kB', 'MB', 'GB'):
        if size < 1000 or unit == 'GB':
            return f'{n} B' if unit == 'B' else f'{size:.1f} {unit}'
        size /= 1000
    return f'{size:.1f} GB'  # pragma: no cover


def _file_note(name: str, extra: Mapping[str, str]) -> str:
    if name in extra:
        return extra[name]
    if name in FILE_NOTES:
        return FILE_NOTES[name]
    return FILE_NOTES.get(Path(name).suffix, '')


def _numeric(text: str) -> bool:
    try:
        float(text.replace(',', '').split()[0])
    except (ValueError, IndexError):
        return False
    return True


def _cell(i: int, text: str, header: Sequence[str]) -> str:
    """A table cell: numbers right-aligned, the last column in small print when its header
    says ``how`` (an explanation)."""
    esc = html.escape
    if i and i == len(header) - 1 and header[i].startswith('how'):
        return f'<td class="note">{esc(text)}</td>'
    if i and _numeric(text):
        return f'<td class="num">{esc(text)}</td>'
    return f'<td>{esc(text)}</td>'


def render_page(page: Page, files: Sequence[Path]) -> str:
    """The HTML of ``page`` for a folder holding ``files``."""
    esc = html.escape
    names = {p.name for p in files}
    parts = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f'<title>{esc(page.title)}</title><style>{_STYLE}</style></head><body>',
             f'<h1>{esc(page.title)}</h1>']
    if page.lead:
        parts.append(f'<p class="lead">{esc(page.lead)}</p>')
    if page.verdict:
        parts.append(f'<p class="verdict{"" if page.verdict_ok else " warn"}">'
                     f'{esc(page.verdict)}</p>')
    if page.ran:
        parts += ['<h2>What ran</h2>', *_kv(page.ran)]
    if page.results:
        parts += [f'<h2>{esc(page.results_title)}</h2>', *_kv(page.results)]
    if page.notes:
        parts.append('<ul class="notes">')
        parts += [f'<li>{esc(n)}</li>' for n in page.notes]
        parts.append('</ul>')
    for title, header, rows in page.tables:
        if not rows:
            continue
        parts += [f'<h2>{esc(title)}</h2>', '<table><tr>'
                  + ''.join(f'<th>{esc(h)}</th>' for h in header) + '</tr>']
        for row in rows:
            parts.append('<tr>' + ''.join(_cell(i, c, header) for i, c in enumerate(row))
                         + '</tr>')
        parts.append('</table>')
    shown = [p for p in page.plots if p.name in names]
    if shown:
        parts.append('<h2>Plots</h2>')
        for plot in shown:
            alt = esc(plot.caption or plot.name)
            parts.append(f'<figure><img src="{esc(plot.name)}" alt="{alt}">'
                         f'<figcaption>{esc(plot.caption)} (<a href="{esc(plot.name)}">'
                         f'{esc(plot.name)}</a>)</figcaption></figure>')
    if files:
        parts += ['<h2>Files</h2>', '<table><tr><th>file</th><th>size</th><th>what it holds</th>'
                  '</tr>']
        parts += [f'<tr><td><a href="{esc(p.name)}">{esc(p.name)}</a></td>'
                  f'<td class="num">{_size(p.stat().st_size)}</td>'
                  f'<td>{esc(_file_note(p.name, page.file_notes))}</td></tr>' for p in files]
        parts.append('</table>')
    parts.append('</body></html>\n')
    return '\n'.join(parts)


def write_page(directory: str | os.PathLike[str], page: Page) -> Path:
    """Write ``directory/index.html`` atomically; pictures of the folder that ``page`` does not
    name are shown after its own (GIFs first), captioned with their file name. Returns the
    path."""
    from rc_sim_description.atomic import atomic_write_text

    folder = Path(directory)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name != 'index.html'
                   and not p.name.startswith('.'))
    named = {p.name for p in page.plots}
    page.plots = [*page.plots, *(Plot(p.name, p.stem.replace('_', ' '))
                                 for suffix in ('.gif', '.png') for p in files
                                 if p.suffix == suffix and p.name not in named)]
    target = folder / 'index.html'
    atomic_write_text(target, render_page(page, files))
    return target
