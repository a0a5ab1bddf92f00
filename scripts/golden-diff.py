#!/usr/bin/env python3
"""Compares two golden output directories written by scripts/golden.sh.

    scripts/golden-diff.py BEFORE AFTER

Every file must be byte-identical, except that measures AFTER has and BEFORE lacks (new entries
of the measure catalogue) may add rows to a sweep's results.csv and keys to its runs/*.json: those
files are compared with the new measures left out, and the new measures are listed. Console
output is reported but not compared byte for byte when --console-may-differ is given; with
--groups-echo-may-differ, summary.json is compared without the echo of the site's [[groups]];
with --additions-may-appear, new files and new keys of summary.json's closed_loop and summary
sections are listed instead of failing.
Exits 1 on any other difference.
"""

import csv
import io
import json
import sys
from pathlib import Path


def manifest(root: Path) -> dict:
    entries = {}
    for line in (root / "MANIFEST").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        entries[name] = digest
    return entries


def results_rows(path: Path, keep: set) -> list:
    rows = list(csv.reader(io.StringIO(path.read_text())))
    column = rows[0].index("metric")
    return [rows[0]] + [r for r in rows[1:] if r[column] in keep]


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    console_may_differ = "--console-may-differ" in sys.argv
    before, after = Path(args[0]), Path(args[1])
    old, new = manifest(before), manifest(after)
    failures, new_measures, consoles, groups_echo = [], set(), [], []
    added_files, added_keys = [], set()
    for name in sorted(set(old) | set(new)):
        if old.get(name) == new.get(name):
            continue
        if name not in old or name not in new:
            if name in new and "--additions-may-appear" in sys.argv:
                added_files.append(name)
            else:
                failures.append(f"only in {'AFTER' if name in new else 'BEFORE'}: {name}")
            continue
        if name.endswith("console.txt") and console_may_differ:
            consoles.append(name)
            continue
        if "/runs/" in name and name.endswith(".json"):
            a = json.loads((before / name).read_text())
            b = json.loads((after / name).read_text())
            added = set(b["metrics"]) - set(a["metrics"])
            new_measures |= added
            for key in added:
                del b["metrics"][key]
            if a == b:
                continue
        elif name.endswith("summary.json") and "--groups-echo-may-differ" in sys.argv:
            # A site's [[groups]] as summary.json echoes them: since each user kind reads its own
            # keys, a group echoes only its kind's keys (no nulls of the other kind).
            a = json.loads((before / name).read_text())
            b = json.loads((after / name).read_text())
            if "site" in a and "site" in b:
                a["site"].pop("groups", None)
                b["site"].pop("groups", None)
                groups_echo.append(name)
            if "--additions-may-appear" in sys.argv:
                for section in ("closed_loop", "summary"):
                    if isinstance(a.get(section), dict) and isinstance(b.get(section), dict):
                        for key in set(b[section]) - set(a[section]):
                            added_keys.add(f"{section}.{key}")
                            del b[section][key]
                if a == b:
                    continue
        elif name.endswith("results.csv"):
            a_rows = list(csv.reader(io.StringIO((before / name).read_text())))
            metric = a_rows[0].index("metric")
            keep = {r[metric] for r in a_rows[1:]}
            b_rows = results_rows(after / name, keep)
            b_all = list(csv.reader(io.StringIO((after / name).read_text())))
            new_measures |= {r[metric] for r in b_all[1:]} - keep
            if a_rows == b_rows:
                continue
        failures.append(f"differs: {name}")
    for line in failures:
        print(line)
    if new_measures:
        print("new measures (rows/keys added, old ones identical):", ", ".join(sorted(new_measures)))
    if added_files:
        print("new files (allowed by --additions-may-appear):", ", ".join(added_files))
    if added_keys:
        print("new summary.json keys (allowed):", ", ".join(sorted(added_keys)))
    if groups_echo:
        print("summary.json identical apart from site.groups in:", ", ".join(groups_echo))
    if consoles:
        print("console output differs in:", ", ".join(consoles))
    print("identical apart from the above" if not failures else f"{len(failures)} files differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
