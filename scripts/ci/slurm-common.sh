# Sourced by scripts/ci/slurm-priority.sh, slurm-start-order.sh, slurm-outages.sh and
# slurm-gpu-workload.sh (not run on its own): their command line (OUT_DIR, as root), the
# cluster's configuration, the helpers that run a command and remember it for the capture's
# README, `wait_jobs_gone` (until the script's jobs have left the queue), and `prepare_cluster`:
# the lock, an empty queue, the users, accounts and QOS of slurm-workload.sh (plus biology and
# dave) with their shares, and every association's usage reset to 0.
set -euo pipefail
shopt -s inherit_errexit

if [ $# -ne 1 ]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
fi
out_dir=$1
if [ "$(id -u)" -ne 0 ]; then
    echo "$0: run as root (it adds users, resets usage and submits as them)" >&2
    exit 2
fi
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

export TZ=UTC SLURM_TIME_FORMAT=standard
clock_start=$(date +%s)
config=$(scontrol show config)
config_value() { awk -F' *= *' -v key="$1" '$1 == key {print $2}' <<<"$config"; }
cluster=$(config_value ClusterName)
state_dir=$(config_value StateSaveLocation)
decay_file=$state_dir/priority_last_decay_ran
cpus=$(sinfo -h -N -o %c | awk 'NR == 1')
users=(alice bob carol dave)
commands=()

say() { printf '%s\n' "$*"; }
# Runs a command after printing it (on stderr), quoted so that it can be pasted back into a shell;
# remembers it for the README.
run() {
    local line
    line=$(printf ' %q' "$@")
    printf '+%s\n' "$line" >&2
    commands+=("${line# }")
    "$@"
}
run_modify() {
    run "$@" >/dev/null || true
}
# run_to FILE COMMAND...: runs the command into OUT_DIR/FILE, remembered as `COMMAND > FILE`.
run_to() {
    local file=$1 line
    shift
    line=$(printf ' %q' "$@")
    printf '+%s > %s\n' "$line" "$file" >&2
    commands+=("${line# } > $file")
    "$@" >"$out_dir/$file"
}
exists() { [ -n "$(sacctmgr -n -P "$@" 2>/dev/null)" ]; }
# wait_jobs_gone: waits until none of the caller's jobs (the ids in its array job_ids) is in the
# queue, checking every 0.25 s for up to 5 minutes (1200 checks); if some still are then, prints
# squeue on stderr and exits.
wait_jobs_gone() {
    local list
    list=$(IFS=,; echo "${job_ids[*]}")
    for _ in $(seq 1 1200); do
        [ -z "$(squeue -h -o %i -j "$list" 2>/dev/null || true)" ] && break
        sleep 0.25
    done
    if [ -n "$(squeue -h -o %i -j "$list" 2>/dev/null || true)" ]; then
        echo "jobs still queued after 5 minutes:" >&2
        squeue >&2
        exit 1
    fi
}

# prepare_cluster: one user of the cluster at a time (the lock /tmp/sitesim-slurm.lock, held on
# file descriptor 9 until the script ends), an empty queue, the users and accounts, usage reset.
prepare_cluster() {
    # ---- one user of the cluster at a time --------------------------------------------------------
    exec 9>/tmp/sitesim-slurm.lock
    if ! flock -w 900 9; then
        echo "another run holds /tmp/sitesim-slurm.lock" >&2
        exit 1
    fi
    say "== waiting for an empty queue"
    for _ in $(seq 1 600); do
        [ -z "$(squeue -h -o %i)" ] && break
        sleep 1
    done
    if [ -n "$(squeue -h -o %i)" ]; then
        echo "the queue did not empty in 10 minutes:" >&2
        squeue >&2
        exit 1
    fi

    # ---- users, accounts, QOS (those of slurm-workload.sh, plus biology and dave) ----------------
    for user in "${users[@]}"; do
        if ! id "$user" >/dev/null 2>&1; then
            run useradd --create-home --shell /bin/bash "$user"
        fi
    done
    if ! exists show qos where name=high format=name; then
        run sacctmgr -i add qos high
    fi
    run_modify sacctmgr -i modify qos where name=high set priority=100

    # add_account ACCOUNT PARENT SHARE
    add_account() {
        local account=$1 parent=$2 share=$3
        if ! exists show account where name="$account" format=account; then
            run sacctmgr -i add account "$account" cluster="$cluster" parent="$parent" \
                description="$account" organization=sitesim fairshare="$share"
        fi
        run_modify sacctmgr -i modify account where name="$account" cluster="$cluster" \
            set fairshare="$share"
    }
    add_account physics root 60
    add_account chemistry root 40
    add_account theory physics 20
    add_account biology root 30

    # add_user USER ACCOUNT SHARE
    add_user() {
        local user=$1 account=$2 share=$3
        if ! exists show assoc where cluster="$cluster" user="$user" account="$account" \
            format=user; then
            run sacctmgr -i add user "$user" cluster="$cluster" account="$account" fairshare="$share"
        fi
        run_modify sacctmgr -i modify user where name="$user" cluster="$cluster" account="$account" \
            set fairshare="$share"
    }
    add_user alice physics 3
    add_user alice theory 1
    add_user alice biology 2
    add_user bob chemistry 2
    add_user bob physics 1
    add_user carol theory 4
    add_user carol chemistry 1
    add_user dave biology parent
    run_modify sacctmgr -i modify user where name=alice cluster="$cluster" \
        set defaultaccount=physics qos=normal,high defaultqos=normal
    run_modify sacctmgr -i modify user where name=bob cluster="$cluster" \
        set defaultaccount=chemistry qos=normal defaultqos=normal
    run_modify sacctmgr -i modify user where name=carol cluster="$cluster" \
        set defaultaccount=theory qos=normal,high defaultqos=normal
    run_modify sacctmgr -i modify user where name=dave cluster="$cluster" \
        set defaultaccount=biology qos=normal defaultqos=normal

    # Every association's usage from 0: resetting root's resets its whole tree.
    run sacctmgr -i modify account where name=root cluster="$cluster" set rawusage=0 >/dev/null
    for _ in $(seq 1 30); do
        root_usage=$(sshare -n -P -a -o Account,User,RawUsage | awk -F'|' '$1 == "root" && $2 == "" {print $3}')
        [ "$root_usage" = 0 ] && break
        sleep 1
    done
    if [ "$root_usage" != 0 ]; then
        echo "root's usage is still $root_usage after the reset" >&2
        exit 1
    fi
}
