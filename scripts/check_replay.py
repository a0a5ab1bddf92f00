#!/usr/bin/env python3
"""Cross-check `sitesim replay` against an independent implementation of DESIGN.md's replay
semantics (FCFS and EASY), written separately in plain Python from the design text.

Usage:
    scripts/check_replay.py TRACE.swf[.gz] {easy,fcfs} JOBS.csv [--processors N]

JOBS.csv is the jobs.csv that `sitesim replay TRACE --scheduler S --out DIR` wrote. The script
replays the trace itself and compares (job_id, start, end) job by job; it prints SAME or the
first differences and exits non-zero on any difference.

The EASY rules, as DESIGN.md states them: waiting jobs in FCFS order (submit, job id); start jobs
from the head while they fit; for the first that does not fit, free running jobs in order of
(start + estimate, job id) until the free processors reach its size: that job's start + estimate
is the shadow time and the count beyond the size is the extra (Tsafrir's thesis, section 2.3:
accumulate "until their number is equal to or bigger than J.size ... the ones left over are the
extra nodes"). A later job starts if it fits now and ends by the shadow time, or else needs no
more than the extra (and then uses it up).
"""
import argparse
import csv
import gzip
import heapq
import sys


def load(path, override):
    with open(path, 'rb') as f:
        gz = f.read(2) == b'\x1f\x8b'
    opener = gzip.open if gz else open
    maxprocs = maxnodes = None
    jobs = []
    with opener(path, 'rt') as f:
        for line in f:
            s = line.strip()
            if not s:
                continue
            if s.startswith(';'):
                body = s[1:].strip()
                if ':' in body:
                    key, value = body.split(':', 1)
                    key, tokens = key.strip().lower(), value.split()
                    if tokens and key == 'maxprocs':
                        maxprocs = int(tokens[0])
                    if tokens and key == 'maxnodes':
                        maxnodes = int(tokens[0])
                continue
            x = s.split()
            job, submit, runtime = int(x[0]), int(x[1]), int(x[3])
            allocated, requested, requested_time = int(x[4]), int(x[7]), int(x[8])
            procs = allocated if allocated > 0 else requested
            estimate = requested_time if requested_time > 0 else runtime
            jobs.append((job, submit, runtime, procs, estimate))
    machine = override or maxprocs or maxnodes
    usable = [j for j in jobs if j[1] >= 0 and j[2] >= 0 and 0 < j[3] <= machine]
    usable.sort(key=lambda j: (j[1], j[0]))
    return machine, usable


def replay(machine, jobs, backfill):
    free = machine
    queue = []       # FCFS order
    running = {}     # job -> (start + estimate, procs)
    ends = []        # heap of (end, sequence, job)
    sequence = 0
    i = 0
    result = {}
    inf = float('inf')
    while i < len(jobs) or ends:
        now = min(ends[0][0] if ends else inf, jobs[i][1] if i < len(jobs) else inf)
        while ends and ends[0][0] == now:          # 1. ends at now
            _, _, job = heapq.heappop(ends)
            free += running.pop(job)[1]
        while i < len(jobs) and jobs[i][1] == now:   # 2. submissions at now
            queue.append(jobs[i])
            i += 1
        started = []                                  # 3. one scheduling pass
        k = 0
        while k < len(queue) and queue[k][3] <= free:
            started.append(queue[k])
            free -= queue[k][3]
            k += 1
        waiting = queue[k:]
        if waiting and backfill:
            head = waiting[0]
            releases = sorted([(end, job, p) for job, (end, p) in running.items()] +
                              [(now + j[4], j[0], j[3]) for j in started])
            available = free
            for end, _, p in releases:
                available += p
                if available >= head[3]:
                    shadow, extra = end, available - head[3]
                    break
            kept = [head]
            for j in waiting[1:]:
                if j[3] <= free and now + j[4] <= shadow:
                    started.append(j)
                    free -= j[3]
                elif j[3] <= free and j[3] <= extra:
                    started.append(j)
                    free -= j[3]
                    extra -= j[3]
                else:
                    kept.append(j)
            waiting = kept
        queue = waiting
        for job, _, runtime, procs, estimate in started:
            end = now + min(runtime, estimate)
            running[job] = (now + estimate, procs)
            heapq.heappush(ends, (end, sequence, job))
            sequence += 1
            result[job] = (now, end)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('trace')
    parser.add_argument('scheduler', choices=['easy', 'fcfs'])
    parser.add_argument('jobs_csv')
    parser.add_argument('--processors', type=int)
    args = parser.parse_args()
    machine, jobs = load(args.trace, args.processors)
    expected = replay(machine, jobs, args.scheduler == 'easy')
    with open(args.jobs_csv, newline='') as f:
        got = {int(r['job_id']): (int(r['start']), int(r['end'])) for r in csv.DictReader(f)}
    differences = [(j, expected.get(j), got.get(j)) for j in sorted(set(expected) | set(got))
                   if expected.get(j) != got.get(j)]
    if not differences:
        print(f'SAME {len(expected)} jobs')
        return 0
    print(f'DIFF {len(differences)} of {len(expected)} jobs; first ones (job, reference, sitesim):')
    for d in differences[:10]:
        print('  ', *d)
    return 1


if __name__ == '__main__':
    sys.exit(main())
