"""Helpers shared by the docs' Python scripts (shmueli-headroom.py, tsafrir-*.py, shmueli-table.py,
slurm-study.py, power-frontier.py, outage-study.py): Student's t quantile and a mean with its
95 % t interval over seeds; the three-decimal t table the power and outage studies read; a value
of summary.json; running the sitesim binary.

The scripts import it by name: run as `python3 scripts/NAME.py`, from any directory, a script has
its own directory, scripts/, first on sys.path."""
import math
import statistics
import subprocess
import sys


def t975(df):
    """Student's t quantile 0.975 for df degrees of freedom (table, then Cornish-Fisher)."""
    table = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]
    if df <= 0:
        return math.nan
    if df <= len(table):
        return table[df - 1]
    z, v = 1.959964, float(df)
    return (z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3))


def mean_ci(xs):
    """(mean, half width of the 95 % t interval) of a list; half width NaN below 2 values."""
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return math.nan, math.nan
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, math.nan
    return m, t975(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs))


# Student's t, 97.5 % quantile, by degrees of freedom, to three decimals: the table
# power-frontier.py and outage-study.py read (t975 above computes it past 10 instead)
T975_TABLE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
              9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
              16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 29: 2.045}


def t975_table(df, off_table):
    """Student's t quantile 0.975 for df degrees of freedom from T975_TABLE; a df not in it
    as `off_table` says:
    "previous" (power-frontier.py): the value of the largest df below it in the table, 2.0
        past 29 (none below 1: ValueError);
    "approx" (outage-study.py): 2.064 at 24, else 1.96 + 2.5 / max(df, 1)."""
    if df in T975_TABLE:
        return T975_TABLE[df]
    if off_table == "previous":
        return 2.0 if df > 29 else T975_TABLE[max(k for k in T975_TABLE if k <= df)]
    if off_table == "approx":
        return 2.064 if df == 24 else 1.96 + 2.5 / max(df, 1)
    raise ValueError(f"off_table is \"previous\" or \"approx\", not {off_table!r}")


def value_at(summary, path):
    """The number at `path` (a sequence of keys) in a parsed summary.json, as a float."""
    for key in path:
        summary = summary[key]
    return float(summary)


def run(binary, args):
    """Runs the sitesim binary with args, its output captured; exits with the command and its
    stderr if it fails."""
    done = subprocess.run([binary, *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{done.stderr}")
