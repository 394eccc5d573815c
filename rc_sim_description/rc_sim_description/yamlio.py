"""Reading user YAML files with one-line errors, and did-you-mean hints for unknown keys."""

from __future__ import annotations

from collections.abc import Iterable
import difflib
import os
from pathlib import Path
from typing import Any

import yaml

from rc_sim_description.errors import ConfigError, RcSimError

__all__ = ['did_you_mean', 'read_yaml']


def did_you_mean(key: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or an empty string."""
    close = difflib.get_close_matches(str(key), [str(c) for c in candidates], n=1)
    return f' (did you mean {close[0]!r}?)' if close else ''


def read_yaml(path: str | os.PathLike[str], error: type[RcSimError] = ConfigError,
              label: str = '') -> Any:
    """Parse a YAML file; every failure raises ``error('<label><path>: <problem>')`` on one line.

    An empty file gives ``None``. ``label`` (e.g. ``'fit config '``) prefixes the path.
    """
    p = Path(path)
    name = f'{label}{p}'
    try:
        text = p.read_text(encoding='utf-8')
    except FileNotFoundError:
        raise error(f'{name}: file not found') from None
    except IsADirectoryError:
        raise error(f'{name}: is a directory, not a YAML file') from None
    except UnicodeDecodeError:
        raise error(f'{name}: cannot read (not UTF-8 text)') from None
    except OSError as exc:
        raise error(f'{name}: cannot read ({exc.strerror})') from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f' at line {mark.line + 1}' if mark is not None else ''
        problem = getattr(exc, 'problem', None) or 'invalid YAML'
        raise error(f'{name}: malformed YAML{where}: {problem}') from None
