"""What a run leaves for people and tools: bags, PNG plots (drawn in a second process), the
animation, the ``index.html`` pages and the figures and bags of tracking runs.

May import: every room below it (``compiled`` ... ``racing``, ``scenarios``).
"""

from rc_sim_description.lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    'animation': ('MAX_FPS', 'MAX_FRAMES', 'frame_times', 'write_animation'),
    'bags': ('SimBagStream', 'clock_msg', 'float64_msg', 'imu_msg', 'joint_state_msg',
        'laser_scan_msg', 'odometry_msg', 'path_msg', 'sim_batches', 'stamp', 'tf_msg',
        'twist_msg', 'typestore', 'write_sim_result'),
    'index_page': ('PLOT_CAPTIONS', 'describe', 'flatten', 'label_of', 'metrics_table',
        'write_index'),
    'plot_worker': ('PlotWorker', 'plot_payload'),
    'plots': ('MAX_POINTS', 'draw_world', 'plot_signals', 'plot_trajectory', 'save_run_plots',
        'steady_speed'),
    'tracking_bag': ('load_evaluation', 'path_message', 'write_run_bag'),
    'tracking_plots': ('plot_parking', 'plot_stop', 'plot_tracking'),
})
