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

Which configuration (one rule for every command): :func:`configuration_at` gives the
configuration at given inputs in the assembly mode of the file's estimate (assembled at the
estimate's own inputs, followed there by continuation; the other way round for a revolute input
when a limit of motion blocks the straight way; a named failure otherwise), and a sweep's first
point is that configuration. Winding: continuation keeps angles continuous (a winding reached by
continuous motion, e.g. a double crank's joints, is physical and kept); a configuration obtained
by (re)assembly instead (the assembly at the estimate's own inputs, a first point the estimate's
branch does not reach, the first converged
point after failed ones, a restart) takes for each passive rotation variable the representative
q + 2 pi k nearest its reference: the last good point before it, else the estimate
(:func:`_keep_turns`, the whole run shifted alike). Runs so started are checked against the
estimate's branch (:func:`_check_branch`; configurations compared by where the joints are,
:func:`same_configuration`): one in another mode where that branch reaches its first input is
solved again from the branch's configuration there; rows the branch does not reach are
``other_branch``.
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
from dataclasses import dataclass, field, replace

import numpy as np

from . import continuation as rules
from . import jit
from .assembly import assemble, nearest_turn
from .loop_closure import SINGULAR_CONDITION, Status, _loop_plan, mechanism_size
from .mechanism import CompiledMechanism
from .transforms import wrap_to_pi

_CONVERGED = int(Status.CONVERGED)
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
    interpolation, so no one Newton count describes a point.)

    ``reassembled`` (n,) bool: the point was configured by (re)assembly, not by continuation
    from a known point (the first point when the estimate's branch does not reach it, the first
    converged point after failed ones, a restart after the continuation failed): it starts a
    run of points that continuation follows, and its passive angles are the representatives
    (q + 2 pi k) nearest the last good point before it (else the estimate), the whole run
    shifted alike (:func:`_keep_turns`). ``other_branch`` (n,) bool: converged points of runs
    so started that are not on the branch of the assembly estimate (the configuration differs
    from :func:`configuration_at`'s at that input, or that branch does not reach it). Both None
    for a sweep without loops. ``branch_checked``: False when runs started by reassembly could
    not be compared with the estimate's branch because the estimate does not assemble at its
    own inputs (no assembly mode is then defined; ``other_branch`` stays False).
    ``branch_resolved`` (n,) bool: restarts whose reassembly had landed off the estimate's branch
    and whose run was therefore solved again by continuation from :func:`configuration_at`'s
    configuration at that input (its rows on the estimate's branch are then ``ok``); None when
    no run was. ``det_sign`` (n,): the kernel's sign of det J_p per point (a square J_p's
    singular crossings), None without loops."""

    q: np.ndarray
    status: np.ndarray
    residual: np.ndarray
    condition: np.ndarray
    worst_loop: np.ndarray
    events: tuple = field(default_factory=tuple)
    reassembled: np.ndarray | None = None
    other_branch: np.ndarray | None = None
    branch_checked: bool = True
    branch_resolved: np.ndarray | None = None
    det_sign: np.ndarray | None = None


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
        pk = _compiled_kernel()
        res = _solve_sweep_kernel(mech, Q_act, q_start, tol, max_step, pk)
        if plan.cold:  # numba compiled the kernel in this call: learn what that cost on this machine
            jit.record_run(KERNEL_SET, plan, _work_units(mech, len(Q_act)), time.process_time() - cpu)
    else:
        pk = _interpreted_kernel()
        res = _solve_sweep_kernel(mech, Q_act, q_start, tol, max_step, pk)
        # the kernel's own CPU for this sweep's points (not the route from the estimate nor loading
        # the interpreted copy: fixed costs that, divided by a short sweep's few work units, taught
        # the record ~4,000 times the kernel's rate per unit and made a later 361-point solve compile
        # for ~40 s)
        _record_interpreted(mech, len(Q_act), _last_kernel_cpu)
    if res.reassembled is not None and res.reassembled.any():
        res = _check_branch(mech, res, Q_act, q_start, tol, max_step, pk)
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


def _first_estimate(mech: CompiledMechanism, a0: np.ndarray, q_start: np.ndarray, tol: float, max_step: float,
                    pk, packed, work) -> tuple[np.ndarray, bool]:
    """The estimate the kernel starts from, and whether it is reached by continuation from the
    assembly estimate. First the assembly at the estimate's own actuated values (the assembly
    mode the user chose: Newton from the estimate in the kernel, then seeded restarts
    (``assembly.assemble``) when that stalls); when the first input ``a0`` differs, that branch
    followed to ``a0`` (:func:`_follow_branch`: straight, or the other way round for a revolute
    input), so the kernel starts at ``a0`` itself. When the branch does not reach ``a0`` (or the
    estimate does not assemble), the assembly at ``a0`` (Newton from the estimate's assembly,
    seeded restarts; angles nearest the estimate): a reassembly, flagged (``False``) so that
    :func:`_solve_sweep_kernel` reports it and :func:`_check_branch` checks its branch; else the
    estimate itself (the kernel reports the failure)."""
    mi, mf = packed[0], packed[1]
    wf, wi = work
    a = np.ascontiguousarray(q_start[mech.q_actuated], dtype=np.float64)
    q = np.empty(mech.n_q)
    if pk.solve_point(mi, mf, wf, wi, a, np.ascontiguousarray(q_start, dtype=np.float64), float(tol), rules.MAX_ITER,
                      q) != Status.CONVERGED:
        start = assemble(mech, a, q_start, tol=tol)
        if start.status != Status.CONVERGED:
            res = assemble(mech, a0, q_start, tol=tol)
            return np.asarray(res.q if res.status == Status.CONVERGED else q_start, dtype=np.float64), False
        q = np.asarray(start.q, dtype=np.float64)
    else:  # found by assembly too: passive angles nearest the estimate, as ``assemble`` (and _home) gives them
        q = np.ascontiguousarray(nearest_turn(mech, q, q_start, passive_only=True), dtype=np.float64)
    if np.array_equal(a, a0):
        return q, True
    if np.max(np.abs(a0 - a) / _input_step_limit(mech, max_step)) <= 1.0:
        # within one coarse step: the kernel follows the branch to a0 itself (the same
        # continuation with bisection as a two-point _follow_branch, without its ~0.1 ms of
        # Python) and flags its first point ``reassembled`` when it had to assemble there instead
        return q, True
    point = _follow_branch(mech, a0, q, tol, max_step, pk, locate=False)
    if point.status == Status.CONVERGED:
        return np.ascontiguousarray(point.q, dtype=np.float64), True
    res = assemble(mech, a0, q, tol=tol)
    if res.status == Status.CONVERGED:  # (its passive angles nearest the assembly at the estimate's inputs)
        return np.ascontiguousarray(nearest_turn(mech, res.q, q_start, passive_only=True), dtype=np.float64), False
    return q, False


#: CPU seconds of the kernel's continuation in the latest :func:`_solve_sweep_kernel` (what the
#: cost projection learns per work unit: :func:`_record_interpreted`)
_last_kernel_cpu = 0.0


def _solve_sweep_kernel(mech: CompiledMechanism, Q_act: np.ndarray, q_start: np.ndarray, tol: float,
                        max_step: float, pk) -> SweepResult:
    """The sweep in kernel module ``pk`` (the compiled or the interpreted one)."""
    n = len(Q_act)
    Q = np.ascontiguousarray(Q_act, dtype=np.float64)
    limit = _input_step_limit(mech, max_step)
    idx = np.empty(n + 1, dtype=np.int64)
    coarse = idx[:pk.coarse_indices(Q, limit, idx)].copy()  # (a few points: not a view keeping n + 1 int64)
    del idx
    q = np.empty((n, mech.n_q))
    status = np.zeros(n, dtype=np.int64)
    resid = np.empty((n, mech.n_loops))
    worst = np.zeros(n, dtype=np.int64)
    cond = np.empty(n)
    det = np.zeros(n)
    reassembled = np.zeros(n, dtype=np.bool_)
    mi, mf, n_wf, n_wi = _packed(mech, pk)
    wf, wi = pk.workspace(n_wf, n_wi)
    start, continued = _first_estimate(mech, Q[coarse[0]], q_start, tol, max_step, pk, (mi, mf), (wf, wi))
    global _last_kernel_cpu
    cpu = time.process_time()
    pk.sweep(mi, mf, wf, wi, Q, start, coarse, float(tol), rules.MAX_ITER, q, status, resid, worst, cond, det,
             reassembled)
    _last_kernel_cpu = time.process_time() - cpu  # (set after any nested sweep of _first_estimate)
    if status[0] != Status.CONVERGED and not np.array_equal(start[mech.q_actuated], Q[0]):
        # the branch of the estimate's assembly does not reach the first input, nor does Newton
        # from it there: assemble at the first input itself (seeded restarts) and start there
        first = assemble(mech, Q[0], q_start, tol=tol)
        if first.status == Status.CONVERGED:
            reassembled[:] = False
            continued = False
            pk.sweep(mi, mf, wf, wi, Q, np.asarray(first.q, dtype=np.float64), coarse, float(tol), rules.MAX_ITER, q,
                     status, resid, worst, cond, det, reassembled)
    restarts = _restarts(status, reassembled, coarse, continued and not reassembled[coarse[0]])
    _keep_turns(mech, q, status, restarts, q_start)
    return _result(mech, pk, q, status, resid, worst, cond, det, restarts)


def _result(mech: CompiledMechanism, pk, q: np.ndarray, status: np.ndarray, resid: np.ndarray, worst: np.ndarray,
            cond: np.ndarray, det: np.ndarray, restarts: np.ndarray, **branch) -> SweepResult:
    """The :class:`SweepResult` of the kernel's per-point outputs (``det`` (n,) the kernel's det
    J_p sign per point, read for a square J_p; ``restarts`` (n,) bool the starts of runs
    configured by (re)assembly); events from them: a ``reassembled`` event at each restart, the
    failures and singular crossings of :func:`_events` (a tall J_p's crossings seen through the
    kernel's :func:`det_flips` over q). ``branch``: SweepResult's branch fields."""
    n = len(q)
    if not _det_checked(mech):
        flipped = None
    elif _square(mech):
        flipped = rules.det_sign_flipped(det[:-1], det[1:])
    else:  # tall J_p: each step's det sign seen from its start
        mi, mf, n_wf, n_wi = _packed(mech, pk)
        wf, wi = pk.workspace(n_wf, n_wi)
        flipped = np.zeros(max(n - 1, 0), dtype=np.bool_)
        pk.det_flips(mi, mf, wf, wi, np.ascontiguousarray(q), flipped)
    events = [SweepEvent(int(c), "reassembled") for c in np.flatnonzero(restarts)]
    events += _events(status, resid, worst, cond, flipped)
    events.sort(key=lambda e: e.index)
    # copy=False: the kernel's int64 arrays themselves (int is int64 here), not a second copy at the peak
    return SweepResult(q, status.astype(int, copy=False), resid, cond, worst.astype(int, copy=False), tuple(events),
                       restarts, det_sign=det, **branch)


# --- configurations reached by (re)assembly: whole turns and the estimate's branch ---------------
def _restarts(status: np.ndarray, reassembled: np.ndarray, coarse: np.ndarray, continued: bool) -> np.ndarray:
    """(n,) bool: converged points configured by (re)assembly rather than by continuation from a
    converged neighbour (the starts of the runs :func:`_keep_turns` keeps whole): the first
    point unless the kernel started from the estimate's branch followed to it (``continued``);
    the first converged point after a failed one (the kernel solves it by Newton from a
    neighbour or from the last good point, a configuration not followed from its neighbour);
    a coarse point the kernel restarted from the last good configuration (its ``reassembled``
    flag) when the coarse point before it converged (when that one failed, the points between
    were solved from this one, and the run starts at the first of them)."""
    ok = status == _CONVERGED
    if continued and ok.all() and not reassembled.any():  # (the common case, without the passes below)
        return np.zeros(len(status), dtype=bool)
    out = ok.copy()
    out[1:] &= ~ok[:-1]
    out[0] &= not continued
    flagged = np.flatnonzero(reassembled[coarse[1:]])
    if len(flagged):
        c, before = coarse[1:][flagged], coarse[:-1][flagged]
        out[c[ok[before]]] = True
    return out


def _keep_turns(mech: CompiledMechanism, q: np.ndarray, status: np.ndarray, restarts: np.ndarray,
                q_estimate: np.ndarray) -> None:
    """Shift, in place, each run of points started by (re)assembly (``restarts``) by the whole
    turns that bring its first point's passive angles nearest the last converged point before
    it, else the estimate ``q_estimate`` (n_q,). The rule: continuation keeps angles continuous
    (a winding reached by continuous motion, e.g. a double crank's joints over several turns,
    is physical and kept), but a configuration obtained by (re)assembly takes for each passive
    rotation variable the representative q + 2 pi k nearest its reference. A shift by whole
    turns leaves the configuration itself unchanged (poses, residual, condition, det J_p) but
    not spring torques and limit checks, which read the angle; the whole run is shifted alike,
    so it stays continuous. Actuated values are never shifted (they are the inputs)."""
    starts = np.flatnonzero(restarts)
    if not len(starts):
        return
    ok = status == Status.CONVERGED
    last_ok = np.maximum.accumulate(np.where(ok, np.arange(len(q)), -1))  # the last good row up to each row
    ends = np.append(starts[1:], len(q))
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        good = int(last_ok[s - 1]) if s > 0 else -1
        _shift_turns(mech, q, s, e, q[good] if good >= 0 else q_estimate)


def _shift_turns(mech: CompiledMechanism, q: np.ndarray, s: int, e: int, q_ref: np.ndarray) -> None:
    """Shift rows s..e-1 of q (in place) by the whole turns that bring row s's passive rotation
    variables to q_ref's (n_q,) (the same configuration; the winding changes spring torques and
    limit checks, not poses)."""
    shift = nearest_turn(mech, q[s], np.asarray(q_ref, float), passive_only=True) - q[s]
    shift = 2 * np.pi * np.round(shift / (2 * np.pi))  # exact whole turns (no round-off of the subtraction)
    if shift.any():
        q[s:e] += shift


#: at most this many runs started by reassembly are checked against the estimate's branch per
#: sweep (each check is a continuation from the estimate's inputs); later ones are marked
#: other_branch (not verified)
MAX_BRANCH_CHECKS = 32
#: runs found off the estimate's branch are solved again from that branch's configuration
#: (:func:`_check_branch`) for at most this many times the sweep's points in all, so the
#: repair costs at most this many sweeps of the kernel; runs beyond it stay other_branch
MAX_RESOLVED_SWEEPS = 2


def same_configuration(mech: CompiledMechanism, q1: np.ndarray, q2: np.ndarray, rtol: float = 1e-6) -> bool:
    """The two configurations (n_q,) SI place the mechanism alike: every joint frame at the same
    world position (relative to the mechanism size) and every joint axis that is not a
    spherical joint's in the same world direction (rad), within ``rtol``
    (:func:`_placement`). Not their joint coordinates: a spherical joint's z-y-x angles (a, b, c)
    and (a + pi, pi - b, c + pi) are one rotation (its Euler dual), and an idle freedom (an S-S
    coupler's spin about its own axis) moves no joint frame and no axis. Whole turns of angles
    change nothing either. (Two solutions converged to the sweep's tolerance, 1e-10 relative,
    differ by about the condition number times it; the other assembly mode of a linkage lies a
    large fraction of its size away except next to a change point, where the two coincide.)"""
    p1, a1 = _placement(mech, np.asarray(q1, float))
    p2, a2 = _placement(mech, np.asarray(q2, float))
    d = max(float(np.abs(p1 - p2).max(initial=0.0)) / mechanism_size(mech), float(np.abs(a1 - a2).max(initial=0.0)))
    return d <= rtol


def _placement(mech: CompiledMechanism, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(points (2 n_joints, 3) m, axes (k, 3) unit) of configuration q (n_q,) SI: the world
    origin of every joint's frame on its parent and on its child, and the world direction of
    each joint's first variable's axis (in its frame on the parent) and last variable's axis (in
    its frame on the child, which that variable's motion leaves unchanged), spherical joints
    excepted (their three axes depend on how the rotation is written, not on where the links
    are)."""
    from .forward import link_poses
    from .mechanism import SPHERICAL

    T = link_poses(mech, q)
    Tp = T[mech.joint_parent] @ mech.T_parent_joint  # (n_joints, 4, 4) joint frames in world
    Tc = T[mech.joint_child] @ mech.T_child_joint
    points = np.concatenate([Tp[:, :3, 3], Tc[:, :3, 3]])
    axes = []
    for j in range(mech.n_joints):
        n = int(mech.joint_q_count[j])
        if n == 0 or mech.joint_type[j] == SPHERICAL:
            continue
        first, last = int(mech.joint_q_start[j]), int(mech.joint_q_start[j]) + n - 1
        axes += [Tp[j, :3, :3] @ mech.q_axis[first], Tc[j, :3, :3] @ mech.q_axis[last]]
    return points, np.array(axes).reshape(-1, 3)


def _euler_duals(mech: CompiledMechanism, q: np.ndarray, s: int, e: int, q_ref: np.ndarray) -> None:
    """Rewrite, in place, rows s..e-1 of q in the other z-y-x form (a + pi, pi - b, c + pi) of each
    spherical joint whose angles at row s are nearer q_ref's (n_q,) in that form (modulo whole
    turns): the same rotation, so the run takes the coordinates of the configuration it was
    verified against (fk's); a spherical joint with an actuated variable is left alone."""
    from .mechanism import SPHERICAL

    act = set(np.asarray(mech.q_actuated).tolist())
    for j in np.flatnonzero(np.asarray(mech.joint_type) == SPHERICAL).tolist():
        k = int(mech.joint_q_start[j])
        if act & {k, k + 1, k + 2}:
            continue
        x = q[s, k:k + 3]
        dual = np.array([x[0] + np.pi, np.pi - x[1], x[2] + np.pi])
        ref = np.asarray(q_ref, float)[k:k + 3]
        if _wrapped(dual - ref) < _wrapped(x - ref):
            rows = q[s:e, k:k + 3]
            rows[:, 0] += np.pi
            rows[:, 1] = np.pi - rows[:, 1]
            rows[:, 2] += np.pi


def _wrapped(d: np.ndarray) -> float:
    """Largest |angle| of d (rad) modulo 2 pi."""
    return float(np.abs(wrap_to_pi(d)).max(initial=0.0))


def _check_branch(mech: CompiledMechanism, res: SweepResult, Q: np.ndarray, q_start: np.ndarray, tol: float,
                  max_step: float, pk) -> SweepResult:
    """``res`` with its runs started by reassembly checked against the estimate's branch, in
    order. A run whose first point is the configuration the estimate's branch has at that input
    (:func:`configuration_at`) is kept (with that branch's winding). One whose first point is
    another configuration where that branch does reach the input (a reassembly that landed in
    the other assembly mode, e.g. after a sweep starting outside the reachable range) is solved
    again, over its inputs, by continuation from the branch's configuration there
    (``branch_resolved``): its rows take the re-run's results where the re-run converged (on the
    estimate's branch), keep their earlier values as ``other_branch`` where only the earlier run
    converged (that branch does not reach them from here: not verified), and the re-run's own
    restarts are checked in turn. A run the branch does not reach, or beyond
    :data:`MAX_BRANCH_CHECKS` checks or the :data:`MAX_RESOLVED_SWEEPS` budget, is marked
    ``other_branch`` to its end (conservative: not verified). Events are rebuilt from the final
    rows (the ``reassembled`` events name each run's first row)."""
    assert res.reassembled is not None
    n = len(Q)
    other = np.zeros(n, dtype=bool)
    home = _home(mech, q_start, tol)
    if home is None:  # no assembly mode to compare with
        return replace(res, other_branch=other, branch_checked=False)
    q, status, resid = res.q.copy(), res.status.copy(), res.residual.copy()
    worst, cond = res.worst_loop.copy(), res.condition.copy()
    det = np.zeros(n) if res.det_sign is None else np.asarray(res.det_sign).copy()
    restarts = res.reassembled.copy()
    resolved = np.zeros(n, dtype=bool)
    budget = MAX_RESOLVED_SWEEPS * n  # points the re-runs may solve in all
    checks, s = 0, -1
    while True:
        later = np.flatnonzero(restarts[s + 1:])
        if not len(later):
            break
        s = s + 1 + int(later[0])
        nxt = np.flatnonzero(restarts[s + 1:])
        e = s + 1 + int(nxt[0]) if len(nxt) else n
        point = None
        if checks < MAX_BRANCH_CHECKS:
            checks += 1
            point = _follow_branch(mech, Q[s], home, tol, max_step, pk, locate=False)
            if point.status != Status.CONVERGED:
                point = None
        if point is not None and same_configuration(mech, point.q, q[s]):
            # the run takes the coordinates the estimate's branch has there (fk's, simulate's): its
            # spherical joints' z-y-x form, then its winding
            _euler_duals(mech, q, s, e, point.q)
            _shift_turns(mech, q, s, e, point.q)
            other[s:e] = False
            continue
        if point is None or e - s > budget:
            other[s:e] = status[s:e] == Status.CONVERGED
            continue
        budget -= e - s
        sub = _solve_sweep_kernel(mech, Q[s:e], point.q, tol, max_step, pk)
        assert sub.reassembled is not None and sub.det_sign is not None
        was = status[s:e] == Status.CONVERGED
        now = sub.status == Status.CONVERGED
        take = now | ~was  # the re-run's rows, except those only the earlier run solved
        for mine, theirs in ((q, sub.q), (status, sub.status), (resid, sub.residual), (worst, sub.worst_loop),
                             (cond, sub.condition), (det, sub.det_sign)):
            mine[s:e][take] = theirs[take]
        kept = was & ~now  # other-mode rows the estimate's branch did not reach from here
        other[s:e] = kept
        # run starts: the re-run's restarts and the first row of each block of kept rows (checked in
        # turn: the straight way from the estimate may reach them); row s stays the start of this run
        starts = sub.reassembled | (kept & ~np.concatenate(([False], kept[:-1])))
        starts[0] = True
        restarts[s:e] = starts
        resolved[s] = True
    branch = {"other_branch": other, "branch_resolved": resolved if resolved.any() else None}
    if not resolved.any():
        return replace(res, q=q, **branch)
    return _result(mech, pk, q, status, resid, worst, cond, det, restarts, **branch)


@dataclass(frozen=True)
class BranchPoint:
    """The configuration at given inputs in the assembly mode of the estimate
    (:func:`configuration_at`). ``q`` (n_q,) SI (the estimate's assembly when not reached);
    ``status`` a Status code, CONVERGED only when the estimate's branch reached the inputs;
    ``residual`` (n_loops,) per-loop max |r|; ``condition``; ``worst_loop``; ``route``:
    "estimate" (the inputs are the estimate's own), "continuation" (followed straight from the
    estimate's inputs), "equivalent" (followed the other way round, to a revolute input's
    equivalent value a -/+ 2 pi k; the input then set back to a), "assembled" (the estimate
    does not assemble at its own inputs, so it defines no mode to follow: Newton and seeded
    restarts at a from the estimate, angles nearest it; callers report this fallback), "" when
    not reached;
    ``start`` (n_act,) SI the estimate's inputs; ``reached`` (n_act,) SI the farthest input the
    straight path reached on that branch before it stopped (a limit of motion located by
    bisection to 1e-6 of a coarse step, or the last point before a failure of the continuation;
    NaN when the estimate itself does not assemble); ``tried`` the equivalent
    inputs (SI) also tried."""

    q: np.ndarray
    status: int
    residual: np.ndarray
    condition: float
    worst_loop: int
    route: str
    start: np.ndarray
    reached: np.ndarray
    tried: tuple = ()


def _home(mech: CompiledMechanism, q_estimate: np.ndarray, tol: float) -> np.ndarray | None:
    """The assembly (n_q,) SI at the estimate's own inputs (Newton from it, then seeded
    restarts nearest it), or None when it does not assemble."""
    res = assemble(mech, np.asarray(q_estimate, float)[mech.q_actuated], q_estimate, tol=tol)
    return np.asarray(res.q, float) if res.status == Status.CONVERGED else None


def configuration_at(mech: CompiledMechanism, q_actuated: np.ndarray, q_estimate: np.ndarray | None = None, *,
                     tol: float = 1e-10, max_step: float = np.radians(10.0)) -> BranchPoint:
    """The configuration at actuated values ``q_actuated`` (n_act,) SI in the assembly mode of
    the estimate ``q_estimate`` (n_q,) SI (default: the file's ``assembly``, ``mech.q_init``):
    assembled at the estimate's own inputs, then that branch followed by continuation
    (:func:`solve_sweep`'s kernel) to the requested inputs: straight, else, when a limit of
    motion blocks the straight path, the other way round to the equivalent value of each
    revolute input (a - 2 pi k or a + 2 pi k; the input is then set back to a, the passive
    angles keep the winding the motion gave them). When no route reaches the inputs on that
    branch, the status says so (never another mode returned as converged) and ``reached`` says
    where the straight path stopped. Every command that needs one configuration at given
    inputs (simulate's start, jacobian, ik's start, info, draw, a sweep's first point) uses
    this, so they agree. (Plain Newton from the estimate at distant inputs may land in the
    other assembly mode or with joints wound by whole turns.)"""
    a = np.asarray(q_actuated, dtype=float).reshape(mech.n_actuated)
    q_est = np.asarray(mech.q_init if q_estimate is None else q_estimate, dtype=float)
    _require_finite(q_actuated=a, q_estimate=q_est)
    nan = np.full(mech.n_actuated, np.nan)
    if _kernel_model(mech) is None:  # no loops: q is the inputs
        q = q_est.copy()
        q[mech.q_actuated] = a
        return BranchPoint(q, int(Status.CONVERGED), np.zeros(mech.n_loops), 1.0, 0, "continuation",
                           q_est[mech.q_actuated], a.copy())
    home = _home(mech, q_est, tol)
    if home is None:  # no mode to follow: assembled at a itself (a fallback the caller reports)
        res = assemble(mech, a, q_est, tol=tol)
        ok = res.status == Status.CONVERGED
        # (assemble already gives passive angles nearest the estimate)
        return BranchPoint(np.asarray(res.q, float), int(res.status), res.residual, float(res.condition),
                           int(res.worst_loop), "assembled" if ok else "", q_est[mech.q_actuated], nan)
    plan = _plan(mech, 64)
    pk = _compiled_kernel() if plan.compile else _interpreted_kernel()
    return _follow_branch(mech, a, home, tol, max_step, pk)


#: a straight route longer than this many coarse steps (~580 turns of a revolute input at 10
#: deg) is not followed; the equivalent values within a turn still are
_MAX_ROUTE_STEPS = 200_000


def _routes(mech: CompiledMechanism, a: np.ndarray, a_home: np.ndarray):
    """Targets to follow the branch to, in order (a generator: the others are computed only
    when the straight one fails): ``a`` itself (straight), then, for revolute inputs, the
    equivalent values within one turn of the estimate's inputs: the nearest one, then the
    other way round (every revolute input shifted alike)."""
    yield a, "continuation"
    rot = mech.q_is_rotation[mech.q_actuated]
    if not rot.any():
        return
    up = np.where(rot, a_home + np.mod(a - a_home, 2 * np.pi), a)
    down = np.where(rot, up - 2 * np.pi, a)
    near_up = np.abs(up - a_home)[rot].max() <= np.abs(down - a_home)[rot].max()
    for t in ((up, down) if near_up else (down, up)):
        if np.abs(t - a).max() > 1e-12:  # (not the straight route again)
            yield t, "equivalent"


def _follow_branch(mech: CompiledMechanism, a: np.ndarray, home: np.ndarray, tol: float, max_step: float,
                   pk, *, locate: bool = True) -> BranchPoint:
    """:func:`configuration_at` from ``home`` (n_q,), the assembly at the estimate's own inputs,
    in kernel module ``pk``: each route of :func:`_routes` as a straight path of coarse steps
    (at most ``max_step``), accepted when every point converged by continuation (no restart).
    ``locate``: when the inputs are not reached, locate where the straight path stopped by
    bisection (``reached``, for messages); without it ``reached`` is the last point reached
    (callers that only need the configuration: a limit costs ~0.4 s of numpy Newton solves)."""
    a = np.asarray(a, dtype=float)
    a_home = np.asarray(home, float)[mech.q_actuated]
    if np.array_equal(a, a_home):
        res = assemble(mech, a, home, tol=tol, restarts=0)
        return BranchPoint(np.asarray(res.q, float), int(res.status), res.residual, float(res.condition),
                           int(res.worst_loop), "estimate" if res.status == Status.CONVERGED else "", a_home, a.copy())
    limit = _input_step_limit(mech, max_step)
    reached = a_home.copy()
    tried = []
    for target, route in _routes(mech, a, a_home):
        steps = int(np.ceil(np.max(np.abs(target - a_home) / limit)))
        if steps > _MAX_ROUTE_STEPS:
            continue
        if route != "continuation":
            tried.append(target)
        path = np.linspace(a_home, target, steps + 1)
        res = _solve_sweep_kernel(mech, path, home, tol, max_step, pk)
        ok = res.status == Status.CONVERGED
        assert res.reassembled is not None
        if ok.all() and not res.reassembled.any():
            q = res.q[-1].copy()
            q[mech.q_actuated] = a
            return BranchPoint(q, int(Status.CONVERGED), res.residual[-1], float(res.condition[-1]),
                               int(res.worst_loop[-1]), route, a_home, a.copy(), tuple(tried))
        if route == "continuation":
            bad = np.flatnonzero(~ok | res.reassembled)
            i = int(bad[0]) if len(bad) else len(path) - 1
            reached = path[max(i - 1, 0)]
            if locate and 0 < i and not ok[i]:  # an end of motion between the two points: located by bisection
                from .limits import locate_limits

                found = locate_limits(mech, path[i - 1:i + 1], res.q[i - 1:i + 1], res.status[i - 1:i + 1],
                                      width=1e-6 * limit, tol=tol)
                reached = found[0].at if found else reached
    return BranchPoint(home.copy(), int(Status.NO_ASSEMBLY), np.full(mech.n_loops, np.nan), float("inf"), 0, "",
                       a_home, reached, tuple(tried))


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
