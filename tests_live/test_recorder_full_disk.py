"""Issue 28 over ROS: the ``bag_recorder`` node on a full disk (a 1 MB tmpfs the test mounts).

The class "OS errors are user errors" had no live test: the node records what a publisher sends
until the file system fills, then logs one error line naming the bag and ENOSPC, records nothing
more, and at Ctrl-C drops the partial bag (exit status 1; the file system is empty again). Before
issue 28 the storage's own exception (sqlite3 ``database or disk is full``, an mcap OSError) was
not an rc-sim error: the node's handler for a failing storage never ran.
"""

from __future__ import annotations

import time

import pytest
from std_msgs.msg import String

from rc_sim_description.testing import small_tmpfs


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_a_full_disk_is_one_line_and_leaves_nothing(ros, storage):
    with small_tmpfs(ros.folder / 'small', 'size=1m') as point:
        out = point / 'bag'
        pub = ros.probe.publisher(String, '/big', 100)
        rec = ros.start(['ros2', 'run', 'rc_sim_description', 'bag_recorder', '--ros-args',
                         '-p', 'topics:=[/big]', '-p', f'output:={out}', '-p',
                         f'storage:={storage}'], 'bag_recorder')
        rec.wait_output('recording /big (', timeout=120)
        ros.probe.wait_matched(pub, timeout=60)
        payload = 'x' * 20_000
        for k in range(400):  # 8 MB: 8 times what the file system holds
            pub.publish(String(data=f'{k} {payload}'))
            if 'ENOSPC' in rec.output():
                break
            time.sleep(0.01)
        status = rec.interrupt(timeout=60)
        log = rec.output()
        assert 'Traceback' not in log, log[-3000:]
        lines = [line for line in log.splitlines() if 'ENOSPC' in line]
        assert len(lines) == 1, log[-3000:]
        assert f'{out}: cannot write: no space left on the device (ENOSPC)' in lines[0]
        assert status == 1, log[-3000:]
        assert list(point.iterdir()) == []  # the partial bag and its temporary are gone
