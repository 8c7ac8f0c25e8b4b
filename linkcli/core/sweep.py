"""Sweeps of the actuated variables that keep their assembly branch (continuation).

One continuation algorithm, for every mechanism: the scalar kernel of
:mod:`linkcli.core.sweep_kernel` (its docstring states the algorithm: coarse points with
tangent predictor, corrector and step bisection on a would-be branch jump or det J_p sign
change; the points between them by a cheap second-order step or a Hermite guess checked
against the branch; restarts reported as ``reassembled`` events). Its acceptance tests and
limits are written once in :mod:`linkcli.core.continuation`. This module is the public entry:
routing (compiled or interpreted kernel), the kernel's model of the mechanism, the first
point's assembly, events from the kernel's per-point outputs, and :class:`SweepResult`.

Angles stay continuous (no wrapping): each point starts from its neighbour's solution.
Singular passive partitions crossed between two points (sign change of det J_p: toggle or
branch points) and points that cannot be assembled are reported as events, never silently.
A tall J_p (more constraint rows than passive variables: a planar loop written as a spatial
file has 6 rows and 3 passive variables) gets the same det checks on its projection onto the
constraint subspace at the step's start (the sign of det(Jp_ref^T J_p), see
:func:`linkcli.core.sweep_kernel._seen_sign`); a wide one (idle freedoms such as an S-S coupler's spin) gets
none. Mechanisms without loops (serial arms) need no solve: q is the inputs.

Compiled or interpreted
-----------------------
The kernel is plain Python over scalars; with numba it is compiled (four-bar: ~0.45 us per
point, ~90-170 us interpreted, ~10-40 us for the numpy continuation this module used to hold;
spatial RSSR: 9-12 us compiled, ~4 ms interpreted, 54-220 us numpy; benchmarks/README.md,
issue 11). Both run the same code and give the same
results to rounding (tests/test_kinematics_fast.py). :func:`_plan` decides per sweep, by
jit.py's rules for the kernel set ``"sweep"`` with this sweep's own projection (points x the
model's size, :func:`_work_units`), in every analysis that sweeps (solve, forces, the
equilibrium, studies). The sweep kernel is self-contained, so its choice is independent of the
process-wide mode jit.py fixes for the other kernel sets: a process whose dynamics kernels run
interpreted can run a long sweep compiled, and a compiled sweep does not fix the dynamics
kernels to compiled.

* interpreted when compiled kernels are impossible (numba missing, ``LINKCLI_JIT=never`` /
  ``LINKCLI_NO_JIT``): one algorithm, so no faster numpy fallback; a long sweep then costs
  the interpreted kernel's time (RSSR 721 points: ~3 s of CPU against ~0.1 s compiled);
* compiled when the compiled kernel is already loaded in this process, with
  ``LINKCLI_JIT=always``, for callers that make many sweeps (``method="many"``: a study's
  workers), or when numba's cache of the kernel exists and the sweep's projected interpreted
  time exceeds the cost of loading it (:data:`jit.COMPILED_LOAD_S`);
* on a cold cache, ski rental (:func:`linkcli.core.jit.decide`): interpreted while the
  interpreted runs' excess CPU recorded on this machine (jit.py's record, and this process's)
  plus this sweep's projection stays below the measured compile cost, compiled after. A
  long-running process making many small sweeps therefore compiles after a bounded rent and
  uses the compiled kernel from then on. A sweep that compiles on a cold cache records its CPU
  as the set's compile cost and starts the rent afresh (:func:`linkcli.core.jit.record_run`).

``LINKCLI_SWEEP`` (the old numpy/compiled switch) is gone: ``LINKCLI_JIT`` decides.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from . import continuation as rules
from . import jit
from .assembly import assemble
from .loop_closure import SINGULAR_CONDITION, Status, _loop_plan, mechanism_size
from .mechanism import CompiledMechanism

#: the kernel set of jit.py's record (interpreted rent, compile cost), declared in jit.KERNEL_SETS
KERNEL_SET = "sweep"
#: interpreted kernel CPU per work unit (s; :func:`_work_units`), measured on 721-point sweeps
#: of mechanisms/ (1 Dec 2026, load ~3): 12 (fourbar), 15 (stephenson_sixbar), 21 (watt_sixbar),
#: 22 (planar_fourbar_as_spatial), 26 (rssr_spatial) us per unit; replaced by this machine's
#: own figure after its first interpreted run
DEFAULT_SECONDS_PER_UNIT = jit.KERNEL_SETS[KERNEL_SET].seconds_per_unit
#: CPU seconds of compiling the sweep kernel with an empty cache (measured 1 Dec 2026: 73 s wall
#: at load 5.5 on 2 cores, ~27 s of CPU; replaced by this machine's own figure after its first
#: compile)
DEFAULT_COMPILE_S = jit.KERNEL_SETS[KERNEL_SET].compile_s


@dataclass(frozen=True)
class SweepEvent:
    """Something the user must know about a sweep: ``kind`` in singular_crossing, no_assembly,
    reassembled, branch_jump; between point ``index`` and ``index + 1`` for crossings."""

    index: int
    kind: str
    loop: int = -1
    detail: float = float("nan")  # residual for no_assembly, condition for singular


@dataclass(frozen=True)
class SweepResult:
    """Outcome of a sweep over n input points: q (n, n_q) SI; status (n,) Status codes; residual
    (n, n_loops) per-loop max |r|; condition (n,) condition number of the passive partition
    (inf when singular); worst_loop (n,) index of the loop with the largest residual; events in
    index order. (No per-point iteration count: points are reached by continuation, restarts and
    interpolation, so no one Newton count describes a point.)"""

    q: np.ndarray
    status: np.ndarray
    residual: np.ndarray
    condition: np.ndarray
    worst_loop: np.ndarray
    events: tuple = field(default_factory=tuple)


def _input_step_limit(mech: CompiledMechanism, max_angle: float) -> np.ndarray:
    """Largest input change (per actuated variable) between coarse points: ``max_angle`` rad
    for rotations, the same fraction of the mechanism size for translations (as a C-contiguous
    float64 array for the kernel)."""
    return max_angle * mech.derived("sweep.input_step_per_rad", _input_step_per_rad)


def _input_step_per_rad(mech: CompiledMechanism) -> np.ndarray:
    """:func:`_input_step_limit` for ``max_angle`` = 1 rad (kept on the mechanism)."""
    rot = mech.q_is_rotation[mech.q_actuated]
    return np.ascontiguousarray(np.where(rot, 1.0, mechanism_size(mech) / 2), dtype=np.float64)


_MAX_DEPTH = rules.MAX_DEPTH


def solve_sweep(mech: CompiledMechanism, Q_act: np.ndarray, q_start: np.ndarray, *, tol: float = 1e-10,
                max_step: float = np.radians(10.0), method: str = "auto") -> SweepResult:
    """Solve the configuration along an ordered path of actuated values.

    Q_act (n, n_act) SI, consecutive points close to each other (a sweep, or a grid in
    serpentine order); q_start (n_q,) starting estimate for the first point (assembly mode).
    ``method``: "auto" (the rule of the module docstring), or "many" for a caller that makes
    many sweeps in one process (a study's worker): the compiled kernel whenever numba is
    available, since its load cost is paid once per process.
    """
    Q_act = np.atleast_2d(np.asarray(Q_act, dtype=float))
    q_start = np.asarray(q_start, dtype=float)
    if method not in ("auto", "many"):
        raise ValueError(f"solve_sweep: method must be 'auto' or 'many', not {method!r}")
    _require_finite(Q_act=Q_act, q_start=q_start)
    if _kernel_model(mech) is None or len(Q_act) == 0:
        return _without_loops(mech, Q_act, q_start)
    plan = _plan(mech, len(Q_act), many=method == "many")
    cpu = time.process_time()
    if plan.compile:
        res = _solve_sweep_kernel(mech, Q_act, q_start, tol, max_step, _compiled_kernel())
        if plan.cold:  # numba compiled the kernel in this call: learn what that cost on this machine
            jit.record_run(KERNEL_SET, plan, _work_units(mech, len(Q_act)), time.process_time() - cpu)
        return res
    res = _solve_sweep_kernel(mech, Q_act, q_start, tol, max_step, _interpreted_kernel())
    _record_interpreted(mech, len(Q_act), time.process_time() - cpu)
    return res


def kernel_points(mech: CompiledMechanism):
    """A :class:`linkcli.core.extremes.KernelPoints` of ``mech`` (single configurations and input
    rates through the sweep kernel and its packed model, kept on the mechanism), in the compiled
    kernel when :func:`_plan` chooses it for a short sweep (loaded in this process, a study's
    worker, ``LINKCLI_JIT=always``), else the interpreted one; None without loops."""
    from .extremes import KernelPoints

    if _kernel_model(mech) is None:
        return None
    pk = _compiled_kernel() if _plan(mech, 16).compile else _interpreted_kernel()
    mi, mf, n_wf, n_wi = _packed(mech, pk)
    return KernelPoints(mech, pk, mi, mf, n_wf, n_wi)


def _require_finite(**arrays: np.ndarray) -> None:
    """ValueError naming the first argument with a NaN or infinite entry (the sweep would
    otherwise report points solved from it as failed, or worse, as converged)."""
    for name, a in arrays.items():
        if np.isfinite(a.sum()):  # (one pass; a NaN or inf entry makes the sum non-finite, and
            continue              # a finite sum overflowing to inf only costs the exact check)
        bad = ~np.isfinite(a)
        if bad.any():
            where = np.argwhere(bad)[0].tolist()
            raise ValueError(f"solve_sweep: {name} must be finite; {name}{where} = {a[tuple(where)]}")


def _without_loops(mech: CompiledMechanism, Q_act: np.ndarray, q_start: np.ndarray) -> SweepResult:
    """A mechanism without loops (a serial arm): q is the estimate with the inputs set, every
    point trivially converged (no constraint, condition 1 as loop_closure.condition_number);
    also an empty path (no points)."""
    n = len(Q_act)
    q = np.broadcast_to(q_start, (n, mech.n_q)).copy()
    q[:, mech.q_actuated] = Q_act
    return SweepResult(q, np.zeros(n, dtype=int), np.zeros((n, mech.n_loops)), np.ones(n), np.zeros(n, dtype=int),
                       ())


# --- compiled or interpreted ---------------------------------------------------------------------
_KERNEL = "linkcli.core.sweep_kernel"
_INTERPRETED = "linkcli.core.sweep_kernel_interpreted"


def _compiled_kernel():
    """The kernel module, compiled unless ``LINKCLI_JIT=never`` or numba is missing (whatever
    mode the process fixed for its other kernel sets: sweep_kernel's decorator)."""
    return importlib.import_module(_KERNEL)


def _interpreted_kernel():
    """The kernel module's code run as plain Python: a second copy of sweep_kernel.py loaded
    under another name, whose decorator leaves functions uncompiled (so a process can run it
    interpreted and switch to the compiled one later); the module itself when it was imported
    uncompiled (``LINKCLI_JIT=never``, no numba)."""
    main = sys.modules.get(_KERNEL)
    if main is not None and not hasattr(main.sweep, "signatures"):  # (a numba dispatcher has them)
        return main
    mod = sys.modules.get(_INTERPRETED)
    if mod is None:
        spec = importlib.util.find_spec(_KERNEL)
        assert spec is not None and spec.origin is not None
        copy = importlib.util.spec_from_file_location(_INTERPRETED, spec.origin)
        assert copy is not None and copy.loader is not None
        mod = importlib.util.module_from_spec(copy)
        sys.modules[_INTERPRETED] = mod
        copy.loader.exec_module(mod)
    return mod


def _compiled_loaded() -> bool:
    """The compiled kernel is loaded in this process (its sweep ran compiled here). (numba's
    ``overloads`` dict, not its ``signatures`` property, which rebuilt a list of hashed types
    for every sweep: ~0.17 ms per call, as much as 1,200 four-bar points.)"""
    mod = sys.modules.get(_KERNEL)
    return mod is not None and bool(getattr(mod.sweep, "overloads", None))


def _kernel_cached() -> bool:
    """numba's on-disk cache of the sweep kernel exists (found without importing numba)."""
    from .jit import numba_cache_exists

    return numba_cache_exists(__file__, "sweep_kernel.sweep-*.nbi")


def _work_units(mech: CompiledMechanism, n: int) -> float:
    """Size of a sweep for the cost projection: points x constraint rows x variables x
    max(rows, passive variables) / 3 (the Jacobian's size times the linear algebra's growth;
    one unit per Jacobian entry for one planar loop). The spread of the measured cost per unit
    over the examples is 2x (DEFAULT_SECONDS_PER_UNIT), against 5x per Jacobian entry."""
    n_c, n_p = mech.n_constraints, mech.n_q - mech.n_actuated
    return float(n) * max(n_c, 1) * max(mech.n_q, 1) * max(n_c, n_p, 3) / 3.0


def _record_entry() -> dict:
    """This machine's record of the sweep kernel (jit.py's; its defaults from jit.KERNEL_SETS)."""
    return jit.record_entry(jit.read_record(), KERNEL_SET)


def _use_compiled(mech: CompiledMechanism, n: int, many: bool = False) -> bool:
    """The compiled kernel for a sweep of ``n`` points (:func:`_plan`)."""
    return _plan(mech, n, many).compile


def _plan(mech: CompiledMechanism, n: int, many: bool = False) -> jit.Plan:
    """The decision rule of the module docstring as a :class:`linkcli.core.jit.Plan` (``many``:
    see solve_sweep's ``method``): the sweep kernel set's own choice, projected from this sweep's
    work units (:func:`_work_units`), whatever mode the process fixed for its other kernel sets
    (the sweep kernel is self-contained: sweep_kernel's decorator). ``cold``: numba's cache of
    the kernel is missing, so a compiled run compiles it."""
    if n < 1 or not jit.self_contained_compiling_possible():
        return jit.Plan(False, False, "interpreted (LINKCLI_JIT=never, or numba not installed)")
    if _compiled_loaded():  # (decided without reading the record from disk: ~0.1 ms per sweep)
        return jit.Plan(True, False, "compiled (loaded in this process)")
    e = _record_entry()
    projected = _work_units(mech, n) * e["seconds_per_unit"]
    try:
        mode = jit.requested_mode()
    except ValueError:
        mode = "auto"  # (an analysis reports the bad value; a library call does not fail)
    cached = _kernel_cached()
    if cached and mode == "auto" and not many:
        # rent: what interpreted sweeps of this process cost beyond compiled ones; buy: loading numba
        if _rent_in_process + projected * (1.0 - 1.0 / jit.COMPILED_SPEEDUP) >= jit.COMPILED_LOAD_S:
            return jit.Plan(True, False, "compiled kernel cached", projected)
        return jit.Plan(False, False, f"interpreted: {projected:.3g} s projected, less than loading the cached "
                        "kernel", projected)
    # (this process's own rent too: the record may be unwritable, e.g. a read-only home)
    rent = max(e["rent_paid_s"], _rent_in_process)
    return jit.decide(mode, numba_ok=True, cached=cached, projected_s=projected, rent_paid_s=rent,
                      compile_s=e["compile_s"], many=many)


#: CPU seconds interpreted sweeps of this process spent beyond the compiled kernel's time (the
#: rent of the in-process ski rental when numba's cache exists and only loading it is to pay)
_rent_in_process = 0.0


def _record_interpreted(mech: CompiledMechanism, n: int, cpu_s: float) -> None:
    """Add an interpreted sweep's cost to the rents (this process's and jit.py's record) when
    compiling was possible; nothing to learn otherwise."""
    global _rent_in_process
    if not jit.self_contained_compiling_possible():
        return
    _rent_in_process += cpu_s * (1.0 - 1.0 / jit.COMPILED_SPEEDUP)
    plan = jit.Plan(False, True, "interpreted")
    jit.record_run(KERNEL_SET, plan, _work_units(mech, n), cpu_s)


# --- the kernel's model and its run --------------------------------------------------------------
def _square(mech: CompiledMechanism) -> bool:
    n_p = mech.n_q - mech.n_actuated
    return mech.n_constraints == n_p and n_p > 0


def _det_checked(mech: CompiledMechanism) -> bool:
    """The det J_p sign checks apply: J_p (n_c, n_p) is square, or tall (more constraint rows
    than passive variables: planar loops written as spatial files, 6 rows per loop;
    overconstrained loops such as Bennett's), seen projected (:func:`linkcli.core.sweep_kernel._seen_sign`). Not when
    it is wide (idle freedoms such as an S-S coupler's spin): no square minor is then tied to
    the assembly mode."""
    n_p = mech.n_q - mech.n_actuated
    return mech.n_constraints >= n_p > 0


def _planar_model(mech: CompiledMechanism):
    """The kernel's model tuple when it is the planar one (SE(2) poses: every joint frame and
    axis planar, tolerance 1e-12), else None (variant_sweep's fast path needs it)."""
    model = _kernel_model(mech)
    return model if model is not None and np.shape(model[5])[-1] == 2 else None


def _kernel_model(mech: CompiledMechanism):
    """The kernel's model tuple (sweep_kernel's docstring): planar (SE(2) poses) when every
    joint frame and axis is planar, else general (R, p) poses; None without loops (nothing to
    solve). Built on first use and kept on the mechanism."""
    return mech.derived("sweep.kernel_model", _build_kernel_model)


def _build_kernel_model(mech: CompiledMechanism):
    from . import transforms as tf
    from .forward import planar_frames, planar_steps, tree_steps

    if not mech.n_loops:
        return None
    lp = _loop_plan(mech)

    def i64(a, cols):  # writeable C-contiguous copies (one kernel signature for every mechanism)
        a = np.array(a, dtype=np.int64)
        return np.ascontiguousarray(a.reshape(-1, cols) if cols else a)

    def f64(a, cols=None):
        a = np.array(a, dtype=np.float64)
        return np.ascontiguousarray(a.reshape(-1, cols) if cols else a)

    vrot = np.asarray(mech.q_is_rotation, dtype=np.int64)
    loopi = [(mech.joint_parent[j], mech.joint_child[j], mech.joint_q_start[j], mech.joint_q_count[j])
             for j in mech.loop_joint]
    planar = planar_steps(mech)  # the planar test of joint frames and axes, written once there
    if planar is not None:
        steps, vax = planar
        stepi = [(st.v, st.u, st.s, st.n, int(st.forward)) for st in steps]
        stepf = [list(st.before) + list(st.after) for st in steps]
        fP, fC = planar_frames(mech.T_parent_joint), planar_frames(mech.T_child_joint)
        assert fP is not None and fC is not None  # (planar_steps checked them)
        loopf = [fP[j].tolist() + fC[j].tolist() for j in mech.loop_joint]
        width = 8
    else:
        def flat(T):  # (R row-major, p)
            return list(np.asarray(T)[:3, :3].ravel()) + list(np.asarray(T)[:3, 3])

        Tp, Tc = np.asarray(mech.T_parent_joint), np.asarray(mech.T_child_joint)
        stepi, stepf = [], []
        for v, u, j, fwd in tree_steps(mech):
            stepi.append((v, u, int(mech.joint_q_start[j]), int(mech.joint_q_count[j]), int(fwd)))
            before, after = (Tp[j], tf.inverse_transform(Tc[j])) if fwd else (Tc[j], tf.inverse_transform(Tp[j]))
            stepf.append(flat(before) + flat(after))
        loopf = [flat(Tp[j]) + flat(Tc[j]) for j in mech.loop_joint]
        vax = np.asarray(mech.q_axis, dtype=float).reshape(-1, 3)
        width = 24
    return (i64(stepi, 5), f64(stepf, width), i64(loopi, 4), f64(loopf, width), vrot, f64(vax, vax.shape[-1]),
            f64(lp.cA), f64(lp.cB), i64(lp.passive, None), i64(mech.q_actuated, None), f64(lp.scale))


def _packed(mech: CompiledMechanism, pk):
    """The kernel's packed model of a mechanism (built on its first sweep, kept on the
    mechanism; the same for the compiled and the interpreted kernel)."""
    return mech.derived("sweep.kernel_pack", lambda m: pk.pack(_kernel_model(m), _MAX_DEPTH))


def _first_estimate(mech: CompiledMechanism, a0: np.ndarray, q_start: np.ndarray, tol: float, pk, packed,
                    work) -> np.ndarray:
    """The estimate the kernel starts from: the assembly at the estimate's own actuated values
    (the assembly mode the user chose: Newton from the estimate in the kernel, then seeded
    restarts (``assembly.assemble``) when that stalls), which the kernel then follows to the
    first input; else the assembly at the first input ``a0``; else the estimate itself (the
    kernel reports the failure). When the kernel cannot follow the estimate's branch to the
    first input, :func:`_solve_sweep_kernel` starts again from the assembly at the first input
    (as the numpy continuation's first point did)."""
    mi, mf = packed[0], packed[1]
    wf, wi = work
    a = np.ascontiguousarray(q_start[mech.q_actuated], dtype=np.float64)
    q = np.empty(mech.n_q)
    if pk.solve_point(mi, mf, wf, wi, a, np.ascontiguousarray(q_start, dtype=np.float64), float(tol), rules.MAX_ITER,
                      q) == Status.CONVERGED:
        return q
    start = assemble(mech, a, q_start, tol=tol)
    if start.status == Status.CONVERGED:
        return np.asarray(start.q, dtype=np.float64)
    res = assemble(mech, a0, q_start, tol=tol)
    return np.asarray(res.q if res.status == Status.CONVERGED else q_start, dtype=np.float64)


def _solve_sweep_kernel(mech: CompiledMechanism, Q_act: np.ndarray, q_start: np.ndarray, tol: float,
                        max_step: float, pk) -> SweepResult:
    """The sweep in kernel module ``pk`` (the compiled or the interpreted one)."""
    n = len(Q_act)
    Q = np.ascontiguousarray(Q_act, dtype=np.float64)
    limit = _input_step_limit(mech, max_step)
    idx = np.empty(n + 1, dtype=np.int64)
    coarse = idx[:pk.coarse_indices(Q, limit, idx)]
    q = np.empty((n, mech.n_q))
    status = np.zeros(n, dtype=np.int64)
    resid = np.empty((n, mech.n_loops))
    worst = np.zeros(n, dtype=np.int64)
    cond = np.empty(n)
    det = np.zeros(n)
    reassembled = np.zeros(n, dtype=np.bool_)
    mi, mf, n_wf, n_wi = _packed(mech, pk)
    wf, wi = pk.workspace(n_wf, n_wi)
    start = _first_estimate(mech, Q[coarse[0]], q_start, tol, pk, (mi, mf), (wf, wi))
    pk.sweep(mi, mf, wf, wi, Q, start, coarse, float(tol), rules.MAX_ITER, q, status, resid, worst, cond, det,
             reassembled)
    if status[0] != Status.CONVERGED and not np.array_equal(start[mech.q_actuated], Q[0]):
        # the branch of the estimate's assembly does not reach the first input, nor does Newton
        # from it there: assemble at the first input itself (seeded restarts) and start there
        first = assemble(mech, Q[0], q_start, tol=tol)
        if first.status == Status.CONVERGED:
            reassembled[:] = False
            pk.sweep(mi, mf, wf, wi, Q, np.asarray(first.q, dtype=np.float64), coarse, float(tol), rules.MAX_ITER, q,
                     status, resid, worst, cond, det, reassembled)
    if not _det_checked(mech):
        flipped = None
    elif _square(mech):
        flipped = rules.det_sign_flipped(det[:-1], det[1:])
    else:  # tall J_p: each step's det sign seen from its start
        flipped = np.zeros(max(n - 1, 0), dtype=np.bool_)
        pk.det_flips(mi, mf, wf, wi, q, flipped)
    events = [SweepEvent(int(c), "reassembled") for c in np.flatnonzero(reassembled)]
    events += _events(status, resid, worst, cond, flipped)
    events.sort(key=lambda e: e.index)
    return SweepResult(q, status.astype(int), resid, cond, worst.astype(int), tuple(events))


def _events(status, residual, worst_loop, condition, det_flipped) -> list[SweepEvent]:
    """no_assembly / branch_jump events at the first point of every failed run, and singular
    crossings where det J_p changes sign (det_flipped (n - 1,) from the kernel's per-point
    outputs; None when not checked: wide J_p) between two converged points. (Few numpy passes
    over the points: a 3600-point four-bar sweep spent ~0.1 ms here, 7 % of the compiled sweep.)"""
    events: list[SweepEvent] = []
    ok = status == Status.CONVERGED
    all_ok = bool(ok.all())
    if not all_ok:
        for i in np.flatnonzero(~ok):
            if i == 0 or ok[i - 1]:
                kind = "branch_jump" if status[i] == Status.BRANCH_JUMP else "no_assembly"
                events.append(SweepEvent(int(i), kind, int(worst_loop[i]), float(residual[i].max(initial=0))))
    crossings = set()
    if det_flipped is not None and det_flipped.any():
        flips = np.flatnonzero(det_flipped if all_ok else ok[:-1] & ok[1:] & det_flipped)
        events += [SweepEvent(int(i), "singular_crossing", -1, float(condition[i])) for i in flips]
        crossings = {int(i) for i in flips} | {int(i) + 1 for i in flips}
    # points that sit on a singular configuration (a grid point exactly at a dead centre or
    # branch point: no sign change is seen there); one event per run of such points
    near = condition > SINGULAR_CONDITION
    if near.any():
        near &= ok
        starts = np.flatnonzero(near & ~np.concatenate(([False], near[:-1])))
        events += [SweepEvent(int(i), "singular_point", -1, float(condition[i])) for i in starts
                   if int(i) not in crossings]
    return events


def _solve_sweep_compiled(mech: CompiledMechanism, Q_act: np.ndarray, q_start: np.ndarray, tol: float,
                          max_step: float) -> SweepResult:
    """:func:`solve_sweep` in the compiled kernel whatever the rule says (tests, benchmarks;
    the interpreted kernel with ``LINKCLI_JIT=never`` or without numba)."""
    Q_act = np.atleast_2d(np.asarray(Q_act, dtype=float))
    if _kernel_model(mech) is None:
        return _without_loops(mech, Q_act, np.asarray(q_start, dtype=float))
    return _solve_sweep_kernel(mech, Q_act, np.asarray(q_start, dtype=float), tol, max_step, _compiled_kernel())


def _solve_sweep_interpreted(mech: CompiledMechanism, Q_act: np.ndarray, q_start: np.ndarray, tol: float,
                             max_step: float) -> SweepResult:
    """:func:`solve_sweep` in the interpreted kernel (the same code as plain Python)."""
    Q_act = np.atleast_2d(np.asarray(Q_act, dtype=float))
    if _kernel_model(mech) is None:
        return _without_loops(mech, Q_act, np.asarray(q_start, dtype=float))
    return _solve_sweep_kernel(mech, Q_act, np.asarray(q_start, dtype=float), tol, max_step, _interpreted_kernel())
