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
  slurm-wlm munge procps
  fortunes-min
  chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps-debian: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# OpenBLAS rather than the slow reference BLAS for every consumer (PETSc, our tiles).
for alt in libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu; do
  cand=$(update-alternatives --list "$alt" 2>/dev/null | grep openblas | head -n 1 || true)
  [ -n "$cand" ] && $SUDO update-alternatives --set "$alt" "$cand" >/dev/null || true
done
echo "install-deps-debian: installed ${#missing[@]} packages"
