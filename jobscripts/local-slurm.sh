#!/usr/bin/env bash
# Single-node Slurm for tests on a throw-away Debian 12 machine (root, no systemd).
#
#   local-slurm.sh [start]   bring up munged, slurmctld, slurmd; wait until the node is usable
#   local-slurm.sh stop      kill the daemons (munged included)
#   local-slurm.sh status    print daemon pids and node state (within 5 s); exit 0 only if usable
#
# Needs the Debian packages slurm-wlm and munge (jobscripts/install-deps-debian.sh) and root.
# Environment knobs:
#   LOCAL_SLURM_TIMEOUT   seconds to wait for the node to become idle (default 60)
# More tasks than cores: `sbatch --ntasks=N --overcommit` (mpiexec -n N then needs no
# --oversubscribe); the node keeps its real CPU count.
# Partitions: debug (the default) and batch, both the whole node. Timings of finished jobs (there is no
# slurmdbd): `sacct -c -j JOBID --format=JobID,JobName,Partition,Elapsed,State` (the job completion log).
set -euo pipefail

CONF_DIR=/etc/slurm
CONF=$CONF_DIR/slurm.conf
LOG_DIR=/var/log/slurm
CTLD_SPOOL=/var/spool/slurmctld
SLURMD_SPOOL=/var/spool/slurmd
RUN_DIR=/run/slurm
CTLD_PID=$RUN_DIR/slurmctld.pid
SLURMD_PID=$RUN_DIR/slurmd.pid
PARTITION=debug
PARTITION2='batch'  # quoted: batch is also a command
JOBCOMP_LOG=$LOG_DIR/jobcomp.log
TIMEOUT=${LOCAL_SLURM_TIMEOUT:-60}

# Our own config, not whatever a caller's environment points at.
unset SLURM_CONF
export SLURM_CONF=$CONF

log() { echo "local-slurm: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

need_root() {
  [ "$(id -u)" -eq 0 ] || die "must run as root (slurmd runs as root here)"
  for exe in munged munge unmunge slurmctld slurmd sinfo squeue scontrol runuser setsid flock timeout; do
    command -v "$exe" >/dev/null || die "$exe not found; run jobscripts/install-deps-debian.sh"
  done
}

# Pids whose process name is exactly $1 (so 'slurmd' does not match 'slurmctld'). Reads /proc
# itself: minimal Debian images have no procps (pgrep/pkill).
pids_of() {
  local d c st out=""
  for d in /proc/[0-9]*; do
    { read -r c <"$d/comm"; } 2>/dev/null || continue
    [ "$c" = "$1" ] || continue
    # Skip zombies: a killed daemon lingers as one until PID 1 (not always a real init) reaps it.
    { read -r st <"$d/stat"; } 2>/dev/null || continue
    st=${st##*) }
    [ "${st%% *}" = Z ] && continue
    out+="${d#/proc/} "
  done
  printf '%s' "$out"
}
running() { [ -n "$(pids_of "$1")" ]; }
signal_all() { local p; for p in $(pids_of "$2"); do kill "-$1" "$p" 2>/dev/null || true; done; }

# The node's state, empty without an answer. No slurmctld process here: empty at once (sinfo would try DNS
# SRV records and retry the controller for up to a minute); a hung one gets 4 s.
node_state() {
  running slurmctld || return 0
  timeout 4 sinfo -h -o %T 2>/dev/null | head -n 1 || true
}

# Usable = the node accepts jobs. Busy states count: a start while tests run must not disturb them.
state_usable() {
  case "$1" in
    idle|mixed|allocated|completing) return 0 ;;
    *) return 1 ;;
  esac
}

short_host() { hostname -s 2>/dev/null || hostname; }

# Slurm resolves SlurmctldHost/NodeName; containers often have no /etc/hosts entry for themselves.
ensure_hosts_entry() {
  local h
  h=$(short_host)
  if ! getent hosts "$h" >/dev/null 2>&1; then
    log "hostname $h does not resolve; adding it to /etc/hosts"
    echo "127.0.1.1 $h" >>/etc/hosts
  fi
}

start_munge() {
  # munged refuses to start unless its dirs belong to the munge user and are not group/world-writable.
  install -d -o munge -g munge -m 0700 /etc/munge /var/log/munge
  install -d -o munge -g munge -m 0711 /var/lib/munge
  install -d -o munge -g munge -m 0755 /run/munge
  chown munge:munge /etc/munge /var/lib/munge /var/log/munge /run/munge
  if [ ! -s /etc/munge/munge.key ]; then
    log "creating munge key"
    mungekey --create --keyfile /etc/munge/munge.key 2>/dev/null \
      || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key

  # A munged that does not answer (e.g. still shutting down after a kill) is replaced.
  if running munged && ! wait_munge 5; then
    log "munged is not answering; restarting it"
    kill_daemon munged
  fi
  if ! running munged; then
    rm -f /run/munge/munged.pid /run/munge/munge.socket.2*   # stale after an unclean stop
    log "starting munged"
    # munged forks itself; stdio to /dev/null so no caller's pipe (ctest, $(...)) is held open,
    # and without fd 9 (our lock), or the daemon would hold the lock forever.
    runuser -u munge -- munged </dev/null >/dev/null 2>&1 9>&- \
      || { tail -n 20 /var/log/munge/munged.log >&2 2>/dev/null || true; die "munged failed to start"; }
  fi
  wait_munge 50 && return 0
  tail -n 20 /var/log/munge/munged.log >&2 2>/dev/null || true
  die "munge credential round trip (munge -n | unmunge) fails"
}

# True once a munge credential round trip works; tries $1 times, 0.1 s apart.
wait_munge() {
  local i
  for i in $(seq 1 "$1"); do
    # timeout: a hung (e.g. stopped) munged accepts connections but never answers.
    timeout 2 munge -n 2>/dev/null | timeout 2 unmunge >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# Prints the slurm.conf this machine should have.
gen_conf() {
  local host node_line mem
  host=$(short_host)
  # slurmd -C prints e.g. "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2
  # ThreadsPerCore=1 RealMemory=24105"; keep the topology and configure 5 % less memory: a node
  # that registers with less memory than configured is drained ("Low RealMemory"), and what
  # slurmd measures can drop slightly (kernel reservations, VM ballooning).
  node_line=$(slurmd -C 2>/dev/null | head -n 1)
  [ -n "$node_line" ] || die "slurmd -C printed nothing"
  mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node_line")
  [ -n "$mem" ] || die "no RealMemory in: $node_line"
  mem=$(( mem * 95 / 100 ))
  node_line=$(sed -e "s/RealMemory=[0-9]*/RealMemory=$mem/" -e "s/NodeName=[^ ]*/NodeName=$host/" <<<"$node_line")
  cat <<EOF
# Written by tokdyn jobscripts/local-slurm.sh: single-node Slurm for tests. Regenerated on start.
ClusterName=local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# A requeued job (scontrol requeue) may start again only cred_expire+1 s later: 120 s by default.
AuthInfo=cred_expire=20
# No systemd/cgroup v2 delegation in containers: track processes by parent pid, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# Job timings without slurmdbd: Debian's Slurm 22.05 has no accounting_storage/filetxt any more, but
# jobcomp/filetxt appends a line per finished job to JobCompLoc, which sacct -c reads (JobID, Elapsed,
# State, Partition, Account...). jobacct_gather/linux lets sstat show a running step's memory and CPU.
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$JOBCOMP_LOG
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=$CTLD_SPOOL
SlurmdSpoolDir=$SLURMD_SPOOL
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# Seconds between SIGTERM and SIGKILL when a job is cancelled or hits its time limit.
KillWait=30
# A node that was down (e.g. slurmd restarted) returns to service as soon as it registers.
ReturnToService=2
InactiveLimit=0
# sbatch --wait sleeps 2 s between polls and quadruples that while it is below MinJobAge/2
# (2, 8, 32 s... with the default 300); MinJobAge=4 keeps it at 2 s. Finished jobs still stay
# visible to scontrol for >= 4 s (slurmctld purges old jobs once a minute).
MinJobAge=4
Waittime=0

$node_line State=UNKNOWN
PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP
# The same node again, not the default: the tests check that SBATCH_PARTITION reaches a job.
PartitionName=$PARTITION2 Nodes=ALL Default=NO MaxTime=INFINITE State=UP
EOF
}

# Installs file $1 as slurm.conf.
install_conf() {
  install -d -m 0755 "$CONF_DIR"
  install -m 0644 "$1" "$CONF"
}

show_logs() {
  local f
  for f in "$LOG_DIR/slurmctld.log" "$LOG_DIR/slurmd.log"; do
    if [ -f "$f" ]; then
      echo "----- tail $f -----" >&2
      tail -n 25 "$f" >&2
    fi
  done
  echo "----- sinfo -----" >&2
  sinfo -N -l 2>&1 | tail -n 5 >&2 || true
}

kill_daemon() {
  # TERM, wait up to 10 s, then KILL: slurmctld saves state on TERM.
  local name=$1 i
  running "$name" || return 0
  signal_all TERM "$name"
  signal_all CONT "$name"   # a stopped process acts on TERM only once continued
  for i in $(seq 1 100); do
    running "$name" || return 0
    sleep 0.1
  done
  signal_all KILL "$name"
  sleep 0.2
}

stop_slurm() {
  kill_daemon slurmd
  kill_daemon slurmctld
  rm -f "$CTLD_PID" "$SLURMD_PID"
}

# Serialise start/stop: parallel ctest runs each call start, and two concurrent starts would
# both launch daemons.
take_lock() {
  exec 9>/run/local-slurm.lock
  flock -w 120 9 || die "could not lock /run/local-slurm.lock within 120 s"
}

cmd_start() {
  need_root
  take_lock
  ensure_hosts_entry
  local new_conf conf_changed=1
  new_conf=$(mktemp)
  gen_conf >"$new_conf"
  [ -f "$CONF" ] && cmp -s "$new_conf" "$CONF" && conf_changed=0
  start_munge

  if running slurmctld && running slurmd && state_usable "$(node_state)"; then
    if [ "$conf_changed" -eq 0 ]; then
      rm -f "$new_conf"
      log "already running (node $(node_state))"
      return 0
    fi
    # Restarting (with -c) would kill the queue: other test runs may share this Slurm.
    if [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
      rm -f "$new_conf"
      log "WARNING: slurm.conf is out of date, but jobs are queued: keeping the running daemons;"
      log "         run '$0 stop' and '$0 start' when the queue is empty"
      return 0
    fi
  fi
  if [ "$conf_changed" -eq 1 ]; then
    if running slurmctld || running slurmd; then
      log "slurm.conf changed; restarting daemons"
      stop_slurm
    fi
    install_conf "$new_conf"
  fi
  rm -f "$new_conf"

  install -d -m 0755 "$LOG_DIR" "$CTLD_SPOOL" "$SLURMD_SPOOL" "$RUN_DIR"
  # Both daemons fork into the background themselves; -c discards saved state (stale jobs/nodes
  # from an earlier run). setsid + /dev/null stdio: they outlive this script and hold no pipe;
  # 9>&-: they must not inherit the lock.
  if ! running slurmctld; then
    log "starting slurmctld"
    setsid slurmctld -c </dev/null >/dev/null 2>&1 9>&- || { show_logs; die "slurmctld failed to start"; }
  fi
  if ! running slurmd; then
    log "starting slurmd"
    setsid slurmd -c </dev/null >/dev/null 2>&1 9>&- || { show_logs; die "slurmd failed to start"; }
  fi

  local deadline=$(( SECONDS + TIMEOUT )) st="" resumed=0
  while :; do
    st=$(node_state)
    state_usable "$st" && break
    # down/drained with both daemons up (e.g. an old 'Low RealMemory' reason): resume it once.
    case "$st" in
      down*|drain*|drng*|drained*)
        if [ "$resumed" -eq 0 ] && running slurmd; then
          scontrol update NodeName="$(short_host)" State=RESUME >/dev/null 2>&1 || true
          resumed=1
        fi ;;
    esac
    if ! running slurmctld || ! running slurmd; then
      show_logs
      die "a slurm daemon exited during start-up (slurmctld: $(pids_of slurmctld)slurmd: $(pids_of slurmd))"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      show_logs
      die "node not idle after ${TIMEOUT}s (state: '${st:-no answer from slurmctld}')"
    fi
    sleep 0.5
  done
  log "ready: node $(short_host) $st, partitions $PARTITION (default) and $PARTITION2"
}

cmd_stop() {
  need_root
  take_lock
  stop_slurm
  if running munged; then
    munged --stop >/dev/null 2>&1 || kill_daemon munged
  fi
  # A socket left without its munged (killed, or a machine that kept /run) costs every later mpiexec ~2 s:
  # Open MPI's PMIx munge plugin retries a socket that refuses connections before it gives up.
  running munged || rm -f /run/munge/munged.pid /run/munge/munge.socket.2*
  log "stopped"
}

cmd_status() {
  local st rc=0
  echo "munged:    $(pids_of munged)"
  echo "slurmctld: $(pids_of slurmctld)"
  echo "slurmd:    $(pids_of slurmd)"
  st=$(node_state)
  if running slurmctld; then
    echo "node:      ${st:-no answer from slurmctld}"
  else
    echo "node:      no Slurm controller (start one: $0 start)"
  fi
  running munged && running slurmctld && running slurmd && state_usable "$st" || rc=1
  [ "$rc" -eq 0 ] && timeout 4 squeue 2>/dev/null || true
  return "$rc"
}

case "${1:-start}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  -h|--help|help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) log "ERROR: unknown subcommand '$1' (start|stop|status)"; exit 2 ;;
esac
