"""Test helpers shared by the packages' test suites."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
import html
import json
import os
from pathlib import Path
import re
import shutil
import subprocess
from typing import Any

__all__ = ['BROWSER', 'DART_TWIN', 'LINIGER_1_43', 'ONE_FIFTH', 'browse_page', 'realdata_dir',
           'small_tmpfs']

#: The 1:43 car of Liniger, Domahidi & Morari (2015): published mass, inertia, axle distances,
#: drive and Magic Formula (D converted from newtons to a friction coefficient: D / Fz). The
#: sizes of wheels and chassis are those of the car class (not published with the model).
LINIGER_1_43 = {
    'geometry': {'wheelbase': 0.062, 'cg_to_front_axle': 0.029, 'cg_height': 0.01,
                 'track_width': 0.045, 'wheel_radius': 0.0085, 'wheel_width': 0.006,
                 'chassis_length': 0.1, 'chassis_width': 0.045, 'chassis_height': 0.02,
                 'chassis_ground_clearance': 0.003},
    'mass_properties': {'mass': 0.041, 'yaw_inertia': 27.8e-6, 'wheel_mass': 0.001,
                        'steering_hinge_mass': 0.0003},
    'steering': {'max_steering_angle': 0.35, 'max_steering_rate': 6.0},
    'drive': {'max_wheel_speed': 400.0, 'drive_model': 'throttle', 'motor_force_gain': 0.287,
              'motor_back_emf_gain': 0.0545, 'rolling_resistance': 0.0518,
              'viscous_resistance': 0.0, 'drag_coefficient': 0.00035},
    'tyres': {'tyre_model': 'pacejka', 'cornering_stiffness_front': 0.594,
              'cornering_stiffness_rear': 0.746,
              'pacejka_lateral': {'B': 2.579, 'C': 1.2, 'D': 0.9, 'E': 0.0}},
    'sensors': {'lidar_mount_x': 0.05, 'lidar_mount_z': 0.03, 'imu_mount_x': 0.03,
                'imu_mount_z': 0.01},
}
#: A DART-like calibrated car as vehicle leaf values (``VehicleParams.with_values``): the builders'
#: measured geometry and mass, a fitted normalised servo map and throttle drive (an ``rcsim fit``
#: on the DART bags, rounded).
DART_TWIN: dict[str, float | str] = {
    'wheelbase': 0.1735, 'cg_to_front_axle': 0.0805, 'track_width': 0.08, 'mass': 1.58,
    'yaw_inertia': 0.00316, 'steering_command': 'normalised', 'steering_offset': -0.00975,
    'steering_gain_left': 0.387, 'steering_gain_right': 0.416, 'steering_curvature_left': 0.56,
    'steering_curvature_right': 0.64, 'servo_model': 'second_order',
    'servo_natural_frequency': 45.6, 'servo_damping_ratio': 0.997, 'max_steering_rate': 4.56,
    'steering_backlash': 0.0048, 'cornering_stiffness_front': 59.1,
    'cornering_stiffness_rear': 64.2, 'tyre_model': 'fiala', 'drive_model': 'throttle',
    'motor_force_gain': 17.98, 'motor_back_emf_gain': 2.41, 'rolling_resistance': 3.04,
    'viscous_resistance': 0.204, 'drag_coefficient': 0.0096, 'steering_drag': 7.47,
    'throttle_dead_band': 0.0747, 'throttle_time_constant': 0.0462, 'command_latency': 0.08}
#: A 1:5 off-road car of about 13 kg (typical of the class: wheelbase 0.6 m, tyres 0.2 m).
ONE_FIFTH = {
    'geometry': {'wheelbase': 0.6, 'cg_to_front_axle': 0.33, 'cg_height': 0.12,
                 'track_width': 0.48, 'wheel_radius': 0.1, 'wheel_width': 0.08,
                 'chassis_length': 0.85, 'chassis_width': 0.42, 'chassis_height': 0.2,
                 'chassis_ground_clearance': 0.05},
    'mass_properties': {'mass': 13.0, 'yaw_inertia': 0.9, 'wheel_mass': 0.5,
                        'steering_hinge_mass': 0.1},
    'steering': {'max_steering_angle': 0.45, 'servo_max_torque': 4.0},
    'drive': {'max_wheel_speed': 300.0, 'wheel_max_torque': 20.0},
    'tyres': {'cornering_stiffness_front': 900.0, 'cornering_stiffness_rear': 1000.0},
    'sensors': {'lidar_mount_x': 0.45, 'lidar_mount_z': 0.25, 'imu_mount_x': 0.3,
                'imu_mount_z': 0.1},
}


def realdata_dir() -> Path | None:
    """The real-recording corpus: ``$RC_SIM_REALDATA``, else ``/work/shared/realdata``; None when
    absent (callers skip)."""
    path = Path(os.environ.get('RC_SIM_REALDATA', '/work/shared/realdata'))
    return path if path.is_dir() else None


@contextmanager
def small_tmpfs(point: Path, options: str = 'size=256k') -> Iterator[Path]:
    """A real small file system at ``point`` (a tmpfs mounted with ``options``, e.g. ``size=256k``
    or ``size=64k,ro``), unmounted and removed on exit: ENOSPC and EROFS without mocks. Skips the
    calling test (with the reason) where it cannot be mounted: not root, or no permission."""
    import pytest

    if os.geteuid() != 0:
        pytest.skip('mounting a small tmpfs needs root')
    point.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(['mount', '-t', 'tmpfs', '-o', options, 'tmpfs', str(point)],
                          capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f'cannot mount a tmpfs here: {done.stderr.strip()}')
    try:
        yield point
    finally:
        subprocess.run(['umount', '-l', str(point)], check=False)
        point.rmdir()


#: A headless browser for the page tests (Debian's chromium), or None.
BROWSER = next((shutil.which(name) for name in ('chromium', 'chromium-browser', 'google-chrome')
                if shutil.which(name)), None)
#: Run in the page after it loaded: what a reader gets (picture sizes, headings' positions, the
#: page's width against the window's, the text), into an attribute of the dumped DOM.
_CHECK = '''<script>
window.addEventListener('load', () => {
  const imgs = [...document.images];
  const doc = document.documentElement;
  const headings = [...document.querySelectorAll('h2')].map(h => [h.textContent,
                    h.getBoundingClientRect().top]);
  document.body.setAttribute('data-check', JSON.stringify({
    scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth, headings: headings,
    images: imgs.map(i => ({src: i.getAttribute('src'), natural: i.naturalWidth,
                            shown: i.getBoundingClientRect().width, ok: i.complete})),
    text: document.body.innerText}));
});
</script>'''


def browse_page(page: Path, shot: Path, shot_size: tuple[int, int],
                window: tuple[int, int] = (1100, 1400)) -> dict[str, Any]:
    """Open ``page`` in the headless browser as a person would: what the page shows in a window of
    ``window`` pixels (``scrollWidth``, ``clientWidth``, ``headings`` [(text, top px)], ``images``
    [{src, natural, shown, ok}], ``text``), measured by a script in a copy of the page, and its
    screenshot of ``shot_size`` pixels written to ``shot``."""
    probe = page.with_name('.check.html')
    probe.write_text(page.read_text(encoding='utf-8').replace('</body>', _CHECK + '</body>'),
                     encoding='utf-8')
    base = [str(BROWSER), '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
            '--virtual-time-budget=10000']
    try:
        dom = subprocess.run([*base, f'--window-size={window[0]},{window[1]}', '--dump-dom',
                              probe.as_uri()], capture_output=True, text=True,
                             timeout=120).stdout
        subprocess.run([*base, f'--window-size={shot_size[0]},{shot_size[1]}',
                        f'--screenshot={shot}', page.as_uri()], capture_output=True,
                       timeout=120, check=True)
    finally:
        probe.unlink()
    found = re.search(r'data-check="([^"]*)"', dom)
    if not found:
        raise AssertionError(f'{page} did not load in the browser')
    data: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return data
