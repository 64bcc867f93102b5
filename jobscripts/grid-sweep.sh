#!/usr/bin/env bash
# Submits the whole grid of doc/science.md section 6.5: one array job (15 tasks) per grid deck in input/.
#   jobscripts/grid-sweep.sh OUTDIR [sbatch options...]
set -euo pipefail
outdir=${1:?usage: jobscripts/grid-sweep.sh OUTDIR [sbatch options...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
for deck in "$here"/../input/grid-*.ini; do
  sbatch "$@" "$here/grid.sbatch" "$deck" "$outdir"
done
