#!/usr/bin/env bash
# Source ROS 2 Jazzy and the rc-sim workspace, then run the command (default: a headless launch).
set -e
source /opt/ros/jazzy/setup.bash
source /ws/install/setup.bash
exec "$@"
