#!/bin/bash
# A throw-away Slurm cluster on one machine, for the tests and benchmarks of
# `sluice run --launcher slurm`: a private munged (its own key and socket), one slurmctld
# and N slurmd as virtual nodes n1..nN, all on 127.0.0.1 with ports of their own, using
# Debian's slurmctld, slurmd, slurm-client and munge packages (scripts/install-deps.sh).
#
#   slurm-local.sh up [N]    start it; prints "export SLURM_CONF=..." for the clients
#   slurm-local.sh down      stop every daemon it started, by PID (never by name)
#
# Environment: SLURM_LOCAL_DIR (state, logs, config; default /tmp/slurm-local),
# SLURM_LOCAL_CTLD_PORT (default 16817), SLURM_LOCAL_NODE_PORTS (one port per node,
# space-separated; default 16901, 16902...), SLURM_LOCAL_CPUS (per node; default nproc).
#
# Needs root (slurmd starts job steps as their user). No cgroups here, so proctrack/linuxproc
# and task/none. Every node has the address 127.0.0.1: a program that binds to loopback
# instead of its node's address would not be caught by this cluster.
set -euo pipefail
D=${SLURM_LOCAL_DIR:-/tmp/slurm-local}
N=${2:-2}
CTLD_PORT=${SLURM_LOCAL_CTLD_PORT:-16817}
read -r -a NODE_PORTS <<< "${SLURM_LOCAL_NODE_PORTS:-$(seq -s ' ' 16901 $((16900 + N)))}"
HOST=$(hostname -s)
cpus_per=${SLURM_LOCAL_CPUS:-$(nproc)}   # per virtual node; may oversubscribe the real cores

up() {
  local missing=()
  for c in slurmctld slurmd munged sinfo srun; do
    command -v "$c" >/dev/null || [ -x "/usr/sbin/$c" ] || missing+=("$c")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "slurm-local.sh: missing ${missing[*]}; run scripts/install-deps.sh (Debian: slurmctld slurmd slurm-client munge)" >&2
    return 1
  fi
  [ "${#NODE_PORTS[@]}" -ge "$N" ] || { echo "slurm-local.sh: SLURM_LOCAL_NODE_PORTS has fewer than $N ports" >&2; return 1; }
  rm -rf "$D"; mkdir -p "$D"/{log,run,ctld,munge}
  # A private munge instance (own key and socket), so nothing under /etc or /run is touched.
  dd if=/dev/urandom of="$D/munge/munge.key" bs=1 count=1024 status=none
  chmod 700 "$D/munge"; chmod 400 "$D/munge/munge.key"
  /usr/sbin/munged --force --key-file="$D/munge/munge.key" --socket="$D/munge/munge.sock" \
     --pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" --seed-file="$D/munge/seed"
  { cat <<CONF
ClusterName=sluicetest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.sock
CryptoType=crypto/munge
StateSaveLocation=$D/ctld
SlurmdSpoolDir=$D/spool-%n
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
KillWait=5
MinJobAge=30
CONF
    for i in $(seq 1 "$N"); do
      echo "NodeName=n$i NodeHostname=$HOST NodeAddr=127.0.0.1 Port=${NODE_PORTS[$((i - 1))]} CPUs=$cpus_per RealMemory=1000 State=UNKNOWN"
    done
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
    # A request over this one's limit is queued, never granted (EnforcePartLimits=NO).
    echo "PartitionName=one Nodes=ALL MaxNodes=1 MaxTime=INFINITE State=UP OverSubscribe=YES"
  } > "$D/slurm.conf"
  export SLURM_CONF="$D/slurm.conf"
  slurmctld -f "$SLURM_CONF"
  for i in $(seq 1 "$N"); do mkdir -p "$D/spool-n$i"; slurmd -f "$SLURM_CONF" -N "n$i"; done
  for _ in $(seq 1 120); do
    [ "$(sinfo -h -p debug -t idle -o %D 2>/dev/null || true)" = "$N" ] && { echo "export SLURM_CONF=$SLURM_CONF"; return 0; }
    sleep 0.25
  done
  echo "slurm-local.sh: Slurm did not come up; see $D/log" >&2; sinfo >&2 || true; return 1
}

down() {   # stop by PID (never by name); wait up to 15 s, then SIGKILL
  local pids=() f p
  for f in "$D"/run/slurmd-*.pid "$D"/run/slurmctld.pid "$D"/munge/munged.pid; do
    [ -f "$f" ] && pids+=("$(cat "$f")")
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for _ in $(seq 1 60); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && return 0; sleep 0.25
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}
"${1:-up}"
