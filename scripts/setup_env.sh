# Source me (bash): set up this machine for rc-sim and activate its Python venv.
#   . scripts/setup_env.sh
#   RC_SIM_VENV   venv location (default: .venv in the repository)
#   RC_SIM_EXTRAS "test" to also install the test/lint tools (requirements-test.txt) and, as root
#                 or with password-less sudo, Debian's SDF/URDF tools and chromium (the page
#                 screenshot tests)
#   RC_SIM_PYTHON interpreter that creates the venv (default: python3)
#   RC_SIM_INSTALLER "pip" to install with pip only (default: uv, from PATH or pip-installed into
#                 the venv in seconds, with pip as the fallback when uv fails)
# Installs the five packages editable ("compat" mode so that running from the repository root
# does not shadow them with the outer package folders); no ROS is needed. uv installs the
# dependencies in seconds where pip takes a minute or more.
# Safe to source: it never changes your shell options, never exits your shell (a failure returns
# a non-zero status) and is idempotent: the install runs only when a setup file changed (setup.py,
# setup.cfg, package.xml, requirements-test.txt; a stamp in the venv records their hashes) and the
# engine's numba kernels that `rcsim run` needs are compiled once, on every core, with a line
# saying what and how long (the test set-up compiles every kernel set). With nothing to do it
# takes well under 2 s.

_rc_sim_apt() {  # Debian tools the tests use (the simulator does not): SDF/URDF validation,
  # and a headless browser for the screenshots of the output pages
  local missing=() sudo=""
  command -v ign >/dev/null 2>&1 || missing+=(ignition-tools libsdformat-dev)
  command -v check_urdf >/dev/null 2>&1 || missing+=(liburdfdom-tools)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-dejavu-core)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then sudo="sudo"; else
      echo "note: not root: skipping apt-get install ${missing[*]} (the SDF/URDF validation and page screenshot tests will skip)" >&2
      return 0
    fi
  fi
  echo ">> apt-get install ${missing[*]}" >&2
  $sudo apt-get update -qq >/dev/null || { echo "warning: apt-get update failed" >&2; return 0; }
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null || echo "warning: apt-get install ${missing[*]} failed" >&2
  return 0
}

_rc_sim_stamp() {  # hash of what pip installs from: the root, the extras and the setup files
  local root="$1" extras="$2"
  "$RC_SIM_VENV/bin/python" - "$root" "$extras" <<'PY'
import hashlib, sys
from pathlib import Path
root, extras = Path(sys.argv[1]), sys.argv[2]
h = hashlib.sha256(f'{root}\n{extras}\n{sys.version}\n'.encode())
names = [f'{pkg}/{f}' for pkg in ('rc_sim_description', 'rc_sim_control', 'rc_sim_sensors',
                                  'rc_sim_engine', 'rc_sim_calibration')
         for f in ('setup.py', 'setup.cfg', 'package.xml')]
if extras == 'test':
    names.append('requirements-test.txt')
for name in names:
    path = root / name
    h.update(name.encode() + b'\0' + (path.read_bytes() if path.is_file() else b'-') + b'\0')
print(h.hexdigest())
PY
}

_rc_sim_pip() {  # pip install quietly, dropping pip's noise about editable locations
  local log status
  log="$(pip install -q "$@" 2>&1)"
  status=$?
  [ -n "$log" ] && printf '%s\n' "$log" | grep -v '^WARNING: Location' >&2
  return $status
}

_rc_sim_install() {  # install "$@" into the venv: with uv when it works (seconds), else pip
  local uv=""
  if [ "${RC_SIM_INSTALLER:-uv}" != "pip" ]; then
    uv="$(command -v uv 2>/dev/null)"
    if [ -z "$uv" ] && _rc_sim_pip uv 2>/dev/null && [ -x "$RC_SIM_VENV/bin/uv" ]; then
      uv="$RC_SIM_VENV/bin/uv"
    fi
  fi
  if [ -n "$uv" ]; then
    "$uv" pip install -q --python "$RC_SIM_VENV/bin/python" "$@" && return 0
    echo "note: uv could not install (see above); trying pip" >&2
  fi
  _rc_sim_pip "$@"
}

_rc_sim_setup() {
  local root extras stamp_file want have installed=""
  root="$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)" || return 1
  extras="${RC_SIM_EXTRAS:-}"
  RC_SIM_ROOT="$root"
  RC_SIM_VENV="${RC_SIM_VENV:-$root/.venv}"
  if [ "$extras" = "test" ]; then _rc_sim_apt; fi

  if [ ! -x "$RC_SIM_VENV/bin/python" ]; then
    echo ">> creating venv $RC_SIM_VENV" >&2
    if ! "${RC_SIM_PYTHON:-python3}" -m venv "$RC_SIM_VENV"; then
      echo "error: could not create the venv $RC_SIM_VENV (on Debian/Ubuntu: apt install python3-venv)" >&2
      return 1
    fi
  fi
  # shellcheck disable=SC1091
  . "$RC_SIM_VENV/bin/activate" || { echo "error: cannot activate $RC_SIM_VENV" >&2; return 1; }
  export PIP_DISABLE_PIP_VERSION_CHECK=1 MPLBACKEND=Agg

  stamp_file="$RC_SIM_VENV/.rc_sim_setup${extras:+_$extras}.sha256"
  want="$(_rc_sim_stamp "$root" "$extras")" || return 1
  have="$(cat "$stamp_file" 2>/dev/null || true)"
  if [ "$want" != "$have" ]; then
    echo ">> install the rc-sim packages and their dependencies" >&2
    _rc_sim_install -e "$root/rc_sim_description" -e "$root/rc_sim_control" \
      -e "$root/rc_sim_sensors" -e "$root/rc_sim_engine" -e "$root/rc_sim_calibration" \
      --config-settings editable_mode=compat \
      || { echo "error: pip install of the rc-sim packages failed" >&2; return 1; }
    if [ "$extras" = "test" ]; then
      _rc_sim_install -r "$root/requirements-test.txt" \
        || { echo "error: pip install -r requirements-test.txt failed" >&2; return 1; }
    fi
    python -c "import rc_sim_description, rc_sim_control, rc_sim_sensors, rc_sim_engine, rc_sim_calibration" \
      || { echo "error: the rc-sim packages do not import after pip install" >&2; return 1; }
    printf '%s\n' "$want" > "$stamp_file" || return 1
    installed=1
    if [ "$extras" = "test" ]; then  # the packages themselves are current too
      _rc_sim_stamp "$root" "" > "$RC_SIM_VENV/.rc_sim_setup.sha256" || return 1
    fi
  fi
  # compile the engine's numba kernels once, on every core (a message only when it compiles):
  # what `rcsim run` needs, or every set for the tests; after an install also the bytecode of
  # what a run imports (uv does not write it, and PYTHONDONTWRITEBYTECODE may forbid later runs to)
  python -m rc_sim_engine.sim.warmup ${extras:+--all} ${installed:+--bytecode} \
    || { echo "error: compiling the engine's kernels failed" >&2; return 1; }
  return 0
}

# Called as a condition: `set -e` in the calling shell does not apply inside the function, so a
# failing step returns here with its status instead of closing the user's terminal.
_rc_sim_status=0
_rc_sim_setup || _rc_sim_status=$?
unset -f _rc_sim_apt _rc_sim_stamp _rc_sim_pip _rc_sim_install _rc_sim_setup
if [ "$_rc_sim_status" -ne 0 ]; then
  eval "unset _rc_sim_status; return $_rc_sim_status" 2>/dev/null || exit 1  # exit: not sourced
fi
unset _rc_sim_status
