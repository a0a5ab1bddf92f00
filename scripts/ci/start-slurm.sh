#!/usr/bin/env bash
# Starts a one-node Slurm cluster with accounting on this machine: munged, MariaDB, slurmdbd,
# slurmctld and slurmd. Used by the sweep's end-to-end Slurm test, by the capture scripts
# scripts/ci/slurm-{workload,priority,start-order}.sh (which record real Slurm output as test
# fixtures) and, with --gpu-site, by scripts/ci/slurm-gpu-workload.sh.
#
# Usage, as root: bash scripts/ci/start-slurm.sh [--gpu-site]
#
# Run as root after `apt-get install slurm-wlm munge`; the accounting packages (slurmdbd,
# mariadb-server) are installed here if missing. No systemd needed (CI containers have none): every
# daemon is started directly, in the background, logging under /var/log/slurm.
#
# Idempotent: a cluster already running with accounting and this script's configuration is left
# alone. One running without accounting (as an earlier version of this script started it), with
# slurmdbd down, or with another slurm.conf or gres.conf (the other profile) is shut down
# (scontrol shutdown) and started again; its queued jobs survive in the state directory.
#
# The cluster (the default profile, `ci`): ClusterName=sitesim-ci; one node with this machine's
# CPUs, 90% of its memory, and four GPUs that are not there (below); partitions `debug` (the
# default) and `long` over that same node, which differ only in PriorityJobFactor; multifactor
# priority (recomputed every minute; usage half-life and maximum age one hour, so that a few
# minutes of usage and of waiting show in the factors: scripts/ci/slurm-priority.sh);
# accounting through slurmdbd into the MariaDB database slurm_acct_db, with an `extern` step per
# job (PrologFlags=Contain), as on most sites; slurmctld then says at start-up that
# pam_slurm_adopt would need proctrack/cgroup, which does not matter here. No
# AccountingStorageEnforce: a user without an association may still submit
# (the sweep test submits as whoever runs it), and usage is charged only at the priority
# calculations, which the priority and start-order fixtures rely on.
#
# GPUs and memory (both profiles):
# - GresTypes=gpu and the node's Gres=gpu:a100:4, with a gres.conf (AutoDetect=off) whose File=
#   line names four character devices this script makes, /var/lib/sitesim-gres/nvidia[0-3]
#   (major 195, like /dev/nvidia*; no driver behind them): Slurm 22.05 schedules and accounts
#   GPUs from them without any hardware, and sets CUDA_VISIBLE_DEVICES in the job. Nothing
#   enforces device access (that needs task/cgroup, which containers lack).
# - AccountingStorageTRES=gres/gpu,gres/gpu:a100: sacct's ReqTRES and AllocTRES then show
#   `gres/gpu=N,gres/gpu:a100=N` beside cpu, mem, node and billing.
# - SelectTypeParameters=CR_Core_Memory: memory is a consumable resource, scheduled like cores
#   (a job waits for memory as for CPUs); DefMemPerCPU=1024 MB, so that a job without --mem does
#   not take the whole node's memory. Memory use is not policed (no task/cgroup, no
#   JobAcctGatherParams=OverMemoryKill): this is the scheduler's accounting of memory only.
# - SlurmdParameters=config_overrides: the node is what slurm.conf says, even if larger than the
#   machine (slurmd would otherwise register it INVALID).
# The ci profile keeps the node at this machine's CPU count (2 on the machines these fixtures come
# from): slurm-start-order.sh asserts 2 CPUs and its workload, like slurm-priority.sh's and
# slurm-workload.sh's, is made to fill exactly that node; adding GPUs and a memory size changes
# none of them (every job asks for 1 GB per CPU or its --mem, far below the node's memory).
#
# --gpu-site: the profile of scripts/ci/slurm-gpu-workload.sh, a small GPU site. The same cluster
# (same database, users, accounts, state) restarted with a larger node than the machine
# (CPUs=16, RealMemory=64000, Gres=gpu:a100:4, through config_overrides), DefMemPerCPU=2000,
# partitions `cpu` (the default) and `gpu` over that node, and AccountingStorageEnforce=limits
# (needed for QOS and association limits such as GrpTRES=gres/gpu=N to be enforced; a change of
# it needs a slurmctld restart). That script switches to it under the lock
# /tmp/sitesim-slurm.lock and back to the ci profile when it ends.
set -euo pipefail

profile=ci
case ${1:-} in
    "") ;;
    --gpu-site) profile=gpu-site ;;
    *)
        echo "usage: $0 [--gpu-site]" >&2
        exit 2
        ;;
esac

host=$(hostname -s)
cluster=sitesim-ci
log_dir=/var/log/slurm
gres_dir=/var/lib/sitesim-gres
if [ "$profile" = ci ]; then
    cpus=$(nproc)
    memory=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
    def_mem_per_cpu=1024
    enforce=""
    partitions="PartitionName=debug Nodes=${host} Default=YES MaxTime=INFINITE State=UP
PartitionName=long Nodes=${host} MaxTime=INFINITE PriorityJobFactor=2 State=UP"
else
    cpus=16
    memory=64000
    def_mem_per_cpu=2000
    enforce="
AccountingStorageEnforce=limits"
    partitions="PartitionName=cpu Nodes=${host} Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=${host} MaxTime=INFINITE State=UP"
fi

slurm_conf="# Written by scripts/ci/start-slurm.sh (profile ${profile}): one local node for tests, with
# accounting, four GPUs that are files (gres.conf) and memory as a consumable resource.
ClusterName=${cluster}
SlurmctldHost=${host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
PrologFlags=Contain
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=${host}
AccountingStorageTRES=gres/gpu,gres/gpu:a100${enforce}
JobCompType=jobcomp/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=${def_mem_per_cpu}
GresTypes=gpu
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerType=sched/backfill
PriorityType=priority/multifactor
PriorityCalcPeriod=1
PriorityDecayHalfLife=1:00:00
PriorityMaxAge=1:00:00
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=1000
PriorityWeightPartition=1000
PriorityWeightQOS=10000
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=${log_dir}/slurmctld.log
SlurmdLogFile=${log_dir}/slurmd.log
NodeName=${host} CPUs=${cpus} RealMemory=${memory} Gres=gpu:a100:4 State=UNKNOWN
${partitions}"
gres_conf="# Written by scripts/ci/start-slurm.sh: four GPUs that are device files, no hardware.
AutoDetect=off
NodeName=${host} Name=gpu Type=a100 File=${gres_dir}/nvidia[0-3]"

# (sinfo and scontrol wait about 10 s for a slurmctld that is not there: ask only if it runs.
# Outputs are matched once read in full: `cmd | grep -q` fails under pipefail when grep stops
# reading early.)
node_up() {
    local states
    pgrep -x slurmctld >/dev/null || return 1
    states=$(sinfo -h -o '%T' 2>/dev/null) || return 1
    grep -Eq 'idle|mixed|allocated' <<<"$states"
}
accounting_on() {
    local config
    pgrep -x slurmctld >/dev/null || return 1
    config=$(scontrol show config 2>/dev/null) || return 1
    grep -Eq '^AccountingStorageType *= *accounting_storage/slurmdbd' <<<"$config"
}
db_up() { mariadb-admin --protocol=socket ping >/dev/null 2>&1; }
dbd_answers() { pgrep -x slurmdbd >/dev/null && sacctmgr -n show cluster >/dev/null 2>&1; }
cluster_known() {
    local clusters
    clusters=$(sacctmgr -n -P show cluster format=cluster 2>/dev/null) || return 1
    grep -qx "$cluster" <<<"$clusters"
}
conf_unchanged() {
    [ "$(cat /etc/slurm/slurm.conf 2>/dev/null)" = "$slurm_conf" ] &&
        [ "$(cat /etc/slurm/gres.conf 2>/dev/null)" = "$gres_conf" ]
}

if conf_unchanged && node_up && accounting_on && cluster_known; then
    echo "slurm: already running, with accounting (profile $profile)"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
if ! command -v slurmdbd >/dev/null || ! command -v mariadbd >/dev/null \
    || ! command -v mariadb-admin >/dev/null; then
    echo "slurm: installing slurmdbd and mariadb-server"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurmdbd mariadb-server >/dev/null
fi

# A cluster running otherwise: stop slurmctld and slurmd through Slurm itself, then start
# everything again below with this configuration.
if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
    echo "slurm: running without accounting or with another configuration; restarting it"
    scontrol shutdown >/dev/null 2>&1 || true
    for _ in $(seq 1 30); do
        pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null || break
        sleep 1
    done
    # shutdown reaches slurmd only through a live slurmctld: stop leftovers by their pid files
    for pid_file in /run/slurmctld.pid /run/slurmd.pid; do
        if [ -s "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
            kill "$(cat "$pid_file")"
        fi
    done
    for _ in $(seq 1 30); do
        pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null || break
        sleep 1
    done
fi

# slurmd finds slurmctld (and slurmctld slurmdbd) by this host name: make sure it resolves
# (containers may lack it).
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

install -d -m 0755 /etc/slurm /var/spool/slurmctld /var/spool/slurmd "$log_dir"

# MariaDB: Debian's package initialises /var/lib/mysql when it is installed; do it here if that
# did not happen. Started as mariadbd directly (no systemd, no init script), on the Unix socket
# /run/mysqld/mysqld.sock only. The settings slurmdbd checks at start-up go in a file of their own.
install -d -o mysql -g mysql -m 0755 /run/mysqld
install -d -m 0755 /etc/mysql/mariadb.conf.d
cat > /etc/mysql/mariadb.conf.d/90-slurmdbd.cnf <<CNF
# Written by scripts/ci/start-slurm.sh: settings slurmdbd recommends.
[mariadbd]
innodb_buffer_pool_size = 1024M
innodb_lock_wait_timeout = 900
skip-networking
CNF
if [ ! -d /var/lib/mysql/mysql ]; then
    echo "slurm: initialising the MariaDB data directory"
    install -d -o mysql -g mysql -m 0755 /var/lib/mysql
    mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db >/dev/null
fi
if ! db_up; then
    setsid -f mariadbd --user=mysql --socket=/run/mysqld/mysqld.sock \
        --pid-file=/run/mysqld/mysqld.pid </dev/null >>"$log_dir/mariadb.log" 2>&1
    for _ in $(seq 1 60); do
        db_up && break
        sleep 1
    done
    if ! db_up; then
        echo "mariadb did not come up; its log follows" >&2
        tail -n 50 "$log_dir/mariadb.log" >&2 || true
        exit 1
    fi
fi

# The database user slurmdbd connects as. Its password is kept in slurmdbd.conf (mode 600, owned
# by the SlurmUser, root): made up on the first start, reused afterwards.
dbd_conf=/etc/slurm/slurmdbd.conf
db_pass=$(sed -n 's/^StoragePass=//p' "$dbd_conf" 2>/dev/null || true)
if [ -z "$db_pass" ]; then
    db_pass=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
fi
# root connects through the Unix socket as the root OS user (Debian's unix_socket default).
mariadb --protocol=socket <<SQL
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '${db_pass}';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY '${db_pass}';
GRANT ALL PRIVILEGES ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
SQL

umask 077
cat > "$dbd_conf" <<CONF
# Written by scripts/ci/start-slurm.sh: slurmdbd for the one-node test cluster.
AuthType=auth/munge
DbdHost=${host}
DbdPort=6819
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageLoc=slurm_acct_db
StorageUser=slurm
StoragePass=${db_pass}
LogFile=${log_dir}/slurmdbd.log
PidFile=/run/slurmdbd.pid
CONF
umask 022
chown root:root "$dbd_conf"
chmod 0600 "$dbd_conf"

# slurm.conf before slurmdbd is asked anything: sacctmgr reads it to find slurmdbd. gres.conf
# and the files its File= lines name before slurmd starts.
printf '%s\n' "$slurm_conf" > /etc/slurm/slurm.conf
printf '%s\n' "$gres_conf" > /etc/slurm/gres.conf
# Character devices with NVIDIA's major number (195) and minors 0-3, as /dev/nvidia0-3 would be:
# slurmd 22.05 logs "is not a valid character or block device, fix your gres.conf" for plain
# files and then sets no CUDA_VISIBLE_DEVICES. Nothing opens them (no driver answers). Where
# mknod is refused (a container without CAP_MKNOD), plain files: GPUs are still scheduled and
# accounted.
install -d -m 0755 "$gres_dir"
for i in 0 1 2 3; do
    if [ ! -c "$gres_dir/nvidia$i" ]; then
        rm -f "$gres_dir/nvidia$i"
        mknod -m 0666 "$gres_dir/nvidia$i" c 195 "$i" 2>/dev/null ||
            install -m 0666 /dev/null "$gres_dir/nvidia$i"
    fi
done

if ! pgrep -x slurmdbd >/dev/null; then
    slurmdbd
fi
for _ in $(seq 1 60); do
    dbd_answers && break
    sleep 1
done
if ! dbd_answers; then
    echo "slurmdbd did not come up; its log follows" >&2
    tail -n 50 "$log_dir/slurmdbd.log" >&2 || true
    exit 1
fi
# Registering the cluster also creates the root account and root's association in it.
if ! cluster_known; then
    sacctmgr -i add cluster "$cluster" >/dev/null
fi

# -c: start from an empty state, as on a fresh machine. Without it slurmctld recovers the jobs
# and the DRAINED or DOWN nodes a killed run left in StateSaveLocation (a machine copied while a
# capture had the node drained: the node never came up and this script failed).
pgrep -x slurmctld >/dev/null || slurmctld -c
pgrep -x slurmd >/dev/null || slurmd

for _ in $(seq 1 60); do
    if node_up && accounting_on; then
        sinfo
        sacctmgr show cluster format=Cluster,ControlHost,ControlPort,RPC
        exit 0
    fi
    sleep 1
done
echo "slurm did not come up; logs follow" >&2
tail -n 50 "$log_dir/slurmctld.log" "$log_dir/slurmd.log" "$log_dir/slurmdbd.log" >&2 || true
exit 1
