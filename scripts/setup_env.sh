# Source me: set up a fresh Debian/Ubuntu machine for rc-sim (Debian tools + a Python venv).
#   RC_SIM_VENV   venv location (default: .venv in the repository)
#   RC_SIM_EXTRAS "test" to also install the test/lint tools (requirements-test.txt)
# Installs the five packages with plain pip (editable, "compat" mode so that running from the
# repository root does not shadow them with the outer package folders); no ROS is needed.
set -euo pipefail
RC_SIM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RC_SIM_VENV="${RC_SIM_VENV:-$RC_SIM_ROOT/.venv}"

_rc_sim_apt() {  # Debian tools for SDF/URDF validation (tests use them; the simulator does not)
  local missing=()
  command -v ign >/dev/null 2>&1 || missing+=(ignition-tools libsdformat-dev)
  command -v check_urdf >/dev/null 2>&1 || missing+=(liburdfdom-tools)
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then sudo="sudo"; else
      echo "note: not root: skipping apt-get install ${missing[*]} (SDF/URDF validation tests will skip)" >&2
      return 0
    fi
  fi
  echo ">> apt-get install ${missing[*]}" >&2
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

if [ "${RC_SIM_EXTRAS:-}" = "test" ]; then _rc_sim_apt; fi

if [ ! -x "$RC_SIM_VENV/bin/python" ]; then
  echo ">> creating venv $RC_SIM_VENV" >&2
  python3 -m venv "$RC_SIM_VENV"
fi
# shellcheck disable=SC1091
. "$RC_SIM_VENV/bin/activate"
export PIP_DISABLE_PIP_VERSION_CHECK=1
echo ">> pip install the rc-sim packages" >&2
pip install -q -e "$RC_SIM_ROOT/rc_sim_description" -e "$RC_SIM_ROOT/rc_sim_control" \
  -e "$RC_SIM_ROOT/rc_sim_sensors" -e "$RC_SIM_ROOT/rc_sim_engine" \
  -e "$RC_SIM_ROOT/rc_sim_calibration" --config-settings editable_mode=compat 2>&1 | grep -v '^WARNING: Location' >&2 || true
if [ "${RC_SIM_EXTRAS:-}" = "test" ]; then
  pip install -q -r "$RC_SIM_ROOT/requirements-test.txt" 2>&1 | grep -v '^WARNING: Location' >&2 || true
fi
python -c "import rc_sim_description, rc_sim_control, rc_sim_sensors, rc_sim_engine, rc_sim_calibration"
export MPLBACKEND=Agg
set +euo pipefail
