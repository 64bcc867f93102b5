#!/usr/bin/env bash
# Installs every Debian 12 package tokdyn needs to build, test, run under Slurm and post-process.
# Idempotent and non-interactive: packages already present are skipped by apt.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  openmpi-bin libopenmpi-dev
  petsc-dev slepc-dev
  libhdf5-openmpi-dev hdf5-tools
  libboost-program-options-dev
  googletest libgtest-dev
  librandom123-dev
  libopenblas-dev liblapacke-dev
  nlohmann-json3-dev libfftw3-dev
  python3-numpy python3-h5py python3-matplotlib python3-scipy python3-pytest
  clang-15 libfuzzer-15-dev
  slurm-wlm munge procps
  fortunes-min
  chromium
  ffmpeg python3-paraview xvfb  # postprocess/animate.py's MP4s; cli_paraview (ParaView renders in an Xvfb)
)

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# A munge socket without its munged (a machine image saved while munged ran, a daemon killed) makes every
# mpiexec wait ~2 s while Open MPI's PMIx munge plugin retries it; nothing listens there, so it goes.
clear_stale_munge_socket() {
  [ -S /run/munge/munge.socket.2 ] || return 0
  pgrep -x munged >/dev/null 2>&1 && return 0
  $SUDO rm -f /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock /run/munge/munged.pid
  echo "install-deps-debian: removed a munge socket no munged serves"
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps-debian: all ${#packages[@]} packages present"
  clear_stale_munge_socket
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# OpenBLAS rather than the slow reference BLAS for every consumer (PETSc, our tiles).
for alt in libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu; do
  cand=$(update-alternatives --list "$alt" 2>/dev/null | grep openblas | head -n 1 || true)
  [ -n "$cand" ] && $SUDO update-alternatives --set "$alt" "$cand" >/dev/null || true
done
echo "install-deps-debian: installed ${#missing[@]} packages"
clear_stale_munge_socket
