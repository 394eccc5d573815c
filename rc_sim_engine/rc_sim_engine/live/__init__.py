"""The ROS-free core of ``sim_node``: parameter schema and checks, the simulator set-up, the
messages of a step and the input guard of the command topics.

May import: every room below it (up to ``output``); never rclpy (that is ``nodes``).
"""

from rc_sim_description.lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    'core': ('COMMAND_TOPICS', 'NODE_PARAMETERS', 'LiveOutput', 'LivePacer', 'LockstepGate',
        'build_simulator', 'car_vector', 'collision_line', 'lockstep_waits_for',
        'node_parameter_problem', 'output_topics'),
    'inputs': ('RAW_TYPES', 'CommandInputs', 'RawCommands', 'RawInputs', 'RawTopic',
        'Throttle', 'raw_commands', 'raw_value'),
})
