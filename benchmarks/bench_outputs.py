"""Large outputs: writing a big result table as CSV against .npz, and the peak memory of a
whole ``linkcli solve`` of a long sweep.

    python benchmarks/bench_outputs.py                 # 360,000-row table, 10^6-point solve
    python benchmarks/bench_outputs.py --rows 100000 --points 200000

1. The table of ``linkcli solve mechanisms/fourbar.yaml`` over ``--rows`` crank angles (29
   columns: joint angles, effector, frame positions, transmission angle, status, residual,
   condition) is written with ``write_table`` as .csv and as .npz, interleaved, 5 rounds; the
   ratio of the median times is printed (goal: npz at least 10x faster).
2. ``python -m linkcli solve ... --sweep crank_pin=0:360:n<points> -o out.npz`` runs in a
   child process; its peak resident memory (``ru_maxrss`` of the child) is printed, with the
   child's wall time (goal: under 400 MB for 10^6 points).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def table_of(rows: int):
    from linkcli.analyses.inputs import Sweep
    from linkcli.analyses.solve import SolveRequest, run_solve
    from linkcli.compile import compile_mechanism
    from linkcli.io.loader import load_mechanism

    loaded = load_mechanism(str(REPO / "mechanisms" / "fourbar.yaml"))
    mech = compile_mechanism(loaded.model)
    req = SolveRequest(sweeps=[Sweep("crank_pin", 0.0, 360.0, None, rows)])
    return run_solve(mech, req, loaded).table


def write_times(table, folder: str, rounds: int = 5) -> dict:
    from linkcli.io.writers import write_table

    times: dict[str, list[float]] = {"csv": [], "npz": []}
    for _ in range(rounds):
        for fmt in times:
            t0 = time.perf_counter()
            write_table(table, os.path.join(folder, f"t.{fmt}"))
            times[fmt].append(time.perf_counter() - t0)
    sizes = {fmt: os.path.getsize(os.path.join(folder, f"t.{fmt}")) for fmt in times}
    return {fmt: (statistics.median(v), min(v), sizes[fmt]) for fmt, v in times.items()}


def solve_peak(points: int, folder: str) -> tuple[float, float]:
    """(peak RSS MB, wall s) of `linkcli solve` over `points` crank angles to .npz."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "subprocess.run(sys.argv[1:], check=True); w = time.perf_counter() - t; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, w)")
    out = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "linkcli", "solve",
                          str(REPO / "mechanisms" / "fourbar.yaml"), "--sweep", f"crank_pin=0:360:n{points}",
                          "-o", os.path.join(folder, "big.npz"), "-q"],
                         env=env, check=True, capture_output=True, text=True, cwd=REPO).stdout.split()
    return float(out[0]), float(out[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=360_000)
    ap.add_argument("--points", type=int, default=1_000_000)
    args = ap.parse_args(argv)
    print(f"load average at start {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        table = table_of(args.rows)
        t = write_times(table, tmp)
        for fmt, (med, best, size) in t.items():
            print(f"write {args.rows} rows x {len(table.columns)} columns as {fmt}: median {med:.3f} s, "
                  f"min {best:.3f} s, {size / 1e6:.1f} MB")
        print(f"csv / npz write time: {t['csv'][0] / t['npz'][0]:.1f}x (medians), "
              f"{t['csv'][1] / t['npz'][1]:.1f}x (minima)  (goal: >= 10x)")
        del table
        peak, wall = solve_peak(args.points, tmp)
        print(f"linkcli solve, {args.points} points -> .npz: peak RSS {peak:.0f} MB, {wall:.1f} s wall "
              f"(goal: < 400 MB for 10^6 points)")
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
