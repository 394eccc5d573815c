"""Generated damaged bags: truncated / corrupted mcap, dangling topic ids, lying metadata,
undecodable CDR. Strict by default (one-line BagError naming file/topic and count);
skip_corrupt=True reads the intact part with a BagWarning giving the count."""

from __future__ import annotations

from pathlib import Path
import sqlite3

import pytest

from rc_sim_description.bags import BagError, BagWarning, open_bag
from rc_sim_description.bags.typestore import base_typestore
from rc_sim_description.bags.writer import BagWriter

N = 200


def _bag(path: Path, storage: str = 'sqlite3', pad: int = 200) -> Path:
    types = base_typestore().types
    with BagWriter(path, storage=storage) as bag:
        for k in range(N):
            bag.write('/value', 'std_msgs/msg/Float64', 1_000_000 * k,
                      types['std_msgs/msg/Float64'](data=float(k)))
            bag.write('/name', 'std_msgs/msg/String', 1_000_000 * k + 1,
                      types['std_msgs/msg/String'](data=f'message {k} ' + 'x' * pad))
    return path


def test_intact_bag_reads_every_message(tmp_path):
    for storage in ('sqlite3', 'mcap'):
        with open_bag(_bag(tmp_path / storage, storage)) as bag:
            got = bag.read('/value')
            assert len(got) == N and got.messages[-1].data == N - 1


def test_truncated_mcap(tmp_path):
    bag = _bag(tmp_path / 'm', 'mcap', pad=20_000)  # several chunks
    f = next(bag.glob('*.mcap'))
    data = f.read_bytes()
    f.write_bytes(data[:len(data) // 2])
    with pytest.raises(BagError, match=r'damaged mcap data .*--skip-corrupt') as info:
        open_bag(f).__enter__()
    assert '\n' not in str(info.value)
    with pytest.warns(BagWarning, match=r'messages before it are read'), \
            open_bag(f, skip_corrupt=True) as b:
        n = len(b.read('/value'))
    assert 0 < n < N


def test_mcap_corrupted_in_the_middle(tmp_path):
    bag = _bag(tmp_path / 'm', 'mcap', pad=20_000)
    f = next(bag.glob('*.mcap'))
    data = bytearray(f.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 64] = b'\xff' * 64
    f.write_bytes(bytes(data))
    with pytest.raises(BagError, match=r'damaged mcap data|do not decode') as info, \
            open_bag(bag) as b:
        for topic in b.topics:
            b.read(topic)
    assert '\n' not in str(info.value)


def test_dangling_topic_id_in_db3(tmp_path):
    bag = _bag(tmp_path / 'd')
    db = sqlite3.connect(next(bag.glob('*.db3')))
    db.execute('UPDATE messages SET topic_id = 99 WHERE id % 10 = 0')
    db.commit()
    db.close()
    with pytest.raises(BagError, match=r'40 messages point to a missing topic/connection id '
                       r'\(99\)'):
        open_bag(bag).__enter__()
    with pytest.warns(BagWarning, match='40 messages point'), \
            pytest.warns(BagWarning, match='metadata.yaml says'), \
            open_bag(bag, skip_corrupt=True) as b:
        assert b.message_count == 2 * N - 40


def test_lying_metadata(tmp_path):
    bag = _bag(tmp_path / 'l')
    meta = bag / 'metadata.yaml'
    meta.write_text(meta.read_text().replace(f'message_count: {N}', f'message_count: {N + 7}',
                                             1))
    with pytest.raises(BagError, match=r'metadata.yaml says /\w+ has 207 messages, the storage '
                       r'holds 200'):
        open_bag(bag).__enter__()


def test_undecodable_cdr_names_topic_and_count(tmp_path):
    bag = _bag(tmp_path / 'u')
    db = sqlite3.connect(next(bag.glob('*.db3')))
    (tid,) = db.execute("SELECT id FROM topics WHERE name = '/name'").fetchone()
    db.execute("UPDATE messages SET data = x'00010000ffffff7f' WHERE topic_id = ? AND "
               'timestamp < 3000001', (tid,))
    db.commit()
    db.close()
    with open_bag(bag) as b:
        assert len(b.read('/value')) == N  # the other topic is intact
        with pytest.raises(BagError, match=r'/name: 3 of 200 messages do not decode as '
                           r'std_msgs/msg/String') as info:
            b.read('/name')
    assert '\n' not in str(info.value)
    with pytest.warns(BagWarning, match='3 of 200'), open_bag(bag, skip_corrupt=True) as b:
        assert len(b.read('/name')) == N - 3


def test_single_files_without_metadata(tmp_path):
    for storage, ext in (('sqlite3', 'db3'), ('mcap', 'mcap')):
        bag = _bag(tmp_path / storage, storage)
        (bag / 'metadata.yaml').unlink()
        f = next(bag.glob(f'*.{ext}'))
        with open_bag(f) as b:
            assert b.metadata_version is None and b.topics['/value'].count == N
        with pytest.raises(BagError, match='not a rosbag2 directory'):
            open_bag(bag).__enter__()
