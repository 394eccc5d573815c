"""Smoke: sim_node starts as ros2 run starts it, publishes ground truth, ends on Ctrl-C."""

from nav_msgs.msg import Odometry


def test_sim_node_publishes_odom_and_ends_on_ctrl_c(ros):
    node = ros.run('rc_sim_engine', 'sim_node', {'use_cmd_vel': True})
    odom = ros.probe.subscribe(Odometry, '/odom')
    msgs = odom.wait(5, timeout=30)
    assert msgs[-1].child_frame_id == 'base_link'
    assert node.interrupt() == 0, node.output()
