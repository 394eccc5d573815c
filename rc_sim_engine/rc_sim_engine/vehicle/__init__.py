"""The car as a dynamic system: state layout, vehicle models (right-hand sides), tyre laws,
integrators, actuators, servo and drive models, four-wheel steering, parameter packing for the
kernels, the compiled stepping loops (:class:`Car`, open-loop rollouts) and gz gains.

A new tyre law goes in ``tyres.py``, a new model in ``models.py`` (registry ``MODELS``).
May import: ``compiled``.
"""

from rc_sim_description.lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    'actuators': ('expm', 'latency_steps', 'linkage', 'rear_wheel_inertia', 'servo_substep',
        'servo_transition', 'steering_hinge_inertia', 'trim_steering', 'wheel_substep'),
    'car': ('Car', 'as_param_list', 'batch_array'),
    'drive_models': ('V_STEER_DRAG', 'V_STICK', 'V_STOPPED', 'acceleration_force',
        'dead_band_duty', 'duty_filter', 'esc_substep', 'limited_acceleration',
        'speed_command', 'steering_drag', 'sticks', 'throttle_force'),
    'four_wheel_steering': ('icr_projection', 'kinematic_4ws_rates', 'rear_speed_from_front',
        'turning_radii'),
    'gz_gains': ('GZ_FIRST_ORDER_POLE_RATIO', 'PidGains', 'drive_effective_inertia',
        'gz_servo_gains', 'gz_wheel_gains'),
    'integrators': ('INTEGRATORS', 'MAX_SUBSTEP', 'get_integrator', 'integrate_chassis',
        'rotate', 'substeps'),
    'models': ('KINEMATIC_RELAXATION', 'MODELS', 'RELAX_RATE_MAX', 'V_BLEND_HIGH',
        'V_BLEND_LOW', 'V_EPS', 'VehicleModel', 'drive_input', 'force_drive',
        'force_drive_at_rest', 'get_model', 'kinematic_4ws_model_rates', 'kinematic_4ws_rhs',
        'kinematic_rhs', 'model_rhs', 'single_track_forces', 'single_track_rhs', 'slip_angles',
        'steady_slip_states', 'velocity_rates', 'wheel_joint_rates'),
    'packed': ('DRIVE_KINDS', 'DRIVE_MODEL_IDS', 'N_PARAM', 'SERVO_MODEL_IDS',
        'STEERING_KINDS', 'STEER_ANGLE_TO_NORMALISED', 'drive_path', 'pack_params',
        'resolve_drive_kind', 'resolve_steering_kind', 'resolve_tyre_model', 'steering_path'),
    'rollout': ('InitialState', 'RolloutResult'),
    'servo_models': ('first_order_servo_substep', 'inverse_normalised_steering',
        'normalised_steering', 'play', 'second_order_servo_substep', 'second_order_transition',
        'steering_map'),
    'state': ('ALPHA_FRONT', 'ALPHA_REAR', 'DUTY', 'FRONT_LEFT_WHEEL_ANGLE',
        'FRONT_RIGHT_WHEEL_ANGLE', 'N_STATE', 'REAR_WHEEL_ANGLE', 'SERVO_ANGLE',
        'SERVO_INTEGRAL', 'SERVO_TARGET', 'SPEED_REFERENCE', 'STATE_FIELDS', 'STEER',
        'STEER_RATE', 'VX', 'VY', 'WHEEL_INTEGRAL', 'WHEEL_SPEED', 'YAW', 'YAW_RATE', 'X',
        'Y'),
    'tyres': ('RACECAR_TABLE_WHEEL_LOAD', 'TYRE_IDS', 'fiala_lateral_force',
        'linear_lateral_force', 'magic_formula', 'magic_formula_force',
        'racecar_pacejka_preset', 'with_racecar_pacejka'),
})
