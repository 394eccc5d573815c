"""rc_sim_description: the car, its tracks and the one vehicle parameter file (ROS-free)."""

from rc_sim_description.errors import ConfigError, OutputError, RcSimError, VehicleParamsError
from rc_sim_description.params import VehicleParams, load_vehicle_params

__all__ = ['ConfigError', 'OutputError', 'RcSimError', 'VehicleParams', 'VehicleParamsError',
           'load_vehicle_params']
