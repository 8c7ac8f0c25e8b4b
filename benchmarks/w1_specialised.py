"""W1 with the sweep kernel's planar evaluation specialised for the four-bar: what a generated
per-topology evaluation could give (issue 11's 5x goal), measured before building a generator.

A measuring stick, not product code. The kernel is ``linkcli/core/sweep_kernel.py`` itself,
loaded a second time from a verbatim copy in a temporary directory (so numba compiles and caches
it apart from the product's kernel), with one global replaced before numba compiles it:
``_eval_planar``, the generic tree walk through the packed model's run-time offsets, becomes
:func:`fourbar_eval`, the same residual and Jacobian of mechanisms/fourbar.yaml hand-unrolled
(constants of the packed arrays folded, no offsets, no loops; the same trig cache and the same
arithmetic, so the sweep is bit-identical, which is checked). Everything else (the continuation,
fast step, diagnostics, the Python around the kernel) is the product's.

Printed, CPU medians in this process (``time.process_time``; load average in the header), all
interleaved in one run:

* the closed form (bench_kinematics.closed_form_angles) and pylinkage's ``step_fast``;
* the product's compiled kernel alone (``pk.sweep``, 3600 points) and the specialised copy;
* ``solve_sweep`` and the goal's row: ``solve_sweep`` + frame positions (what analyses.solve
  computes for its pose columns);
* the upper bound of the full path with a specialised evaluation: the specialised kernel plus
  what ``solve_sweep`` spends outside the kernel call, with the frame positions counted as free
  (handed out by the kernel at no cost: a lower bound on their cost);
* w1_floor.py (everything hand-written) for scale;
* the cold compile of the specialised copy (CPU s, empty cache) and the break-even point count
  against the generic kernel (compile cost / CPU saved per point).

``python benchmarks/w1_specialised.py [--repeat 300]`` (~1 min CPU, most of it numba compiling
the copy).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_kinematics import A_, B_, C_, FOURBAR, D, closed_form_angles, load, pylinkage_fourbar  # noqa: E402

from linkcli.core import forward, sweep  # noqa: E402


def load_kernel_copy(directory: Path):
    """sweep_kernel.py copied verbatim into ``directory`` and imported as a module of linkcli.core
    (its relative imports resolve there; numba caches it in ``directory``)."""
    src = Path(sweep.__file__).with_name("sweep_kernel.py")
    dst = directory / "sweep_kernel_w1spec.py"
    shutil.copyfile(src, dst)
    spec = importlib.util.spec_from_file_location("linkcli.core.sweep_kernel_w1spec", dst)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def specialise(K, mech):
    """Replace K._eval_planar by the four-bar evaluation (before numba compiles K); checks that the
    packed model is the one hand-unrolled below."""
    M = sweep._kernel_model(mech)
    stepi, stepf, loopi, loopf, vrot, vax, cA, cB, passive, act, scale = M
    assert stepi.tolist() == [[1, 0, 0, 1, 1], [3, 0, 3, 1, 0], [2, 1, 1, 1, 1]], stepi
    assert loopi.tolist() == [[2, 3, 2, 1]] and vrot.tolist() == [1, 1, 1, 1] and (vax == [1.0, 0.0]).all()
    assert np.allclose(stepf[:, [0, 1]], [[0, 0], [D, 0], [A_, 0]]) and np.allclose(loopf[0, [0, 4]], [B_, C_])
    assert cA.tolist() == [[1, 1, 1, 0]] and cB.tolist() == [[0, 0, 0, -1]] and scale.tolist() == [0.25, 0.25, 1.0]
    qo_, ro_, jo_, angle = K._qo, K._ro, K._jo, K._angle
    W_CQ, W_SQ, W_QTRIG = K.W_CQ, K.W_SQ, K.W_QTRIG

    def trig(wf, qo, cq, sq, qtrig, k):  # sweep_kernel._eval_planar's trig cache, for one variable
        q = wf[qo + k]
        d = q - wf[qtrig + k]
        if d != 0.0:
            if abs(d) < 1e-3:
                d2 = d * d
                cd = 1.0 - d2 * (0.5 - d2 / 24.0)
                sd = d * (1.0 - d2 * (1.0 / 6.0 - d2 / 120.0))
                c0, s0 = wf[cq + k], wf[sq + k]
                wf[cq + k] = c0 * cd - s0 * sd
                wf[sq + k] = s0 * cd + c0 * sd
            else:
                wf[cq + k] = math.cos(q)
                wf[sq + k] = math.sin(q)
            wf[qtrig + k] = q

    trig = K._inlined(trig)

    def fourbar_eval(mi, mf, wf, sl, want_J):
        """_eval_planar for fourbar.yaml: crank (var 0) on the ground at O2, coupler (var 1) at
        the crank's A (1, 0), rocker (var 3, inverse step) at the ground's O4 (4, 0); loop frame
        A = coupler (3.5, 0) through var 2, frame B = rocker (3, 0); residual (x, y, angle)
        scaled (1/4, 1/4, 1); Jacobian from the axes' origins (cA, cB above)."""
        qo, ro, jo = qo_(mi, sl), ro_(mi, sl), jo_(mi, sl)
        cq, sq, qtrig = mi[W_CQ], mi[W_SQ], mi[W_QTRIG]
        trig(wf, qo, cq, sq, qtrig, 0)
        trig(wf, qo, cq, sq, qtrig, 1)
        trig(wf, qo, cq, sq, qtrig, 2)
        trig(wf, qo, cq, sq, qtrig, 3)
        c0, s0, c1, s1 = wf[cq], wf[sq], wf[cq + 1], wf[sq + 1]
        c2, s2, c3, s3 = wf[cq + 2], wf[sq + 2], wf[cq + 3], wf[sq + 3]
        c01, s01 = c0 * c1 - s0 * s1, s0 * c1 + c0 * s1  # coupler at (c0, s0)
        xa, ya = c0 + 3.5 * c01, s0 + 3.5 * s01  # loop frame A (axis of var 2)
        c, s = c01 * c2 - s01 * s2, s01 * c2 + c01 * s2
        cb, sb = c3, -s3  # rocker at (4, 0), inverse motion; loop frame B at (3, 0)
        xb, yb = 4.0 + 3.0 * cb, 3.0 * sb
        r0, r1 = xb - xa, yb - ya
        r2 = angle(c * sb - s * cb, c * cb + s * sb)
        wf[ro], wf[ro + 1], wf[ro + 2] = r0, r1, r2
        err = 0.0
        for e in (abs(r0 * 0.25), abs(r1 * 0.25), abs(r2)):
            if e != e:
                err = e
            elif e > err:
                err = e
        if want_J:
            wf[jo], wf[jo + 1], wf[jo + 2], wf[jo + 3] = ya, ya - s0, 0.0, yb
            wf[jo + 4], wf[jo + 5], wf[jo + 6], wf[jo + 7] = -xa, -(xa - c0), 0.0, -(xb - 4.0)
            wf[jo + 8], wf[jo + 9], wf[jo + 10], wf[jo + 11] = -1.0, -1.0, -1.0, -1.0
        return err

    K._eval_planar = K._compiled(fourbar_eval)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=300)
    args = ap.parse_args()
    mech = load(FOURBAR)
    n = 3600
    theta = 2 * np.pi * np.arange(1, n + 1) / n
    Q = theta[:, None]
    res = sweep.solve_sweep(mech, Q, mech.q_init, method="many")
    pk = sweep._compiled_kernel()
    assert sweep._compiled_loaded(), "numba is needed"
    with tempfile.TemporaryDirectory() as tmp:
        K = load_kernel_copy(Path(tmp))
        specialise(K, mech)
        mi, mf, n_wf, n_wi = sweep._packed(mech, pk)
        limit = np.ascontiguousarray(sweep._input_step_limit(mech, np.radians(10.0)))
        idx = np.empty(n + 1, dtype=np.int64)
        coarse = idx[:pk.coarse_indices(Q, limit, idx)]
        start = res.q[0].copy()  # (solve_sweep's first point: the estimate followed to Q[0])

        def kernel_run(mod):
            wf, wi = mod.workspace(n_wf, n_wi)
            out = [np.empty((n, mech.n_q)), np.zeros(n, dtype=np.int64), np.empty((n, 1)), np.zeros(n, dtype=np.int64),
                   np.empty(n), np.zeros(n), np.zeros(n, dtype=np.bool_)]
            return (lambda: mod.sweep(mi, mf, wf, wi, Q, start, coarse, 1e-10, 50, *out)), out

        generic, out_g = kernel_run(pk)
        special, out_s = kernel_run(K)
        generic()
        cpu = time.process_time()
        special()  # numba compiles the copy here (its cache directory is empty)
        compile_s = time.process_time() - cpu
        same = all(np.array_equal(a, b) for a, b in zip(out_g, out_s, strict=True))
        assert np.array_equal(out_g[0], res.q), "the kernel alone must give solve_sweep's sweep"

        def with_frames():
            r = sweep.solve_sweep(mech, Q, mech.q_init, method="many")
            P = forward.planar_link_poses(mech, r.q)
            forward.planar_effector_pose(mech, P)
            return forward.planar_frame_positions(mech, P)

        import w1_floor

        phi0 = res.q[0, 1] + theta[0]
        floor_args = (theta, (phi0, phi0 + res.q[0, 2]), (A_, B_, C_, D), (1.75, 0.6))
        fns = {"closed form": lambda: closed_form_angles(theta), "generic kernel": generic,
               "specialised kernel": special,
               "solve_sweep": lambda: sweep.solve_sweep(mech, Q, mech.q_init, method="many"),
               "solve_sweep + frame positions (the goal's row)": with_frames,
               "w1_floor (all hand-written)": lambda: w1_floor.run(*floor_args)}
        lk = pylinkage_fourbar(n)
        if lk is not None:
            fns["pylinkage step_fast"] = lambda: lk.step_fast(iterations=n)
        for f in fns.values():
            f()
        loads = [os.getloadavg()[0]]
        times = {k: [] for k in fns}
        for r in range(args.repeat):
            for k, f in fns.items():
                c = time.process_time()
                f()
                times[k].append(time.process_time() - c)
            if r == args.repeat // 2:
                loads.append(os.getloadavg()[0])
        loads.append(os.getloadavg()[0])
    med = {k: float(np.median(v)) for k, v in times.items()}
    cf = med["closed form"]
    outside = med["solve_sweep"] - med["generic kernel"]
    bound = med["specialised kernel"] + outside
    print(f"# W1 (fourbar.yaml, 3600 points), CPU medians of {args.repeat}, load average "
          f"{' / '.join(f'{x:.2f}' for x in loads)} (start / middle / end), {time.strftime('%Y-%m-%d %H:%M')}")
    print("\n| | CPU ms | / closed form |\n|---|---|---|")
    for k, v in med.items():
        print(f"| {k} | {v * 1e3:.3f} | {v / cf:.2f}x |")
    print(f"| solve_sweep outside the kernel call | {outside * 1e3:.3f} | {outside / cf:.2f}x |")
    print(f"| **upper bound, full path with the specialised evaluation** (specialised kernel + solve_sweep "
          f"outside it + frame positions free) | {bound * 1e3:.3f} | **{bound / cf:.2f}x** |")
    if lk is not None:
        print(f"| ... / pylinkage step_fast | | {bound / med['pylinkage step_fast']:.2f}x |")
    saved = (med["generic kernel"] - med["specialised kernel"]) / n
    print(f"\nspecialised sweep bit-identical to the generic kernel's: {same}")
    print(f"cold compile of the specialised kernel copy: {compile_s:.1f} s CPU; saves {saved * 1e9:.0f} ns CPU per "
          f"point ({1 - med['specialised kernel'] / med['generic kernel']:.0%} of the kernel): compiling it per "
          f"topology pays back after ~{compile_s / saved:.2g} points" if saved > 0 else "no saving measured")


if __name__ == "__main__":
    main()
