#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, for the SLURM tests and the
# `slurm` benchmark: Debian's slurm-wlm and munge, a slurm.conf written for
# this host (no cgroups: proctrack/linuxproc, task/none), and the three
# daemons (munged, slurmctld, slurmd) running in the background as root.
#
#   scripts/slurm-cluster.sh start   # install if missing, configure, start, wait until the node is idle
#   scripts/slurm-cluster.sh stop    # stop the daemons (always safe to call)
#   scripts/slurm-cluster.sh env     # print `export SLURM_CONF=...` for the clients
#
# Everything lives in $NETLOOP_SLURM_DIR (default /tmp/netloop-slurm). If a
# daemon cannot start, `start` prints its log and exits 1: a machine that
# cannot run SLURM fails the test, it is not skipped.
set -euo pipefail

state="${NETLOOP_SLURM_DIR:-/tmp/netloop-slurm}"
conf="$state/slurm.conf"
export SLURM_CONF="$conf"

need_root() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "slurm-cluster: must run as root (the daemons run as root)" >&2
        exit 1
    fi
}

install_packages() {
    local missing=()
    for package in slurm-wlm munge; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    if ((${#missing[@]})); then
        echo "slurm-cluster: installing ${missing[*]}" >&2
        export DEBIAN_FRONTEND=noninteractive
        if ! apt-get install -y -q "${missing[@]}" >"$state/apt.log" 2>&1; then
            apt-get update -q >>"$state/apt.log" 2>&1
            apt-get install -y -q "${missing[@]}" >>"$state/apt.log" 2>&1 || {
                cat "$state/apt.log" >&2
                exit 1
            }
        fi
    fi
}

write_config() {
    local host cpus memory
    host="$(hostname -s)"
    cpus="$(nproc)"
    memory=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10))
    mkdir -p "$state/spool" "$state/ctld" "$state/log"
    cat >"$conf" <<CONF
# Written by scripts/slurm-cluster.sh: one node, this machine.
ClusterName=netloop-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldPort=${NETLOOP_SLURMCTLD_PORT:-6817}
SlurmdPort=${NETLOOP_SLURMD_PORT:-6818}
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
KillWait=5
MinJobAge=600
MaxArraySize=1001
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
}

start_munge() {
    if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
        return
    fi
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    chmod 0755 /run/munge
    if [ ! -s /etc/munge/munge.key ]; then
        # Debian creates a key at install; make one if it did not.
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
        chown munge:munge /etc/munge/munge.key
        chmod 0400 /etc/munge/munge.key
    fi
    su -s /bin/sh munge -c "/usr/sbin/munged" 2>"$state/log/munged.err" || /usr/sbin/munged --force 2>>"$state/log/munged.err" || true
    for _ in $(seq 50); do
        if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
            return
        fi
        sleep 0.1
    done
    echo "slurm-cluster: munged did not start:" >&2
    cat "$state/log/munged.err" /var/log/munge/munged.log 2>/dev/null | tail -20 >&2
    exit 1
}

fail_with_logs() {
    echo "slurm-cluster: $1" >&2
    for log in "$state"/log/slurmctld.log "$state"/log/slurmd.log; do
        echo "--- $log" >&2
        tail -30 "$log" >&2 2>/dev/null || true
    done
    stop_daemons
    exit 1
}

stop_daemons() {
    for pidfile in "$state/slurmd.pid" "$state/slurmctld.pid"; do
        if [ -s "$pidfile" ]; then
            kill "$(cat "$pidfile")" 2>/dev/null || true
        fi
    done
    # Wait for them to exit so that ports and state are free for a restart.
    for _ in $(seq 50); do
        if ! pgrep -f "slurmctld|slurmd" -u 0 >/dev/null 2>&1; then
            break
        fi
        sleep 0.1
    done
    rm -f "$state/slurmd.pid" "$state/slurmctld.pid"
}

case "${1:-}" in
    start)
        need_root
        mkdir -p "$state"
        install_packages
        stop_daemons
        rm -rf "$state/ctld" "$state/spool"
        write_config
        start_munge
        /usr/sbin/slurmctld -c -f "$conf" 2>"$state/log/slurmctld.err" || fail_with_logs "slurmctld did not start: $(cat "$state/log/slurmctld.err")"
        /usr/sbin/slurmd -c -f "$conf" 2>"$state/log/slurmd.err" || fail_with_logs "slurmd did not start: $(cat "$state/log/slurmd.err")"
        for _ in $(seq 100); do
            if sinfo -h -o "%t" 2>/dev/null | grep -qx "idle"; then
                echo "slurm-cluster: one node up (SLURM_CONF=$conf)" >&2
                exit 0
            fi
            sleep 0.2
        done
        fail_with_logs "the node did not become idle within 20 s ($(sinfo -h -o '%t %E' 2>&1 || true))"
        ;;
    stop)
        stop_daemons
        ;;
    env)
        echo "export SLURM_CONF=$conf"
        ;;
    *)
        echo "usage: $0 start|stop|env" >&2
        exit 2
        ;;
esac
