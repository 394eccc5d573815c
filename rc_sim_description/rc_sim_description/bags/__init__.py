"""The bag layer of rc-sim: read and write ROS bags without ROS.

Read (:func:`open_bag` -> :class:`Bag`): rosbag2 directories (metadata v4-v9; sqlite3 old and
new schema; mcap; split bags), single ``.db3``/``.mcap`` files without ``metadata.yaml`` and ROS 1
``.bag`` files (format 2.0; uncompressed, bz2 and lz4 chunks, read by walking the chunks).
Write (:class:`BagWriter`): rosbag2 version 8 (Humble and later read it), sqlite3 or mcap,
atomic. One error type, :class:`BagError`; corrupt data is an error unless
``skip_corrupt=True`` makes it a :class:`BagWarning`.
"""

from rc_sim_description.bags.errors import BagError, BagWarning
from rc_sim_description.bags.reader import (
    Bag,
    Connection,
    TopicInfo,
    TopicMessages,
    open_bag,
    read_topic,
    require_topics,
)
from rc_sim_description.bags.typestore import base_typestore, normalise_type

__all__ = ['Bag', 'BagError', 'BagWarning', 'Connection', 'TopicInfo', 'TopicMessages',
           'base_typestore', 'normalise_type', 'open_bag', 'read_topic', 'require_topics']
