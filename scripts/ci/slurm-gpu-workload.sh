#!/usr/bin/env bash
# Runs a mixed CPU and GPU workload to completion on the one-node cluster of
# scripts/ci/start-slurm.sh, switched to its `--gpu-site` profile for the run, and records what
# Slurm did with it, as fixtures for sitesim's Slurm model (GPUs, memory, QOS and account limits,
# two partitions over one node):
#
#   the site   one node of 16 CPUs, 64000 MB and four A100s (Gres=gpu:a100:4; SlurmdParameters=
#              config_overrides: the machine is smaller, the jobs only sleep), partitions `cpu`
#              (the default) and `gpu` over that node, CR_Core_Memory with DefMemPerCPU=2000,
#              AccountingStorageEnforce=limits (so that the limits below hold), the priority
#              settings of the ci profile (multifactor, Fair Tree);
#   accounts   those of slurm-common.sh: physics (60) with alice (3), bob (1) and theory (20:
#              alice 1, carol 4); chemistry (40) with bob (2), carol (1); biology (30) with
#              alice (2), dave (parent); every association's usage reset to 0 before the run;
#   limits     QOS `gpu` (priority 0) with GrpTRES=gres/gpu=3, the QOS of most GPU jobs;
#              account biology GrpTRES=gres/gpu=1, which 22.05 does not apply to jobs in QOS
#              gpu: a QOS limit on a TRES hides the associations' limits on it (the limit
#              "first defined" in the hierarchy wins; acct_policy.c, _validate_tres_usage_limits
#              skips an association's TRES where the QOS has a limit), and every biology GPU job
#              of the plan is in QOS gpu, so it never binds: a case a model must not enforce;
#              QOS `high` (priority 100, alice and carol only, some CPU and GPU jobs) has no
#              limit, so its GPU jobs may use the fourth GPU;
#   workloads  --workload gpu (the default; the plan below, seed 20261129) or --workload queue
#              (seed 20261130: another draw of the same plan, whose lines 12, 61 and 104 are
#              throttled job arrays, --array=1-8%2, 1-6%2 and 1-10%3, 171 jobs in all; --short:
#              lines 4 and 11, 1-4%2 and 1-3%1; and QOS `high` allows a user two running jobs,
#              MaxJobsPerUser=2, reset to none afterwards);
#   the jobs   150 (--short: 20), a fixed plan drawn from a seeded generator (Park-Miller, in awk:
#              the same plan on every run and machine), submitted in bursts (1 to 22 jobs at the
#              same planned second, 20 to 80 s apart; --short 10 to 30 s) over about 13 minutes
#              (--short 2): about two thirds CPU-only jobs in `cpu` (1 to 8 CPUs, QOS normal
#              or high, memory from DefMemPerCPU, --mem-per-cpu or --mem), a third GPU jobs in `gpu`
#              (--gres=gpu:1, gpu:a100:1, gpu:a100:2, gpu:a100:3; gpu:a100:4 possible in QOS
#              high only, none in the 150-job plan; biology's GPU jobs 1 GPU; 2 CPUs per GPU, 4
#              for some; --mem or --mem-per-cpu),
#              4% timeouts (limit 1 minute, `sleep 100`), a few that fail early (`exit 1` after a
#              third of their sleep), limits from 1.3 to 3.3 times the sleep or, for 15%, 10 to 30
#              minutes (ending long before their limit). Every job is `sleep`.
#
# The full run takes 20 to 25 minutes (the queue is well over the node's CPUs and GPUs for
# most of it); --short, for CI, about three minutes. Outputs:
#
#   OUT_DIR/plan.txt          the generated plan: pos|offset|user|account|partition|qos|ntasks|
#                             gres|mem|limit_min|sleep|exit|kind (offset: planned seconds after
#                             the first submission)
#   OUT_DIR/submitted.txt     pos|job|submitted (epoch seconds, with fraction, when sbatch
#                             returned)
#   OUT_DIR/sbatch.txt        every sbatch command line, in order (run as root through
#                             `runuser -u USER --`, from a scratch directory)
#   OUT_DIR/sacct.txt         sacct --parsable2 --allocations of this run's jobs (fields below)
#   OUT_DIR/reasons.txt       epoch|job|reason: each pending job's reason whenever it changed
#                             (squeue every 2 s): Priority, Resources, QOSGrpGRES, AssocGrpGRES...
#   OUT_DIR/sshare-start.txt, sshare-end.txt   sshare -a -l -P after the reset and at the end
#   OUT_DIR/assoc.txt, qos.txt  sacctmgr show assoc / qos -P (shares, QOS, limits)
#   OUT_DIR/slurm.conf, gres.conf   the configuration files of the run
#   OUT_DIR/config.txt        scontrol show config
#   OUT_DIR/node.txt, partitions.txt, sinfo.txt   scontrol show node / partition, sinfo
#   OUT_DIR/times.txt         key=value: the run's clock (epoch seconds) and size
#   OUT_DIR/README.md         date, version, the workload, every command line
#
# Usage, as root on that cluster (after `bash scripts/ci/start-slurm.sh`):
#   bash scripts/ci/slurm-gpu-workload.sh OUT_DIR [--short] [--workload gpu|queue]
#
# It holds the lock /tmp/sitesim-slurm.lock (flock) while it runs and waits (up to 10 minutes)
# for an empty queue first (slurm-common.sh's prepare_cluster, which also resets every
# association's usage); then it restarts the cluster with `start-slurm.sh --gpu-site`, and when it
# ends, however it ends, cancels its jobs still queued, removes biology's GPU limit and restarts
# the cluster in the ci profile (`start-slurm.sh`), which the other live tests expect.
set -euo pipefail

usage() {
    echo "usage: $0 OUT_DIR [--short] [--workload gpu|queue]" >&2
    exit 2
}
short=0
workload=gpu
positional=()
while [ $# -gt 0 ]; do
    case $1 in
        --short) short=1 ;;
        --workload)
            [ $# -ge 2 ] || usage
            workload=$2
            shift
            ;;
        -*) usage ;;
        *) positional+=("$1") ;;
    esac
    shift
done
case $workload in
    gpu | queue) ;;
    *) usage ;;
esac
[ "${#positional[@]}" -eq 1 ] || usage
set -- "${positional[0]}"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/ci/slurm-common.sh
source "$here/slurm-common.sh"

if [ "$workload" = queue ]; then
    seed=20261130
else
    seed=20261129
fi
# The queue workload's QOS `high` allows each user two running jobs (MaxJobsPerUser=2) during
# the run; the gpu workload leaves it without a limit.
high_max_jobs=-1
[ "$workload" = queue ] && high_max_jobs=2
if [ "$short" = 1 ]; then
    n_jobs=20
    queue_deadline=600
else
    n_jobs=150
    queue_deadline=3600
fi
gpu_qos_limit=3
biology_gpu_limit=1

# ---- the plan ----------------------------------------------------------------------------------
# One line per job, in submission order; the same for a given (n_jobs, seed, short) everywhere:
# a Park-Miller generator (x = 16807 x mod 2^31-1, exact in awk's doubles), not awk's rand().
make_plan() {
    awk -v n="$n_jobs" -v seed="$seed" -v short="$short" -v workload="$workload" '
function u() { x = (x * 16807) % 2147483647; return x / 2147483647 }
function pick(list,   n, a) { n = split(list, a, " "); return a[1 + int(u() * n)] }
BEGIN {
    x = seed
    for (i = 0; i < 10; i++) u()
    # user:account:weight, the weight of drawing that association
    n_assoc = split("alice:physics:3 alice:theory:1 alice:biology:2 bob:chemistry:3 " \
        "bob:physics:1 carol:theory:3 carol:chemistry:1 dave:biology:2", A, " ")
    total = 0
    for (i = 1; i <= n_assoc; i++) {
        split(A[i], f, ":"); U[i] = f[1]; Acc[i] = f[2]; W[i] = f[3]; total += W[i]
    }
    t = 0; left = 0; pos = 0
    # The queue workload adds a column: the job array of the line (`--array=1-N%K`: N tasks, at most
    # K running at once), `-` for a plain job; three of its lines are throttled arrays.
    arrays = (workload == "queue")
    if (arrays) {
        array_at[short ? 4 : 12] = short ? "1-4%2" : "1-8%2"
        array_at[short ? 11 : 61] = short ? "1-3%1" : "1-6%2"
        if (!short) array_at[104] = "1-10%3"
    }
    print "pos|offset|user|account|partition|qos|ntasks|gres|mem|limit_min|sleep|exit|kind" \
        (arrays ? "|array" : "")
    while (pos < n) {
        if (left == 0) {
            # the next burst: its planned second and its size
            if (pos > 0) t += short ? 10 + int(u() * 20) : 20 + int(u() * 60)
            left = (u() < 0.25) ? 1 + int(u() * 2) : (short ? 3 + int(u() * 5) : 5 + int(u() * 18))
        }
        left--; pos++
        r = u() * total
        for (i = 1; i <= n_assoc; i++) { r -= W[i]; if (r < 0) break }
        if (i > n_assoc) i = n_assoc
        user = U[i]; account = Acc[i]; high_ok = (user == "alice" || user == "carol")
        k = u(); gres = "-"; mem = "-"; code = 0
        if (k < 0.04) {
            kind = "timeout"; partition = "cpu"; qos = "normal"; ntasks = 1 + int(u() * 2)
            limit = 1; sleep = short ? 75 : 100
        } else if (k < 0.39) {
            kind = "gpu"; partition = "gpu"; v = u()
            gpus = (v < 0.5) ? 1 : (v < 0.85 ? 2 : 3)
            qos = (high_ok && u() < 0.25) ? "high" : "gpu"
            if (qos == "high" && gpus == 3 && u() < 0.5) gpus = 4
            # biology may hold one GPU at a time: a larger request would wait for ever
            if (account == "biology") gpus = 1
            gres = (gpus == 1 && u() < 0.6) ? "gpu:1" : "gpu:a100:" gpus
            ntasks = gpus * ((u() < 0.15) ? 4 : 2)
            if (u() < 0.5) mem = "--mem=" pick("8G 16G 24G 32G")
            else mem = "--mem-per-cpu=" pick("2000 4000")
            sleep = short ? 8 + int(u() * 25) : 25 + int(u() * 55)
        } else {
            kind = "cpu"; partition = "cpu"
            qos = (high_ok && u() < 0.15) ? "high" : "normal"
            ntasks = pick("1 1 1 2 2 4 4 8")
            m = u()
            if (m < 0.3) mem = "--mem-per-cpu=" pick("1000 2000 3000 4000")
            else if (m < 0.6) mem = "--mem=" pick("2G 4G 8G 16G 32G")
            sleep = short ? 5 + int(u() * 25) : 10 + int(u() * 35)
        }
        if (kind != "timeout") {
            if (u() < 0.06) { kind = kind "-failed"; code = 1; sleep = int(sleep / 3) + 1 }
            if (u() < 0.15) limit = short ? 5 : 10 + int(u() * 20)
            else { limit = int((sleep * (1.3 + u() * 2) + 59) / 60); if (limit < 1) limit = 1 }
        }
        line = sprintf("%d|%d|%s|%s|%s|%s|%d|%s|%s|%d|%d|%d|%s", pos, t, user, account, \
            partition, qos, ntasks, gres, mem, limit, sleep, code, kind)
        if (arrays) line = line "|" ((pos in array_at) ? array_at[pos] : "-")
        print line
    }
}'
}

# ---- the cluster -------------------------------------------------------------------------------
prepare_cluster

work=$(mktemp -d /tmp/sitesim-gpu-workload.XXXXXX)
chmod 1777 "$work"
job_ids=()
poller=""
switched=0
cleanup() {
    local queued status=$?
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
    if [ "$switched" = 1 ]; then
        sacctmgr -i modify account where name=biology cluster="$cluster" set grptres=gres/gpu=-1 \
            >/dev/null 2>&1 || true
        sacctmgr -i modify qos where name=high set maxjobsperuser=-1 >/dev/null 2>&1 || true
        # back to the ci profile (without the lock's descriptor: the daemons would keep it)
        bash "$here/start-slurm.sh" >&2 9>&- || status=1
    fi
    exit "$status"
}
trap cleanup EXIT

say "== the cluster: start-slurm.sh --gpu-site (a restart)"
switched=1
run bash "$here/start-slurm.sh" --gpu-site >&2 9>&-
config=$(scontrol show config)
cpus=$(sinfo -h -N -o %c | awk 'NR == 1')
if [ "$(config_value AccountingStorageEnforce)" = none ] || [ "$cpus" != 16 ]; then
    echo "the cluster did not come up in the gpu-site profile" >&2
    exit 1
fi

# ---- QOS and limits ----------------------------------------------------------------------------
if ! exists show qos where name=gpu format=name; then
    run sacctmgr -i add qos gpu
fi
run_modify sacctmgr -i modify qos where name=gpu set priority=0 grptres=gres/gpu="$gpu_qos_limit"
run_modify sacctmgr -i modify user where name=alice cluster="$cluster" set qos=normal,high,gpu
run_modify sacctmgr -i modify user where name=bob cluster="$cluster" set qos=normal,gpu
run_modify sacctmgr -i modify user where name=carol cluster="$cluster" set qos=normal,high,gpu
run_modify sacctmgr -i modify user where name=dave cluster="$cluster" set qos=normal,gpu
run_modify sacctmgr -i modify account where name=biology cluster="$cluster" \
    set grptres=gres/gpu="$biology_gpu_limit"
run_modify sacctmgr -i modify qos where name=high set maxjobsperuser="$high_max_jobs"

# Usage from 0 again, after the restart (prepare_cluster reset it before).
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

# ---- the state before --------------------------------------------------------------------------
run_to sshare-start.txt sshare -a -l -P
run_to slurm.conf cat /etc/slurm/slurm.conf
run_to gres.conf cat /etc/slurm/gres.conf
run_to config.txt scontrol show config
run_to node.txt scontrol show node
run_to partitions.txt scontrol show partition
run_to qos.txt sacctmgr -P show qos \
    format=Name,Priority,UsageFactor,GrpTRES,MaxTRES,MaxTRESPerUser,MaxJobsPerUser,Flags
run_to assoc.txt sacctmgr -P show assoc where cluster="$cluster" \
    format=Cluster,Account,ParentName,User,Share,GrpTRES,MaxTRES,QOS,DefaultQOS
{
    sinfo
    echo
    sinfo -N -o '%N|%c|%m|%G|%P|%T'
} >"$out_dir/sinfo.txt"
commands+=("{ sinfo; echo; sinfo -N -o '%N|%c|%m|%G|%P|%T'; } > sinfo.txt")
make_plan >"$out_dir/plan.txt"
commands+=("the plan (awk, seed $seed, $n_jobs jobs; see the script) > plan.txt")

# ---- pending reasons, in the background --------------------------------------------------------
user_list=$(IFS=,; echo "${users[*]}")
: >"$out_dir/reasons.txt"
{
    declare -A last=()
    while :; do
        now=$(date +%s)
        while IFS='|' read -r id reason; do
            [ -n "$id" ] || continue
            if [ "${last[$id]:-}" != "$reason" ]; then
                echo "$now|$id|$reason" >>"$out_dir/reasons.txt"
                last[$id]=$reason
            fi
        done < <(squeue -h -t PD -u "$user_list" -o '%i|%r' 2>/dev/null || true)
        sleep 2
    done
} &
poller=$!
commands+=("every 2 s: squeue -h -t PD -u $user_list -o '%i|%r' (changes only) > reasons.txt")

# ---- the workload ------------------------------------------------------------------------------
cd "$work"
: >"$out_dir/sbatch.txt"
submitted=("pos|job|submitted")
say "== submitting $n_jobs jobs (seed $seed)"
# The plan is read into memory first: a first full run that read it line by line from the loop's
# standard input (inherited by runuser and sbatch) read its last line twice, with an empty user
# the second time, and stopped; the children's input is /dev/null as well.
mapfile -t plan_lines < <(tail -n +2 "$out_dir/plan.txt")
if [ "${#plan_lines[@]}" -ne "$n_jobs" ]; then
    echo "plan.txt holds ${#plan_lines[@]} jobs, not $n_jobs" >&2
    exit 1
fi
first_submit=$(date +%s)
for plan_line in "${plan_lines[@]}"; do
    array=-
    IFS='|' read -r pos offset user account partition qos ntasks gres mem limit seconds code \
        kind array <<<"$plan_line"
    wait_s=$((first_submit + offset - $(date +%s)))
    [ "$wait_s" -gt 0 ] && sleep "$wait_s"
    wrap="sleep $seconds"
    [ "$code" != 0 ] && wrap+="; exit $code"
    argv=(sbatch --parsable -J "gwl-$pos" -A "$account" -p "$partition" -q "$qos" -n "$ntasks"
        -t "$limit" -o /dev/null)
    [ "$gres" != - ] && argv+=("--gres=$gres")
    [ "$mem" != - ] && argv+=("$mem")
    [ -n "$array" ] && [ "$array" != - ] && argv+=("--array=$array")
    argv+=("--wrap=$wrap")
    line=$(printf ' %q' runuser -u "$user" -- "${argv[@]}")
    printf '%s\n' "${line# }" >>"$out_dir/sbatch.txt"
    job=$(runuser -u "$user" -- "${argv[@]}" </dev/null)
    job=${job%%;*}
    if ! [[ $job =~ ^[0-9]+$ ]]; then
        echo "sbatch printed no job id for job $pos: $job" >&2
        exit 1
    fi
    job_ids+=("$job")
    submitted+=("$pos|$job|$(date +%s.%N | cut -c1-14)")
    say "  +${offset}s job $job: $pos $kind $user $account $partition $qos n=$ntasks" \
        "gres=$gres mem=$mem t=$limit sleep=$seconds array=${array:--}"
done
last_submit=$(date +%s)
printf '%s\n' "${submitted[@]}" >"$out_dir/submitted.txt"
commands+=("each line of sbatch.txt, at its planned offset (plan.txt) after the first")

say "== until the queue is empty (at most $queue_deadline s)"
job_list=$(IFS=,; echo "${job_ids[*]}")
mine_queued() { squeue -h -o %i -j "$job_list" 2>/dev/null || true; }
deadline=$(($(date +%s) + queue_deadline))
while [ -n "$(mine_queued)" ]; do
    if [ "$(date +%s)" -gt "$deadline" ]; then
        echo "jobs still queued after $queue_deadline s:" >&2
        squeue >&2
        exit 1
    fi
    left=$(mine_queued | wc -l)
    say "  $(date -u +%H:%M:%S): $left queued or running"
    sleep 15
done
queue_empty=$(date +%s)
kill "$poller" 2>/dev/null || true
wait "$poller" 2>/dev/null || true
poller=""

# slurmdbd records the ends a moment after the jobs leave the queue
for _ in $(seq 1 60); do
    # (an array's tasks are lines of their own: at least one line per submission, none open)
    ends=$(sacct --allusers --allocations --noheader --parsable2 --jobs="$job_list" --format=End)
    open=$(grep -c Unknown <<<"$ends" || true)
    lines=$(grep -c -v '^$' <<<"$ends" || true)
    [ "$open" -eq 0 ] && [ "$lines" -ge "${#job_ids[@]}" ] && break
    sleep 1
done

# ---- what accounting says ----------------------------------------------------------------------
# Every field the brief names and sitesim's sacct reader understands (crates/sacct/src/log.rs):
# AllocCPUS stands for NCPUS (the reader takes either); `Restarts` is not a field of 22.05's sacct.
fields=JobIDRaw,JobID,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,Elapsed
fields+=,ElapsedRaw,Timelimit,TimelimitRaw,State,ExitCode,AllocCPUS,ReqCPUS,ReqMem,ReqNodes
fields+=,NNodes,NodeList,ReqTRES,AllocTRES,Constraints,Reason,Priority,Flags,SubmitLine
run_to sacct.txt sacct --allusers --allocations --parsable2 \
    --starttime "$(date -u -d @"$clock_start" +%Y-%m-%dT%H:%M:%S)" --endtime now \
    --jobs="$job_list" --format="$fields"
run_to sshare-end.txt sshare -a -l -P
version=$(sinfo --version)
{
    echo "# seconds since the epoch (UTC)"
    echo "profile=gpu-site"
    echo "workload=$workload"
    echo "jobs=$n_jobs"
    echo "seed=$seed"
    echo "short=$short"
    echo "cpus=$cpus"
    echo "gpus=4"
    echo "clock_start=$clock_start"
    echo "first_submit=$first_submit"
    echo "last_submit=$last_submit"
    echo "queue_empty=$queue_empty"
    echo "clock_end=$(date +%s)"
} >"$out_dir/times.txt"

states=$(awk -F'|' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "State") s = i; next }
    { print $s }' "$out_dir/sacct.txt" | sort | uniq -c | awk '{printf "%s%s %s", sep, $2, $1; sep = ", "}')
seconds=$(($(date +%s) - clock_start))
{
    echo "# A GPU site's workload in Slurm, captured (workload \`$workload\`)"
    echo
    echo "Captured by \`scripts/ci/slurm-gpu-workload.sh$([ "$short" = 1 ] && echo ' --short') --workload $workload\` in $seconds s, starting"
    echo "$(date -u -d @"$clock_start" '+%Y-%m-%d %H:%M:%S UTC'), from \`$version\` (cluster \`$cluster\`, restarted"
    echo "by \`scripts/ci/start-slurm.sh --gpu-site\`: one node of $cpus CPUs, 64000 MB and 4 GPUs"
    echo "\`gpu:a100\` that are device files, partitions \`cpu\` and \`gpu\` over it; \`slurm.conf\`,"
    echo "\`gres.conf\`, \`config.txt\`)."
    echo
    echo "- Every association's usage reset to 0 (\`sshare-start.txt\`: the tree and its shares;"
    echo "  \`assoc.txt\`, \`qos.txt\`: QOS \`gpu\` GrpTRES=gres/gpu=$gpu_qos_limit, account biology"
    echo "  GrpTRES=gres/gpu=$biology_gpu_limit, QOS \`high\` MaxJobsPerUser=$high_max_jobs (-1: none),"
    echo "  AccountingStorageEnforce=limits)."
    echo "- $n_jobs jobs (\`plan.txt\`, seed $seed), submitted in bursts from $(date -u -d @"$first_submit" '+%H:%M:%S') to"
    echo "  $(date -u -d @"$last_submit" '+%H:%M:%S') (\`sbatch.txt\`, \`submitted.txt\`), run until the queue was"
    echo "  empty at $(date -u -d @"$queue_empty" '+%H:%M:%S'); \`sacct.txt\`: $states."
    echo "- Pending reasons as they changed: \`reasons.txt\`."
    echo
    echo "Commands, run as root with \`TZ=UTC SLURM_TIME_FORMAT=standard\` (sbatch as the job's user"
    echo "through \`runuser -u USER --\`):"
    echo
    echo '```'
    printf '%s\n' "${commands[@]}"
    echo '```'
} >"$out_dir/README.md"

say "== wrote $out_dir in $seconds s ($states)"
