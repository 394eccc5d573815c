"""Batches written many messages per storage call read back like messages written one by one:
with the bag layer (rosbags), with the ``mcap`` package (indexes, summary, time order) and with
sqlite3 itself; counts and durations in metadata.yaml; equal stamps keep the batch order."""

from __future__ import annotations

from pathlib import Path
import sqlite3

import numpy as np
import pytest
import yaml

from rc_sim_description.bags import cdr_bulk, open_bag, read_topic
from rc_sim_description.bags.cdr_bulk import RawBatch
from rc_sim_description.bags.writer import BagWriter

RNG = np.random.default_rng(7)


def batches(seconds: float) -> list[RawBatch]:
    clock = np.arange(0, int(seconds * 100)) * 10_000_000
    scan_t = np.arange(0, int(seconds * 40)) * 25_000_000
    ranges = RNG.uniform(0, 30, size=(len(scan_t), 1081)).astype(np.float32)
    odom_t = clock[::2]
    z = np.zeros((len(odom_t), 3))
    return [
        RawBatch('/clock', 'rosgraph_msgs/msg/Clock', clock, cdr_bulk.clock(clock), 0),
        RawBatch('/scan', 'sensor_msgs/msg/LaserScan', scan_t + 3_000_000,
                 cdr_bulk.laser_scan(scan_t, 'laser', -2.3, 2.3, 0.004, 0.0, 0.025, 0.02, 30.0,
                                     ranges), 9),
        RawBatch('/odom', 'nav_msgs/msg/Odometry', odom_t,
                 cdr_bulk.odometry(odom_t, 'odom', 'base_link', z, [0.0, 0.0, 0.0, 1.0], z, z),
                 4),
        RawBatch('/empty', 'std_msgs/msg/Float64', np.zeros(0, dtype=np.int64),
                 cdr_bulk.float64(np.zeros(0)), 2),
    ]


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_batches_read_back_in_time_order(tmp_path: Path, storage: str) -> None:
    out = tmp_path / 'bag'
    first = batches(20.0)  # > 4 MiB of scans: several MCAP chunks
    later = [RawBatch(b.topic, b.msgtype, b.t_ns + 20_000_000_000, b.rows, b.order)
             for b in batches(5.0)]
    with BagWriter(out, storage=storage) as bag:
        bag.write('/note', 'std_msgs/msg/String', 5, _string('written one by one'))
        bag.write_batches(first)
        bag.write_raw('/clock', 20_000_000_000 - 1, cdr_bulk.clock([7])[0].tobytes())
        bag.write_batches(later)
        counts = dict(bag.counts)
    expected = {b.topic: len(b) for b in first}
    for b in later:
        expected[b.topic] += len(b)
    expected['/clock'] += 1
    expected['/note'] = 1
    assert counts == expected
    meta = yaml.safe_load((out / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    listed = {t['topic_metadata']['name']: t['message_count']
              for t in meta['topics_with_message_count']}
    assert listed == expected
    assert meta['message_count'] == sum(expected.values())
    assert meta['starting_time']['nanoseconds_since_epoch'] == 0
    with open_bag(out) as reader:
        t_scan, scans = read_topic(reader, '/scan')
        np.testing.assert_array_equal(t_scan, np.concatenate([first[1].t_ns, later[1].t_ns]))
        assert scans[3].header.stamp.nanosec == 75_000_000  # the header stamp, not the log time
        assert len(scans[0].ranges) == 1081
        t_clock, clocks = read_topic(reader, '/clock')
        assert np.all(np.diff(t_clock) >= 0) and len(clocks) == expected['/clock']
        order = [(c.topic, t) for c, t, _ in reader.messages()]
    stamps = [t for _, t in order]
    if storage == 'sqlite3':  # the sqlite3 reader returns messages in time order
        assert stamps == sorted(stamps)
        assert order[:4] == [('/clock', 0), ('/odom', 0), ('/note', 5), ('/scan', 3_000_000)]


def test_mcap_file_is_valid_for_the_mcap_package(tmp_path: Path) -> None:
    from mcap.reader import make_reader

    out = tmp_path / 'bag'
    with BagWriter(out, storage='mcap') as bag:
        bag.write_batches(batches(30.0))
    with (out / 'bag.mcap').open('rb') as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        assert summary.statistics.message_count == 3000 + 1200 + 1500
        assert len(summary.chunk_indexes) >= 2
        last, in_order = -1, True
        for _, _channel, message in reader.iter_messages(log_time_order=False):
            in_order &= message.log_time >= last  # file order: the writer merged the batches
            last = message.log_time
        assert in_order
        by_topic: dict[str, int] = {}
        for _, channel, _ in reader.iter_messages(log_time_order=True):
            by_topic[channel.topic] = by_topic.get(channel.topic, 0) + 1
        assert by_topic == {'/clock': 3000, '/scan': 1200, '/odom': 1500}


def test_sqlite_rows_and_index(tmp_path: Path) -> None:
    out = tmp_path / 'bag'
    with BagWriter(out) as bag:
        bag.write_batches(batches(2.0))
    db = sqlite3.connect(out / 'bag.db3')
    rows = db.execute('SELECT t.name, m.timestamp, length(m.data), typeof(m.data) FROM messages m '
                      'JOIN topics t ON t.id = m.topic_id ORDER BY m.timestamp, m.id').fetchall()
    assert rows[0] == ('/clock', 0, 12, 'blob')
    assert ('/scan', 3_000_000, 4384, 'blob') in rows
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")]
    assert 'timestamp_idx' in names


def _string(text: str) -> object:
    from rc_sim_description.bags.typestore import base_typestore

    return base_typestore().types['std_msgs/msg/String'](data=text)
