#!/bin/bash
# Stops the mock cluster started by start.sh: cancels its jobs, then stops every slurmd, slurmctld,
# slurmdbd, MariaDB and munged by the pid files in its state directory (TERM, a bounded wait, then KILL).
# Nothing is stopped by name. Safe to run twice, and when nothing runs.
#
#   bash scripts/mock-slurm/stop.sh           # keeps the state directory (keys, accounting DB, logs)
#   bash scripts/mock-slurm/stop.sh --clean   # then removes the state directory
#
# ATTUNE_MOCK_SLURM_DIR: the state directory [/tmp/attune-mock-slurm]. Exit 1 when a daemon survived.
set -uo pipefail

DIR=${ATTUNE_MOCK_SLURM_DIR:-/tmp/attune-mock-slurm}
CLEAN=0
for a in "$@"; do
  case $a in
    --clean) CLEAN=1 ;;
    -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mock-slurm: unknown argument: $a (usage: stop.sh [--clean])" >&2; exit 2 ;;
  esac
done

T0=$(date +%s.%N)
log() { echo "mock-slurm: [$(elapsed)s] $*" >&2; }
elapsed() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }

if [ ! -e "$DIR/.attune-mock-slurm" ]; then
  log "no mock cluster in $DIR (no .attune-mock-slurm): nothing to stop"
  exit 0
fi
export SLURM_CONF=$DIR/etc/slurm.conf
RUN=$DIR/run

# Same test as start.sh: the pid file names a live (non-zombie) process with the daemon's command name.
pid_of() { # FILE NAME
  local file=$1 name=$2 pid state comm
  [ -s "$file" ] || return 1
  pid=$(tr -dc 0-9 <"$file")
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  state=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$pid/stat" 2>/dev/null) || return 1
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
  [ "$state" != Z ] && [ "$comm" = "$name" ] || return 1
  echo "$pid"
}
pid_alive() { # PID NAME: still the same live process?
  local state comm
  state=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 1
  comm=$(cat "/proc/$1/comm" 2>/dev/null) || return 1
  [ "$state" != Z ] && [ "$comm" = "$2" ]
}

# 1. Cancel every job while slurmctld still runs; otherwise slurmstepd and the job's processes outlive
#    the daemons. Bounded at 10 s (KillWait is 5 s): a job whose slurmd is dead stays COMPLETING, and
#    its slurmstepd is stopped below.
if pid_of "$RUN/slurmctld.pid" slurmctld >/dev/null && [ -e "$SLURM_CONF" ]; then
  jobs=$(timeout 10 squeue -h -o %i 2>/dev/null | tr '\n' ' ')
  if [ -n "${jobs// /}" ]; then
    log "cancelling jobs: $jobs"
    # shellcheck disable=SC2086
    timeout 10 scancel $jobs 2>/dev/null
    end=$((SECONDS + 10))
    while [ -n "$(timeout 10 squeue -h -o %i 2>/dev/null)" ] && [ $SECONDS -lt $end ]; do sleep 0.2; done
    [ -z "$(timeout 10 squeue -h -o %i 2>/dev/null)" ] || log "jobs still listed after 10 s: $(timeout 10 squeue -h -o '%i %T' | tr '\n' ' ')"
  fi
fi

# 2. TERM each group by pid file, wait (bounded), then KILL what is left.
left=0
stop_group() { # SECONDS NAME PIDFILE...
  local limit=$1 name=$2; shift 2
  local pids=() f p
  for f in "$@"; do
    [ -e "$f" ] || continue
    p=$(pid_of "$f" "$name") && pids+=("$p")
  done
  [ ${#pids[@]} = 0 ] && return 0
  log "stopping $name (pid ${pids[*]})"
  kill -TERM "${pids[@]}" 2>/dev/null
  local end=$((SECONDS + limit)) any
  while :; do
    any=0
    for p in "${pids[@]}"; do pid_alive "$p" "$name" && any=1; done
    [ $any = 0 ] && return 0
    [ $SECONDS -ge $end ] && break
    sleep 0.05
  done
  for p in "${pids[@]}"; do
    if pid_alive "$p" "$name"; then
      log "$name pid $p ignored TERM for ${limit}s: KILL"
      kill -KILL "$p" 2>/dev/null
    fi
  done
  sleep 0.2
  for p in "${pids[@]}"; do
    if pid_alive "$p" "$name"; then log "error: $name pid $p survived KILL"; left=1; fi
  done
}

stop_group 10 slurmd "$RUN"/slurmd-*.pid
# A job step whose slurmd died (or whose job could not be cancelled): its slurmstepd carries this
# cluster's SLURM_CONF (inherited from slurmd), which tells it from another cluster's. KILL it and the
# job processes under it (found through their parent pids before the kill orphans them). A user's
# shell with the same SLURM_CONF is not a slurmstepd and is left alone.
steps=()
for d in /proc/[0-9]*; do
  comm=
  { read -r comm <"$d/comm"; } 2>/dev/null
  [ "$comm" = slurmstepd ] || continue
  { tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_CONF" && steps+=("${d#/proc/}")
done
if [ ${#steps[@]} -gt 0 ]; then
  declare -A parent=() keep=()
  for f in /proc/[0-9]*/stat; do
    { line=$(<"$f"); } 2>/dev/null || continue
    rest=${line##*) }           # fields after "pid (comm) ": state ppid ...
    read -r _ ppid _ <<<"$rest"
    p=${f#/proc/}; parent[${p%/stat}]=$ppid
  done
  for p in "${steps[@]}"; do keep[$p]=1; done
  added=1
  while [ $added = 1 ]; do
    added=0
    for p in "${!parent[@]}"; do
      if [ -z "${keep[$p]:-}" ] && [ -n "${keep[${parent[$p]}]:-}" ]; then keep[$p]=1; added=1; fi
    done
  done
  tree=$(printf '%s\n' "${!keep[@]}" | sort -n | tr '\n' ' ')
  log "stopping leftover job steps: slurmstepd ${steps[*]} and their processes (pid $tree)"
  # shellcheck disable=SC2086
  kill -KILL $tree 2>/dev/null
fi
stop_group 10 slurmctld "$RUN/slurmctld.pid"
stop_group 10 slurmdbd "$RUN/slurmdbd.pid"
stop_group 30 mariadbd "$DIR/mysql/mariadbd.pid"
stop_group 10 munged "$DIR/munge-run/munged.pid"

if [ $left = 1 ]; then
  log "error: some daemons are still running (see above); $DIR kept"
  exit 1
fi
log "stopped in $(elapsed)s"

if [ $CLEAN = 1 ]; then
  case $DIR in / | "") log "error: refusing to remove '$DIR'"; exit 1 ;; esac
  rm -rf -- "$DIR"
  log "removed $DIR"
fi
exit 0
