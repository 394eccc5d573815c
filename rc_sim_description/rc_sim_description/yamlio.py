"""Reading user YAML with bounds and one-line errors, and did-you-mean hints for unknown keys.

Every YAML file the suite reads goes through :func:`read_yaml` / :func:`load_yaml_text`: a size
limit, a nesting-depth limit checked on the event stream (before PyYAML's recursive composer can
overflow the stack), an expanded-node limit that counts every alias as the subtree it repeats
(a "billion laughs" document is refused before it is constructed), integer literals limited to
:data:`~rc_sim_description.limits.MAX_INT_DIGITS` digits, float literals that would overflow to
inf and duplicated mapping keys (YAML would keep the last silently); every such error names the
file and the key path (``p.yaml: mass_properties.mass: duplicated key (lines 2 and 3 ...)``).
Limits: :mod:`rc_sim_description.limits`. :func:`dump_yaml` writes YAML and refuses NaN and inf.
"""

from __future__ import annotations

from collections.abc import Iterable
import difflib
import math
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

__all__ = ['did_you_mean', 'dump_yaml', 'load_yaml_text', 'number_hint', 'read_yaml']

_Loader: Any = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
_INT_TAG = 'tag:yaml.org,2002:int'
_FLOAT_TAG = 'tag:yaml.org,2002:float'
_MERGE_TAG = 'tag:yaml.org,2002:merge'
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


def _path_text(path: tuple[str, ...]) -> str:
    """``a.b[2].c`` of a key path (``<document>`` for the root)."""
    text = ''
    for part in path:
        text += part if part.startswith('[') else (f'.{part}' if text else part)
    return text or '<document>'


def _line(node: yaml.Node) -> str:
    return str(node.start_mark.line + 1) if node.start_mark is not None else '?'


def _check_scalar(node: yaml.ScalarNode, where: str, error: type[RcSimError]) -> None:
    """Integers within :data:`MAX_INT_DIGITS` digits; floats that do not overflow to inf."""
    if node.tag == _INT_TAG and len(_DIGITS.findall(str(node.value))) > MAX_INT_DIGITS:
        raise error(f'{where}: integer literal at line {_line(node)} has more than '
                    f'{MAX_INT_DIGITS} digits (too large for an int64; a float holds about '
                    '1.8e+308: write it as a float such as 1.0e+20 if you mean one)')
    if node.tag == _FLOAT_TAG:
        text = str(node.value).replace('_', '').strip().lower()
        if 'inf' not in text and 'nan' not in text:
            try:
                value = float(text)
            except ValueError:
                return
            if math.isinf(value):
                raise error(f'{where}: {node.value} at line {_line(node)} is too large for a '
                            'float (at most about 1.8e+308)')


def _check_nodes(root: yaml.Node, name: str, error: type[RcSimError]) -> None:
    """Expanded node count (aliases count as the subtree they repeat), integer and float sizes
    and duplicated mapping keys; every error names the key path of the culprit."""
    sizes: dict[int, int] = {}

    def size(node: yaml.Node, path: tuple[str, ...]) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        sizes[key] = 1  # a recursive alias (a node containing itself) counts once
        total = 1
        if isinstance(node, yaml.ScalarNode):
            _check_scalar(node, f'{name}: {_path_text(path)}', error)
        elif isinstance(node, yaml.SequenceNode):
            for i, child in enumerate(node.value):
                total += size(child, (*path, f'[{i}]'))
                if total > MAX_YAML_NODES:
                    break
        elif isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, str], str] = {}
            for k, v in node.value:
                label = str(k.value) if isinstance(k, yaml.ScalarNode) else '?'
                if isinstance(k, yaml.ScalarNode) and k.tag != _MERGE_TAG:
                    ident = (str(k.tag), str(k.value))
                    if ident in seen:
                        raise error(f'{name}: {_path_text((*path, label))}: duplicated key '
                                    f'(lines {seen[ident]} and {_line(k)}; YAML keeps only the '
                                    'last, remove one)')
                    seen[ident] = _line(k)
                total += size(k, (*path, label)) + size(v, (*path, label))
                if total > MAX_YAML_NODES:
                    break
        if total > MAX_YAML_NODES:
            alias = ' through anchors/aliases' if len(sizes) < MAX_YAML_NODES else ''
            raise error(f'{name}: {_path_text(path)}: the value (line {_line(node)}) expands to '
                        f'more than {MAX_YAML_NODES:,} YAML nodes{alias} (an alias bomb?)')
        sizes[key] = total
        return total

    size(root, ())


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


def _plain(data: Any) -> Any:
    """``data`` with numpy scalars and arrays as plain Python numbers and lists, tuples as
    lists (what ``yaml.safe_dump`` writes)."""
    import numpy as np

    if isinstance(data, dict):
        return {_plain(k): _plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_plain(v) for v in data]
    if isinstance(data, np.ndarray):
        return _plain(data.tolist())
    if isinstance(data, np.generic):
        return data.item()
    if isinstance(data, Path):
        return str(data)
    return data


def dump_yaml(data: Any, where: str, *, error: type[RcSimError] = ConfigError, hint: str = '',
              **kwargs: Any) -> str:
    """YAML text of ``data`` (``yaml.safe_dump``, keys in their order unless ``sort_keys``);
    a NaN or infinite number raises ``error('<where>: <key path> is nan<hint>')`` instead of
    being written (:func:`rc_sim_description.finite.check_finite_tree`): a
    :class:`~rc_sim_description.errors.DegenerateError` for a result that degenerated (exit 3),
    a ConfigError or BagError for bad input (exit 2)."""
    from rc_sim_description.finite import check_finite_tree

    check_finite_tree(data, where, error=error, hint=hint)
    plain = _plain(data)
    _check_int_sizes(plain, where, '', error)
    kwargs.setdefault('sort_keys', False)
    return str(yaml.safe_dump(plain, **kwargs))


def _check_int_sizes(data: Any, where: str, path: str, error: type[RcSimError]) -> None:
    """Integers the reader takes back (at most :data:`MAX_INT_DIGITS` digits)."""
    if isinstance(data, int) and not isinstance(data, bool):
        if len(str(abs(data))) > MAX_INT_DIGITS:
            raise error(f'{where}: {path or "<value>"} has more than {MAX_INT_DIGITS} digits '
                        '(YAML readers of rc-sim refuse it)')
    elif isinstance(data, dict):
        for key, value in data.items():
            _check_int_sizes(value, where, f'{path}.{key}' if path else str(key), error)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            _check_int_sizes(value, where, f'{path}[{i}]', error)
