"""Large outputs: writing a big result table as CSV against .npz, and the peak memory of
whole ``linkcli solve`` and ``linkcli simulate`` runs.

    python benchmarks/bench_outputs.py                 # 360,000-row table, 10^6-point solve
    python benchmarks/bench_outputs.py --rows 100000 --points 200000 --steps 100000
    python benchmarks/bench_outputs.py --no-write      # only the peak-memory part

1. The table of ``linkcli solve mechanisms/fourbar.yaml`` over ``--rows`` crank angles (29
   columns: joint angles, effector, frame positions, transmission angle, status, residual,
   condition) is written with ``write_table`` as .csv and as .npz, interleaved, 5 rounds; the
   ratio of the median times is printed (goal: npz at least 10x faster).
2. Peak resident memory (``ru_maxrss`` of a child process, read with
   ``resource.getrusage(RUSAGE_CHILDREN)`` in a fresh wrapper process per run, so each figure
   is that one child's) of, in one run:
   * the baseline ``python -c "import numpy, scipy, pydantic, yaml"``;
   * ``linkcli solve mechanisms/fourbar.yaml --sweep crank_pin=0:360:n1000`` (imports, the
     compiled sweep kernel loaded: the fixed cost) and the same over ``--points`` crank angles
     to .npz and to .csv (goal: under 400 MB for 10^6 points), with ``LINKCLI_JIT=always``
     (the compiled sweep kernel, which a 10^6-point sweep uses once numba's cache of it exists;
     since issue 11 the kernel is the only continuation, also for spatial mechanisms, and the
     interpreted run of the same code has the same arrays);
   * ``linkcli simulate mechanisms/fourbar.yaml --dt 1e-3 --t-end <steps / 1000>`` (every
     step saved) to .npz and to .csv: streamed, chunk by chunk through a scratch file
     (``simulate_stream``); and, as the "before" of the same run, the whole-in-memory path the
     command used until issue 11 (``run_simulate`` then ``write_table``, the same code) to .npz
     and .csv (goal: under 400 MB for 10^6 steps, as the sweep). ``--no-before`` skips these;
   * the same simulation to .npz with ``--plot sim.png`` (the figure drawn from M4-decimated
     rows read back block by block) and to .json (written column by column from a scratch
     file): both streamed since the issue 11 review (before: 1.0-1.26 GB and 0.88 GB,
     benchmarks/README.md). ``--no-plot-json`` skips them;
   * ``linkcli solve`` over ``--points`` crank angles to .csv with ``--plot`` (streamed, the
     figure drawn from M4-decimated rows read block by block; before: the whole table and a
     figure of every row, 3.8 GB at 10^6 points, benchmarks/README.md). ``--no-solve-plot``
     skips it;
   * ``linkcli batch`` of one simulate job of ``--steps`` saved steps to .npz, ``-j 1`` (the job
     streamed: its worker writes the output; before: ``run_simulate`` then ``write_table``, the
     "whole in memory" run above, which is the code the job ran). ``--no-batch`` skips it.
   Each figure is printed with the child's wall time and its ratio to the baseline, and the
   streamed simulations' ratio to the whole-in-memory ones.
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


def peak_rss(args: list[str], env_extra: dict | None = None) -> tuple[float, float]:
    """(peak RSS MB, wall s) of the command ``args`` run as a child of a fresh wrapper process."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env_extra or {}))
    code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "subprocess.run(sys.argv[1:], check=True); w = time.perf_counter() - t; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, w)")
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, check=True, capture_output=True, text=True,
                         cwd=REPO).stdout.split()
    return float(out[-2]), float(out[-1])


def solve_args(points: int, out: str) -> list[str]:
    return [sys.executable, "-m", "linkcli", "solve", str(REPO / "mechanisms" / "fourbar.yaml"), "--sweep",
            f"crank_pin=0:360:n{points}", "-o", out, "-q"]


#: the simulate command's path before issue 11: the whole run in memory, then written
WHOLE_SIMULATION = (
    "import sys\n"
    "from linkcli.analyses.simulate import SimulateRequest, run_simulate\n"
    "from linkcli.cli.common import load_and_compile\n"
    "from linkcli.io.writers import write_table\n"
    "loaded, mech = load_and_compile(sys.argv[1])\n"
    "out = run_simulate(mech, SimulateRequest(t_end=float(sys.argv[2]), dt=1e-3), loaded)\n"
    "write_table(out.table, sys.argv[3])\n")


def batch_job_file(folder: str, steps: int) -> str:
    """A job file of one simulate job: the four-bar, ``steps`` steps of 1 ms, every one saved, to .npz."""
    path = os.path.join(folder, "jobs.yaml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"jobs:\n  long:\n    files: {REPO / 'mechanisms' / 'fourbar.yaml'}\n    analysis: simulate\n"
                 f"    options: {{t_end: {steps / 1000:g}, dt: 1.0e-3, every: 1}}\n    output: long.npz\n")
    return path


def memory_runs(points: int, steps: int, folder: str, before: bool = True,
                plot_json: bool = True, solve_plot: bool = True, batch: bool = True,
                basic: bool = True) -> list[tuple[str, float, float]]:
    """[(what, peak RSS MB, wall s)], the baseline first. ``basic``: the plain solves and
    simulations (to .npz, .csv; with ``before``, the whole-in-memory simulations)."""
    fourbar = str(REPO / "mechanisms" / "fourbar.yaml")
    runs = [("baseline: python -c 'import numpy, scipy, pydantic, yaml'",
             [sys.executable, "-c", "import numpy, scipy, pydantic, yaml"], None),
            ("linkcli solve, 1,000 points -> .npz (kernel)", solve_args(1000, os.path.join(folder, "s.npz")),
             {"LINKCLI_JIT": "always"})]
    for fmt in ("npz", "csv") if basic else ():
        runs.append((f"linkcli solve, {points:,} points -> .{fmt} (kernel)",
                     solve_args(points, os.path.join(folder, f"big.{fmt}")), {"LINKCLI_JIT": "always"}))
    for fmt in ("npz", "csv") if basic else ():
        runs.append((f"linkcli simulate, {steps:,} steps saved -> .{fmt} (streamed)",
                     [sys.executable, "-m", "linkcli", "simulate", fourbar, "--dt", "1e-3", "--t-end",
                      f"{steps / 1000:g}", "-o", os.path.join(folder, f"sim.{fmt}"), "-q"], None))
        if before:
            runs.append((f"simulate whole in memory (before issue 11), {steps:,} steps -> .{fmt}",
                         [sys.executable, "-c", WHOLE_SIMULATION, fourbar, f"{steps / 1000:g}",
                          os.path.join(folder, f"sim_whole.{fmt}")], None))
    simulate = [sys.executable, "-m", "linkcli", "simulate", fourbar, "--dt", "1e-3", "--t-end", f"{steps / 1000:g}"]
    if plot_json:
        runs.append((f"linkcli simulate, {steps:,} steps saved -> .npz --plot .png (streamed, M4 rows)",
                     [*simulate, "-o", os.path.join(folder, "sim.npz"), "--plot", os.path.join(folder, "sim.png"),
                      "-q"], None))
        runs.append((f"linkcli simulate, {steps:,} steps saved -> .json (streamed)",
                     [*simulate, "-o", os.path.join(folder, "sim.json"), "-q"], None))
    if solve_plot:
        runs.append((f"linkcli solve, {points:,} points -> .csv --plot .png (kernel, streamed, M4 rows)",
                     [*solve_args(points, os.path.join(folder, "big_plot.csv")), "--plot",
                      os.path.join(folder, "solve.png")], {"LINKCLI_JIT": "always"}))
    if batch:
        runs.append((f"linkcli batch, one simulate job of {steps:,} steps -> .npz, -j 1 (streamed)",
                     [sys.executable, "-m", "linkcli", "batch", batch_job_file(folder, steps), "-j", "1", "--out-dir",
                      os.path.join(folder, "batch"), "-q"], None))
        if before:  # what the job ran before (run_simulate, then write_table), as in the plain runs above
            runs.append((f"simulate whole in memory (the batch job before), {steps:,} steps -> .npz",
                         [sys.executable, "-c", WHOLE_SIMULATION, fourbar, f"{steps / 1000:g}",
                          os.path.join(folder, "batch_whole.npz")], None))
    out = []
    for what, args, env in runs:
        try:
            peak, wall = peak_rss(args, env)
        except subprocess.CalledProcessError as exc:  # e.g. a run with failed rows exits 1
            print(f"{what}: failed ({exc.returncode}): {exc.stderr.strip()[-300:]}", flush=True)
            continue
        out.append((what, peak, wall))
        base = out[0][1]
        print(f"{what}: peak RSS {peak:.0f} MB ({peak / base:.1f}x the baseline), {wall:.1f} s wall, "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
        # the streamed run came just before
        if what.startswith("simulate whole") and len(out) > 1 and "streamed" in out[-2][0]:
            streamed = out[-2]
            print(f"  streamed / whole in memory: peak RSS {streamed[1] / peak:.2f}x, wall {streamed[2] / wall:.2f}x",
                  flush=True)
            fmt = what.rsplit(".", 1)[1]
            # the same file either way (tests/test_simulate_stream.py checks it too)
            if fmt == "csv" and "batch" not in what:
                same = _same_file(os.path.join(folder, "sim.csv"), os.path.join(folder, "sim_whole.csv"))
                print(f"  streamed and whole CSV files identical: {same}", flush=True)
    return out


def _same_file(a: str, b: str) -> bool:
    import filecmp

    return filecmp.cmp(a, b, shallow=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=360_000)
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--steps", type=int, default=1_000_000, help="simulated steps (dt 1 ms), all saved")
    ap.add_argument("--no-write", action="store_true", help="skip the CSV / .npz write timing")
    ap.add_argument("--no-before", action="store_true", help="skip the whole-in-memory simulations")
    ap.add_argument("--no-plot-json", action="store_true", help="skip the simulations with --plot and to .json")
    ap.add_argument("--no-solve-plot", action="store_true", help="skip the solve with --plot")
    ap.add_argument("--no-batch", action="store_true", help="skip the batch simulate job")
    ap.add_argument("--no-basic", action="store_true",
                    help="skip the plain solves and simulations (only the baseline and the runs not skipped above)")
    args = ap.parse_args(argv)
    print(f"load average at start {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(dir=REPO) as tmp:  # on disk next to the repository (not a tmpfs)
        if not args.no_write:
            table = table_of(args.rows)
            t = write_times(table, tmp)
            for fmt, (med, best, size) in t.items():
                print(f"write {args.rows} rows x {len(table.columns)} columns as {fmt}: median {med:.3f} s, "
                      f"min {best:.3f} s, {size / 1e6:.1f} MB")
            print(f"csv / npz write time: {t['csv'][0] / t['npz'][0]:.1f}x (medians), "
                  f"{t['csv'][1] / t['npz'][1]:.1f}x (minima)  (goal: >= 10x)", flush=True)
            del table
        memory_runs(args.points, args.steps, tmp, before=not args.no_before, plot_json=not args.no_plot_json,
                    solve_plot=not args.no_solve_plot, batch=not args.no_batch, basic=not args.no_basic)
        print("(goal: a 10^6-point solve and 10^6 saved simulation steps under 400 MB)")
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
