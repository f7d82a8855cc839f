#!/bin/bash
# One spdylab campaign as a Slurm job array: array task k runs slice k+1 of N
# (N = the array's size) into its own directory; afterwards `spdylab merge` joins
# the slices and `spdylab report` draws them (docs/slurm.md).
#
#   sbatch --array=0-7 docs/slurm-array.sh fig2.toml /shared/fig2 [--no-har ...]
#   # when every task is done (or `sbatch --wait ...`):
#   spdylab merge /shared/fig2-slice-* --out /shared/fig2 && spdylab report /shared/fig2
#
# Each task runs as root (namespaces, TUN). A rerun of a failed task resumes its slice.
# SPDYLAB names the binary when it is not `spdylab` on PATH.
#SBATCH --job-name=spdylab-sweep
#SBATCH --cpus-per-task=2
#SBATCH --output=spdylab-sweep-%A_%a.log
set -euo pipefail
if [ $# -lt 2 ] || [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
  echo "usage: sbatch --array=0-N-1 $0 EXPERIMENT.toml OUT-PREFIX [SWEEP OPTION...]" >&2
  exit 2
fi
experiment=$1 out=$2; shift 2
i=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0} + 1))
n=$SLURM_ARRAY_TASK_COUNT
exec "${SPDYLAB:-spdylab}" sweep "$experiment" --shard "$i/$n" --out "$out-slice-$i" \
  --jobs "${SLURM_CPUS_PER_TASK:-2}" "$@"
