"""One ``index.html`` per output folder: the run's summary, every plot and animation, the files.

A static page (no script, no network: open it with any browser, or serve the folder) that shows
the summary mapping as a table (nested keys joined with dots), then every ``*.gif`` and ``*.png``
of the folder (animations first) and a list of the files with their sizes (the bag, its metadata,
the summary). Cheap (milliseconds), so every ``rcsim run``, ``track``, ``manoeuvre`` and
``evaluate --out`` writes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import html
import os
from pathlib import Path
from typing import Any

__all__ = ['flatten', 'write_index']

_STYLE = ('body{font-family:sans-serif;max-width:1100px;margin:1.5em auto;padding:0 1em;'
          'color:#222}table{border-collapse:collapse;margin:1em 0}'
          'td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;font-size:.9em}'
          'th{background:#f3f3f3}img{max-width:100%;border:1px solid #ddd;margin:.5em 0}'
          'code{background:#f3f3f3;padding:0 .2em}figure{margin:1em 0}')


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


def _size(n: int) -> str:
    size = float(n)
    for unit in ('B', 'kB', 'MB'):
        if size < 1000:
            return f'{n} B' if unit == 'B' else f'{size:.1f} {unit}'
        size /= 1000
    return f'{size:.1f} GB'


def write_index(directory: str | os.PathLike[str], title: str, summary: Mapping[str, Any], *,
                command: Sequence[str] | None = None, notes: Sequence[str] = ()) -> Path:
    """Write ``directory/index.html`` atomically (see the module docstring); returns its path."""
    from rc_sim_description.atomic import atomic_write_text

    folder = Path(directory)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name != 'index.html'
                   and not p.name.startswith('.'))
    images = ([p for p in files if p.suffix == '.gif'] +
              [p for p in files if p.suffix == '.png'])
    esc = html.escape
    parts = [f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
             f'<title>{esc(title)}</title><style>{_STYLE}</style></head><body>',
             f'<h1>{esc(title)}</h1>']
    if command:
        parts.append(f'<p>command: <code>{esc(" ".join(command))}</code></p>')
    parts += [f'<p>{esc(line)}</p>' for line in notes]
    rows = flatten(summary)
    if rows:
        parts.append('<h2>Summary</h2><table><tr><th>key</th><th>value</th></tr>')
        parts += [f'<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>' for k, v in rows]
        parts.append('</table>')
    if images:
        parts.append('<h2>Plots</h2>')
        parts += [f'<figure><img src="{esc(p.name)}" alt="{esc(p.stem)}">'
                  f'<figcaption>{esc(p.name)}</figcaption></figure>' for p in images]
    parts.append('<h2>Files</h2><table><tr><th>file</th><th>size</th></tr>')
    parts += [f'<tr><td><a href="{esc(p.name)}">{esc(p.name)}</a></td>'
              f'<td>{_size(p.stat().st_size)}</td></tr>' for p in files]
    parts.append('</table></body></html>\n')
    target = folder / 'index.html'
    atomic_write_text(target, '\n'.join(parts))
    return target
