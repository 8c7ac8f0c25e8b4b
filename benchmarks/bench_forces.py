"""Inverse dynamics along a sweep versus the kinematic sweep it is built on.

Workload: ``mechanisms/fourbar.yaml``, 3,600 crank angles over one turn at 60 rpm with a
constant crank acceleration.

* baseline: the kinematic sweep with rates and accelerations (``solve_sweep`` +
  ``joint_rates`` + ``joint_accelerations``: what ``solve --rate --acceleration`` computes);
* forces: the same kinematics plus :func:`linkcli.core.kinetostatics.inverse_dynamics` (driving
  torque, joint reactions, element forces, shaking wrench, power balance at every point);
* the same two at the analysis level (``run_solve`` with rates and accelerations against
  ``run_forces``: result tables included).

Medians of interleaved repetitions in one process after a warm-up (numba kernel loading and
compilation excluded and reported apart). Run: ``python benchmarks/bench_forces.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=3600)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()

    from linkcli.analyses.forces import ForcesRequest, run_forces
    from linkcli.analyses.inputs import Sweep
    from linkcli.analyses.solve import SolveRequest, run_solve
    from linkcli.compile import compile_mechanism
    from linkcli.core import kinetostatics as ks
    from linkcli.core.loop_closure import Status
    from linkcli.core.sweep import solve_sweep
    from linkcli.core.velocity import joint_accelerations, joint_rates
    from linkcli.io.loader import load_mechanism

    mech = compile_mechanism(load_mechanism(REPO / "mechanisms" / "fourbar.yaml").model)
    n = args.points
    path = np.linspace(0.0, 2 * np.pi, n, endpoint=False)[:, None]
    w, alpha = 2 * np.pi, 3.0

    def kinematics():
        res = solve_sweep(mech, path, mech.q_init)
        qd = joint_rates(mech, res.q, np.full((n, 1), w))
        qdd = joint_accelerations(mech, res.q, qd, np.full((n, 1), alpha))
        return res, qd, qdd

    def forces():
        res, qd, qdd = kinematics()
        return ks.inverse_dynamics(mech, res.q, qd, qdd, res.status == Status.CONVERGED, res.condition)

    sweep = [Sweep("crank_pin", 0.0, 359.9, step=360.0 / n)]
    solve_req = SolveRequest(sweeps=sweep, rates={"crank_pin": 360.0}, accelerations={"crank_pin": np.degrees(alpha)})
    forces_req = ForcesRequest(sweeps=sweep, speeds={"crank_pin": 360.0},
                               accelerations={"crank_pin": np.degrees(alpha)})

    t0 = time.perf_counter()
    fr = forces()  # warm-up: loads (or compiles) the dynamics kernels
    warm = time.perf_counter() - t0
    assert np.all(fr.status == ks.OK)
    balance = np.abs(fr.power_input + fr.power_applied - fr.kinetic_rate).max() / np.abs(fr.power_input).max()
    run_solve(mech, solve_req)
    run_forces(mech, forces_req)

    cases = {"kinematics (rates, accelerations)": kinematics, "kinematics + inverse dynamics": forces,
             "run_solve with rates and accelerations": lambda: run_solve(mech, solve_req),
             "run_forces": lambda: run_forces(mech, forces_req)}
    times = {k: [] for k in cases}
    for _ in range(args.repeat):
        for k, f in cases.items():
            t = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    load = os.getloadavg()
    print(f"four-bar, {n} points; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"first call (kernel loading/compilation) {warm:.2f} s; relative power-balance error {balance:.2e}")
    for k, v in med.items():
        print(f"  {k:42s} {v:8.2f} ms")
    core = med["kinematics + inverse dynamics"] / med["kinematics (rates, accelerations)"]
    full = med["run_forces"] / med["run_solve with rates and accelerations"]
    print(f"ratio core: {core:.2f}x   ratio analyses (tables included): {full:.2f}x   (target: <= 3x)")


if __name__ == "__main__":
    main()
