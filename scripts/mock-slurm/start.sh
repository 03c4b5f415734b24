#!/bin/bash
# Starts the mock cluster: a real Slurm on this machine (munged, slurmdbd with its own MariaDB,
# slurmctld, and one slurmd per fake GPU node), installing the Debian packages when missing.
# Follows the research notes on running Slurm on one machine; deviations are marked "Deviation:".
#
#   bash scripts/mock-slurm/start.sh            # as root; prints `export SLURM_CONF=...` on stdout
#   eval "$(bash scripts/mock-slurm/start.sh)"  # the same, exported into this shell
#   bash scripts/mock-slurm/stop.sh [--clean]   # stops every daemon by its pid file
#
# Everything lives under one state directory ($ATTUNE_MOCK_SLURM_DIR, default /tmp/attune-mock-slurm):
# configuration, munge key, MariaDB data, spool, state, logs, pid files, env.sh. Nothing under /etc, /run
# or /var is used, and every port is its own (base 16800, not Slurm's 6817-6819 or MariaDB's 3306), so a
# system Slurm, munged or MariaDB on the same machine is left alone.
#
# Safe to run twice: when the cluster is already up it prints its state and exits 0; when only some of
# its daemons are alive it starts the missing ones. Only the `export` line goes to stdout; progress and
# errors go to stderr. No daemon keeps this script's stdout or stderr open, so `$(start.sh)` returns.
#
# Environment:
#   ATTUNE_MOCK_SLURM_DIR            state directory                       [/tmp/attune-mock-slurm]
#   ATTUNE_MOCK_SLURM_DBD            1: slurmdbd + MariaDB (real sacct, accounts enforced); 0: none [1]
#   ATTUNE_MOCK_SLURM_NODES_PER_TYPE nodes per GPU type (h100, h200, b200), 8 GPUs each   [2]
#   ATTUNE_MOCK_SLURM_PORT_BASE      ports: base+6 MariaDB, +17 slurmctld, +19 slurmdbd, +21.. slurmd  [16800]
#   ATTUNE_MOCK_SLURM_WAIT           seconds to wait for each daemon / for all nodes idle   [60]
#   ATTUNE_MOCK_SLURM_KEEP_ON_FAILURE 1: leave the daemons running when the start fails     [0]
set -euo pipefail

DIR=${ATTUNE_MOCK_SLURM_DIR:-/tmp/attune-mock-slurm}
DBD=${ATTUNE_MOCK_SLURM_DBD:-1}
PER_TYPE=${ATTUNE_MOCK_SLURM_NODES_PER_TYPE:-2}
PORT_BASE=${ATTUNE_MOCK_SLURM_PORT_BASE:-16800}
WAIT=${ATTUNE_MOCK_SLURM_WAIT:-60}
KEEP_ON_FAILURE=${ATTUNE_MOCK_SLURM_KEEP_ON_FAILURE:-0}
TYPES=(h100 h200 b200)
ACCOUNT=attune                       # an account besides root's own, for recipes that name one
CLUSTER=mock                         # ClusterName (lower case: it names MariaDB tables)

MYSQL_PORT=$((PORT_BASE + 6))
CTLD_PORT=$((PORT_BASE + 17))
SLURMD_PORT=$((PORT_BASE + 18))      # unused: every node has its own Port=, but keep 6818 free
DBD_PORT=$((PORT_BASE + 19))
NODE_PORT0=$((PORT_BASE + 21))

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T0=$(date +%s.%N)
log() { echo "mock-slurm: [$(elapsed)s] $*" >&2; }
die() { echo "mock-slurm: error: $*" >&2; exit 1; }
elapsed() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and runs munged as the munge user)"
case $DIR in /*) ;; *) die "ATTUNE_MOCK_SLURM_DIR must be an absolute path: $DIR" ;; esac
[[ $PER_TYPE =~ ^[1-9][0-9]?$ ]] || die "ATTUNE_MOCK_SLURM_NODES_PER_TYPE must be 1..99: $PER_TYPE"
if ! [[ $PORT_BASE =~ ^[0-9]+$ ]] || [ "$PORT_BASE" -lt 1024 ] || [ "$PORT_BASE" -gt 65000 ]; then
  die "ATTUNE_MOCK_SLURM_PORT_BASE must be 1024..65000: $PORT_BASE"
fi
case $DBD in 0 | 1) ;; *) die "ATTUNE_MOCK_SLURM_DBD must be 0 or 1: $DBD" ;; esac

ETC=$DIR/etc RUN=$DIR/run LOG=$DIR/log VAR=$DIR/var
export SLURM_CONF=$ETC/slurm.conf
MUNGE_SOCKET=$DIR/munge-run/munge.socket.2

# ---------------------------------------------------------------------------------------------------
# Packages. Deviation: the notes install as a separate step; here it happens when a binary is missing.
install_packages() {
  local pkgs=(slurmctld slurmd slurm-client munge)
  [ "$DBD" = 1 ] && pkgs+=(slurmdbd mariadb-server)
  local missing=() p installed
  # dpkg-query exits 1 when a package is unknown (a fresh machine): that is what we are here to find out.
  installed=$( (dpkg-query -W -f='${Package} ${Status}\n' "${pkgs[@]}" 2>/dev/null || true) | awk '/ install ok installed$/ { print $1 }')
  for p in "${pkgs[@]}"; do
    grep -qxF "$p" <<<"$installed" || missing+=("$p")
  done
  [ ${#missing[@]} = 0 ] && return 0
  log "installing ${missing[*]} (apt-get, --no-install-recommends)"
  # Keep the packages' postinst from starting the system's munge/slurm/mariadb services: this cluster
  # runs its own daemons, and a system slurmctld or MariaDB would hold ports and outlive stop.sh.
  local own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && own_policy=1
  fi
  local rc=0
  (
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"
  ) >&2 || rc=$?
  if [ "$own_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; trap - EXIT; fi
  [ "$rc" = 0 ] || die "apt-get install ${missing[*]} failed (rc=$rc)"
}

# ---------------------------------------------------------------------------------------------------
# Processes. A daemon is alive when its pid file names a process that is not a zombie and whose command
# name is the daemon's (pitfall 8: kill -0 succeeds on a zombie; the name check guards against pid reuse).
pid_of() { # FILE NAME -> prints the pid when alive
  local file=$1 name=$2 pid state comm
  [ -s "$file" ] || return 1
  pid=$(tr -dc 0-9 <"$file")
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  state=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$pid/stat" 2>/dev/null) || return 1
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
  [ "$state" != Z ] && [ "$comm" = "$name" ] || return 1
  echo "$pid"
}
alive() { pid_of "$1" "$2" >/dev/null; }

port_listening() { # PORT: is anything on this machine listening on TCP PORT?
  local hex
  hex=$(printf '%04X' "$1")
  awk -v p=":$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
require_port_free() { # PORT WHAT
  ! port_listening "$1" || fail "port $1 ($2) is already in use by another process; a leftover cluster? \
(stop it, or choose other ports with ATTUNE_MOCK_SLURM_PORT_BASE)"
}

wait_until() { # SECONDS DESCRIPTION COMMAND...  (with WATCH="PIDFILE NAME": fail as soon as it exits)
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit)) grace=$((SECONDS + 3))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $end ]; then
      fail "timed out after ${limit}s waiting for $what"
    fi
    # shellcheck disable=SC2086
    if [ -n "${WATCH:-}" ] && [ $SECONDS -ge $grace ] && ! alive $WATCH; then
      fail "${WATCH#* } exited while waiting for $what"
    fi
    sleep 0.1
  done
}

fail() {
  echo "mock-slurm: error: $*" >&2
  local f
  for f in "$DIR/munge/munged.log" "$DIR/mysql/mariadbd.err" "$LOG"/slurmdbd.log "$LOG"/slurmctld.log \
    "$LOG"/slurmd-*.log; do
    [ -s "$f" ] || continue
    echo "----- tail $f" >&2
    tail -n 15 "$f" >&2
  done
  if command -v sinfo >/dev/null && [ -e "$SLURM_CONF" ]; then
    echo "----- sinfo -N" >&2
    timeout 5 sinfo -N -o '%N %t %G %f %E' >&2 2>&1 || true
  fi
  if [ "$KEEP_ON_FAILURE" = 1 ] || [ "${COLD:-1}" = 0 ]; then
    echo "mock-slurm: daemons left running (a partial restart, or ATTUNE_MOCK_SLURM_KEEP_ON_FAILURE=1); stop them with: bash $HERE/stop.sh" >&2
  else
    echo "mock-slurm: stopping what runs (logs stay in $DIR)" >&2
    ATTUNE_MOCK_SLURM_DIR=$DIR bash "$HERE/stop.sh" >&2 || true
  fi
  exit 1
}

NODES=()
for t in "${TYPES[@]}"; do for i in $(seq 1 "$PER_TYPE"); do NODES+=("$t-$i"); done; done
# The nodes of an existing configuration (a running cluster keeps its own, whatever PER_TYPE says now).
nodes_from_conf() {
  local spec
  NODES=()
  # shellcheck disable=SC2013
  for spec in $(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' "$SLURM_CONF"); do
    # shellcheck disable=SC2207
    NODES+=($(scontrol show hostnames "$spec"))
  done
}
node_range() { [ "$PER_TYPE" = 1 ] && echo "$1-1" || echo "$1-[1-$PER_TYPE]"; }

any_alive() {
  local f
  alive "$DIR/munge-run/munged.pid" munged && return 0
  alive "$DIR/mysql/mariadbd.pid" mariadbd && return 0
  alive "$RUN/slurmdbd.pid" slurmdbd && return 0
  alive "$RUN/slurmctld.pid" slurmctld && return 0
  for f in "$RUN"/slurmd-*.pid; do [ -e "$f" ] && alive "$f" slurmd && return 0; done
  return 1
}

# A node is ready when it is up and responding: idle on a cold start; mix/alloc/comp when a restart
# finds jobs running. Any suffix (idle* not responding, idle~ powered off, ...) or down/drain is not ready.
nodes_not_ready() { # prints "node state" for each node that is not ready
  sinfo -h -N -o '%N %t' | sort -u | awk '$2 !~ /^(idle|mix|alloc|comp)$/'
}
all_ready() {
  local out
  out=$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u) || return 1
  [ "$(echo "$out" | awk '$2 ~ /^(idle|mix|alloc|comp)$/' | wc -l)" = "${#NODES[@]}" ]
}

print_env() {
  log "up: ${#NODES[@]} nodes; clients need (also in $DIR/env.sh):"
  echo "export SLURM_CONF=$SLURM_CONF"
}

# ---------------------------------------------------------------------------------------------------
# Already running? Then report and leave it alone (its configuration included).
if [ -e "$DIR/.attune-mock-slurm" ] && [ -e "$SLURM_CONF" ] && alive "$RUN/slurmctld.pid" slurmctld; then
  nodes_from_conf
  all_running=1
  for n in "${NODES[@]}"; do alive "$RUN/slurmd-$n.pid" slurmd || all_running=0; done
  alive "$DIR/munge-run/munged.pid" munged || all_running=0
  if grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF"; then
    alive "$RUN/slurmdbd.pid" slurmdbd || all_running=0
    alive "$DIR/mysql/mariadbd.pid" mariadbd || all_running=0
  fi
  if [ "$all_running" = 1 ] && timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'; then
    log "already running in $DIR"
    timeout 10 sinfo >&2 || true
    timeout 10 squeue >&2 || true
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
fi

install_packages

# ---------------------------------------------------------------------------------------------------
# Directories and configuration. Written only when none of this cluster's daemons runs, so that a
# running daemon never sees a configuration it did not start with. Keys, MariaDB data, Slurm state and
# logs are kept across restarts (stop.sh --clean removes them).
if [ -e "$DIR" ] && [ ! -e "$DIR/.attune-mock-slurm" ] && [ -n "$(ls -A "$DIR" 2>/dev/null)" ]; then
  die "$DIR exists, is not empty and is not a mock cluster's directory (no .attune-mock-slurm); choose another ATTUNE_MOCK_SLURM_DIR"
fi
COLD=1
if any_alive; then
  COLD=0
  log "partly running in $DIR: keeping its configuration, starting what is missing"
else
  # Pitfall 6: a leftover cluster on these ports would be silently reused; refuse before starting anything.
  # shellcheck disable=SC2207
  check_ports=("$CTLD_PORT" $(seq "$NODE_PORT0" $((NODE_PORT0 + ${#NODES[@]} - 1))))
  [ "$DBD" = 1 ] && check_ports+=("$MYSQL_PORT" "$DBD_PORT")
  for p in "${check_ports[@]}"; do
    ! port_listening "$p" || die "port $p is already in use by another process; a leftover cluster? \
(stop it, or choose other ports with ATTUNE_MOCK_SLURM_PORT_BASE)"
  done
  # A directory from the other mode (DBD=0 vs 1) is reused; only the accounting lines change.
  install -d -m 0755 "$DIR" "$ETC" "$RUN" "$LOG" "$VAR" "$VAR/ctld" "$DIR/fakedev"
  touch "$DIR/.attune-mock-slurm"
  for n in "${NODES[@]}"; do install -d -m 0755 "$VAR/spool-$n"; done
  # Fake GPU device files: symlinks to /dev/null (section 2: regular files log errors, no File= drops the GPUs).
  for i in 0 1 2 3 4 5 6 7; do ln -sfn /dev/null "$DIR/fakedev/nvidia$i"; done

  # munge: own key, socket, pid, seed and log under $DIR. Deviation: the notes use the system munged
  # (/etc/munge/munge.key, /run/munge); a private one cannot clash with a system munged or Slurm.
  install -d -o munge -g munge -m 0700 "$DIR/munge"
  install -d -o munge -g munge -m 0755 "$DIR/munge-run"
  if [ ! -s "$DIR/munge/munge.key" ]; then
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  fi
  chown munge:munge "$DIR/munge/munge.key" && chmod 0400 "$DIR/munge/munge.key"

  NODE_LINES="" GRES_LINES="" PART_LINES="" port=$NODE_PORT0
  for t in "${TYPES[@]}"; do
    r=$(node_range "$t")
    if [ "$PER_TYPE" = 1 ]; then ports=$port; else ports="$port-$((port + PER_TYPE - 1))"; fi
    port=$((port + PER_TYPE))
    NODE_LINES+="NodeName=$r NodeHostname=localhost NodeAddr=127.0.0.1 Port=$ports CPUs=32 RealMemory=512000 Gres=gpu:$t:8 Features=$t
"
    GRES_LINES+="NodeName=$r Name=gpu Type=$t File=$DIR/fakedev/nvidia[0-7]
"
    PART_LINES+="PartitionName=$t Nodes=$r DefaultTime=01:00:00 MaxTime=1-00:00:00 State=UP
"
  done

  if [ "$DBD" = 1 ]; then
    ACCOUNTING="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
# Deviation (private munged): slurmctld, sacct and sacctmgr authenticate to slurmdbd through the munge
# socket named here, not through AuthInfo (without it they use /run/munge/munge.socket.2).
AccountingStoragePass=$MUNGE_SOCKET
AccountingStorageTRES=gres/gpu
# As on a real cluster: a job needs a valid account association (root's own, or '$ACCOUNT') and QOS
# ('normal'); a bad --account or --qos is refused at submit.
AccountingStorageEnforce=associations,limits,qos
JobAcctGatherType=jobacct_gather/linux"
  else
    ACCOUNTING="# No slurmdbd: 'sacct -j' fails ('Slurm accounting storage is disabled'); 'sacct -c' reads JobCompLoc.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none"
  fi

  cat >"$ETC/slurm.conf" <<EOF
# The attune mock cluster, written by scripts/mock-slurm/start.sh; regenerated on every cold start.
ClusterName=$CLUSTER
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# Deviation: a private munged (see start.sh); clients find its socket through this line.
AuthInfo=socket=$MUNGE_SOCKET
# Deviation: own ports instead of 6817/6818 so that a system Slurm can run beside this one.
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
StateSaveLocation=$VAR/ctld
SlurmdSpoolDir=$VAR/spool-%n
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd-%n.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# cgroups do not work in CI's VMs (hybrid v1/v2): no cgroup.conf, no cgroup plugins (pitfall 7).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
# The host has 2 cores; the nodes claim 32 CPUs and 500 GB each.
SlurmdParameters=config_overrides
# A node set DOWN by scontrol stays down until 'state=resume'; one that stopped responding comes back.
ReturnToService=1
# Deviation: SlurmdTimeout=20 (default 300): a killed slurmd makes its node DOWN and a job NODE_FAIL in
# well under a minute; 20 rather than the notes' 10 so that a busy 2-core CI host is not marked down.
SlurmdTimeout=20
# Finished jobs stay in squeue -t all / scontrol for ~5 min.
MinJobAge=300
# TIMEOUT as soon as possible: no grace minutes, 5 s from SIGTERM to SIGKILL. The controller checks
# time limits every 30 s and limits are whole minutes, so --time=1 ends TIMEOUT 60-90 s after start.
OverTimeLimit=0
KillWait=5
InactiveLimit=0
# Deviation: requests beyond a partition's limits (nodes, time) are refused at submit instead of
# pending forever (PartitionNodeLimit / PartitionTimeLimit).
EnforcePartLimits=ALL
$ACCOUNTING
JobCompType=jobcomp/filetxt
JobCompLoc=$LOG/jobcomp.txt
GresTypes=gpu
${NODE_LINES}PartitionName=gpu Nodes=ALL Default=YES DefaultTime=01:00:00 MaxTime=1-00:00:00 State=UP
$PART_LINES
EOF

  cat >"$ETC/gres.conf" <<EOF
# Fake GPUs: each File= is a symlink to /dev/null (written by scripts/mock-slurm/start.sh).
$GRES_LINES
EOF

  if [ "$DBD" = 1 ]; then
    install -d -o mysql -g mysql -m 0750 "$DIR/mysql"
    if [ ! -s "$DIR/mysql/password" ]; then
      head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$DIR/mysql/password"
    fi
    chmod 0600 "$DIR/mysql/password"
    # slurmdbd reads slurmdbd.conf from the directory of SLURM_CONF; it must be mode 0600 (pitfall 11).
    umask 077
    cat >"$ETC/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
DbdHost=localhost
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$RUN/slurmdbd.pid
LogFile=$LOG/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
# 127.0.0.1 (not localhost): TCP to this cluster's own MariaDB, never the system's unix socket.
StorageHost=127.0.0.1
StoragePort=$MYSQL_PORT
StorageUser=slurm
StoragePass=$(cat "$DIR/mysql/password")
StorageLoc=slurm_acct_db
EOF
    umask 022
    chmod 0600 "$ETC/slurmdbd.conf"
  else
    rm -f "$ETC/slurmdbd.conf"
  fi

  cat >"$DIR/env.sh" <<EOF
# The mock cluster's client environment: source this file, or eval the line start.sh prints.
export SLURM_CONF=$SLURM_CONF
EOF
fi

[ -s "$SLURM_CONF" ] || die "$SLURM_CONF is missing although a daemon of this cluster runs; run stop.sh first"
nodes_from_conf
[ ${#NODES[@]} -gt 0 ] || die "no NodeName line in $SLURM_CONF"
grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF" && RUNNING_DBD=1 || RUNNING_DBD=0
[ "$RUNNING_DBD" = "$DBD" ] || log "note: keeping the running daemons' accounting mode (DBD=$RUNNING_DBD)"
DBD=$RUNNING_DBD

# ---------------------------------------------------------------------------------------------------
# Daemons, in dependency order. Each one daemonizes and closes its stdio (pitfall 9).
if ! alive "$DIR/munge-run/munged.pid" munged; then
  log "starting munged"
  rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
  runuser -u munge -- /usr/sbin/munged --socket="$MUNGE_SOCKET" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/munge-run/munged.pid" --seed-file="$DIR/munge/munged.seed" \
    --log-file="$DIR/munge/munged.log" </dev/null >/dev/null 2>&1 || fail "munged did not start"
  WATCH="$DIR/munge-run/munged.pid munged" wait_until "$WAIT" munged munge -n -S "$MUNGE_SOCKET"
fi

if [ "$DBD" = 1 ]; then
  if ! alive "$DIR/mysql/mariadbd.pid" mariadbd; then
    require_port_free "$MYSQL_PORT" MariaDB
    # Deviation: the notes use the system's /var/lib/mysql and /run/mysqld; a private data directory,
    # socket and port (and --no-defaults) keep a system MariaDB and its configuration out of it.
    if [ ! -d "$DIR/mysql/data/mysql" ]; then
      log "initialising MariaDB in $DIR/mysql/data"
      mariadb-install-db --no-defaults --datadir="$DIR/mysql/data" --user=mysql \
        --auth-root-authentication-method=socket --skip-test-db >"$DIR/mysql/install.log" 2>&1 ||
        fail "mariadb-install-db failed; see $DIR/mysql/install.log"
    fi
    log "starting MariaDB on 127.0.0.1:$MYSQL_PORT"
    rm -f "$DIR/mysql/mysqld.sock"
    setsid -f /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$DIR/mysql/data" \
      --socket="$DIR/mysql/mysqld.sock" --port="$MYSQL_PORT" --bind-address=127.0.0.1 --skip-name-resolve \
      --pid-file="$DIR/mysql/mariadbd.pid" --log-error="$DIR/mysql/mariadbd.err" \
      --innodb-buffer-pool-size=64M --innodb-lock-wait-timeout=900 --innodb-log-file-size=16M \
      --max-connections=50 </dev/null >/dev/null 2>&1
    WATCH="$DIR/mysql/mariadbd.pid mariadbd" wait_until "$WAIT" "MariaDB on $DIR/mysql/mysqld.sock" \
      mariadb --no-defaults --socket="$DIR/mysql/mysqld.sock" -u root -e 'SELECT 1'
    wait_until "$WAIT" "mariadbd.pid" alive "$DIR/mysql/mariadbd.pid" mariadbd
    PASS=$(cat "$DIR/mysql/password")
    mariadb --no-defaults --socket="$DIR/mysql/mysqld.sock" -u root -e "
      CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$PASS';
      ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$PASS';
      GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" || fail "could not create the MariaDB user slurm"
  fi
  if ! alive "$RUN/slurmdbd.pid" slurmdbd; then
    require_port_free "$DBD_PORT" slurmdbd
    log "starting slurmdbd on port $DBD_PORT"
    /usr/sbin/slurmdbd </dev/null >/dev/null 2>&1 || fail "slurmdbd did not start"
    WATCH="$RUN/slurmdbd.pid slurmdbd" wait_until "$WAIT" "slurmdbd on port $DBD_PORT" port_listening "$DBD_PORT"
  fi
fi

if ! alive "$RUN/slurmctld.pid" slurmctld; then
  require_port_free "$CTLD_PORT" slurmctld
  log "starting slurmctld on port $CTLD_PORT"
  /usr/sbin/slurmctld -f "$SLURM_CONF" </dev/null >/dev/null 2>&1 || fail "slurmctld did not start"
  ctld_up() { scontrol ping 2>/dev/null | grep -q 'is UP'; }
  WATCH="$RUN/slurmctld.pid slurmctld" wait_until "$WAIT" "slurmctld (scontrol ping)" ctld_up
fi

if [ "$DBD" = 1 ]; then
  # slurmctld registers the cluster and root's association itself; add the account '$ACCOUNT' once.
  cluster_known() { [ -n "$(sacctmgr -n -P list cluster "$CLUSTER" format=cluster 2>/dev/null)" ]; }
  wait_until "$WAIT" "cluster '$CLUSTER' in slurmdbd" cluster_known
  if [ -z "$(sacctmgr -n -P list account "$ACCOUNT" format=account 2>/dev/null)" ]; then
    sacctmgr -i -Q add account "$ACCOUNT" Description="attune mock" Organization=attune >/dev/null ||
      fail "sacctmgr add account $ACCOUNT failed"
  fi
  if [ -z "$(sacctmgr -n -P list association user=root account="$ACCOUNT" format=account 2>/dev/null)" ]; then
    sacctmgr -i -Q add user root Account="$ACCOUNT" >/dev/null || fail "sacctmgr add user root failed"
  fi
fi

started=()
for n in "${NODES[@]}"; do
  if ! alive "$RUN/slurmd-$n.pid" slurmd; then
    /usr/sbin/slurmd -f "$SLURM_CONF" -N "$n" </dev/null >/dev/null 2>&1 || fail "slurmd -N $n did not start"
    started+=("$n")
  fi
done
[ ${#started[@]} = 0 ] || log "started slurmd for ${started[*]}"

# Nodes left DOWN or DRAINED by an earlier session (scontrol update ... state=down) stay so after a
# restart (ReturnToService=1, saved state): resume them. The saved state may still show an old
# 'Not responding' node as down* for a moment; resuming that is harmless too.
stuck=$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u |
  awk '$2 ~ /^(down|drain|drng|drained|draining|fail|failg)[*~#!%$@^-]?$/ { print $1 }' | paste -sd, -)
if [ -n "$stuck" ]; then
  log "resuming nodes left down or drained: $stuck"
  scontrol update nodename="$stuck" state=resume >&2 || true
fi
end=$((SECONDS + WAIT))
until all_ready; do
  if [ $SECONDS -ge $end ]; then
    fail "not every node is idle after ${WAIT}s: $(nodes_not_ready 2>/dev/null | tr '\n' ' ')"
  fi
  sleep 0.1
done

print_env
