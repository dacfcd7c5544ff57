#!/usr/bin/env bash
# gpupool driving a real Slurm cluster (docs/slurm.md). Usage: real_cluster_test.sh GPUPOOL_BINARY
#
# Brings up munged, slurmctld and 4 slurmd (8 GPUs each, GRES on fake devices) on 127.0.0.1 with
# examples/slurm/cluster.sh, then:
#   1. placement: held jobs of several GPU sizes and priorities plus two 2-node gangs (of whole
#      nodes, and of half nodes, which must get two distinct nodes); `gpupool
#      slurm --once` cycles start them; every job must run exactly on the nodes of its Start
#      decision (checked from the tasks' own output and from scontrol) and finish;
#   2. preemption: 4 whole-node jobs fill the partition; a high-priority job arrives; the cycle
#      must preempt the victim gpupool chose (after its checkpoint signal), start the newcomer
#      where gpupool said, and, run by `gpupool slurm --interval 1` (stopped with SIGTERM), the
#      victim must resume and finish.
# Fails (never skips) when Slurm cannot start. Stops only the processes it started, by PID.
set -uo pipefail

GPUPOOL=${1:?usage: $0 GPUPOOL_BINARY}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# Ports from the PID, so that test runs of several build trees at once do not collide.
PORT=$((20000 + ($$ % 4000) * 8))
export LAB=/tmp/gpupool-slurm-test.$$ CTLD_PORT=$PORT NODE_PORT_BASE=$((PORT + 1)) NODES=4 GPUS=8
# shellcheck source=../../examples/slurm/cluster.sh
source "$ROOT/examples/slurm/cluster.sh"
POLICY=$ROOT/examples/slurm/policy.json
JOB=$ROOT/examples/slurm/job.sh
LOOP_PID=""

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
cleanup() {
  if [ -n "$LOOP_PID" ]; then kill "$LOOP_PID" 2>/dev/null; wait "$LOOP_PID" 2>/dev/null; fi
  cluster_down
  rm -rf "$LAB"
}
trap cleanup EXIT
command -v jq >/dev/null || fail "jq not found (.ci/install-deps installs it)"
cluster_up || fail "cannot start Slurm (see above)"
echo "cluster up: $(sinfo -h -N -o '%N:%t:%G' | tr '\n' ' ')"

submit() {  # submit NAME WORK_S SBATCH_ARGS... -> job id
  local name=$1 work=$2
  shift 2
  sbatch --parsable --hold -p gpupool -J "$name" -D "$LAB/jobs" --open-mode=append \
    -o "$LAB/jobs/%j.out" --export=ALL,WORK_S="$work" "$@" "$JOB" || fail "sbatch $name"
}
field() {  # field JOB KEY -> value of KEY= in scontrol -o show job
  scontrol -o show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}
state() { field "$1" JobState; }
wait_state() {  # wait_state JOB STATE... (60 s at most)
  local job=$1 s i w
  shift
  for i in $(seq 1 600); do
    s=$(state "$job")
    for w in "$@"; do [ "$s" = "$w" ] && return 0; done
    sleep 0.1
  done
  fail "job $job is $s, expected $*: $(scontrol -o show job "$job")"
}
cycle() {  # cycle [ARGS...]: one `gpupool slurm --once` cycle; decisions in $LAB/cycle.json
  "$GPUPOOL" slurm --once --policy "$POLICY" "$@" >"$LAB/cycle.json" 2>"$LAB/cycle.err" ||
    fail "gpupool slurm --once: $(cat "$LAB/cycle.err")"
  sed 's/^/  | /' "$LAB/cycle.err"
}
chosen_nodes() {  # chosen_nodes DECISIONS_FILE JOB -> "n1,n2" (sorted) or ""
  jq -r --arg j "$2" 'select(.starts != null) | .starts[] | select(.job == $j)
    | [.placements[].node] | unique | join(",")' "$1" | tail -n1
}
ran_nodes() {  # where the job's tasks said they ran, last run only -> "n1,n2"
  awk -v j="$1" '/^start job=/ {delete seen} /^task job=/ {split($3, a, "="); seen[a[2]] = 1}
    END {n = ""; for (k in seen) n = n k "\n"; printf "%s", n}' "$LAB/jobs/$1.out" 2>/dev/null |
    sort | paste -sd, -
}
slurm_nodes() { scontrol show hostnames "$(field "$1" NodeList)" | sort | paste -sd, -; }
check_ran_where_chosen() {  # check_ran_where_chosen JOB EXPECTED_NODES
  local job=$1 want=$2 got i
  [ -n "$want" ] || fail "job $job: no Start decision"
  wait_state "$job" RUNNING COMPLETED
  got=$(slurm_nodes "$job")
  [ "$got" = "$want" ] || fail "job $job: gpupool chose $want, scontrol says $got"
  for i in $(seq 1 300); do [ "$(ran_nodes "$job")" = "$want" ] && break; sleep 0.1; done
  got=$(ran_nodes "$job")
  [ "$got" = "$want" ] || fail "job $job: gpupool chose $want, its tasks ran on '$got'"
  echo "  job $job ran on $got, as gpupool chose"
}

echo "== 1. placement: gangs, GPU sizes, priorities"
A=$(submit gang-2x8 4 -N2 --gres=gpu:h100:8)
B=$(submit four 4 --gres=gpu:4)
C=$(submit two-urgent 4 --gres=gpu:2 --nice=-5)
D=$(submit one 4 --gres=gpu:1)
E=$(submit six 4 --gres=gpu:h100:6 -t 5)
F=$(submit gang-2x4 4 -N2 --gres=gpu:h100:4)
JOBS="$A $B $C $D $E $F"
sleep 2
for j in $JOBS; do
  [ "$(state "$j")" = PENDING ] || fail "held job $j started by itself: $(state "$j")"
done
cycle --dry-run
[ "$(jq '.starts | length' "$LAB/cycle.json")" -gt 0 ] || fail "dry run: no Start decision"
for j in $JOBS; do [ "$(state "$j")" = PENDING ] || fail "--dry-run changed job $j"; done
declare -A WANT
for round in $(seq 1 20); do
  cycle
  for j in $JOBS; do
    n=$(chosen_nodes "$LAB/cycle.json" "$j")
    [ -n "$n" ] || continue
    WANT[$j]=$n
    check_ran_where_chosen "$j" "$n"
  done
  left=0
  for j in $JOBS; do [ -z "${WANT[$j]:-}" ] && left=1; done
  [ $left = 0 ] && break
  sleep 2
done
for j in $JOBS; do [ -n "${WANT[$j]:-}" ] || fail "job $j never started: $(squeue -h -j "$j" -o %k)"; done
for j in $JOBS; do
  wait_state "$j" COMPLETED
  [ "$(field "$j" ExitCode)" = 0:0 ] || fail "job $j exit code $(field "$j" ExitCode)"
  grep -q "^done job=$j" "$LAB/jobs/$j.out" || fail "job $j did not finish its work"
done
gpus=$(grep -c "^task job=$C .*gpus=[0-9],[0-9]$" "$LAB/jobs/$C.out")
[ "$gpus" = 1 ] || fail "job $C should have seen 2 GPUs: $(cat "$LAB/jobs/$C.out")"
[ "$(tr ',' '\n' <<<"${WANT[$F]}" | wc -l)" = 2 ] ||
  fail "job $F (2 nodes x 4 GPUs) was placed on ${WANT[$F]}, not on two nodes"
echo "  all 6 jobs ran where gpupool chose and completed"

echo "== 2. preemption: a high-priority job arrives in a full partition"
# The fillers work 40 s: long enough to be still running when the checks after the preemption
# run on a busy machine (with 25 s, one run on a heavily loaded machine failed).
FILL=""
for k in 1 2 3 4; do
  FILL="$FILL $(submit fill-$k 40 --gres=gpu:8 --comment="checkpoint=USR1@2")"
done
# A node whose last job is still completing has no free GPU yet: cycle until all four started.
declare -A FILLED
for round in $(seq 1 10); do
  cycle
  for j in $FILL; do
    n=$(chosen_nodes "$LAB/cycle.json" "$j")
    [ -n "$n" ] || continue
    FILLED[$j]=$n
    check_ran_where_chosen "$j" "$n"
  done
  [ ${#FILLED[@]} = 4 ] && break
  sleep 1
done
[ ${#FILLED[@]} = 4 ] || fail "the 4 whole-node jobs did not all start"
# Every filler must have started its work before the newcomer arrives.
for j in $FILL; do
  for i in $(seq 1 300); do grep -q "^task job=$j" "$LAB/jobs/$j.out" 2>/dev/null && break; sleep 0.1; done
done
H=$(submit urgent 3 --gres=gpu:8 --nice=-100)
cycle
VICTIM=$(jq -r '.preemptions[0].job // empty' "$LAB/cycle.json")
[ -n "$VICTIM" ] || fail "no preemption: $(cat "$LAB/cycle.json")"
[ "$(jq '.preemptions | length' "$LAB/cycle.json")" = 1 ] || fail "more than one victim"
[ "$(jq -r '.preemptions[0].for_job' "$LAB/cycle.json")" = "$H" ] || fail "victim not for $H"
H_NODES=$(chosen_nodes "$LAB/cycle.json" "$H")
V_NODES=$(ran_nodes "$VICTIM")
echo "  gpupool preempts job $VICTIM (on $V_NODES) for job $H, which it places on $H_NODES"
grep -q "^checkpoint job=$VICTIM" "$LAB/jobs/$VICTIM.out" ||
  fail "victim $VICTIM got no checkpoint signal: $(cat "$LAB/jobs/$VICTIM.out")"
wait_state "$VICTIM" PENDING
case "$(squeue -h -j "$VICTIM" -o %k)" in
  *"gpupool: preempted for job $H"*) ;;
  *) fail "victim comment: $(squeue -h -j "$VICTIM" -o %k)" ;;
esac
check_ran_where_chosen "$H" "$H_NODES"
for j in $FILL; do
  [ "$j" = "$VICTIM" ] || [ "$(state "$j")" = RUNNING ] || fail "job $j should still run"
done

echo "== 3. the victim resumes: gpupool slurm --interval 1 until it has finished"
"$GPUPOOL" slurm --interval 1 --policy "$POLICY" >"$LAB/loop.json" 2>"$LAB/loop.err" &
LOOP_PID=$!
wait_state "$H" COMPLETED
for i in $(seq 1 900); do
  [ "$(state "$VICTIM")" = COMPLETED ] && break
  sleep 0.1
done
kill -TERM "$LOOP_PID"
wait "$LOOP_PID"
rc=$?
LOOP_PID=""
[ $rc = 0 ] || fail "gpupool slurm --interval exited $rc after SIGTERM: $(tail -5 "$LAB/loop.err")"
grep -q "gpupool slurm: stopped" "$LAB/loop.err" || fail "no clean stop: $(tail -5 "$LAB/loop.err")"
[ "$(state "$VICTIM")" = COMPLETED ] || fail "victim $VICTIM did not finish: $(state "$VICTIM")"
[ "$(field "$VICTIM" Restarts)" = 1 ] || fail "victim restarts: $(field "$VICTIM" Restarts)"
RESUMED=$(chosen_nodes "$LAB/loop.json" "$VICTIM")
[ -n "$RESUMED" ] || fail "no Start of the victim in the loop's decisions"
[ "$(ran_nodes "$VICTIM")" = "$RESUMED" ] ||
  fail "victim resumed on $(ran_nodes "$VICTIM"), gpupool chose $RESUMED"
[ "$(grep -c "^start job=$VICTIM" "$LAB/jobs/$VICTIM.out")" = 2 ] || fail "victim ran not twice"
grep -q "^done job=$VICTIM" "$LAB/jobs/$VICTIM.out" || fail "victim did not finish its work"
echo "  job $VICTIM resumed on $RESUMED (as gpupool chose) and completed"
for j in $FILL; do wait_state "$j" COMPLETED; done
echo "PASS"
