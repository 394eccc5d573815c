"""The simulation loop: settings and records, cars in the compiled loop, collisions and their
response, sensors and their sampling, commands, recorded streams and recorders, documented
limits, wall-clock pacing, the :class:`Simulator`, start grids of several cars and the kernel
warm-up.

A new sensor goes in ``sensors.py`` (model) and ``sensor_sampling.py`` (loop arrays).
May import: ``compiled``, ``vehicle``, ``world``.
"""

from rc_sim_description.lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    'car_grid': ('check_starts', 'lined_up', 'load_car_params', 'parse_car_options'),
    'collision_response': ('CollisionRig',),
    'command_plan': ('CommandLog', 'CommandPlan', 'Mappers', 'build_plan', 'plan_bytes',
        'sequence_source'),
    'loop_buffers': ('SNAP_CAPACITY', 'LoopBuffers'),
    'loop_cars': ('KIND_CAR', 'car_pass', 'closest_gap', 'push_out', 'respond_car',
        'world_velocities'),
    'loop_kernel': ('DONE', 'FULL', 'NEED_COMMAND', 'NON_FINITE', 'cast_scans', 'run_stretch'),
    'pacing': ('Pacer',),
    'recorder': ('DECIMATE_SAMPLES', 'DECIMATE_SCANS', 'ChunkConverter', 'MemoryRecorder',
        'StreamSink', 'StreamingRecorder', 'ThreadedSink', 'streaming_bytes'),
    'run_limits': ('bag_bytes_per_second', 'check_bag', 'check_cars', 'check_run',
        'check_start', 'check_world', 'recording_bytes'),
    'run_setup': ('WORLD_ORDER', 'LoadedWorld', 'PreparedRun', 'RunSpec', 'choose_start_pose',
        'command_sequence', 'lidar_error_config', 'load_any_world', 'played_part',
        'prepare_run', 'scenario_path', 'sequence_from_bag', 'shipped_scenarios'),
    'sensor_sampling': ('LidarRig', 'live_snapshot'),
    'sensors': ('JOINT_NAMES', 'Lidar', 'footprint_segments', 'imu_specific_force',
        'lidar_pose'),
    'series': ('Series', 'concat_series'),
    'sim_config': ('SETTLE_TIME', 'CollisionEvent', 'CommandSource', 'Observation',
        'SimConfig', 'period_steps'),
    'simulator': ('Simulator',),
    'streams': ('STREAM_FIELDS', 'Decimator', 'NonFiniteError', 'RunStats', 'SimResult',
        'StreamDeriver', 'check_finite'),
    'warmup': ('COMMANDS', 'KERNEL_SETS', 'MESSAGE', 'RACE_MESSAGE', 'KernelSet',
        'compile_kernels', 'compile_message', 'compiled_sets', 'ensure_compiled',
        'kernels_compiled', 'last_compile_s', 'main', 'plan_waves', 'racing_compile_notice',
        'run_jobs', 'sets_for'),
    'warmup_jobs': ('JOBS',),
})
