"""Statistics over seeds shared by the docs' Python scripts (shmueli-headroom.py, tsafrir-*.py,
shmueli-table.py): Student's t quantile and a mean with its 95 % t interval."""
import math
import statistics


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
