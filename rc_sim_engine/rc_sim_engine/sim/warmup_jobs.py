"""What compiling each kernel set of :mod:`rc_sim_engine.sim.warmup` means: calls of its
kernels on tiny inputs of exactly the types a run passes (:data:`JOBS`, one per set), so that
numba writes them to its cache and the run itself loads every kernel from there.

The simulation loop's arguments are captured from a small
:class:`~rc_sim_engine.sim.simulator.Simulator` (:func:`_probe`) rather than written twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import functools
from typing import Any

__all__ = ['JOBS']


class _Captured(Exception):  # noqa: N818  (a control-flow signal, not an error)
    def __init__(self, args: tuple[Any, ...]) -> None:
        super().__init__('captured')
        self.args_ = args


@functools.lru_cache(maxsize=2)
def _probe(lidar_errors: bool = False) -> tuple[Any, tuple[Any, ...]]:
    """A small simulation on basic_track (lidar, collisions) and the arguments its first
    compiled stretch receives (captured: the stretch is not run)."""
    from rc_sim_description.params import load_vehicle_params
    from rc_sim_description.paths import world_path
    from rc_sim_description.worlds import spawn_pose
    from rc_sim_engine.sim import loop_kernel
    from rc_sim_engine.sim.simulator import SimConfig, Simulator
    from rc_sim_engine.world.sdf import load_world
    from rc_sim_sensors.lidar_config import LidarErrorConfig

    path = world_path('basic_track')
    spawn = spawn_pose(path)
    errors = LidarErrorConfig.from_preset('harsh') if lidar_errors else None
    sim = Simulator(load_vehicle_params(), load_world(path), SimConfig(lidar_errors=errors),
                    start=(spawn.x, spawn.y, spawn.yaw))

    def capture(*args: Any) -> int:
        raise _Captured(args)

    real = loop_kernel.run_stretch
    loop_kernel.run_stretch = capture  # type: ignore[assignment]
    try:
        sim.command_twist(0.5, 0.2)
        sim.step_to(0.01)
    except _Captured as got:
        return sim, got.args_
    finally:
        loop_kernel.run_stretch = real
    raise RuntimeError('the simulator did not call run_stretch')  # pragma: no cover


def _signature(args: Sequence[Any]) -> tuple[Any, ...]:
    import numba

    return tuple(numba.typeof(a) for a in args)


def _job_chassis() -> None:
    """The chassis integrator (RK4 / semi-implicit Euler over the vehicle model: the largest
    kernel), alone, with the argument types the physics step passes it."""
    from rc_sim_engine.vehicle.integrators import integrate_chassis

    _, a = _probe()
    # integrate_chassis(model_id, integ_id, x, p, h, cd, sd, td, omega): x, p rows of the
    # stretch's states and packed parameters, as _physics -> advance pass them
    integrate_chassis.compile(_signature((a[7], a[8], a[1][0], a[2][0], 0.0, 0.0, 0.0, 0.0,
                                          0.0)))


def _job_vehicle() -> None:
    """The loop's physics (``_physics``: actuators, vehicle model, integrator), with the
    argument types the stretch passes it."""
    import numpy as np

    from rc_sim_engine.sim import loop_kernel as lk

    _, a = _probe()
    # _physics(states, params, steer_cmd, wheel_cmd, dt, n_sub, n_steps, model_id, integ_id,
    #          project, delay_buf, delay_steps, sched): as run_stretch calls it
    lk._physics.compile(_signature((a[1], a[2], a[3], a[4], a[5], a[6], np.int64(1), a[7],
                                    a[8], a[9], a[10], a[11], a[13])))


def _job_imu() -> None:
    """The sensor outputs of a snapshot (IMU accelerations: the vehicle model's right-hand
    side), through the stream deriver as a run calls it."""
    sim, _ = _probe()
    deriver = sim._deriver
    probe = deriver._probe(0, 8)
    deriver.outputs(probe, sim.params[0])


def _job_lidar() -> None:
    """Ray casting of a batch of scans (as the run's converter thread calls it)."""
    import numpy as np

    sim, _ = _probe()
    sim._lidar.cast(np.zeros(1, dtype=np.int64), np.zeros((1, sim.n, 3)))


def _job_lidar_errors() -> None:
    """The lidar error model on float64 scans, with and without incidence angles."""
    import numpy as np

    sim, _ = _probe(lidar_errors=True)
    rig = sim._lidar
    ideal = np.ones((2, sim.n, rig.n_beams))
    t_ns = np.array([0, 25_000_000], dtype=np.int64)
    rig.finish(t_ns, ideal, None)
    rig.reset(0)
    rig.finish(t_ns, ideal, np.zeros_like(ideal))


def _job_collisions() -> None:
    """The start-pose search (clearance, contact checks) and the loop's collision step with
    the scratch arrays the stretch allocates."""
    import numpy as np

    from rc_sim_control.commands import manoeuvre
    from rc_sim_engine.sim import loop_kernel as lk
    from rc_sim_engine.world.collision import WorldArrays, deepest_contacts, footprint_from_params
    from rc_sim_engine.world.start_pose import choose_start

    sim, a = _probe()
    params = sim.params[0]
    choose_start(sim.world, params, manoeuvre('line', params, duration=0.5, ramp_time=0.1),
                 (-0.5, -1.875, 0.0))
    poses = np.zeros(4)
    for view in (poses, poses[::2]):  # contiguous and strided paths (the parking search)
        deepest_contacts(view, view, view, footprint_from_params(params),
                         WorldArrays.from_world(sim.world))
    c = sim.n
    scratch = (np.empty((5, c)), np.empty((2, c), dtype=np.int64), np.empty((c, 2)),
               np.empty(4), np.empty(2, dtype=np.int64), np.empty((1, 2)), a[38],
               np.empty((2, c, 6)), np.empty((2, c)), np.empty((3, c, 2)),
               np.full((2, c), -1, dtype=np.int64))
    # _collide(k, states, lr, radius, foot, boxes, box_cos, box_sin, discs, rings, response,
    #          restitution, mu_g, dt, touching, in_contact, events, sched, work, iwork, normal,
    #          one, one_i, one_n, mass, rect, cwork, cvec, ciwork): as run_stretch calls it
    lk._collide.compile(_signature((np.int64(0), a[1], a[22], a[23], a[24], a[27], a[28],
                                    a[29], a[30], a[31], a[32], a[33], a[34], a[5], a[35],
                                    a[36], a[37], a[13], *scratch)))


def _job_loop() -> None:
    """The compiled stretch itself (its callees load from the cache) and a short run."""
    from rc_sim_engine.sim import loop_kernel as lk

    sim, a = _probe()
    lk.run_stretch.compile(_signature(a))
    sim.step_to(0.06)
    sim.result()


def _job_rollout() -> None:
    """The calibrator's batch rollout (the vehicle model on many parameter sets)."""
    import numpy as np

    from rc_sim_description.params import load_vehicle_params
    from rc_sim_engine.vehicle.rollout import rollout

    t = np.linspace(0.0, 0.05, 6)
    rollout([load_vehicle_params()], t, np.zeros((1, t.size)), np.full((1, t.size), 5.0), None,
            t_out=t)


#: kernel set -> the call that compiles it
JOBS: dict[str, Callable[[], None]] = {
    'chassis': _job_chassis, 'vehicle': _job_vehicle, 'imu': _job_imu, 'lidar': _job_lidar,
    'collisions': _job_collisions, 'loop': _job_loop, 'lidar_errors': _job_lidar_errors,
    'rollout': _job_rollout,
}

