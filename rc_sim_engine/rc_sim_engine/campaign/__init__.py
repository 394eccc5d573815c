"""Test campaigns: one YAML spec, many seeded runs, one results table (``rcsim campaign run``).

A spec (:mod:`.spec`, validated like vehicle.yaml: one-line errors naming the file and the key;
its factor values checked by :mod:`.factors`) says what varies (worlds, scenarios or trajectories,
start poses, vehicle overrides, lidar error presets, seeds; grids, zipped lists and seeded random
draws), what drives the car (a scenario, a built-in tracker or a user's ``module:callable``
controller), what is measured and what is kept.
:mod:`.expand` turns it into runs with stable ids (a hash of each run's resolved factors),
:mod:`.execute` runs one (every random generator seeded from the run), :mod:`.results` keeps the
resumable CSV table, :mod:`.runner` runs them on local worker processes or a Dask cluster, and
:mod:`.page` writes ``index.html``. ROS-free, but for :mod:`.ros_run` (driver ``ros_launch``: a
user's ROS 2 stack against ``sim_node``, its rclpy side in ``nodes/campaign_ros.py``);
docs/campaigns.md.
"""

from __future__ import annotations

from rc_sim_engine.campaign.expand import Run, expand
from rc_sim_engine.campaign.spec import CampaignSpec, load_spec

__all__ = ['CampaignSpec', 'Run', 'expand', 'load_spec']
