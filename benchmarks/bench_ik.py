"""Inverse kinematics: an unreachable target's time as a ratio to a reachable one's, same run.

    python benchmarks/bench_ik.py                              # this tree (~1 min)
    python benchmarks/bench_ik.py --baseline /tmp/linkcli_main # also "before": another tree
    python benchmarks/bench_ik.py --grid                       # + an 81-target five-bar grid (one command)

An unreachable target is answered with the closest pose (status ``unreachable``, exit 1); users
wait for it as for any other. Two measurements per tree, each in its own processes (the tree on
PYTHONPATH, the mechanism files of this repository):

* in process: ``run_ik`` (what ``linkcli ik`` and ``linkcli.load(...).ik`` call) on one
  reachable and one unreachable target of each mechanism, interleaved, medians of ``--repeat``;
  CPU (``time.process_time``: the work only) and wall. Each unreachable answer is checked
  against its closed form where there is one (five-bar 3.5 - sqrt 8, planar 3R |t| - 2.3, PUMA
  560 |t| - its wrist-centre reach);
* whole command: ``linkcli ik mechanisms/fivebar.yaml -t 1,2.5`` against ``-t 1,3.5`` (start-up
  included), medians of ``--rounds`` interleaved fresh processes, CPU of the child
  (``ru_utime + ru_stime``) and wall.

The load average is printed at the start and end: on the shared 2-core machine wall time counts
waiting for a core, the CPU figures are the work.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable

PUMA_REACH = float(((0.4318 + (0.0203 ** 2 + 0.4318 ** 2) ** 0.5) ** 2 + 0.15005 ** 2) ** 0.5)
#: mechanism -> (reachable target, unreachable target, the unreachable one's distance or None)
CASES = {
    "fivebar.yaml": ([1.0, 2.5], [1.0, 3.5], 3.5 - 8 ** 0.5),
    "planar_3r.yaml": ([1.2, 0.8], [3.0, 1.0], (3.0 ** 2 + 1.0) ** 0.5 - 2.3),
    "puma560.yaml": ([0.5, 0.2, 0.3], [1.2, 0.5, 0.6], (1.2 ** 2 + 0.5 ** 2 + 0.6 ** 2) ** 0.5 - PUMA_REACH),
    "gallery/ur5.yaml": ([0.4, 0.2, 0.3], [1.2, 0.5, 0.6], None),
    # one input: its coupler point reaches only its curve (the reachable target is a point of it,
    # the crank 40 deg on from the file's assembly); the crank pivot (0, 0) is off it
    "fourbar.yaml": (None, [0.0, 0.0], None),
}


def curve_point(mech) -> list[float]:
    """The effector's position (file units) with the inputs 40 deg on from the file's assembly."""
    import numpy as np

    from linkcli.core.forward import effector_pose, link_poses
    from linkcli.core.sweep import configuration_at

    q = configuration_at(mech, mech.q_init[mech.q_actuated] + np.radians(40.0)).q
    p = effector_pose(mech, link_poses(mech, q))[:3, 3] / mech.length_scale
    return [float(v) for v in p[:2]]


def in_process(repeat: int) -> dict:
    """Medians of run_ik per case (this process's linkcli), as a JSON-able dict."""
    import linkcli
    from linkcli.analyses.ik import IKRequest, run_ik
    from linkcli.compile import compile_mechanism
    from linkcli.io.loader import load_mechanism

    out = {}
    for name, (reach, unreach, exact) in CASES.items():
        mech = compile_mechanism(load_mechanism(REPO / "mechanisms" / name).model)
        reach = reach or curve_point(mech)
        run_ik(mech, IKRequest([reach], mode="position"))  # warm-up (imports, plans on the mechanism)
        times: dict[str, list[tuple[float, float]]] = {"reachable": [], "unreachable": []}
        tables = {}
        for _ in range(repeat):
            for kind, target in (("reachable", reach), ("unreachable", unreach)):
                c, w = time.process_time(), time.perf_counter()
                tables[kind] = run_ik(mech, IKRequest([target], mode="position")).table
                times[kind].append((time.process_time() - c, time.perf_counter() - w))
        row = {"status": [str(tables[k]["status"][0]) for k in ("reachable", "unreachable")],
               "distance_m": float(tables["unreachable"]["position_error [m]"][0]), "exact_m": exact,
               "iterations": [int(tables[k]["iterations"][0]) for k in ("reachable", "unreachable")]}
        for kind, ts in times.items():
            row[f"{kind}_cpu_s"] = statistics.median(t[0] for t in ts)
            row[f"{kind}_wall_s"] = statistics.median(t[1] for t in ts)
        out[name] = row
    out["linkcli"] = str(Path(linkcli.__file__).parent)
    return out


def child(tree: Path, args: list[str]) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``python args`` in ``tree`` with it on PYTHONPATH (``python -m`` puts the working
    directory first on sys.path): (result, CPU s, wall s)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    res = subprocess.run([PY, *args], cwd=tree, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return res, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def grid_targets() -> list[str]:
    """81 five-bar targets, 9 x 9 over x, y in [-2, 4] m (about two thirds unreachable)."""
    xs = [-2.0 + 0.75 * i for i in range(9)]
    return [arg for x in xs for y in xs for arg in ("-t", f"{x:g},{y:g}")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="in-process repetitions per target")
    ap.add_argument("--rounds", type=int, default=5, help="whole-command rounds")
    ap.add_argument("--baseline", type=Path, help="another tree measured the same way (before)")
    ap.add_argument("--grid", action="store_true", help="also the 81-target five-bar grid, one command")
    ap.add_argument("--in-process-json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.in_process_json:
        print(json.dumps(in_process(args.repeat)))
        return

    trees = {"this tree": REPO} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores)", flush=True)
    for label, tree in trees.items():
        res, _, _ = child(tree, [str(Path(__file__).resolve()), "--in-process-json", "--repeat", str(args.repeat)])
        if res.returncode:
            sys.exit(f"{label}: in-process run failed:\n{res.stderr}")
        print(f"\n[{label}: {tree}] in process, run_ik, medians of {args.repeat} (load {os.getloadavg()[0]:.2f})")
        print(f"{'mechanism':18s} {'reachable':>16s} {'unreachable':>16s} {'ratio CPU':>9s} {'wall':>7s}  "
              f"{'iterations':>10s}  distance (closed form)")
        measured = json.loads(res.stdout)
        print(f"(linkcli from {measured.pop('linkcli')})")
        for name, r in measured.items():
            exact = f"{r['distance_m']:.15g}" + (f" ({r['exact_m']:.15g})" if r["exact_m"] is not None else "")
            print(f"{name:18s} {1e3 * r['reachable_cpu_s']:8.1f} ms CPU {1e3 * r['unreachable_cpu_s']:8.1f} ms CPU "
                  f"{r['unreachable_cpu_s'] / r['reachable_cpu_s']:8.1f}x "
                  f"{r['unreachable_wall_s'] / r['reachable_wall_s']:6.1f}x  "
                  f"{r['iterations'][0]:4d} {r['iterations'][1]:5d}  {'/'.join(r['status'])} {exact}")

    commands = {"reachable (1, 2.5)": ["-t", "1,2.5"], "unreachable (1, 3.5)": ["-t", "1,3.5"]}
    if args.grid:
        commands["81-target grid"] = grid_targets()
    for label, tree in trees.items():
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in commands}
        for _ in range(args.rounds if not args.grid else 1):
            for name, targets in commands.items():
                cmd = ["-m", "linkcli", "ik", str(REPO / "mechanisms" / "fivebar.yaml"), *targets, "-q", "-f", "csv"]
                res, cpu, wall = child(tree, cmd)
                if res.returncode not in (0, 1):
                    sys.exit(f"{label}: linkcli ik failed ({res.returncode}):\n{res.stderr}")
                times[name].append((cpu, wall))
        print(f"\n[{label}] whole command `linkcli ik mechanisms/fivebar.yaml -q -f csv`, "
              f"medians of {args.rounds if not args.grid else 1} (load {os.getloadavg()[0]:.2f})")
        base = [statistics.median(t[i] for t in times["reachable (1, 2.5)"]) for i in (0, 1)]
        for name, ts in times.items():
            cpu, wall = (statistics.median(t[i] for t in ts) for i in (0, 1))
            print(f"  {name:22s} CPU {cpu:7.3f} s  wall {wall:7.3f} s   vs reachable: CPU {cpu / base[0]:6.2f}x, "
                  f"wall {wall / base[1]:6.2f}x")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
