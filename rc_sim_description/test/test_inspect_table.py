"""``rcsim inspect``'s topic table: a rate only where it means something, columns aligned for
any topic length (issue 29: 68,455 Hz for 12 messages, 4e8 Hz for stamps that are all 0, and
columns that slid for long names)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rc_sim_description.inspect import MIN_RATE_SPAN_S, summary_lines, topic_rate


@pytest.mark.parametrize(('count', 'first', 'last', 'rate', 'why'), [
    (12, 0, 160_700, '-', 'within 0.16 ms'),           # a burst: was 68,455 Hz
    (5, 0, 0, '-', 'at one time'),                     # every stamp 0
    (2, 0, 1, '-', 'too few'),                         # was 1e9 Hz
    (1, 5, 5, '-', 'too few'),
    (0, None, None, '-', 'no messages'),
    (801, 0, 8_000_000_000, '100 Hz', ''),
    (41, 0, 4_000_000_000, '10 Hz', ''),
    (3, 0, 4_000_000_000, '0.5 Hz', ''),
    (10_001, 0, 10_000_000_000, '1,000 Hz', ''),
])
def test_a_rate_only_where_it_means_something(count: int, first: int | None, last: int | None,
                                              rate: str, why: str) -> None:
    text, note = topic_rate(count, first, last)
    assert text == rate and why in note
    assert 'e+' not in text and 'nan' not in text


def test_the_span_limit_is_the_documented_one() -> None:
    span_ns = int(MIN_RATE_SPAN_S * 1e9)
    assert topic_rate(11, 0, span_ns)[0] == '200 Hz'
    assert topic_rate(11, 0, span_ns - 1)[0] == '-'


def _bag(topics: dict[str, tuple[str, int, int | None, int | None, int]]) -> SimpleNamespace:
    infos = {name: SimpleNamespace(msgtype=t, count=c, first_ns=f, last_ns=la,
                                   connections=(None,) * k)
             for name, (t, c, f, la, k) in topics.items()}
    return SimpleNamespace(path='b', storage='sqlite3', storage_version='4', metadata_version=8,
                           ros_distro='', files=['b.db3'], start_ns=0, duration=10.0,
                           message_count=sum(i.count for i in infos.values()), topics=infos)


def test_columns_line_up_for_any_topic_length() -> None:
    bag = _bag({
        '/a': ('std_msgs/msg/Float64', 3, 0, 2_000_000_000, 1),
        '/vehicle/sensors/front/lidar/points_filtered_and_downsampled_for_the_planner':
            ('sensor_msgs/msg/PointCloud2', 1_234_567, 0, 10_000_000_000, 3),
        '/b': ('x/msg/Y', 12, 0, 160_000, 1),
    })
    table = [line for line in summary_lines(bag) if line.startswith('  ')]
    assert len(table) == 4
    header = table[0]
    # every row's type, count and rate columns start where the header's do
    type_at = header.index('type')
    count_end = header.index('count') + len('count')
    rate_end = header.index('rate') + len('rate')
    for row in table[1:]:
        assert row[type_at - 2:type_at] == '  ' and row[type_at] != ' '
        assert row[count_end - 1].isdigit() and row[count_end] == ' '
        assert row[rate_end - 1] in 'z-'  # "Hz" or "-", right-aligned under "rate"
    assert '1,234,567' in table[2] and '3 connections' in table[2]
    assert 'within 0.16 ms' in table[3]
