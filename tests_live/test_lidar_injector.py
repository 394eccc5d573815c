"""lidar_error_injector live over DDS: started as ``ros2 run`` starts it, judged by the probe.

Inputs are ideal scans of known ranges published on ``scan_raw`` (sensor-data QoS, as the node
expects), at a modest rate after the node's subscription matched; outputs on ``scan`` are matched
to inputs by header stamp. References: the equations of docs/lidar_errors.md (z = d + mu +
sigma n, dropout -> +inf, z = q round(z / q), stamp' = stamp + L) with the z = 5 bands of the
package's ROS-free statistical tests (standard error of a mean sigma / sqrt(N), of a variance
sigma^2 sqrt(2 / (N - 1)), of a proportion sqrt(p (1 - p) / N)).
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any

from live_harness import wait_until
import numpy as np
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import LaserScan

Z = 5.0
BEAMS = 1081
ANGLE_MIN = -0.75 * math.pi
INCREMENT = 1.5 * math.pi / (BEAMS - 1)
NODE = '/lidar_error_injector'
#: The probe's subscription: best effort (matches the node's sensor-data publisher), but deep, so
#: the probe itself drops nothing of a burst.
DEEP_BEST_EFFORT = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT)


# --------------------------------------------------------------------------- helpers
def scan_msg(stamp_ns: int, ranges: Any, *, angle_min: float = ANGLE_MIN,
             increment: float = INCREMENT, range_min: float = 0.02, range_max: float = 30.0,
             intensities: Any = ()) -> LaserScan:
    msg = LaserScan()
    msg.header.frame_id = 'laser'
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), 1_000_000_000)
    msg.angle_min = float(angle_min)
    msg.angle_increment = float(increment)
    msg.angle_max = float(angle_min + increment * (len(ranges) - 1))
    msg.scan_time = 0.025
    msg.range_min, msg.range_max = float(range_min), float(range_max)
    msg.ranges = np.asarray(ranges, dtype=np.float32).tolist()
    msg.intensities = np.asarray(intensities, dtype=np.float32).tolist()
    return msg


def stamp_ns(msg: LaserScan) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


class Injector:
    """A started lidar_error_injector with the probe's publisher and subscription wired to it."""

    def __init__(self, ros: Any, params: dict[str, Any] | None = None,
                 env: dict[str, str] | None = None, start_timeout: float = 60.0) -> None:
        self.ros = ros
        self.proc = ros.run('rc_sim_sensors', 'lidar_error_injector', params or {}, env=env)
        self.out = ros.probe.subscribe(LaserScan, '/scan', DEEP_BEST_EFFORT)
        self.pub = ros.probe.publisher(LaserScan, '/scan_raw', qos_profile_sensor_data)
        self.wait_ready(start_timeout)

    def wait_ready(self, timeout: float) -> None:
        """Wait until the node's subscription matched the probe's publisher and the node's
        publisher the probe's subscription."""
        def matched() -> bool:
            if not self.proc.alive():
                raise AssertionError(f'lidar_error_injector exited:\n{self.proc.output()}')
            return self.pub.get_subscription_count() >= 1
        wait_until(matched, timeout, 'the node to subscribe scan_raw')
        sub = next(s for s in self.ros.probe.node.subscriptions if s.topic_name == '/scan')
        wait_until(lambda: sub.get_publisher_count() >= 1, timeout, 'the node to publish scan')
        time.sleep(0.3)  # the reader side of best-effort matching settles as well

    def send(self, msgs: list[LaserScan], rate_hz: float = 50.0) -> None:
        period = 1.0 / rate_hz
        t0 = time.monotonic()
        for k, msg in enumerate(msgs):
            delay = t0 + k * period - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.pub.publish(msg)

    def collect(self, stamps: list[int], timeout: float = 30.0, settle: float = 1.0
                ) -> dict[int, LaserScan]:
        """Outputs by input stamp: wait for the last one (or ``timeout``), then ``settle``."""
        wanted = set(stamps)
        with contextlib.suppress(AssertionError):
            self.out.wait(1, timeout, where=lambda m: stamp_ns(m) == stamps[-1])
        time.sleep(settle)
        return {stamp_ns(m): m for m in self.out.messages if stamp_ns(m) in wanted}

    def param(self, name: str) -> str:
        done = self.ros.cli('param', 'get', '--no-daemon', '--spin-time', '3', NODE, name)
        return done.stdout.strip()

    def report(self) -> str:
        """The node's output, for assertion messages."""
        return f'node output:\n{self.proc.output()[-3000:]}'


def ideal_scans(count: int, ranges: Any, t0_ns: int = 1_000_000_000_000,
                period_ns: int = 25_000_000, **kw: Any) -> list[LaserScan]:
    return [scan_msg(t0_ns + k * period_ns, ranges, **kw) for k in range(count)]


# --------------------------------------------------------------------------- defect 5: compile
def test_scans_right_after_matching_come_out_with_a_cold_kernel_cache(ros):
    """With an empty numba cache (NUMBA_CACHE_DIR: numba then caches there, not beside the
    sources) the kernels compile, seconds; that must happen before the node subscribes, not in
    the first scan's callback while its input queue (depth 5) overflows. Scans with and without
    intensities (two compiled variants) alternate."""
    cache = ros.folder / 'numba_cache'
    cache.mkdir()
    node = Injector(ros, {'preset': 'ideal'}, env={'NUMBA_CACHE_DIR': str(cache)},
                    start_timeout=120.0)
    ranges = np.linspace(0.5, 9.5, BEAMS)
    intensities = np.linspace(100.0, 200.0, BEAMS)
    # right after matching: 40 scans at 20 Hz (2 s, within a compile's duration)
    msgs = [scan_msg(10**12 + k * 25_000_000, ranges, intensities=intensities if k % 2 else ())
            for k in range(40)]
    node.send(msgs, rate_hz=20.0)
    stamps = [stamp_ns(m) for m in msgs]
    got = node.collect(stamps, timeout=60.0)
    lost = [k for k, s in enumerate(stamps) if s not in got]
    assert not lost, (f'{len(lost)} of {len(stamps)} scans lost (indices {lost[:10]}...) with '
                      f'the ideal preset:\n{node.proc.output()[-2000:]}')
    for msg in got.values():
        np.testing.assert_array_equal(np.asarray(msg.ranges), ranges.astype(np.float32))
    assert sum(len(m.intensities) == BEAMS for m in got.values()) == 20
    assert any(cache.rglob('*.nbi')), 'the empty NUMBA_CACHE_DIR did not force a compile'
    assert 'compiled' in node.proc.output(), node.proc.output()


# --------------------------------------------------------------------------- statistics
def test_statistics_over_dds_match_the_configured_errors(ros):
    """z = d + mu + sigma n, dropout -> +inf, z = q round(z / q): mean and variance of z - d
    (Sheppard: Var = sigma^2 + q^2 / 12), dropout fraction, exact quantization steps, stamps
    shifted by the latency, reported limits the tighter ones."""
    mu, sigma, p, q, latency = 0.01, 0.02, 0.1, 0.005, 0.013
    node = Injector(ros, {'preset': 'ideal', 'noise_mean': mu, 'noise_stddev': sigma,
                          'dropout_probability': p, 'range_resolution': q, 'range_min': 0.05,
                          'range_max': 20.0, 'latency': latency, 'seed': 3})
    d = np.linspace(1.0, 8.0, BEAMS)
    msgs = ideal_scans(250, d)
    node.send(msgs, rate_hz=50.0)
    stamps = [stamp_ns(m) for m in msgs]
    delayed = {s + round(latency * 1e9): s for s in stamps}
    wait_until(lambda: len([m for m in node.out.messages if stamp_ns(m) in delayed]) >= 200,
               60.0, '200 corrupted scans')
    time.sleep(1.0)
    got = [m for m in node.out.messages if stamp_ns(m) in delayed]
    assert not [m for m in node.out.messages if stamp_ns(m) in set(stamps)], \
        'a scan came out without its latency'
    z = np.array([m.ranges for m in got], dtype=np.float64)
    assert z.shape[1] == BEAMS
    for m in got:
        assert (m.range_min, m.range_max) == (pytest.approx(0.05), pytest.approx(20.0))
    dropped = np.isposinf(z)
    n = z.size
    assert abs(dropped.mean() - p) < Z * math.sqrt(p * (1 - p) / n), dropped.mean()
    kept = z[~dropped]
    err = kept - np.broadcast_to(d, z.shape)[~dropped]
    var = sigma**2 + q**2 / 12.0
    assert abs(err.mean() - mu) < Z * math.sqrt(var / err.size), err.mean()
    assert abs(err.var(ddof=1) - var) < Z * var * math.sqrt(2.0 / (err.size - 1)), err.std()
    steps = kept / q  # float32 output: a step of 1e-4 quanta is the rounding of the cast
    np.testing.assert_allclose(steps, np.round(steps), rtol=0, atol=1e-3)
    assert len(np.unique(np.round(steps))) > 100


def _room_input(count: int, t0_ns: int = 2_000_000_000_000) -> list[LaserScan]:
    from rc_sim_sensors.scene import room_scan  # an ideal scene (walls, posts), not the model

    angles = ANGLE_MIN + INCREMENT * np.arange(BEAMS)
    ranges, incidence = room_scan(angles)
    intensity = 2.0 * np.cos(incidence) / (1.0 + 0.2 * ranges)
    return ideal_scans(count, ranges, t0_ns, intensities=intensity)


def test_same_seed_gives_identical_outputs_message_for_message_and_another_seed_differs(ros):
    """Three nodes (namespaces a, b, c) get the same 120 scans of the harsh preset (every effect,
    scan loss, latency); a and b (seed 7) agree bit for bit on every stamp, c (seed 8) differs."""
    msgs = _room_input(120)
    nodes = {}
    for ns, seed in (('a', 7), ('b', 7), ('c', 8)):
        proc = ros.run('rc_sim_sensors', 'lidar_error_injector',
                       {'preset': 'harsh', 'seed': seed}, namespace=f'/{ns}')
        nodes[ns] = (proc, ros.probe.subscribe(LaserScan, f'/{ns}/scan', DEEP_BEST_EFFORT),
                     ros.probe.publisher(LaserScan, f'/{ns}/scan_raw', qos_profile_sensor_data))
    for ns, (_, _, pub) in nodes.items():
        ros.probe.wait_matched(pub, timeout=60.0)
        wait_until(lambda ns=ns: any(s.topic_name == f'/{ns}/scan' and s.get_publisher_count()
                                     for s in ros.probe.node.subscriptions), 60.0, f'/{ns}/scan')
    time.sleep(0.3)
    for msg in msgs:  # 20 Hz: a lost input would shift a node's random stream
        for _, _, pub in nodes.values():
            pub.publish(msg)
        time.sleep(0.05)
    latency_ns = 50_000_000  # harsh.yaml: latency 0.05 s
    expected = {stamp_ns(m) + latency_ns for m in msgs}
    last = max(expected)
    for ns, (_, inbox, _) in nodes.items():
        # the last scan may be lost (scan_loss_probability 0.02): wait for most of them
        wait_until(lambda inbox=inbox: len(inbox) >= 100 or any(
            stamp_ns(m) == last for m in inbox.messages), 60.0, f'{ns}: outputs')
    time.sleep(1.0)
    out = {ns: {stamp_ns(m): m for m in inbox.messages} for ns, (_, inbox, _) in nodes.items()}
    for ns, by_stamp in out.items():
        assert set(by_stamp) <= expected, f'{ns}: stamps not shifted by the latency'
        # scan loss 2 %: the z = 5 band of 120 scans allows at most 10 lost
        assert len(by_stamp) >= 100, f'{ns}: only {len(by_stamp)} of 120 scans came out'
    common = sorted(set(out['a']) & set(out['b']))
    assert len(common) >= 100
    assert set(out['a']) == set(out['b']), 'the same seed lost different scans'
    for s in common:
        a, b = out['a'][s], out['b'][s]
        np.testing.assert_array_equal(np.asarray(a.ranges), np.asarray(b.ranges), err_msg=str(s))
        np.testing.assert_array_equal(np.asarray(a.intensities), np.asarray(b.intensities))
    differ = [s for s in set(out['a']) & set(out['c'])
              if not np.array_equal(np.asarray(out['a'][s].ranges),
                                    np.asarray(out['c'][s].ranges), equal_nan=True)]
    assert len(differ) >= 95, f'seed 8 equals seed 7 on {100 - len(differ)} scans'
    # the errors are really there: harsh has noise, dropout, limits 0.1 - 8 m
    first = np.asarray(out['a'][common[0]].ranges)
    ideal = np.asarray(msgs[0].ranges)
    assert np.isposinf(first).sum() > 0.05 * BEAMS and not np.array_equal(first, ideal)


# --------------------------------------------------------------------------- live parameters
def _param_set(ros: Any, name: str, value: str) -> str:
    """``ros2 param set``; its output (again when a loaded machine hid the node from it)."""
    for _ in range(3):
        done = ros.cli('param', 'set', '--no-daemon', '--spin-time', '3', NODE, name, value,
                       check=False)
        out = done.stdout + done.stderr
        if 'Node not found' not in out:
            break
    return out


def _errors(node: Injector, d: np.ndarray, count: int, t0_ns: int, *,
            complete: bool = False) -> np.ndarray:
    """Send ``count`` scans of ranges ``d``; z - d of every output, (scans, beams); with
    ``complete`` every scan must come out (a comparison of random streams)."""
    msgs = ideal_scans(count, d, t0_ns)
    node.send(msgs, rate_hz=20.0)  # slow: a lost input would shift the random stream
    got = node.collect([stamp_ns(m) for m in msgs])
    assert len(got) >= count - (0 if complete else 2), \
        f'{len(got)} of {count} scans came out; {node.report()}'
    return np.array([got[s].ranges for s in sorted(got)], dtype=np.float64) - d


def test_live_parameter_changes_validation_seed_restart(ros):
    node = Injector(ros, {'preset': 'ideal', 'seed': 5})
    d = np.full(BEAMS, 3.0)
    np.testing.assert_array_equal(_errors(node, d, 10, 10**12), 0.0)  # ideal: identity

    # a valid change takes effect: sigma of z - d is the new noise_stddev
    out = _param_set(ros, 'noise_stddev', '0.05')
    assert 'Set parameter successful' in out, out
    err = _errors(node, d, 40, 2 * 10**12).ravel()
    assert abs(err.std(ddof=1) - 0.05) < Z * 0.05 * math.sqrt(0.5 / (err.size - 1)), err.std()

    # invalid changes are refused with their reason and change nothing (the CLI once, then the
    # same parameter services from the probe: a CLI call costs seconds)
    out = _param_set(ros, 'dropout_probability', '1.5')
    assert 'Setting parameter failed' in out and 'must be a probability' in out, out
    params = ros.probe.parameters(NODE)
    for name, value, reason in (('out_of_range', 'clamp', 'needs a finite range_max'),
                                ('out_of_range', 'sideways', 'must be one of'),
                                ('noise_stddev', 'abc', 'Wrong parameter type')):
        ok, why = params.set(name, value)
        assert not ok and reason in why, (name, why)
    assert node.param('noise_stddev') == 'Double value is: 0.05'
    assert 'rejected parameter change' in node.proc.output()
    err = _errors(node, d, 20, 3 * 10**12).ravel()
    assert abs(err.std(ddof=1) - 0.05) < Z * 0.05 * math.sqrt(0.5 / (err.size - 1))

    # a seed change restarts the stream: seed 6, then 5, then 6 again: the second seed-6 stream
    # repeats the first one scan for scan (other stamps: nothing here depends on them)
    assert params.set('seed', 6) == (True, '')
    first6 = _errors(node, d, 10, 4 * 10**12, complete=True)
    assert params.set('seed', 5) == (True, '')
    with5 = _errors(node, d, 10, 5 * 10**12, complete=True)
    assert params.set('seed', 6) == (True, '')
    again6 = _errors(node, d, 10, 6 * 10**12, complete=True)
    np.testing.assert_array_equal(again6, first6)
    assert not np.array_equal(with5, first6)
    assert node.proc.alive()


def test_reset_bias_service_returns_the_bias_to_bias_initial(ros):
    """b_k = b0 + w_k (random walk, sigma_b per scan): after 60 scans the walk is set to stop
    (bias_walk_stddev 0, the state carries on), so z - d = b_k stays constant and != b0; the
    service brings it back to exactly b0."""
    b0 = 0.1
    node = Injector(ros, {'preset': 'ideal', 'bias_initial': b0, 'bias_walk_stddev': 0.05,
                          'seed': 2})
    d = np.full(64, 2.0)
    first = _errors(node, d, 60, 10**12)
    assert np.all(first == first[:, :1])  # one bias per scan
    assert ros.probe.parameters(NODE).set('bias_walk_stddev', 0.0) == (True, '')
    held = _errors(node, d, 5, 2 * 10**12)
    bias = float(held[0, 0])
    assert np.allclose(held, bias, rtol=0, atol=1e-6)
    assert abs(bias - b0) > 1e-4, 'the walk did not move the bias (precondition)'
    done = ros.cli('service', 'call', f'{NODE}/reset_bias', 'std_srvs/srv/Trigger')
    assert 'success=True' in done.stdout, done.stdout
    reset = _errors(node, d, 5, 3 * 10**12)
    np.testing.assert_allclose(reset, b0, rtol=0, atol=1e-6)


# --------------------------------------------------------------------------- hostile input
def _hostile() -> list[tuple[str, str | None, LaserScan]]:
    """(name, a word its warning must contain, message) of unusable scans; word None: the same
    kind of problem as the case before (another value), held back by the throttle."""
    t = 7 * 10**12
    r = np.full(100, 2.0)
    nan = math.nan
    cases: list[tuple[str, str | None, LaserScan]] = [
        ('intensities != ranges', 'intensities', scan_msg(t, r, intensities=np.ones(99))),
        ('NaN angle_increment', 'angle_increment', scan_msg(t, r, increment=nan)),
        ('zero angle_increment', None, scan_msg(t, r, increment=0.0)),
        ('NaN angle_min', 'angle_min', scan_msg(t, r, angle_min=nan)),
        ('absurd angle_min', None, scan_msg(t, r, angle_min=1e300)),
        ('NaN range_min', 'range_min', scan_msg(t, r, range_min=nan)),
        ('range_min >= range_max', 'range_max', scan_msg(t, r, range_min=5.0, range_max=5.0)),
        ('NaN range_max', None, scan_msg(t, r, range_max=nan)),
        ('huge beam count', 'beams', scan_msg(t, np.full(150_000, 2.0), increment=1e-5)),
        ('stamp overflows with the latency', 'stamp', scan_msg(0, r)),
    ]
    cases[-1][2].header.stamp.sec, cases[-1][2].header.stamp.nanosec = 2**31 - 1, 999_999_999
    return cases


def _warnings(output: str) -> list[str]:
    return [line for line in output.splitlines() if '[WARN]' in line]


def test_hostile_scans_are_dropped_with_one_throttled_warning_each_and_no_crash(ros):
    node = Injector(ros, {'preset': 'ideal', 'latency': 0.01})
    r = np.linspace(1.0, 4.0, 200)
    good = ideal_scans(5, r, 10**12)
    node.send(good)
    assert len(node.collect([stamp_ns(m) + 10_000_000 for m in good])) >= 4
    for name, word, msg in _hostile():
        before = len(_warnings(node.proc.output()))
        # a burst, within the throttle period: one warning for it, not one per scan (sent until
        # the node has one: a best-effort 600 kB scan may be lost on a busy machine)
        for k in range(20):
            node.pub.publish(msg)
            time.sleep(0.2)
            if k >= 4 and (word is None or len(_warnings(node.proc.output())) > before):
                break
        if word is not None:
            wait_until(lambda before=before: len(_warnings(node.proc.output())) > before, 5.0,
                       f'a warning about the {name} scan')
        time.sleep(0.5)
        new = _warnings(node.proc.output())[before:]
        assert node.proc.alive(), f'{name} crashed the node:\n{node.proc.output()[-3000:]}'
        assert len(new) == (word is not None), f'{name}: {len(new)} warnings:\n' + '\n'.join(new)
        if word is not None:
            assert '/scan_raw' in new[0] and word in new[0], f'{name}: {new[0]}'
    assert all(stamp_ns(m) // 10**9 not in (7000, 2**31 - 1) for m in node.out.messages)
    # a clockwise scanner (negative increment) is valid: processed, geometry kept
    cw = ideal_scans(3, r, 3 * 10**12, angle_min=math.pi / 2, increment=-INCREMENT)
    node.send(cw)
    got = node.collect([stamp_ns(m) + 10_000_000 for m in cw])
    assert len(got) >= 2
    for msg in got.values():
        assert msg.angle_increment == pytest.approx(-INCREMENT)
        np.testing.assert_array_equal(np.asarray(msg.ranges), r.astype(np.float32))
    # a flood of bad scans, then valid ones: still processed, the warnings stay few
    before = len(_warnings(node.proc.output()))
    bad = _hostile()[0][2]
    for _ in range(2000):
        node.pub.publish(bad)
    after = ideal_scans(10, r, 4 * 10**12)
    node.send(after)
    got = node.collect([stamp_ns(m) + 10_000_000 for m in after])
    assert len(got) >= 8, f'{len(got)} of 10 valid scans after the flood'
    assert node.proc.alive()
    assert len(_warnings(node.proc.output())) - before <= 2
    assert node.proc.interrupt() == 0, node.proc.output()[-3000:]
