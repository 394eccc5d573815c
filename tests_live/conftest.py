"""Live ROS 2 tests (marker ``live``): run by ``scripts/test_ros``, the last stage of
``./scripts/test``, in the ROS environment of ``scripts/setup_ros.sh``.

Without a complete ROS 2 environment (rclpy *and* launch, ros2cli, the message packages, and the
five packages colcon-built) every test here is skipped with one reason naming what is missing.
The session keeps ROS_HOME, the logs and the temporary files of every process in one temporary
folder, removed at the end, and removes the Fast DDS shared-memory files its processes left in
/dev/shm (there are none when every process ended cleanly; the count is printed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from live_harness import DomainLease, LiveRos, missing_ros

_SESSION: dict[str, object] = {}
SHM = Path('/dev/shm')


def _fastdds_files() -> set[str]:
    try:
        return {p.name for p in SHM.iterdir()
                if p.name.startswith(('fastrtps_', 'fast_datasharing'))}
    except OSError:
        return set()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line('markers', 'live: a live ROS 2 test over real DDS (scripts/test_ros)')
    config.addinivalue_line('markers', 'timing: measures rates or a free-running loop: run '
                            'alone, not beside other tests (scripts/test_ros runs them last)')
    folder = Path(tempfile.mkdtemp(prefix='rc_sim_live_'))
    for sub in ('ros_home', 'log', 'tmp', 'tests'):
        (folder / sub).mkdir()
    env = dict(os.environ)
    env.update(ROS_HOME=str(folder / 'ros_home'), ROS_LOG_DIR=str(folder / 'log'),
               TMPDIR=str(folder / 'tmp'), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               PYTHONUNBUFFERED='1', RCUTILS_COLORIZED_OUTPUT='0', MPLBACKEND='Agg')
    env.pop('ROS_DOMAIN_ID', None)  # each test sets its own
    # the probe's rclpy reads these at init: its logs go to the session folder as well
    for key in ('ROS_HOME', 'ROS_LOG_DIR', 'ROS_AUTOMATIC_DISCOVERY_RANGE'):
        os.environ[key] = env[key]
    _SESSION.update(folder=folder, env=env, shm_before=_fastdds_files(), missing=missing_ros())


class _Unavailable(pytest.Item):
    """Stands for a whole test module when ROS 2 is incomplete: its imports are never run (a
    module importing ``tf2_msgs`` would otherwise fail to collect instead of skipping)."""

    def runtest(self) -> None:
        pytest.skip(f'live ROS 2 tests need ROS 2: {_SESSION["missing"]}')

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.name


class _UnavailableModule(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        yield _Unavailable.from_parent(self, name=self.path.stem)


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> object:
    """Without a complete ROS 2, every module is one skipped item (reason: what is missing)."""
    if _SESSION.get('missing'):
        return _UnavailableModule.from_parent(parent, path=module_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.live)


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = _SESSION.get('folder')
    if not isinstance(folder, Path):
        return
    new = _fastdds_files() - set(_SESSION.get('shm_before') or ())  # type: ignore[arg-type]
    if new and shutil.which('fastdds'):  # removes only files no running process holds
        before = _fastdds_files()
        subprocess.run(['fastdds', 'shm', 'clean'], capture_output=True, check=False, timeout=60)
        removed = len(before - _fastdds_files())
        if removed:
            print(f'\nlive ROS 2 session: fastdds shm clean removed {removed} stale file(s) '
                  'from /dev/shm', file=sys.stderr)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def ros(request: pytest.FixtureRequest) -> Iterator[LiveRos]:
    """This test's ROS world (private domain, processes, probe); everything ended afterwards."""
    base = _SESSION['folder']
    assert isinstance(base, Path)
    folder = Path(tempfile.mkdtemp(prefix=request.node.name[:40].replace('/', '_') + '_',
                                   dir=base / 'tests'))
    world = LiveRos(folder, _SESSION['env'])  # type: ignore[arg-type]
    try:
        yield world
    finally:
        world.close()


@pytest.fixture
def ros_factory(request: pytest.FixtureRequest) -> Iterator[Callable[[], LiveRos]]:
    """Make more ROS worlds in one test (each its own domain); all ended afterwards."""
    base = _SESSION['folder']
    assert isinstance(base, Path)
    made: list[LiveRos] = []

    def make() -> LiveRos:
        folder = Path(tempfile.mkdtemp(prefix=request.node.name[:40].replace('/', '_') + '_',
                                       dir=base / 'tests'))
        made.append(LiveRos(folder, _SESSION['env']))  # type: ignore[arg-type]
        return made[-1]

    try:
        yield make
    finally:
        for world in made:
            world.close()


@pytest.fixture(autouse=True)
def private_domain() -> Iterator[int]:
    """ROS_DOMAIN_ID of this test process: a domain of its own, so that nodes created in the
    test process itself (the in-process tests) meet nobody else's."""
    lease = DomainLease()
    old = os.environ.get('ROS_DOMAIN_ID')
    os.environ['ROS_DOMAIN_ID'] = str(lease.domain_id)
    try:
        yield lease.domain_id
    finally:
        if old is None:
            os.environ.pop('ROS_DOMAIN_ID', None)
        else:
            os.environ['ROS_DOMAIN_ID'] = old
        lease.release()


@pytest.fixture
def rclpy_init(private_domain: int) -> Iterator[None]:
    """rclpy's default context, initialised for a test that creates nodes in its own process
    (in the test's private domain); shut down afterwards."""
    import rclpy

    rclpy.init(domain_id=private_domain)
    try:
        yield
    finally:
        rclpy.try_shutdown()
