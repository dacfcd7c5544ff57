#!/usr/bin/env bash
# The walkthrough of examples/slurm/README.md as one script: a loopback Slurm cluster, jobs
# submitted held into the "gpupool" partition, one dry run and one real cycle of `gpupool slurm`,
# what squeue then shows, and the jobs running to completion. Run as root:
#   bash examples/slurm/walkthrough.sh path/to/gpupool
# (ctest runs it as example_slurm_walkthrough). Exits non-zero when a step does not do what the
# README says.
set -euo pipefail
GPUPOOL=${1:-gpupool}
HERE=$(cd "$(dirname "$0")" && pwd)
# Ports from the PID unless given, so that several runs at once do not collide.
PORT=$((20000 + ($$ % 4000) * 8))
export LAB=${LAB:-/tmp/gpupool-slurm-walkthrough.$$} CTLD_PORT=${CTLD_PORT:-$PORT}
export NODE_PORT_BASE=${NODE_PORT_BASE:-$((CTLD_PORT + 1))} NODES=4 GPUS=8
source "$HERE/cluster.sh"
trap 'cluster_down; rm -rf "$LAB"' EXIT
step() { printf '\n### %s\n' "$*"; }
die() { echo "walkthrough FAILED: $*" >&2; exit 1; }

step "1. Bring up the cluster: 4 nodes x 8 GPUs, partition gpupool"
cluster_up || die "cannot start Slurm"
sinfo -N -o "%N %P %t %G"

step "2. Submit jobs held into the gpupool partition (the opt-in)"
submit() { sbatch --parsable --hold -p gpupool -D "$LAB/jobs" -o "$LAB/jobs/%j.out" \
             --open-mode=append --export=ALL,WORK_S=3 "$@" "$HERE/job.sh"; }
GANG=$(submit -J gang -N2 --gres=gpu:8)
TRAIN=$(submit -J train --gres=gpu:4 --comment="resnet checkpoint=USR1@30")
URGENT=$(submit -J urgent --gres=gpu:2 --nice=-10)
SPREAD=$(submit -J spread -N2 --gpus=4)
squeue -o "%.4i %.8j %.8T %.14r %.16b %k"

step "3. A dry run: the decisions, and the commands that would run (stderr)"
"$GPUPOOL" slurm --once --dry-run --policy "$HERE/policy.json" > "$LAB/dry.json"
jq -c '.starts[] | {job, nodes: [.placements[].node]}' "$LAB/dry.json"
[ "$(squeue -h -t PENDING -o %i | wc -l)" = 4 ] || die "the dry run changed Slurm"

step "4. One real cycle"
"$GPUPOOL" slurm --once --policy "$HERE/policy.json" > "$LAB/cycle.json"
jq -c '.starts[] | {job, nodes: [.placements[].node]}' "$LAB/cycle.json"
jq -c '.pending[] | {job, reason}' "$LAB/cycle.json"
sleep 2
squeue -o "%.4i %.8j %.8T %.10N %k"
for j in $GANG $TRAIN $URGENT; do
  want=$(jq -r --arg j "$j" '.starts[] | select(.job == $j) | [.placements[].node] | unique | join(",")' "$LAB/cycle.json")
  [ -n "$want" ] || die "job $j was not started"
  for _ in $(seq 1 100); do
    [ "$(squeue -h -j "$j" -o %T)" != PENDING ] && break; sleep 0.2
  done
  got=$(scontrol show hostnames "$(squeue -h -t all -j "$j" -o %N)" | paste -sd, -)
  [ "$got" = "$want" ] || die "job $j runs on '$got', gpupool chose $want"
done
case "$(squeue -h -j "$SPREAD" -o %k)" in
  *"gpupool: not scheduled: --gpus=4 over 2 nodes"*) ;;
  *) die "job $SPREAD should say why it is not scheduled" ;;
esac

step "5. The jobs run to completion"
for j in $GANG $TRAIN $URGENT; do
  for _ in $(seq 1 300); do
    [ "$(scontrol -o show job "$j" | grep -o 'JobState=[A-Z]*')" = JobState=COMPLETED ] && break
    sleep 0.2
  done
  grep -q "^done job=$j" "$LAB/jobs/$j.out" || die "job $j did not complete"
  cat "$LAB/jobs/$j.out"
done
echo "walkthrough done"
