#!/usr/bin/env bash
# Runs a small queue to completion on the one-node cluster of scripts/ci/start-slurm.sh and records
# when Slurm started each job, so that sitesim's Slurm model (crates/slurm) can be
# given the same workload and compared on the start order and the start times
# (tests/slurm_start_order.rs):
#
#   1. the users and accounts of scripts/ci/slurm-priority.sh (alice, bob, carol, dave in
#      physics, chemistry, theory under physics and biology); every association's usage reset
#      to 0;
#   2. two filler jobs, alice's (physics) and carol's (chemistry), one CPU each, fill the node
#      and run past the next priority calculation (so that both accounts have usage, charged at
#      the calculations: without AccountingStorageEnforce=limits nothing else charges it), carol's
#      ending 6 s after that calculation and alice's 14 s after it;
#   3. once both run, ten jobs of alice, bob and carol in physics and chemistry (1 or 2 CPUs, time
#      limits of 1 or 2 minutes, sleeping 5 to 18 s), all in partition `long` and QOS `normal`,
#      are queued behind them and run until the queue is empty;
#   4. right after every priority calculation while jobs of this run wait: sprio and sshare.
#
#   OUT_DIR/sacct.txt       sacct --parsable2 of this run's jobs: submit, eligible, start, end,
#                           CPUs, time limit, user, account, partition, QOS, state
#   OUT_DIR/submitted.txt   job|phase|user|account|partition|qos|cpus|minutes|sleep
#   OUT_DIR/sshare-start.txt  sshare -a -l -P after the reset (the association tree and shares)
#   OUT_DIR/calcs.txt       every priority calculation seen during the run (slurmctld's
#                           StateSaveLocation/priority_last_decay_ran), seconds since the epoch
#   OUT_DIR/at/CALC/sprio.txt   sprio -h -o '%i|%r|%u|%Y|%A|%F|%J|%P|%Q|%a|%f|%j|%p|%q' right
#                           after the calculation at CALC (pending jobs of this run only)
#   OUT_DIR/at/CALC/sshare.txt  sshare -a -l -P then
#   OUT_DIR/at/CALC/running.txt the jobs running then (squeue -t R)
#   OUT_DIR/config.txt      scontrol show config: the priority and scheduler lines
#   OUT_DIR/slurm.conf      the cluster's slurm.conf (sitesim reads it with --slurm-conf)
#   OUT_DIR/node.txt, partitions.txt, qos.txt, assoc.txt
#   OUT_DIR/times.txt       key=value: the run's window, the cluster's CPUs
#   OUT_DIR/README.md       version, date, every command line
#
# Usage, as root on that cluster (after `bash scripts/ci/start-slurm.sh`):
#   bash scripts/ci/slurm-start-order.sh OUT_DIR
#
# It takes about two to three minutes. It waits (up to 10 minutes) for the cluster's queue to be
# empty before it starts, and holds the lock /tmp/sitesim-slurm.lock (flock) while it runs: its
# jobs fill the node, and anyone else's jobs would change the order and the usage it records. Its
# jobs still queued when it ends (on an error) are cancelled. It resets every association's
# usage.
# shellcheck source=scripts/ci/slurm-common.sh
source "$(dirname "$0")/slurm-common.sh"
partition=long
qos=normal

if [ "$cpus" != 2 ]; then
    echo "the node has $cpus CPUs: this workload is made for 2" >&2
    exit 1
fi

prepare_cluster
run_to sshare-start.txt sshare -a -l -P

# ---- jobs --------------------------------------------------------------------------------------
work=$(mktemp -d /tmp/sitesim-start-order.XXXXXX)
chmod 1777 "$work"
job_ids=()
poller=""
cleanup() {
    local queued
    if [ -n "$poller" ]; then
        kill "$poller" 2>/dev/null || true
        wait "$poller" 2>/dev/null || true
    fi
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

# When slurmctld last recalculated priorities: the first of the two times (64-bit big-endian)
# that _write_last_decay_ran saves, written after the calculation (see slurm-priority.sh).
last_calc() {
    local hex
    hex=$(od -An -tx1 -N8 "$decay_file" 2>/dev/null | tr -d ' \n') || true
    if [ ${#hex} -eq 16 ]; then
        echo $((16#$hex))
    else
        echo 0 # being replaced: try again
    fi
}
# Every calculation, as it is seen, into calcs.txt (in the background until the end).
: >"$out_dir/calcs.txt"
{
    seen=0
    while :; do
        at=$(last_calc)
        if [ "$at" -ne 0 ] && [ "$at" -ne "$seen" ]; then
            echo "$at" >>"$out_dir/calcs.txt"
            seen=$at
        fi
        sleep 0.2
    done
} &
poller=$!

submitted=("job|phase|user|account|partition|qos|cpus|minutes|sleep")
# submit PHASE USER ACCOUNT CPUS MINUTES SLEEP; sets $job. SLEEP is seconds, or until@EPOCH: sleep
# until that time.
submit() {
    local phase=$1 user=$2 account=$3 ncpus=$4 minutes=$5 seconds=$6 wrap
    case $seconds in
        until@*) wrap="sleep \$(( ${seconds#until@} - \$(date +%s) ))" ;;
        *) wrap="sleep $seconds" ;;
    esac
    local argv=(runuser -u "$user" -- sbatch --parsable -A "$account" -p "$partition" -q "$qos"
        -n "$ncpus" -t "$minutes" -o /dev/null -J "$phase-$user" --wrap="$wrap")
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
    submitted+=("$job|$phase|$user|$account|$partition|$qos|$ncpus|$minutes|$seconds")
    say "  job $job: $phase $user $account cpus=$ncpus minutes=$minutes sleep=$seconds"
}
wait_state() {
    local job=$1 want=$2
    for _ in $(seq 1 240); do
        [ "$(squeue -h -j "$job" -o %T 2>/dev/null)" = "$want" ] && return 0
        sleep 0.25
    done
    echo "job $job never reached $want" >&2
    exit 1
}
mine_queued() { squeue -h -o %i -j "$(IFS=,; echo "${job_ids[*]}")" 2>/dev/null || true; }

# The fillers end a few seconds after the next calculation, which charges them: the one after if
# the next is less than 20 s away (they need a few seconds to start).
period=$(awk -F' *= *' '$1 == "PriorityCalcPeriod" {print $2}' <<<"$config")
period_s=60
case $period in
    *:*:*) period_s=$(awk -F: '{print $1 * 3600 + $2 * 60 + $3}' <<<"$period") ;;
    *min*) period_s=$((${period%% *} * 60)) ;;
esac
now=$(date +%s)
next=$(($(last_calc) + period_s))
while [ "$next" -lt $((now + 20)) ]; do
    next=$((next + period_s))
done
say "== fillers: alice (physics) and carol (chemistry), one CPU each, past the calculation at $next"
submit fill alice physics 1 2 "until@$((next + 14))"
submit fill carol chemistry 1 2 "until@$((next + 6))"
# the second the last filler was submitted in, or a later one
fillers_submitted=$(date +%s)
fillers=("${job_ids[@]}")
wait_state "${fillers[0]}" RUNNING
wait_state "${fillers[1]}" RUNNING
# The queue's jobs are submitted at least two whole seconds (sacct's resolution) after the
# fillers. slurmctld starts a submission in its own second or the next (its 1-s background
# tick); the model runs the main loop for a submission one second after it. A queue submitted
# one second after the fillers would meet them in that main loop and be started before them by
# priority, where Slurm had started the fillers already: a capture of CI's (calculations at -12,
# 48, 108 s from the fillers, queue at +1 s) failed so, in the script's timing, not the model's.
while [ "$(date +%s)" -lt $((fillers_submitted + 2)) ]; do
    sleep 0.2
done
sleep 0.3

say "== the queue: ten jobs behind the fillers"
# Their sleeps put every job's end (from the calculation the fillers run past: 6, 14, 16, 32, 44,
# 50, 53, 61, 69, 79, 86, 94 s, when each starts as the one before ends) at least a second after
# a calculation or six before it: slurmctld may run the main loop for an end in the same second as
# a calculation before or after it (two threads), the model after it, so an end in a calculation's
# second could start different jobs. Ends only come later than planned (start-up), never earlier.
submit queue bob chemistry 1 1 8
submit queue alice physics 2 2 12
submit queue carol chemistry 1 1 15
submit queue bob physics 1 2 10
submit queue alice physics 1 1 6
submit queue carol chemistry 2 1 10
submit queue bob chemistry 2 2 8
submit queue bob physics 1 1 18
submit queue alice physics 1 1 9
submit queue carol chemistry 1 2 7
last_submit=$(date +%s)

say "== until the queue is empty: sprio and sshare after each calculation"
commands+=("after each calculation CALC while jobs wait: sprio -h -o '%i|%r|%u|%Y|%A|%F|%J|%P|%Q|%a|%f|%j|%p|%q' -j JOBS > at/CALC/sprio.txt; sshare -a -l -P > at/CALC/sshare.txt; squeue -h -t R -o '%i|%S' -j JOBS > at/CALC/running.txt")
job_list=$(IFS=,; echo "${job_ids[*]}")
seen=$(last_calc)
for _ in $(seq 1 1500); do
    [ -z "$(mine_queued)" ] && break
    at=$(last_calc)
    if [ "$at" -ne 0 ] && [ "$at" -ne "$seen" ]; then
        seen=$at
        if [ -n "$(squeue -h -t PD -o %i -j "$job_list" 2>/dev/null)" ]; then
            mkdir -p "$out_dir/at/$at"
            sprio -h -o '%i|%r|%u|%Y|%A|%F|%J|%P|%Q|%a|%f|%j|%p|%q' -j "$job_list" \
                >"$out_dir/at/$at/sprio.txt" 2>/dev/null || true
            sshare -a -l -P >"$out_dir/at/$at/sshare.txt"
            squeue -h -t R -o '%i|%S' -j "$job_list" >"$out_dir/at/$at/running.txt"
            say "  calculation at $at: $(wc -l <"$out_dir/at/$at/sprio.txt") pending"
        fi
    fi
    sleep 0.2
done
if [ -n "$(mine_queued)" ]; then
    echo "jobs still queued after 5 minutes:" >&2
    squeue >&2
    exit 1
fi
kill "$poller" 2>/dev/null || true
wait "$poller" 2>/dev/null || true
poller=""
# slurmdbd records the ends a moment after the jobs leave the queue
fields=JobID,JobIDRaw,User,Account,Partition,QOS,Submit,Eligible,Start,End,State,ReqCPUS,NCPUS
fields+=,NNodes,Timelimit,TimelimitRaw,Elapsed,ElapsedRaw,Priority
for _ in $(seq 1 30); do
    ended=$(sacct --allusers --allocations --noheader --parsable2 --jobs="$job_list" \
        --format=End | grep -c -v -e Unknown -e '^$' || true)
    [ "$ended" -eq "${#job_ids[@]}" ] && break
    sleep 1
done
run_to sacct.txt sacct --allusers --allocations --parsable2 \
    --starttime "$(date -u -d @"$clock_start" +%Y-%m-%dT%H:%M:%S)" --endtime now \
    --jobs="$job_list" --format="$fields"
scontrol show config | grep -E '^(Priority|FairShare|AccountingStorage(Type|Enforce)|SelectType|ClusterName|SLURM_VERSION|SchedulerType|SchedulerParameters|OverTimeLimit|KillWait)' \
    >"$out_dir/config.txt"
commands+=("scontrol show config | grep -E '^(Priority|FairShare|AccountingStorage(Type|Enforce)|SelectType|ClusterName|SLURM_VERSION|SchedulerType|SchedulerParameters|OverTimeLimit|KillWait)' > config.txt")
run_to slurm.conf cat /etc/slurm/slurm.conf
run_to node.txt scontrol show node
run_to partitions.txt scontrol show partition
run_to qos.txt sacctmgr -P show qos format=Name,Priority,UsageFactor
run_to assoc.txt sacctmgr -P show assoc where cluster="$cluster" \
    format=Cluster,Account,ParentName,User,Share,QOS,DefaultQOS

printf '%s\n' "${submitted[@]}" >"$out_dir/submitted.txt"
{
    echo "# seconds since the epoch (UTC)"
    echo "cpus=$cpus"
    echo "calc_period=$period_s"
    echo "clock_start=$clock_start"
    echo "fillers_past=$next"
    echo "last_submit=$last_submit"
    echo "clock_end=$(date +%s)"
} >"$out_dir/times.txt"

seconds=$(($(date +%s) - clock_start))
version=$(sinfo --version)
{
    echo "# Slurm's start order, captured"
    echo
    echo "Captured by \`scripts/ci/slurm-start-order.sh\` in $seconds s, starting"
    echo "$(date -u -d @"$clock_start" '+%Y-%m-%d %H:%M:%S UTC'), from \`$version\` (cluster \`$cluster\`:"
    echo "one node of $cpus CPUs, as \`scripts/ci/start-slurm.sh\` starts it)."
    echo
    echo "- Every association's usage reset to 0 (\`sshare-start.txt\`: the tree and its shares)."
    echo "- Fillers ${fillers[0]} (alice, physics) and ${fillers[1]} (carol, chemistry), one CPU each,"
    echo "  running past the priority calculation at $(date -u -d @"$next" '+%H:%M:%S'); ten jobs queued behind them"
    echo "  (\`submitted.txt\`), all in partition \`$partition\`, QOS \`$qos\`, run to completion (\`sacct.txt\`)."
    echo "- Priority calculations seen: \`calcs.txt\`; sprio, sshare and the running jobs right after"
    echo "  each one while jobs of this run waited: \`at/CALC/\`."
    echo
    echo "The priority settings (config.txt):"
    echo
    echo '```'
    grep -E '^(Priority|FairShare|AccountingStorageEnforce|SchedulerParameters)' "$out_dir/config.txt"
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
