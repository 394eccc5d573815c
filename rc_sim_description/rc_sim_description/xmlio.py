"""Parsing SDF/URDF/XML text with bounds and one-line errors.

rc-sim's XML (SDF worlds, URDF) never needs a document type declaration, so any ``<!DOCTYPE`` or
``<!ENTITY`` is refused before parsing: no entity can expand (no "billion laughs", no external
entity). The text size, the element count and the nesting depth are bounded
(:mod:`rc_sim_description.limits`) while the parser streams, before the recursive readers that walk
nested SDF models could overflow the stack.
"""

from __future__ import annotations

import os
from pathlib import Path
import re
from typing import Any, cast
import xml.etree.ElementTree as ET

from rc_sim_description.errors import ConfigError, RcSimError
from rc_sim_description.limits import MAX_XML_BYTES, MAX_XML_DEPTH, MAX_XML_ELEMENTS

__all__ = ['parse_xml', 'read_xml_file']

_DECLARATION = re.compile(r'<!\s*(DOCTYPE|ENTITY)', re.IGNORECASE)


def parse_xml(text: str, source: str, kind: str = 'XML',
              error: type[RcSimError] = ConfigError) -> ET.Element:
    """The root element of ``text``; failures raise ``error('<source>: ...')`` on one line.

    ``kind`` names the format in messages (``'SDF'``, ``'URDF'``).
    """
    if len(text) > MAX_XML_BYTES:
        raise error(f'{source}: {kind} larger than {MAX_XML_BYTES // (1024 * 1024)} MiB')
    match = _DECLARATION.search(text)
    if match is not None:
        line = text.count('\n', 0, match.start()) + 1
        raise error(f'{source}: {kind} with a <!{match.group(1).upper()}> declaration at line '
                    f'{line} (document type and entity declarations are not allowed)')
    parser: ET.XMLPullParser[Any] = ET.XMLPullParser(events=('start', 'end'))
    depth = elements = 0
    root: ET.Element | None = None
    try:
        chunk = 1 << 16
        for i in range(0, max(len(text), 1), chunk):
            parser.feed(text[i:i + chunk])
            for pair in parser.read_events():
                event, item = cast(tuple[str, Any], pair)
                if event == 'start':
                    elem = cast(ET.Element, item)
                    depth += 1
                    elements += 1
                    if root is None:
                        root = elem
                    if depth > MAX_XML_DEPTH:
                        raise error(f'{source}: {kind} nested deeper than {MAX_XML_DEPTH} '
                                    'elements')
                    if elements > MAX_XML_ELEMENTS:
                        raise error(f'{source}: {kind} has more than {MAX_XML_ELEMENTS:,} '
                                    'elements')
                else:
                    depth -= 1
        parser.close()
    except ET.ParseError as exc:
        raise error(f'{source}: malformed {kind} ({exc})') from None
    if root is None:
        raise error(f'{source}: empty {kind} document')
    return root


def read_xml_file(path: str | os.PathLike[str], kind: str = 'XML',
                  error: type[RcSimError] = ConfigError) -> ET.Element:
    """:func:`parse_xml` of a file; a missing/unreadable/oversized file is a one-line error."""
    p = Path(path)
    try:
        if p.is_file() and p.stat().st_size > MAX_XML_BYTES:
            raise error(f'{p}: {kind} larger than {MAX_XML_BYTES // (1024 * 1024)} MiB')
        text = p.read_text(encoding='utf-8')
    except FileNotFoundError:
        raise error(f'{p}: {kind} file not found') from None
    except IsADirectoryError:
        raise error(f'{p}: is a directory, not an {kind} file') from None
    except UnicodeDecodeError:
        raise error(f'{p}: cannot read {kind} file (not UTF-8 text)') from None
    except OSError as exc:
        raise error(f'{p}: cannot read {kind} file ({exc.strerror})') from None
    return parse_xml(text, str(p), kind, error)
