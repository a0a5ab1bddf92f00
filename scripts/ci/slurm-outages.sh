#!/usr/bin/env bash
# Runs a small queue on the one-node cluster of scripts/ci/start-slurm.sh while the node meets a
# maintenance reservation and a drain, and records what Slurm did and what it logged of them, so
# that sitesim's replay of the dump with the events and the reservation (replay --events
# --reservations) can be compared with it (tests/slurm_outages.rs):
#
#   1. the users and accounts of slurm-common.sh; every association's usage reset to 0;
#   2. a MAINT reservation of the whole node (flags=maint, users=root) from 100 s to 160 s after
#      the start;
#   3. seven jobs of alice (physics, partition debug, QOS normal) at 3 s: some end before the
#      reservation by their time limits, the others would reach into it and wait for its end;
#      two need both CPUs;
#   4. once those jobs have ended (about 200 s; Slurm starts the jobs waiting for the
#      reservation 0-30 s after its end, at its next backfill cycle), the node drained for 30 s
#      and resumed: drained while idle, since a node drained while jobs run is DRAINING until
#      they end and sacctmgr's event begins only then, which a replay cannot know; two jobs
#      submitted 5 s into the drain wait for the resume;
#   5. the queue run until empty.
#
#   OUT_DIR/sacct.txt          sacct --parsable2 of this run's jobs
#   OUT_DIR/events.txt         sacctmgr --parsable2 show events (with TRES) over the run
#   OUT_DIR/reservations.txt   sacctmgr --parsable2 show reservation over the run
#   OUT_DIR/scontrol-reservation.txt  scontrol show reservation, while it was pending
#   OUT_DIR/submitted.txt      job|phase|user|account|partition|qos|cpus|minutes|sleep
#   OUT_DIR/times.txt          key=value: the run's clock (seconds since the epoch), the CPUs
#   OUT_DIR/slurm.conf, config.txt
#   OUT_DIR/README.md          version, date, every command line
#
# Usage, as root on that cluster (after `bash scripts/ci/start-slurm.sh`):
#   bash scripts/ci/slurm-outages.sh OUT_DIR
#
# It takes about five minutes, and holds the lock /tmp/sitesim-slurm.lock while it runs (its
# jobs fill the node, and it drains the node). Whatever it leaves behind on an error is undone:
# its jobs cancelled, the reservation deleted, the node resumed.
# shellcheck source=scripts/ci/slurm-common.sh
source "$(dirname "$0")/slurm-common.sh"
partition=debug
qos=normal

if [ "$cpus" != 2 ]; then
    echo "the node has $cpus CPUs: this workload is made for 2" >&2
    exit 1
fi

prepare_cluster
host=$(sinfo -h -N -o %N | awk 'NR == 1')
reservation=sitesim_maint_$$

work=$(mktemp -d /tmp/sitesim-outages.XXXXXX)
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
    scontrol delete reservationname="$reservation" >/dev/null 2>&1 || true
    case $(sinfo -h -N -n "$host" -o %t) in
        drain* | drng* | down*) scontrol update nodename="$host" state=resume || true ;;
    esac
    cd /
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

submitted=("job|phase|user|account|partition|qos|cpus|minutes|sleep")
# submit PHASE CPUS MINUTES SLEEP: a job of alice in physics; sets $job.
submit() {
    local phase=$1 ncpus=$2 minutes=$3 seconds=$4
    local argv=(runuser -u alice -- sbatch --parsable -A physics -p "$partition" -q "$qos"
        -n "$ncpus" -t "$minutes" -o /dev/null -J "$phase" --wrap="sleep $seconds")
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
    submitted+=("$job|$phase|alice|physics|$partition|$qos|$ncpus|$minutes|$seconds")
    say "  job $job: $phase cpus=$ncpus minutes=$minutes sleep=$seconds"
}
# until SECONDS: sleeps until that many seconds after t0
until_t() {
    while [ "$(date +%s)" -lt $((t0 + $1)) ]; do
        sleep 0.2
    done
}
utc() { date -u -d @"$1" +%Y-%m-%dT%H:%M:%S; }

t0=$(date +%s)
say "== a maintenance reservation of the whole node, $(utc $((t0 + 100))) for 1 minute"
run scontrol create reservation reservationname="$reservation" starttime="$(utc $((t0 + 100)))" \
    duration=1 nodes=ALL flags=maint users=root
run_to scontrol-reservation.txt scontrol show reservation "$reservation"

until_t 3
say "== seven jobs: before the reservation, or after it"
# (when each starts, if Slurm runs the widest first by its job-size factor: 3, 13, 13, 160, 33,
# 160, 170 s; a 1-minute limit from after 40 s, a 2 or 3 minute limit from 3 s, reach into
# the window)
submit both-cpus 2 1 10
submit before 1 1 30
submit before 1 1 20
submit reaches-into 1 2 20
submit before 1 1 20
submit both-cpus 2 1 10
submit reaches-into 1 3 10
say "== until those jobs have ended"
wait_jobs_gone
sleep 2
say "== drain the idle node for 30 s; two jobs meet the drain"
drain_start=$(date +%s)
run scontrol update nodename="$host" state=drain reason="sitesim outage test"
while [ "$(date +%s)" -lt $((drain_start + 5)) ]; do
    sleep 0.2
done
submit late 1 1 10
submit late 1 1 10
while [ "$(date +%s)" -lt $((drain_start + 30)) ]; do
    sleep 0.2
done
drain_end=$(date +%s)
run scontrol update nodename="$host" state=resume

say "== until the queue is empty"
wait_jobs_gone
job_list=$(IFS=,; echo "${job_ids[*]}")
fields=JobID,JobIDRaw,User,Account,Partition,QOS,Submit,Eligible,Start,End,State,ReqCPUS,NCPUS
fields+=,NNodes,Timelimit,TimelimitRaw,Elapsed,ElapsedRaw,Priority
for _ in $(seq 1 30); do
    ended=$(sacct --allusers --allocations --noheader --parsable2 --jobs="$job_list" \
        --format=End | grep -c -v -e Unknown -e '^$' || true)
    [ "$ended" -eq "${#job_ids[@]}" ] && break
    sleep 1
done
clock_end=$(date +%s)
run_to sacct.txt sacct --allusers --allocations --parsable2 \
    --starttime "$(utc "$clock_start")" --endtime now --jobs="$job_list" --format="$fields"
run_to events.txt sacctmgr --parsable2 show events nodes="$host" start="$(utc "$clock_start")" \
    end="$(utc "$clock_end")" format=Cluster,NodeName,TimeStart,TimeEnd,State,Reason,User,TRES
run_to reservations.txt sacctmgr --parsable2 show reservation cluster="$cluster" \
    start="$(utc "$clock_start")" end="$(utc "$clock_end")" \
    format=Cluster,Name,ID,TimeStart,TimeEnd,NodeName,Flags,TRES
scontrol show config | grep -E '^(Priority|SchedulerType|SchedulerParameters|SelectType|SLURM_VERSION|OverTimeLimit|KillWait)' \
    >"$out_dir/config.txt"
commands+=("scontrol show config | grep -E '^(Priority|SchedulerType|SchedulerParameters|SelectType|SLURM_VERSION|OverTimeLimit|KillWait)' > config.txt")
run_to slurm.conf cat /etc/slurm/slurm.conf

printf '%s\n' "${submitted[@]}" >"$out_dir/submitted.txt"
{
    echo "# seconds since the epoch (UTC)"
    echo "cpus=$cpus"
    echo "clock_start=$clock_start"
    echo "t0=$t0"
    echo "reservation_start=$((t0 + 100))"
    echo "reservation_end=$((t0 + 160))"
    echo "drain_start=$drain_start"
    echo "drain_end=$drain_end"
    echo "clock_end=$clock_end"
} >"$out_dir/times.txt"

seconds=$((clock_end - clock_start))
version=$(sinfo --version)
{
    echo "# A queue meeting a maintenance reservation and a drain, captured"
    echo
    echo "Captured by \`scripts/ci/slurm-outages.sh\` in $seconds s, starting"
    echo "$(date -u -d @"$clock_start" '+%Y-%m-%d %H:%M:%S UTC'), from \`$version\` (cluster \`$cluster\`:"
    echo "one node of $cpus CPUs, as \`scripts/ci/start-slurm.sh\` starts it)."
    echo
    echo "- A MAINT reservation of the node from $(utc $((t0 + 100))) to $(utc $((t0 + 160))) UTC"
    echo "  (\`scontrol-reservation.txt\` while pending, \`reservations.txt\` from the accounting)."
    echo "- Nine jobs of alice (physics, partition \`$partition\`, QOS \`$qos\`; \`submitted.txt\`)."
    echo "- The node drained, idle, from $(utc "$drain_start") to $(utc "$drain_end") UTC (\`events.txt\`)."
    echo
    echo "Commands, run as root with \`TZ=UTC SLURM_TIME_FORMAT=standard\` (sbatch as alice through"
    echo "\`runuser -u alice --\`):"
    echo
    echo '```'
    printf '%s\n' "${commands[@]}"
    echo '```'
} >"$out_dir/README.md"

say "== wrote $out_dir in $seconds s"
