#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this machine (munged, slurmctld, slurmd), for the sweep's
# end-to-end Slurm test. Run as root after `apt-get install slurm-wlm munge`. Idempotent: a
# running cluster is left alone. No systemd needed (CI containers have none).
set -euo pipefail

host=$(hostname -s)
cpus=$(nproc)
memory=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)

if sinfo -h -o '%T' 2>/dev/null | grep -Eq 'idle|mixed|allocated'; then
    echo "slurm: already running"
    exit 0
fi

# slurmd finds slurmctld by this host name: make sure it resolves (containers may lack it).
if ! getent hosts "$host" >/dev/null; then
    echo "127.0.0.1 $host" >> /etc/hosts
fi

# munge: a key readable only by the munge user, and its run directory.
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! pgrep -x munged >/dev/null; then
    runuser -u munge -- /usr/sbin/munged
fi
munge -n | unmunge >/dev/null

install -d -m 0755 /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
cat > /etc/slurm/slurm.conf <<CONF
# Written by scripts/ci/start-slurm.sh: one local node for tests.
ClusterName=sitesim-ci
SlurmctldHost=${host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerType=sched/backfill
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=${host} CPUs=${cpus} RealMemory=${memory} State=UNKNOWN
PartitionName=debug Nodes=${host} Default=YES MaxTime=INFINITE State=UP
CONF

pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd

for _ in $(seq 1 60); do
    if sinfo -h -o '%T' 2>/dev/null | grep -Eq 'idle|mixed|allocated'; then
        sinfo
        exit 0
    fi
    sleep 1
done
echo "slurm did not come up; logs follow" >&2
tail -n 50 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
