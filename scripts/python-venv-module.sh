# Sourced by scripts that make a venv (onnx-venv.sh, cutlass-headers.sh): Debian splits the
# venv module out of python3, so it is installed here when missing (as install-deps.sh installs
# the build's packages).
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  echo "sinter: installing python3-venv"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-venv >/dev/null
fi
