"""csv.writer versus linkcli's own CSV body writer (issue 14's library-swap check).

Writes the body of a 100,000-row table (10 float columns with NaNs, a text column with commas,
quotes and a leading space, a bool and an int column) both ways; prints whether the bytes are
identical, and the ratio of the best of 5 CPU times. Run: python benchmarks/bench_csv_writer.py
"""

import csv
import io
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from linkcli.io.writers import _csv_cells  # noqa: E402 (after the path set-up)

rng = np.random.default_rng(0)
n = 100_000
cols = [(rng.normal(size=n) * 10.0 ** rng.integers(-5, 5), "float") for _ in range(10)]
cols[0][0][::97] = np.nan
cols.append((np.array(["ok", "no_configuration", "singular", "a,b", 'q"x', " lead"])[rng.integers(0, 6, n)], "str"))
cols.append((rng.random(n) > 0.5, "bool"))
cols.append((rng.integers(0, 50, n), "int"))

def ours():
    fh = io.StringIO()
    row_format = ",".join(["%s"] * len(cols)) + "\n"
    cells = [_csv_cells(v, k, 0, n) for v, k in cols]
    fh.write("".join(map(row_format.__mod__, zip(*cells, strict=True))))
    return fh.getvalue()

def raw_cells(v, k):
    if k == "bool":
        return np.where(v, "true", "false").tolist()
    return v.tolist()

def with_csv():
    fh = io.StringIO()
    w = csv.writer(fh, lineterminator="\n")
    cells = [raw_cells(v, k) for v, k in cols]
    w.writerows(zip(*cells, strict=True))
    return fh.getvalue()

a, b = ours(), with_csv()
print("identical:", a == b)
if a != b:
    la, lb = a.splitlines(), b.splitlines()
    d = [i for i in range(len(la)) if la[i] != lb[i]]
    print("differing rows", len(d), repr(la[d[0]]), repr(lb[d[0]]))
ts = {"ours": [], "csv": []}
for _ in range(5):
    for name, f in (("ours", ours), ("csv", with_csv)):
        t = time.process_time()
        f()
        ts[name].append(time.process_time() - t)
print(f"load average {os.getloadavg()[0]:.1f}")
print({k: round(min(v), 3) for k, v in ts.items()}, "ratio csv/ours", round(min(ts["csv"]) / min(ts["ours"]), 2))
