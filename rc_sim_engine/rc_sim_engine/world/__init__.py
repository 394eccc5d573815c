"""Where the car drives: SDF worlds (``sdf``), footprint collisions, exact ray casting, several
cars as obstacles, occupancy-grid track maps and their lidar tables, tracks, centre lines,
generated tracks and collision-free start poses.

May import: ``compiled``.
"""

from rc_sim_description.lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    'centerline': ('CenterLine', 'extract_centerline', 'load_centerline_csv',
        'write_centerline_csv'),
    'collision': ('COLLISION_RESPONSES', 'Contact', 'WorldArrays', 'box_trig', 'check_cars',
        'check_response', 'clearance', 'clearance_trig', 'deepest_contacts',
        'footprint_contact'),
    'map_grid': ('GEO_SIZE', 'MapGrid', 'cast_grid_exact', 'grid_contacts', 'grid_gap'),
    'map_lidar': ('AUTO_LUT_BYTES', 'LIDAR_MODES', 'MAX_LUT_BYTES', 'MapLidar', 'auto_stride',
        'build_lut', 'scan_map', 'scan_map_work'),
    'map_world': ('DEFAULT_WALL_HEIGHT', 'load_map_world', 'map_sdf', 'map_spawn_pose',
        'wall_rectangles'),
    'multicar': ('car_contacts', 'car_contacts_kernel', 'footprint_centers', 'overlay_cars',
        'overlay_cars_kernel'),
    'raycast': ('BeamFan', 'cast_rays', 'cast_rays_world'),
    'sdf': ('SdfWarning', 'World', 'load_world', 'parse_sdf', 'ring_track'),
    'start_pose': ('Enclosure', 'StartChoice', 'choose_start', 'enclosure', 'free_region',
        'path_extent', 'predicted_path', 'touched_obstacle'),
    'track': ('Track', 'load_track', 'resolve_map_path'),
    'track_gen': ('TRACKS', 'TrackDesign', 'render_track', 'spline_centerline', 'write_track'),
    'track_map': ('MAP_MODES', 'MAX_EXTENT', 'MAX_MAP_PIXELS', 'MAX_RESOLUTION',
        'MIN_RESOLUTION', 'UNKNOWN_POLICIES', 'MapSpec', 'OccupancyMap', 'TrackMapError',
        'is_map_yaml', 'load_map', 'occupancy_from_image', 'read_map_spec'),
})
