#!/usr/bin/env bash
# Puts the one-node cluster of scripts/ci/start-slurm.sh into a known fair-share and priority state
# and records what Slurm computes from it, so that sitesim's Slurm model (crates/slurm)
# can be compared with the real thing (tests/slurm_model.rs):
#
#   1. users alice, bob, carol and dave in the accounts of scripts/ci/slurm-workload.sh (physics
#      and chemistry under root, theory under physics) plus `biology` under root, where dave has
#      FairShare=parent; everyone's usage reset to 0 (sacctmgr ... set RawUsage=0);
#   2. usage: jobs of alice (physics) and bob (chemistry) fill the node; bob's is cancelled right
#      after a priority calculation and one of carol's (theory) takes its place (usage is charged
#      only at calculations on this cluster: see below);
#   3. alice's and carol's jobs keep the node full while nine jobs of different users, accounts,
#      sizes, time limits, partitions and QOS are submitted behind them (one with --begin, one
#      held);
#   4. two priority calculations later (PriorityCalcPeriod), right after a calculation, the state:
#
#   OUT_DIR/sprio.txt        sprio -h -o '%i|%r|%u|%Y|%A|%F|%J|%P|%Q|%a|%f|%j|%p|%q': job,
#                            partition, user, priority, then the weighted and the normalised
#                            factors (age, fair-share, job size, partition, QOS)
#   OUT_DIR/sprio-weights.txt  sprio -w with the same columns: the weights
#   OUT_DIR/sshare.txt       sshare -a -l -P: the association tree with shares, usage, fair-share
#   OUT_DIR/assoc_mgr.txt    scontrol show assoc_mgr flags=assoc: the same associations, raw usage
#                            with two decimals (sshare truncates it to an integer)
#   OUT_DIR/assoc_mgr-previous.txt  the same at the calculation before (one PriorityCalcPeriod
#                            earlier: decay and charging between the two)
#   OUT_DIR/jobs.txt         scontrol -o show job: every job (submit, eligible, accrue time, CPUs)
#   OUT_DIR/squeue.txt       squeue of the pending jobs (submit, eligible, accrue time)
#   OUT_DIR/sacct.txt        sacct --parsable2 of this run's jobs (taken before they are cancelled)
#   OUT_DIR/config.txt       scontrol show config: the priority lines
#   OUT_DIR/node.txt, partitions.txt, qos.txt, assoc.txt
#                            scontrol show node / partition; sacctmgr's QOS and association tree
#   OUT_DIR/submitted.txt    this run's jobs: id|phase|user|account|partition|qos|cpus|minutes|extra
#   OUT_DIR/times.txt        key=value: the priority calculations' times (read from slurmctld's
#                            StateSaveLocation/priority_last_decay_ran), the capture's window, the
#                            jobs running at each calculation
#   OUT_DIR/README.md        version, date, every command line
#
# Usage, as root on that cluster (after `bash scripts/ci/start-slurm.sh`):
#   bash scripts/ci/slurm-priority.sh OUT_DIR
#
# It takes three to four and a half minutes (it waits for priority calculations, one a minute).
# It waits (up to 10 minutes) for the cluster's queue to be empty before it starts, and holds the
# lock /tmp/sitesim-slurm.lock (flock) while it runs: its jobs fill the node, which would hold up
# anyone else's, and anyone else's jobs would change the usage it records. Its jobs are cancelled
# when it ends, whatever the outcome. It can be run again (users, accounts and QOS are reused),
# but it resets every association's usage.
# shellcheck source=scripts/ci/slurm-common.sh
source "$(dirname "$0")/slurm-common.sh"
calc_period=$(config_value PriorityCalcPeriod)

prepare_cluster

# ---- jobs --------------------------------------------------------------------------------------
work=$(mktemp -d /tmp/sitesim-priority.XXXXXX)
chmod 1777 "$work"
job_ids=()
cleanup() {
    local queued
    if [ "${#job_ids[@]}" -gt 0 ]; then
        queued=$(squeue -h -o %i -j "$(IFS=,; echo "${job_ids[*]}")" 2>/dev/null || true)
        if [ -n "$queued" ]; then
            # shellcheck disable=SC2086 # one id per word
            scancel $queued || true
        fi
    fi
    cd /
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

submitted=("job|phase|user|account|partition|qos|cpus|minutes|extra")
# submit PHASE USER ACCOUNT PARTITION QOS CPUS MINUTES [sbatch options...]; sets $job
submit() {
    local phase=$1 user=$2 account=$3 partition=$4 qos=$5 ncpus=$6 minutes=$7
    shift 7
    local argv=(sbatch --parsable -A "$account" -p "$partition" -q "$qos" -n "$ncpus"
        -t "$minutes" -o /dev/null "$@")
    if [ "$user" != root ]; then
        argv=(runuser -u "$user" -- "${argv[@]}")
    fi
    # (not through `run`: its record of the command would stay in the $(...) subshell)
    local line
    line=$(printf ' %q' "${argv[@]}")
    printf '+%s\n' "$line" >&2
    commands+=("${line# }")
    job=$("${argv[@]}")
    job=${job%%;*}
    if ! [[ $job =~ ^[0-9]+$ ]]; then
        echo "sbatch printed no job id: $job" >&2
        exit 1
    fi
    job_ids+=("$job")
    local extra=""
    for arg in "$@"; do
        case $arg in
            --wrap=*) ;;
            *) extra+="${extra:+ }$arg" ;;
        esac
    done
    submitted+=("$job|$phase|$user|$account|$partition|$qos|$ncpus|$minutes|$extra")
    say "  job $job: $phase $user $account $partition $qos cpus=$ncpus minutes=$minutes $extra"
}
wait_state() {
    local job=$1 want=$2
    for _ in $(seq 1 240); do
        [ "$(squeue -h -j "$job" -o %T 2>/dev/null)" = "$want" ] && return 0
        sleep 0.5
    done
    echo "job $job never reached $want" >&2
    exit 1
}
wait_gone() {
    local list
    list=$(IFS=,; echo "$*")
    for _ in $(seq 1 600); do
        [ -z "$(squeue -h -o %i -j "$list" 2>/dev/null)" ] && return 0
        sleep 1
    done
    echo "jobs $list still queued after 10 minutes" >&2
    exit 1
}

# When slurmctld last recalculated priorities: the first of the two times (64-bit big-endian)
# that _write_last_decay_ran saves. Written after the calculation, so a new value means that
# every pending job's priority, and every association's fair-share, is that calculation's.
last_calc() {
    local hex
    hex=$(od -An -tx1 -N8 "$decay_file" 2>/dev/null | tr -d ' \n') || true
    if [ ${#hex} -eq 16 ]; then
        echo $((16#$hex))
    else
        echo 0 # being replaced: try again
    fi
}
# Waits for the calculation after the one at $1 and prints its time.
wait_calc() {
    local before=$1 now
    for _ in $(seq 1 900); do
        now=$(last_calc)
        if [ "$now" -ne 0 ] && [ "$now" -ne "$before" ]; then
            echo "$now"
            return 0
        fi
        sleep 0.2
    done
    echo "no priority calculation for 3 minutes after $before" >&2
    exit 1
}
running_jobs() { squeue -h -t R -o %i | sort -n | paste -sd, -; }

# Usage is charged only at the priority calculations: a running job gets the time since the
# previous one. The rest of a job's last period is charged at its end only with
# AccountingStorageEnforce=limits (acct_policy.c:_adjust_limit_usage calls priority_g_job_end
# only then), which this cluster does not set: a job that ends between two calculations loses
# that time. So the usage here comes from jobs cancelled right after a calculation, and from
# the jobs still running.
half=$((cpus / 2))
if [ "$half" -lt 1 ]; then
    echo "the node has $cpus CPU: at least 2 are needed" >&2
    exit 1
fi
# Waits for the first calculation at or after time $1 and prints its time.
wait_calc_from() {
    local from=$1 at
    at=$(last_calc)
    while [ "$at" -lt "$from" ]; do
        at=$(wait_calc "$at")
    done
    echo "$at"
}
job_start() { epoch_of "$(squeue -h -j "$1" -o %S)"; }
epoch_of() { date -u -d "$1" +%s; }

say "== usage: alice (physics) and bob (chemistry) on $((cpus - half)) and $half CPUs; bob's job"
say "   cancelled after the first calculation at least 15 s after it started, carol's (theory)"
say "   in its place; alice's and carol's jobs then fill the node while the others wait"
submit usage alice physics debug normal $((cpus - half)) 10 -J use-alice --wrap='sleep 600'
use_alice=$job
submit usage bob chemistry debug normal "$half" 10 -J use-bob --wrap='sleep 600'
use_bob=$job
wait_state "$use_alice" RUNNING
wait_state "$use_bob" RUNNING
calc_cancel=$(wait_calc_from $(($(job_start "$use_bob") + 15)))
run scancel "$use_bob"
wait_gone "$use_bob"
submit usage carol theory long normal "$half" 10 -J use-carol --wrap='sleep 600'
use_carol=$job
wait_state "$use_carol" RUNNING
say "  bob's job cancelled after the calculation at $calc_cancel"

say "== the pending jobs"
submit pending alice physics debug normal 1 10 -J p-alice --wrap='sleep 60'
submit pending bob chemistry long normal 2 30 -J p-bob --wrap='sleep 60'
submit pending carol theory debug high 1 5 -J p-carol --wrap='sleep 60'
submit pending dave biology debug normal 2 60 -J p-dave --wrap='sleep 60'
submit pending alice theory long high 2 20 -J p-alice-theory --wrap='sleep 60'
submit pending carol chemistry debug normal 1 120 -J p-carol-chem --wrap='sleep 60'
submit pending alice biology debug normal 1 15 -J p-alice-excl --exclusive --wrap='sleep 60'
submit pending bob physics long normal 1 10 -J p-bob-begin --begin=now+30 --wrap='sleep 60'
submit pending carol theory debug normal 1 10 -J p-carol-held --hold --wrap='sleep 60'
last_submit=$(date +%s)

say "== waiting for two priority calculations (PriorityCalcPeriod $calc_period)"
calc_previous=$(wait_calc "$(last_calc)")
running_previous=$(running_jobs)
scontrol show assoc_mgr flags=assoc >"$out_dir/assoc_mgr-previous.txt"
say "  calculation at $calc_previous; running: $running_previous"

# The capture: right after a calculation, everything that calculation set; taken again if
# another calculation, or a job's end (which charges usage), came in between.
calc=$calc_previous
for attempt in 1 2 3; do
    calc=$(wait_calc "$calc")
    capture_start=$(date +%s.%N)
    sshare -a -l -P >"$out_dir/sshare.txt"
    sprio -h -o '%i|%r|%u|%Y|%A|%F|%J|%P|%Q|%a|%f|%j|%p|%q' >"$out_dir/sprio.txt"
    scontrol show assoc_mgr flags=assoc >"$out_dir/assoc_mgr.txt"
    scontrol -o show job >"$out_dir/jobs.txt"
    squeue -h -t PD -O 'JobID:|,UserName:|,Account:|,Partition:|,QOS:|,NumCPUs:|,NumNodes:|,TimeLimit:|,SubmitTime:|,EligibleTime:|,AccrueTime:|,PriorityLong:|,State:|,Reason:' \
        >"$out_dir/squeue.txt"
    running=$(running_jobs)
    sshare_again=$(sshare -a -l -P)
    capture_end=$(date +%s.%N)
    if [ "$(last_calc)" = "$calc" ] && [ "$sshare_again" = "$(cat "$out_dir/sshare.txt")" ]; then
        break
    fi
    say "  a calculation or a job's end came during capture $attempt: again at the next one"
    if [ "$attempt" -eq 3 ]; then
        echo "no quiet capture in three calculations" >&2
        exit 1
    fi
    calc_previous=$calc
    running_previous=$running
    cp "$out_dir/assoc_mgr.txt" "$out_dir/assoc_mgr-previous.txt"
done
say "  captured after the calculation at $calc; running: $running"

# The command lines of the capture, for the README (run above without `run`, to keep the
# capture quick).
commands+=("sshare -a -l -P > sshare.txt")
commands+=("sprio -h -o '%i|%r|%u|%Y|%A|%F|%J|%P|%Q|%a|%f|%j|%p|%q' > sprio.txt")
commands+=("scontrol show assoc_mgr flags=assoc > assoc_mgr.txt (and, one calculation earlier, > assoc_mgr-previous.txt)")
commands+=("scontrol -o show job > jobs.txt")
commands+=("squeue -h -t PD -O 'JobID:|,UserName:|,Account:|,Partition:|,QOS:|,NumCPUs:|,NumNodes:|,TimeLimit:|,SubmitTime:|,EligibleTime:|,AccrueTime:|,PriorityLong:|,State:|,Reason:' > squeue.txt")

job_list=$(IFS=,; echo "${job_ids[*]}")
fields=JobID,JobIDRaw,User,Account,Partition,QOS,Submit,Eligible,Start,End,State,ReqCPUS,NCPUS
fields+=,ReqNodes,NNodes,Timelimit,TimelimitRaw,Priority,Reason
run_to sacct.txt sacct --allusers --allocations --parsable2 \
    --starttime "$(date -u -d @"$clock_start" +%Y-%m-%dT%H:%M:%S)" --endtime now \
    --jobs="$job_list" --format="$fields"
run_to sprio-weights.txt sprio -w -o '%i|%r|%u|%Y|%A|%F|%J|%P|%Q|%a|%f|%j|%p|%q'
scontrol show config | grep -E '^(Priority|FairShare|AccountingStorage(Type|Enforce)|SelectType|ClusterName|SLURM_VERSION|SchedulerType|SchedulerParameters)' \
    >"$out_dir/config.txt"
commands+=("scontrol show config | grep -E '^(Priority|FairShare|AccountingStorage(Type|Enforce)|SelectType|ClusterName|SLURM_VERSION|SchedulerType|SchedulerParameters)' > config.txt")
run_to node.txt scontrol show node
run_to partitions.txt scontrol show partition
run_to qos.txt sacctmgr -P show qos format=Name,Priority,UsageFactor
run_to assoc.txt sacctmgr -P show assoc where cluster="$cluster" \
    format=Cluster,Account,ParentName,User,Share,QOS,DefaultQOS

say "== cancelling this run's jobs"
# shellcheck disable=SC2046 # one id per word
run scancel "${job_ids[@]}"
wait_gone "${job_ids[@]}"

printf '%s\n' "${submitted[@]}" >"$out_dir/submitted.txt"
{
    echo "# seconds since the epoch (UTC); calc and calc_previous are slurmctld's priority calculations"
    echo "cpus=$cpus"
    echo "calc_period=$calc_period"
    echo "last_submit=$last_submit"
    echo "calc_previous=$calc_previous"
    echo "calc=$calc"
    echo "capture_start=$capture_start"
    echo "capture_end=$capture_end"
    echo "calc_cancel=$calc_cancel"
    echo "running_at_calc_previous=$running_previous"
    echo "running_at_calc=$running"
} >"$out_dir/times.txt"

seconds=$(($(date +%s) - clock_start))
version=$(sinfo --version)
{
    echo "# Slurm's priorities and fair-share, captured"
    echo
    echo "Captured by \`scripts/ci/slurm-priority.sh\` in $seconds s, starting"
    echo "$(date -u -d @"$clock_start" '+%Y-%m-%d %H:%M:%S UTC'), from \`$version\` (cluster \`$cluster\`:"
    echo "one node of $cpus CPUs, as \`scripts/ci/start-slurm.sh\` starts it)."
    echo
    echo "- Priority calculations (every \`$calc_period\`) at $(date -u -d @"$calc_previous" '+%H:%M:%S')"
    echo "  (\`assoc_mgr-previous.txt\`) and $(date -u -d @"$calc" '+%H:%M:%S') (everything else, taken"
    echo "  $(awk -v a="$capture_start" -v c="$calc" 'BEGIN {printf "%.1f", a - c}') s after it); \`calc_previous\` and \`calc\` in times.txt."
    echo "- Usage: jobs $use_alice (alice, physics) and $use_bob (bob, chemistry) from the start;"
    echo "  $use_bob cancelled right after the calculation at $(date -u -d @"$calc_cancel" '+%H:%M:%S'), job $use_carol"
    echo "  (carol, theory) started in its place; $use_alice and $use_carol still running at the capture."
    echo "- Pending behind them: jobs"
    echo "  $(printf '%s\n' "${submitted[@]}" | awk -F'|' '$2 == "pending" {printf "%s%s", s, $1; s = ", "}')"
    echo "  (submitted.txt)."
    echo
    echo "The priority settings (config.txt):"
    echo
    echo '```'
    grep -E '^(Priority|FairShare|AccountingStorageEnforce)' "$out_dir/config.txt"
    echo '```'
    echo
    echo "Commands, run as root with \`TZ=UTC SLURM_TIME_FORMAT=standard\` (sbatch as the job's user"
    echo "through \`runuser -u USER --\`):"
    echo
    echo '```'
    printf '%s\n' "${commands[@]}"
    echo '```'
} >"$out_dir/README.md"

say "== wrote $out_dir in $seconds s"
