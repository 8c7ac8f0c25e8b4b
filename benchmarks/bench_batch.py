"""Throughput of parameter studies: variants per second in this process, on 1 and 2 local worker
processes and on a Dask LocalCluster, and the per-variant overhead of the Dask path; and the
study fast path (variants evaluated together, linkcli/batch/variants.py) against the
per-variant path (each variant validated, compiled and analysed on its own) in this process.

    python benchmarks/bench_batch.py                      # 2000 variants (~1-2 min on 2 busy cores)
    python benchmarks/bench_batch.py --variants 10000     # the full study of the example
    python benchmarks/bench_batch.py --json bench.json    # also write the numbers

The study is mechanisms/jobs/fourbar_tolerance_study.yaml (Monte-Carlo tolerances of the
four-bar, 73-point crank sweep per variant, path deviation of the coupler point) with
``--variants`` instead of its 10,000. Every configuration first runs a small warm-up study
(worker start-up, imports, numba caches), then the timed one; start-up is reported apart.
Each configuration's study table must be identical to the in-process one (determinism); the
per-variant path's (run on ``--baseline-variants`` variants) must agree with it to the solver
tolerance (the largest differences are printed). CPU time is reported for the in-process runs
(``time.process_time``: the work, whatever the machine's load).
The 10,000-variant times are extrapolated from the measured rates (the cost per variant does
not depend on the number of variants), and say so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

STUDY = REPO / "mechanisms" / "jobs" / "fourbar_tolerance_study.yaml"
TARGET = 10_000


def _run(executor, variants: int, chunk: int | None, out: str):
    from linkcli.batch.plan import plan_job_file
    from linkcli.batch.runner import run_plan

    plan = plan_job_file(STUDY, out, variants=variants)
    t0, c0 = time.perf_counter(), time.process_time()
    report = run_plan(plan, executor, chunk_size=chunk)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    (res,) = report.results
    assert res.status in ("passed", "failed"), res.message
    return wall, cpu, res.time_s, Path(res.output).read_text(encoding="utf-8"), res.study.get("evaluation", {})


def measure(name: str, make, variants: int, chunk: int | None, workdir: str, path: str | None = None) -> dict:
    """One configuration; ``path``: LINKCLI_STUDY_PATH for it (in-process runs only)."""
    old = os.environ.get("LINKCLI_STUDY_PATH")
    if path is not None:
        os.environ["LINKCLI_STUDY_PATH"] = path
    t0 = time.perf_counter()
    executor = make()
    try:
        _run(executor, 2 * executor.workers, 1, os.path.join(workdir, f"{name}-warm"))  # start-up + warm-up
        startup = time.perf_counter() - t0
        wall, cpu, compute, table, how = _run(executor, variants, chunk, os.path.join(workdir, name))
    finally:
        executor.close()
        if path is not None:
            if old is None:
                os.environ.pop("LINKCLI_STUDY_PATH", None)
            else:
                os.environ["LINKCLI_STUDY_PATH"] = old
    w = executor.workers
    inline = executor.describe().get("kind") == "inline"
    row = {"name": name, "workers": w, "variants": variants, "chunk": chunk or "auto",
           "startup_s": startup, "wall_s": wall, "variants_per_s": variants / wall,
           "compute_ms_per_variant": 1e3 * compute / variants,
           # worker time not spent evaluating variants: scheduling, transport, idle tails
           "overhead_ms_per_variant": 1e3 * (wall * w - compute) / variants,
           # the work: CPU of this process (in-process runs only; workers' CPU is not seen here)
           "cpu_ms_per_variant": 1e3 * cpu / variants if inline else None,
           "fast": how.get("fast"), "per_variant": how.get("per_variant")}
    cpu_text = f"{row['cpu_ms_per_variant']:7.3f}" if inline else "      -"
    print(f"{name:<30} {w:>2}  {str(row['chunk']):>5}  {startup:7.2f}  {wall:8.2f}  {row['variants_per_s']:9.1f}  "
          f"{row['compute_ms_per_variant']:8.3f}  {row['overhead_ms_per_variant']:8.3f}  {cpu_text}  "
          f"{how.get('fast', '?')}/{how.get('per_variant', '?')}", flush=True)
    row["_table"] = table
    return row


def _largest_differences(table: str, reference: str) -> dict:
    """Largest |difference| per numeric column of two study tables (CSV text) with the same
    rows; non-numeric cells must be equal (else the column maps to 'differs')."""
    import csv
    import io
    import math

    out: dict = {}
    a_rows = list(csv.DictReader(io.StringIO(table)))
    b_rows = list(csv.DictReader(io.StringIO(reference)))
    if len(a_rows) != len(b_rows):
        return {"rows": "differ"}
    for a, b in zip(a_rows, b_rows, strict=True):
        for key, bv in b.items():
            av = a.get(key)
            try:
                x, y = float(av), float(bv)
            except (TypeError, ValueError):
                if av != bv:
                    out[key] = "differs"
                continue
            if out.get(key) != "differs" and not (math.isnan(x) and math.isnan(y)):
                out[key] = max(out.get(key, 0.0), abs(x - y))
    return {k: v for k, v in out.items() if v}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", type=int, default=2000, help="variants per timed run (default 2000)")
    ap.add_argument("--baseline-variants", type=int, default=300,
                    help="variants of the per-variant path's in-process run (default 300; 0 skips it)")
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask LocalCluster runs")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args(argv)

    from linkcli.batch.executors import DaskExecutor, InlineExecutor, ProcessExecutor, cpu_count

    n = args.variants
    print(f"study {STUDY.relative_to(REPO)}, {n} variants; {cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f} at start", flush=True)
    print(f"{'executor':<30} {'w':>2}  {'chunk':>5}  {'start s':>7}  {'wall s':>8}  {'var/s':>9}  "
          f"{'compute':>8}  {'overhead':>8}  {'CPU':>7}  fast/per-variant   (ms per variant; overhead = "
          "(wall x workers - compute) / N; CPU: this process)")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        base = None
        if args.baseline_variants:
            base = measure("this process, per-variant path", InlineExecutor, args.baseline_variants, None, work,
                           path="per-variant")
        rows.append(measure("this process (--jobs 1)", InlineExecutor, n, None, work))
        rows.append(measure("local pool, 1 process", lambda: ProcessExecutor(1), n, None, work))
        rows.append(measure("local pool, 2 processes", lambda: ProcessExecutor(2), n, None, work))
        if not args.no_dask:
            try:
                import distributed  # noqa: F401
            except ImportError:
                print("dask.distributed is not installed: skipping the Dask runs (pip install 'linkcli[dask]')")
            else:
                rows.append(measure("Dask LocalCluster, 2 procs", lambda: DaskExecutor("local", 2), n, None, work))
                rows.append(measure("Dask LocalCluster, chunk 1", lambda: DaskExecutor("local", 2), n, 1, work))
    reference = rows[0]["_table"]
    identical = all(r.pop("_table") == reference for r in rows)
    print(f"\nstudy tables identical across executors and chunk sizes: {identical}")
    by = {r["name"]: r for r in rows}
    pool = by["local pool, 2 processes"]
    summary = {"variants": n, "identical_tables": identical, "load_average_start": os.getloadavg()[0],
               "load_average_end": os.getloadavg()[0], "runs": rows}
    if base is not None:
        k = base["variants"]
        head = "\n".join(reference.splitlines()[:k + 1]) + "\n"  # the same first k variants
        diff = _largest_differences(head, base.pop("_table"))
        fast = by["this process (--jobs 1)"]
        summary["per_variant_path"] = base
        summary["fast_vs_per_variant"] = {"cpu_ratio": base["cpu_ms_per_variant"] / fast["cpu_ms_per_variant"],
                                          "largest_differences": diff}
        print(f"fast path vs per-variant path in this process: {summary['fast_vs_per_variant']['cpu_ratio']:.1f}x "
              f"less CPU per variant ({fast['cpu_ms_per_variant']:.3f} vs {base['cpu_ms_per_variant']:.3f} ms); "
              f"largest differences over the first {k} variants: {diff or 'none'}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    for name in ("Dask LocalCluster, 2 procs", "Dask LocalCluster, chunk 1"):
        if name in by:
            extra = by[name]["overhead_ms_per_variant"] - pool["overhead_ms_per_variant"]
            wall_extra = 1e3 * (by[name]["wall_s"] - pool["wall_s"]) / n
            summary[f"extra_overhead_ms_per_variant[{name} vs pool]"] = extra
            print(f"{name} vs local pool: overhead {extra:+.2f} ms per variant of worker time, wall "
                  f"{wall_extra:+.2f} ms per variant (compute is {pool['compute_ms_per_variant']:.1f} ms per variant)")
    print(f"\nextrapolated to {TARGET:,} variants (measured rate x {TARGET / n:g}, start-up added):")
    for r in rows:
        est = TARGET / r["variants_per_s"] + r["startup_s"]
        r["extrapolated_10000_s"] = est
        print(f"  {r['name']:<28} {est / 60:6.1f} min")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
