#!/usr/bin/env bash
# Runs a small, known workload on the one-node cluster of scripts/ci/start-slurm.sh and records
# what Slurm's accounting says about it, as fixtures for the sacct reader:
#
#   OUT_DIR/sacct.txt        sacct --parsable2 of the allocations (one line per job, array task
#                            and requeued run)
#   OUT_DIR/sacct-steps.txt  the same with the steps (.batch, .extern, and .0 for the jobs that
#                            run srun)
#   OUT_DIR/assoc.txt        sacctmgr's association tree (accounts, users, shares, QOS)
#   OUT_DIR/submitted.json   what was submitted and the state sacct is expected to show
#
# Usage, as root on that cluster (after `bash scripts/ci/start-slurm.sh`):
#   bash scripts/ci/slurm-workload.sh OUT_DIR
#
# It creates the Unix users alice, bob and carol and the accounts physics, chemistry and theory
# (under physics) if they are missing, adds the QOS `high`, and submits thirteen short jobs (one
# of them an array of six tasks) as those users (runuser -u USER -- sbatch ...). It takes about
# three minutes, most of it the two minutes Slurm makes a requeued job wait before it may run
# again. It can be run again: users, accounts and QOS are reused, and sacct is asked for this
# run's job ids only (--jobs), so jobs of earlier runs, or of anyone else on the cluster, are
# left out.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
fi
out_dir=$1
if [ "$(id -u)" -ne 0 ]; then
    echo "$0: run as root (it adds users and submits as them)" >&2
    exit 2
fi
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

export TZ=UTC SLURM_TIME_FORMAT=standard
cluster=$(scontrol show config | awk -F' = ' '/^ClusterName/ {print $2}')
users=(alice bob carol)
clock_start=$(date +%s)
# the sacct window starts before anything of this run was submitted
window_start=$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%S)

say() { printf '%s\n' "$*"; }
# Runs a command after printing it, quoted so that it can be pasted back into a shell.
# (on stderr, so that a command whose output is redirected to a file still shows)
run() {
    {
        printf '+'
        printf ' %q' "$@"
        printf '\n'
    } >&2
    "$@"
}
# The same for sacctmgr modify, which fails when there was nothing to change.
run_modify() {
    run "$@" >/dev/null || true
}

# ---- users, accounts, QOS ------------------------------------------------------------------
for user in "${users[@]}"; do
    if ! id "$user" >/dev/null 2>&1; then
        run useradd --create-home --shell /bin/bash "$user"
    fi
done

exists() { [ -n "$(sacctmgr -n -P "$@" 2>/dev/null)" ]; }

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
add_user bob chemistry 2
add_user bob physics 1
add_user carol theory 4
add_user carol chemistry 1
# default accounts and QOS: alice and carol may use `high`, bob only `normal`
run_modify sacctmgr -i modify user where name=alice cluster="$cluster" \
    set defaultaccount=physics qos=normal,high defaultqos=normal
run_modify sacctmgr -i modify user where name=bob cluster="$cluster" \
    set defaultaccount=chemistry qos=normal defaultqos=normal
run_modify sacctmgr -i modify user where name=carol cluster="$cluster" \
    set defaultaccount=theory qos=normal,high defaultqos=normal

# ---- the workload --------------------------------------------------------------------------
# Jobs are submitted from a scratch directory the users can write their slurm-*.out files to.
work=$(mktemp -d /tmp/sitesim-workload.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 1777 "$work"
cd "$work"

json_str() {
    local s=$1
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    printf '"%s"' "$s"
}

records=()
job_ids=()
# submit KIND USER ACCOUNT PARTITION QOS CPUS MINUTES EXPECTED_STATES [sbatch options...]
# EXPECTED_STATES: the State sacct --duplicates should show for each record of the job, in order,
# separated by ','; for an array, for every task. Sets $job to the id sbatch printed.
submit() {
    local kind=$1 user=$2 account=$3 partition=$4 qos=$5 cpus=$6 minutes=$7 expected=$8
    shift 8
    local output
    local argv=(sbatch -A "$account" -p "$partition" -q "$qos" -t "$minutes" "$@")
    {
        printf '+ runuser -u %s --' "$user"
        printf ' %q' "${argv[@]}"
        printf '\n'
    } >&2
    output=$(runuser -u "$user" -- "${argv[@]}")
    job=$(printf '%s\n' "$output" | awk '/^Submitted batch job/ {print $4}')
    if [ -z "$job" ]; then
        echo "sbatch printed no job id: $output" >&2
        exit 1
    fi
    say "  job $job ($kind)"
    job_ids+=("$job")
    local tasks=null depends=null uid states="" state argv_json=""
    for arg in "${argv[@]}"; do
        argv_json+="${argv_json:+, }$(json_str "$arg")"
    done
    uid=$(id -u "$user")
    for arg in "$@"; do
        case $arg in
            --array=*) tasks=$(json_str "${arg#--array=}") ;;
            --dependency=*) depends=${arg##*:} ;;
        esac
    done
    IFS=, read -r -a expected_list <<<"$expected"
    for state in "${expected_list[@]}"; do
        state=${state//UID/$uid}
        states+="${states:+, }$(json_str "$state")"
    done
    records+=("    {\"job_id\": $job, \"array_tasks\": $tasks, \"kind\": $(json_str "$kind"), \
\"user\": $(json_str "$user"), \"uid\": $uid, \"account\": $(json_str "$account"), \
\"partition\": $(json_str "$partition"), \"qos\": $(json_str "$qos"), \"cpus\": $cpus, \
\"time_limit_min\": $minutes, \"depends_on\": $depends, \
\"expected_states\": [${states}], \"sbatch_argv\": [${argv_json}]}")
}

# Waits until squeue shows the job in state $2 (e.g. RUNNING).
wait_state() {
    local job=$1 want=$2
    for _ in $(seq 1 240); do
        [ "$(squeue -h -j "$job" -o %T 2>/dev/null)" = "$want" ] && return 0
        sleep 0.5
    done
    echo "job $job never reached $want" >&2
    exit 1
}

say "== submitting"
# Requeued by the administrator while running: sacct --duplicates shows the first run as
# REQUEUED, then the second run. Slurm makes a requeued job wait about two minutes before it is
# eligible again: it goes first so that this wait overlaps the rest of the workload.
submit requeued carol theory debug normal 1 2 REQUEUED,COMPLETED -J requeued --wrap='sleep 10'
requeued=$job
wait_state "$requeued" RUNNING
sleep 3
run scontrol requeue "$requeued"

# The longest job next, so that it runs while the rest goes through the other CPUs: it sleeps
# past its 1-minute limit and is killed by Slurm.
submit timeout bob chemistry debug normal 1 1 TIMEOUT -J timeout --wrap='srun sleep 90'

# Cancelled by its owner while running.
submit cancelled-running alice physics long high 1 5 'CANCELLED by UID' \
    -J cancel-running --wrap='sleep 300'
cancel_running=$job
wait_state "$cancel_running" RUNNING
sleep 3
run runuser -u alice -- scancel "$cancel_running"

# Held at submission, cancelled by its owner before it could run.
submit cancelled-pending carol chemistry debug normal 1 2 'CANCELLED by UID' \
    -J cancel-pending --hold --wrap='sleep 5'
run runuser -u carol -- scancel "$job"

submit plain alice physics debug normal 1 2 COMPLETED -J plain --wrap='srun sleep 5'
plain=$job
submit dependency alice theory debug normal 1 2 COMPLETED -J after-plain \
    --dependency=afterok:"$plain" --wrap='sleep 3'
submit array bob chemistry debug normal 1 1 COMPLETED -J array --array=1-6%2 --wrap='sleep 3'
submit pipe-in-name carol theory long high 1 2 COMPLETED -J 'a|b' --wrap='sleep 2'
submit mem bob physics debug normal 1 2 COMPLETED -J mem --mem=200M --wrap='sleep 3'
cpus_per_node=$(sinfo -h -N -o %c | awk 'NR == 1')
submit exclusive alice physics long high 1 2 COMPLETED -J exclusive --exclusive \
    --wrap='sleep 3'
submit plain carol chemistry debug normal 2 2 COMPLETED -J two-cpus -n 2 --wrap='srun sleep 3'
submit begin-later bob chemistry debug normal 1 2 COMPLETED -J begin-later --begin=now+20 \
    --wrap='sleep 2'
submit failed alice physics debug normal 1 2 FAILED -J failed --wrap='sleep 1; exit 3'

first_job=${job_ids[0]}
last_job=$job
say "== waiting for jobs $first_job..$last_job to end"
user_list=$(IFS=,; echo "${users[*]}")
deadline=$(( $(date +%s) + 600 ))
while [ -n "$(squeue -h -u "$user_list" -o %i)" ]; do
    if [ "$(date +%s)" -gt "$deadline" ]; then
        echo "jobs still queued after 10 minutes:" >&2
        squeue -u "$user_list" >&2
        exit 1
    fi
    sleep 2
done

job_list=$(IFS=,; echo "${job_ids[*]}")
# slurmctld sends the last records to slurmdbd asynchronously: wait until none is unfinished.
for _ in $(seq 1 30); do
    states=$(sacct -n -P -X -D --jobs="$job_list" --format=State)
    if ! grep -Eq '^(PENDING|RUNNING|COMPLETING|SUSPENDED)$' <<<"$states"; then
        break
    fi
    sleep 2
done

# ---- what accounting says ------------------------------------------------------------------
fields=JobID,JobIDRaw,User,Account,Partition,QOS,Submit,Eligible,Start,End,ElapsedRaw
fields+=,TimelimitRaw,Timelimit,NCPUS,NNodes,ReqCPUS,ReqNodes,ReqMem,ReqTRES,AllocTRES,State
fields+=,Priority,Flags,Reason,SubmitLine
# `Restarts` is not a field of this sacct (22.05): it is left out.
say "== accounting (TZ=UTC SLURM_TIME_FORMAT=standard; --jobs keeps this run's jobs only)"
run sacct --allusers --duplicates --allocations --parsable2 --starttime "$window_start" \
    --endtime now --jobs="$job_list" --format="$fields" >"$out_dir/sacct.txt"
run sacct --allusers --duplicates --parsable2 --starttime "$window_start" \
    --endtime now --jobs="$job_list" --format="$fields" >"$out_dir/sacct-steps.txt"
run sacctmgr -P show assoc format=Cluster,Account,ParentName,User,Share,QOS,DefaultQOS \
    >"$out_dir/assoc.txt"

{
    printf '{\n'
    printf '  "slurm_version": %s,\n' "$(json_str "$(sinfo --version)")"
    printf '  "cluster": %s,\n' "$(json_str "$cluster")"
    printf '  "cpus_per_node": %s,\n' "$cpus_per_node"
    printf '  "starttime": %s,\n' "$(json_str "$window_start")"
    printf '  "first_job_id": %s,\n' "$first_job"
    printf '  "last_job_id": %s,\n' "$last_job"
    printf '  "sacct_filter": %s,\n' \
        "$(json_str "--jobs with the job ids below: other jobs in the window are left out")"
    printf '  "submissions": [\n'
    for i in "${!records[@]}"; do
        printf '%s' "${records[$i]}"
        [ "$i" -lt $(( ${#records[@]} - 1 )) ] && printf ','
        printf '\n'
    done
    printf '  ]\n}\n'
} >"$out_dir/submitted.json"

# ---- expected against recorded -------------------------------------------------------------
say "== states: expected, then what sacct shows (JobID: State)"
mismatches=0
for i in "${!job_ids[@]}"; do
    id=${job_ids[$i]}
    expected=$(printf '%s' "${records[$i]}" | sed 's/.*"expected_states": \[\([^]]*\)\].*/\1/' |
        tr -d '"' | sed 's/, /,/g')
    # the State of every line of this job (or of its array's tasks), in the file's order
    shown_all=$(awk -F'|' -v id="$id" '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == "State") state = i; next }
        $1 == id || index($1, id "_") == 1 { print $state }' "$out_dir/sacct.txt" |
        paste -sd, -)
    shown=$(tr , '\n' <<<"$shown_all" | sort -u | paste -sd, -)
    if [ "$expected" = "$shown_all" ]; then
        mark=ok
    elif [[ $expected != *,* && $shown == "$expected" ]]; then
        mark=ok # an array: every task in that state
    else
        mark=DIFFERENT
        mismatches=$((mismatches + 1))
    fi
    printf '  %-8s %-10s expected %-30s shown %s\n' "$id" "$mark" "$expected" "$shown_all"
done

cd /
say "== wrote $out_dir/{sacct.txt,sacct-steps.txt,assoc.txt,submitted.json}"
say "   in $(($(date +%s) - clock_start)) s; $mismatches job(s) not as expected"
