"""Reading user YAML with bounds and one-line errors, and did-you-mean hints for unknown keys.

Every YAML file the suite reads goes through :func:`read_yaml` / :func:`load_yaml_text`: a size
limit, a nesting-depth limit checked on the event stream (before PyYAML's recursive composer can
overflow the stack), an expanded-node limit that counts every alias as the subtree it repeats
(a "billion laughs" document is refused before it is constructed), and integer literals limited to
:data:`~rc_sim_description.limits.MAX_INT_DIGITS` digits. Limits: :mod:`rc_sim_description.limits`.
"""

from __future__ import annotations

from collections.abc import Iterable
import difflib
import os
from pathlib import Path
import re
from typing import Any

import yaml

from rc_sim_description.errors import ConfigError, RcSimError
from rc_sim_description.limits import (
    MAX_INT_DIGITS,
    MAX_YAML_BYTES,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
)

__all__ = ['did_you_mean', 'load_yaml_text', 'number_hint', 'read_yaml']

_Loader: Any = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
_INT_TAG = 'tag:yaml.org,2002:int'
_DIGITS = re.compile(r'[0-9a-fA-F]')


def did_you_mean(key: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or an empty string."""
    close = difflib.get_close_matches(str(key), [str(c) for c in candidates], n=1)
    return f' (did you mean {close[0]!r}?)' if close else ''


_TEXT_NUMBER = re.compile(r'^([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))[eE]([-+]?[0-9]+)$')


def number_hint(value: object) -> str:
    """`` (YAML reads 1e308 as text: write 1.0e+308)`` for a string that is a number in
    scientific notation YAML 1.1 does not read as one (no dot or no exponent sign), else ''."""
    if not isinstance(value, str):
        return ''
    match = _TEXT_NUMBER.match(value.strip())
    if match is None:
        return ''
    mantissa, exponent = match.groups()
    if '.' not in mantissa:
        mantissa += '.0'
    if exponent[0] not in '+-':
        exponent = '+' + exponent
    return f' (YAML reads {value.strip()} as text: write {mantissa}e{exponent})'


def _check_depth(text: str, name: str, error: type[RcSimError]) -> None:
    """Nesting depth from the (iterative) event parser, before anything recursive runs."""
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark is not None else '?'
                raise error(f'{name}: YAML nested deeper than {MAX_YAML_DEPTH} levels '
                            f'(at line {line})')
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _check_nodes(root: yaml.Node, name: str, error: type[RcSimError]) -> None:
    """Expanded node count (aliases count as the subtree they repeat) and integer sizes."""
    sizes: dict[int, int] = {}

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        sizes[key] = 1  # a recursive alias (a node containing itself) counts once
        total = 1
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _INT_TAG and len(_DIGITS.findall(str(node.value))) > MAX_INT_DIGITS:
                line = node.start_mark.line + 1 if node.start_mark is not None else '?'
                raise error(f'{name}: integer literal at line {line} has more than '
                            f'{MAX_INT_DIGITS} digits')
        elif isinstance(node, yaml.SequenceNode):
            for child in node.value:
                total += size(child)
                if total > MAX_YAML_NODES:
                    break
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += size(k) + size(v)
                if total > MAX_YAML_NODES:
                    break
        if total > MAX_YAML_NODES:
            raise error(f'{name}: YAML expands to more than {MAX_YAML_NODES:,} nodes '
                        '(anchors/aliases repeating large subtrees?)')
        sizes[key] = total
        return total

    size(root)


def load_yaml_text(text: str, name: str, error: type[RcSimError] = ConfigError) -> Any:
    """Parse YAML text within the documented bounds; failures raise ``error('<name>: ...')``.

    An empty document gives ``None``. Only one document is allowed.
    """
    if len(text) > MAX_YAML_BYTES:
        raise error(f'{name}: YAML larger than {MAX_YAML_BYTES // (1024 * 1024)} MiB')
    try:
        _check_depth(text, name, error)
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_nodes(node, name, error)
            try:
                return loader.construct_document(node)
            except (ValueError, TypeError, IndexError, KeyError, AttributeError,
                    OverflowError) as exc:
                # PyYAML's scalar constructors fail on some tagged values (e.g. an empty
                # '!!int' raises IndexError, '!!bool maybe' KeyError): a user error, one line.
                raise error(f'{name}: malformed YAML: cannot read a tagged value '
                            f'({type(exc).__name__})') from None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f' at line {mark.line + 1}' if mark is not None else ''
        problem = getattr(exc, 'problem', None) or 'invalid YAML'
        raise error(f'{name}: malformed YAML{where}: {problem}') from None
    except RecursionError:  # defensive: depth is bounded above, this is the last line of defence
        raise error(f'{name}: YAML nested too deeply') from None


def read_yaml(path: str | os.PathLike[str], error: type[RcSimError] = ConfigError,
              label: str = '') -> Any:
    """Parse a YAML file; every failure raises ``error('<label><path>: <problem>')`` on one line.

    An empty file gives ``None``. ``label`` (e.g. ``'fit config '``) prefixes the path. The
    bounds of :func:`load_yaml_text` apply; the size is checked before the file is read.
    """
    p = Path(path)
    name = f'{label}{p}'
    try:
        if p.is_file() and p.stat().st_size > MAX_YAML_BYTES:
            raise error(f'{name}: YAML larger than {MAX_YAML_BYTES // (1024 * 1024)} MiB')
        text = p.read_text(encoding='utf-8')
    except FileNotFoundError:
        raise error(f'{name}: file not found') from None
    except IsADirectoryError:
        raise error(f'{name}: is a directory, not a YAML file') from None
    except UnicodeDecodeError:
        raise error(f'{name}: cannot read (not UTF-8 text)') from None
    except OSError as exc:
        raise error(f'{name}: cannot read ({exc.strerror})') from None
    return load_yaml_text(text, name, error)
