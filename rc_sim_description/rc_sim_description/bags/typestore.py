"""Message types: the rosbags typestores of ROS 2 Humble / ROS 1 Noetic plus the types a bag
defines itself (mcap schemas, new-schema sqlite3 ``message_definitions``, ROS 1 connection
headers), so custom message types decode.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
import re
from typing import Any

from rc_sim_description.bags.errors import BagError, one_line

__all__ = ['ACKERMANN_TYPES', 'bag_typestore', 'base_typestore', 'decode_errors',
           'definition_errors', 'fallback_typestores', 'normalise_type', 'ros2_store_for_ros1',
           'types_from_definition', 'writer_definition']

#: ackermann_msgs is not built into rosbags' stores (REP 147 message set, ROS 1 and ROS 2).
ACKERMANN_TYPES: dict[str, str] = {
    'ackermann_msgs/msg/AckermannDrive': (
        'float32 steering_angle\nfloat32 steering_angle_velocity\nfloat32 speed\n'
        'float32 acceleration\nfloat32 jerk\n'),
    'ackermann_msgs/msg/AckermannDriveStamped': 'std_msgs/Header header\nAckermannDrive drive\n',
}
_IDL_SEPARATOR = '=' * 80 + '\n'


def normalise_type(msgtype: str) -> str:
    """ROS 1 ``pkg/Type`` -> ``pkg/msg/Type`` (ROS 2 names are returned unchanged)."""
    parts = msgtype.strip().split('/')
    return f'{parts[0]}/msg/{parts[1]}' if len(parts) == 2 else msgtype.strip()


def _srv_names(tree: Any) -> Any:
    """rosbags' msg parser names ``pkg/srv/T`` as ``pkg/srv/msg/T``: undo it in a parse tree."""
    if isinstance(tree, str):
        return tree.replace('/srv/msg/', '/srv/')
    if isinstance(tree, (tuple, list)):
        return type(tree)(_srv_names(x) for x in tree)
    if isinstance(tree, dict):
        return {_srv_names(k): _srv_names(v) for k, v in tree.items()}
    return tree


def _service_types(msgtype: str, main: str, deps: str) -> dict[str, Any]:
    """``pkg/srv/T`` (request ``---`` response) -> T_Request, T_Response and T_Event types
    (the service-event topics that rosbag2 records since Iron, REP 2016 introspection)."""
    from rosbags.typesys import get_types_from_msg

    request, response = re.split(r'^---[ \t]*$', main, maxsplit=1, flags=re.M)
    types: dict[str, Any] = {}
    for part, text in (('Request', request), ('Response', response)):
        types.update(get_types_from_msg(text + deps, f'{msgtype}_{part}'))
    event = (f'service_msgs/ServiceEventInfo info\n{msgtype}_Request[<=1] request\n'
             f'{msgtype}_Response[<=1] response\n')
    types.update(get_types_from_msg(event, f'{msgtype}_Event'))
    return dict(_srv_names(types))


def types_from_definition(msgtype: str, text: str, encoding: str) -> dict[str, Any]:
    """rosbags parse trees of a message definition (``ros2msg``/``ros1msg``/``ros2idl``);
    a service definition (``pkg/srv/T``) gives its request, response and event types."""
    from rosbags.typesys import get_types_from_idl, get_types_from_msg

    if encoding == 'ros2idl':
        types: dict[str, Any] = {}
        if text.startswith(f'{_IDL_SEPARATOR}IDL: '):
            for part in text.split(_IDL_SEPARATOR)[1:]:
                _, _, idl = part.partition('\n')
                types.update(get_types_from_idl(idl))
        else:
            types.update(get_types_from_idl(text))
        return types
    main, sep, rest = text.partition('\n' + _IDL_SEPARATOR)
    if '/srv/' in msgtype and re.search(r'^---[ \t]*$', main, flags=re.M):
        return _service_types(msgtype, main, '\n' + sep + rest if sep else '')
    return dict(get_types_from_msg(text, msgtype))


@lru_cache(maxsize=4)
def _store_fielddefs(name: str) -> dict[str, Any]:
    """Field definitions of a rosbags store plus ackermann_msgs."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    types: dict[str, Any] = dict(get_typestore(Stores[name]).fielddefs)
    for msgtype, text in ACKERMANN_TYPES.items():
        types.update(get_types_from_msg(text, msgtype))
    return types


def _base_fielddefs(ros1: bool) -> dict[str, Any]:
    """ROS 1: Noetic. ROS 2: Humble, plus the Jazzy types Humble lacks (service events)."""
    if ros1:
        return _store_fielddefs('ROS1_NOETIC')
    return {**_store_fielddefs('ROS2_JAZZY'), **_store_fielddefs('ROS2_HUMBLE')}


@lru_cache(maxsize=4)
def _store(name: str) -> Any:
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.EMPTY)
    store.register(_store_fielddefs(name) if name != 'READ2' else _base_fielddefs(False))
    return store


def fallback_typestores(ros1: bool) -> tuple[Any, ...]:
    """Stores tried when a bag's own definition does not decode its messages (some writers
    store a wrong or truncated definition): the distribution's definitions."""
    if ros1:
        return (_store('ROS1_NOETIC'),)
    return (_store('READ2'), _store('ROS2_JAZZY'))


@lru_cache(maxsize=1)
def base_typestore() -> Any:
    """ROS 2 Humble types + ackermann_msgs: the store the bag writer serialises with."""
    return _store('ROS2_HUMBLE')


@lru_cache(maxsize=1)
def _humble_store() -> Any:
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_HUMBLE)


@lru_cache(maxsize=64)
def decode_errors() -> tuple[type[BaseException], ...]:
    """What rosbags' ``deserialize_cdr`` / ``deserialize_ros1`` raise on bytes that do not decode
    (``SerdeError``, which wraps ``struct.error``, ``UnicodeDecodeError`` and ``ValueError``), on a
    definition it cannot compile (``TypesysError``) and on a type that names a missing one
    (``KeyError``)."""
    from rosbags.serde import SerdeError
    from rosbags.typesys import TypesysError

    return (SerdeError, TypesysError, KeyError)


def definition_errors() -> tuple[type[BaseException], ...]:
    """What rosbags' ``generate_msgdef`` / ``hash_rihs01`` raise for an unknown or broken type."""
    from rosbags.typesys import TypesysError

    return (TypesysError, KeyError)


def writer_definition(msgtype: str) -> tuple[Any, str]:
    """(message definition, RIHS01 hash) of a type the base store knows, for a bag's topic list.

    Types of ROS 2 Humble come from rosbags' Humble store as is (a few times cheaper to load than
    the base store, same definitions); others (ackermann_msgs) from :func:`base_typestore`.
    """
    store = _humble_store()
    if msgtype not in store.fielddefs:
        store = base_typestore()
    msgdef, _ = store.generate_msgdef(msgtype, ros_version=2)
    return msgdef, store.hash_rihs01(msgtype)


def bag_typestore(definitions: Iterable[tuple[str, str, str]], *, ros1: bool,
                  source: str) -> Any:
    """A typestore for one bag: the base types, overridden by the bag's own definitions.

    ``definitions`` are ``(msgtype, text, encoding)``; an unparsable definition is skipped with
    its type left to the base store (its messages then fail to decode, naming the topic).
    """
    from rosbags.typesys import Stores, TypesysError, get_typestore

    defs = [(normalise_type(t), text, enc) for t, text, enc in definitions]
    if not defs:
        return fallback_typestores(ros1)[0]
    types = dict(_base_fielddefs(ros1))
    for msgtype, text, encoding in defs:
        try:
            types.update(types_from_definition(msgtype, text, encoding))
        except (TypesysError, ValueError, KeyError, IndexError):  # unparsable: base type stays
            continue
    store = get_typestore(Stores.EMPTY)
    try:
        store.register(types)
    except TypesysError as exc:  # a type defined twice, differently
        raise BagError(f'{source}: cannot register the message types it defines '
                       f'({one_line(exc)})') from None
    return store


def ros2_store_for_ros1(definitions: Iterable[tuple[str, str, str]]) -> Any:
    """A ROS 2 typestore for converting a ROS 1 bag: the base ROS 2 types, plus the bag's own
    types that ROS 2 lacks (their ``Header`` and ``time`` fields take the ROS 2 layout)."""
    from rosbags.typesys import Stores, TypesysError, get_typestore

    base = _base_fielddefs(False)
    types = dict(base)
    for msgtype, text, encoding in definitions:
        try:
            parsed = types_from_definition(normalise_type(msgtype), text, encoding)
        except (TypesysError, ValueError, KeyError, IndexError):
            continue
        types.update({k: v for k, v in parsed.items() if k not in base})
    store = get_typestore(Stores.EMPTY)
    store.register(types)
    return store
