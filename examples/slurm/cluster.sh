#!/usr/bin/env bash
# A real Slurm cluster on loopback, for trying `gpupool slurm` (examples/slurm/README.md) and for
# its tests: munged, slurmctld and NODES slurmd processes (Debian 12's slurm-wlm 22.05), each
# node advertising GPUS GPUs as GRES backed by fake device files, racks of two nodes, one
# partition "gpupool" that gpupool manages. Everything lives in $LAB; only 127.0.0.1 is used.
#
# Use it from a script (the daemons stay children of that shell, so they are stopped by PID):
#   source examples/slurm/cluster.sh
#   cluster_up          # fails with a clear message when Slurm cannot start
#   ... sbatch --hold -p gpupool ...; gpupool slurm --once ...
#   cluster_down        # cancels the jobs, stops exactly the daemons cluster_up started
#
# Knobs (environment): LAB (default /tmp/gpupool-slurm-example; wiped by cluster_up; must be
# under /tmp), NODES=4, GPUS=8, CTLD_PORT=16817, NODE_PORT_BASE=17001. Run as root.

LAB=${LAB:-/tmp/gpupool-slurm-example}
NODES=${NODES:-4}
GPUS=${GPUS:-8}
CTLD_PORT=${CTLD_PORT:-16817}
NODE_PORT_BASE=${NODE_PORT_BASE:-17001}
export SLURM_CONF=$LAB/etc/slurm.conf
CLUSTER_PIDS=()

cluster_fail() {
  echo "FAIL: Slurm cluster: $*" >&2
  return 1
}

cluster_check() {
  [ "$(id -u)" = 0 ] || { cluster_fail "must run as root (slurmd runs jobs as root here)"; return 1; }
  local p
  for p in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
    command -v "$p" >/dev/null ||
      { cluster_fail "$p not found: install slurmctld slurmd slurm-client munge (.ci/install-deps does)"; return 1; }
  done
  case "$LAB" in /tmp/?*) ;; *) cluster_fail "LAB=$LAB must be under /tmp"; return 1 ;; esac
}

cluster_write_configs() {
  rm -rf "$LAB"
  mkdir -p "$LAB"/{etc,log,state,run,spool,munge,dev,jobs}
  chmod 755 "$LAB"
  chmod 711 "$LAB/munge"  # munged: its socket directory must be o+x
  local n g last=$NODES
  # Fake GPUs: character devices with /dev/null's numbers (1:3).
  for n in $(seq 1 "$NODES"); do
    mkdir -p "$LAB/dev/n$n" "$LAB/spool/n$n"
    for g in $(seq 0 $((GPUS - 1))); do mknod "$LAB/dev/n$n/nvidia$g" c 1 3; done
  done
  cat > "$SLURM_CONF" <<CONF
ClusterName=gpupool-lab
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$LAB/munge/munge.socket.2
StateSaveLocation=$LAB/state
SlurmdSpoolDir=$LAB/spool/%n
SlurmctldPidFile=$LAB/run/slurmctld.pid
SlurmdPidFile=$LAB/run/slurmd-%n.pid
SlurmctldLogFile=$LAB/log/slurmctld.log
SlurmdLogFile=$LAB/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
TopologyPlugin=topology/tree
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
KillWait=2
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=n[1-$last] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[$NODE_PORT_BASE-$((NODE_PORT_BASE + NODES - 1))] CPUs=16 Boards=1 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=64000 Gres=gpu:h100:$GPUS State=UNKNOWN
PartitionName=gpupool Nodes=n[1-$last] Default=YES MaxTime=INFINITE State=UP
CONF
  {
    echo "AutoDetect=off"
    for n in $(seq 1 "$NODES"); do
      echo "NodeName=n$n Name=gpu Type=h100 File=$LAB/dev/n$n/nvidia[0-$((GPUS - 1))]"
    done
  } > "$LAB/etc/gres.conf"
  {
    local r=0
    for n in $(seq 1 2 "$NODES"); do
      r=$((r + 1))
      if [ $((n + 1)) -le "$NODES" ]; then echo "SwitchName=rack$r Nodes=n[$n-$((n + 1))]"
      else echo "SwitchName=rack$r Nodes=n$n"; fi
    done
    echo "SwitchName=spine Switches=rack[1-$r]"
  } > "$LAB/etc/topology.conf"
  mungekey --create --keyfile="$LAB/munge/munge.key" --bits=1024
  chmod 400 "$LAB/munge/munge.key"
}

cluster_up() {
  cluster_check || return 1
  cluster_write_configs || { cluster_fail "cannot write the configuration in $LAB"; return 1; }
  local M=$LAB/munge n i
  munged -F --socket="$M/munge.socket.2" --key-file="$M/munge.key" --pid-file="$M/munged.pid" \
    --log-file="$M/munged.log" --seed-file="$M/munged.seed" >"$LAB/log/munged.stdout" 2>&1 </dev/null &
  CLUSTER_PIDS+=($!)
  for i in $(seq 1 100); do munge -S "$M/munge.socket.2" -n >/dev/null 2>&1 && break; sleep 0.1; done
  munge -S "$M/munge.socket.2" -n | unmunge -S "$M/munge.socket.2" >/dev/null 2>&1 ||
    { cluster_fail "munged did not start (see $M/munged.log)"; cluster_down; return 1; }
  slurmctld -D -f "$SLURM_CONF" >"$LAB/log/slurmctld.stdout" 2>&1 </dev/null &
  CLUSTER_PIDS+=($!)
  for n in $(seq 1 "$NODES"); do
    slurmd -D -f "$SLURM_CONF" -N "n$n" >"$LAB/log/slurmd-n$n.stdout" 2>&1 </dev/null &
    CLUSTER_PIDS+=($!)
  done
  for i in $(seq 1 600); do
    [ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" = "$NODES" ] && return 0
    sleep 0.1
  done
  cluster_fail "the $NODES nodes did not become idle; last lines of $LAB/log/slurmctld.log:"
  tail -n 15 "$LAB/log/slurmctld.log" >&2 || true
  sinfo -N >&2 || true
  cluster_down
  return 1
}

cluster_down() {
  local p i
  if [ ${#CLUSTER_PIDS[@]} -gt 1 ]; then
    # Jobs first, so that their processes end before the daemons do.
    scancel --quiet --full --partition=gpupool 2>/dev/null || true
    for i in $(seq 1 100); do
      [ -z "$(squeue -h -t RUNNING,COMPLETING -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  # slurmd first, munged last (the others authenticate through it).
  for ((i = ${#CLUSTER_PIDS[@]} - 1; i >= 0; i--)); do
    p=${CLUSTER_PIDS[$i]}
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  CLUSTER_PIDS=()
}

# Run directly: `bash cluster.sh configs` writes the configuration only (to read it).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${1:-}" in
    configs) cluster_check && cluster_write_configs && echo "configuration written to $LAB/etc" ;;
    *) echo "usage: source $0, then cluster_up / cluster_down (or: bash $0 configs)" >&2; exit 2 ;;
  esac
fi
