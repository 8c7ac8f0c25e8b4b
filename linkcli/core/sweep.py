"""Sweeps of the actuated variables that keep their assembly branch (continuation).

Strategy (measured in PERFORMANCE.md as the fastest pure-numpy approach):

1. a sequential *coarse* pass over a subset of the points whose input steps are at most
   ``max_step``: tangent predictor (``qdot = N qdot_act``) and Newton corrector, with step
   bisection when the corrector lands far from the prediction (a would-be branch jump), when
   det J_p changes sign (a singular configuration between, or a jump to the other assembly
   mode, which near a change point lands close to the prediction: only a crossing survives
   the bisection down to the smallest step) or when it fails (approaching a dead centre);
2. cubic Hermite guesses for every point between coarse points, refined by a batched Newton
   solve over all of them at once;
3. a branch check of every refined point against its guess and of its det J_p sign against
   its segment's ends (when they agree); points that fail it are re-solved sequentially from
   their neighbour.

Angles stay continuous (no wrapping): each point starts from its neighbour's solution.
Singular passive partitions crossed between two points (sign change of det J_p: toggle or
branch points) and points that cannot be assembled are reported as events, never silently.
A tall J_p (more constraint rows than passive variables: a planar loop written as a spatial
file has 6 rows and 3 passive variables) gets the same det checks on its projection onto the
constraint subspace at the step's start (:func:`_det_signs_seen_from`); a wide one (idle
freedoms) gets none.

Compiled path
-------------
Planar mechanisms whose passive partition is square (any topology: several loops, prismatic
joints, joint frames at angles) can run the same algorithm in the compiled scalar kernel of
:mod:`linkcli.core.planar_kernel` (numba), point by point: ~0.35 us per point instead of
~10 us (four-bar; benchmarks/README.md). Importing numba and loading the cached kernel costs
~0.45 s per process, compiling it the first time ~12 s, so :func:`solve_sweep` uses it when
numba is importable, ``LINKCLI_NO_JIT`` is unset, and

* the sweep has at least :data:`COMPILED_MIN_POINTS` points and numba's on-disk cache of the
  kernel exists (the measured break-even with the numpy path is ~45-50k points), or
* the sweep has at least :data:`COMPILED_MIN_POINTS_COLD` points (worth even a first compile),

or whenever it applies for callers that make many sweeps in one process (``method="many"``:
a parameter study's workers, which pay the kernel's load once for thousands of variants), or
always / never when the environment variable ``LINKCLI_SWEEP`` is ``compiled`` / ``numpy``
(e.g. a long-running process making many small sweeps, or a benchmark). The choice depends on
the inputs only, never on what ran before in the process, so a sweep's result is reproducible.
Both paths give the same statuses and events and q within the solver tolerance (tested in
tests/test_kinematics_fast.py); spatial and non-square mechanisms always use the numpy path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from . import continuation as rules
from .assembly import assemble
from .loop_closure import (
    SINGULAR_CONDITION,
    Status,
    _loop_plan,
    _residual_jacobian,
    _solve_configuration,
    condition_number,
    mechanism_size,
    passive_indices,
    solve_configuration,
    tangent_map,
)
from .mechanism import CompiledMechanism

#: sweeps this long use the compiled kernel when its numba cache exists (loading it costs
#: ~0.45 s per process; the numpy path ~9 us per point more than the kernel)
COMPILED_MIN_POINTS = 50_000
#: ... and this long even without a cache (the first compile takes ~12 s)
COMPILED_MIN_POINTS_COLD = 1_500_000


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
    for rotations, the same fraction of the mechanism size for translations."""
    L = mechanism_size(mech)
    rot = mech.q_is_rotation[mech.q_actuated]
    return np.where(rot, max_angle, max_angle * L / 2)


def _coarse_indices(Q_act: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Indices 0 = c_0 < c_1 < ... = n-1 such that inputs change by at most ``limit`` between
    consecutive coarse points (or consecutive points themselves exceed it)."""
    n = len(Q_act)
    idx = [0]
    last, i, window = 0, 1, 32
    while i < n:  # scan for the first point too far from the last coarse point, window by window
        stop = min(n, i + window)
        far = np.flatnonzero(np.any(np.abs(Q_act[i:stop] - Q_act[last]) > limit, axis=-1))
        if len(far) == 0:
            i, window = stop, 2 * window
            continue
        i += int(far[0])
        if i - 1 > last:
            idx.append(i - 1)
            window = max(32, 2 * (i - 1 - last))
            last = i - 1
        i += 1
    if idx[-1] != n - 1:
        idx.append(n - 1)
    return np.asarray(idx)


def _solve_one(mech, a, guess, tol):
    res = solve_configuration(mech, a[None], guess[None], tol=tol)
    return res.q[0], int(res.status[0])


_MAX_DEPTH = rules.MAX_DEPTH


#: above loop_closure.SINGULAR_CONDITION the tangent at a point is not trusted (a dead centre or
#: branch point: the tangent map's pseudo-inverse picks an arbitrary direction there)


def _predict(mech, a0, q0, a1, prev):
    """Predicted configuration at input a1 from (a0, q0): the tangent, or, where J_p is
    (nearly) singular and an earlier point ``prev = (a, q)`` on the branch is known, the secant
    through it, which carries the branch straight through a branch point; and J at q0."""
    J = _residual_jacobian(mech, q0)[1]
    if prev is not None and condition_number(J[:, passive_indices(mech)]) > SINGULAR_CONDITION:
        a_p, q_p = prev
        da = a0 - a_p
        scale = float(da @ (a1 - a0)) / float(da @ da) if float(da @ da) > 0 else 0.0
        return q0 + (q0 - q_p) * scale, J
    return q0 + tangent_map(mech, J) @ (a1 - a0), J


def _continue(mech: CompiledMechanism, a0, q0, a1, tol, depth=0, max_depth=_MAX_DEPTH, prev=None):
    """Follow the branch from (a0, q0) to input a1 (``prev``: an earlier point on the branch,
    for the secant predictor at singular points). Returns (q1, status), always *of the point
    a1*: when the branch cannot be followed there (the step bisections fail before a1: a limit
    of motion or an unresolved jump lies between), the corrector's own attempt at a1 from the
    prediction: ``BRANCH_JUMP`` if it converged (q1 closes the loops at a1, on another branch),
    else its failure status (q1 its last iterate at a1). Never a bisection midpoint's q or
    status. A step is accepted when the corrector moved the prediction by < 0.3 of the
    predictor's step and, above the smallest step, det J_p keeps its sign."""
    q_pred, J0 = _predict(mech, a0, q0, a1, prev)
    res, J1 = _solve_configuration(mech, a1[None], q_pred[None], tol, rules.MAX_ITER)
    q1, st = res.q[0], int(res.status[0])
    moved = np.abs(q_pred - q0).max()
    jump = rules.corrector_left_branch(np.abs(q1 - q_pred).max(), moved)
    if st == Status.CONVERGED and not jump and depth < max_depth and _det_flips(mech, J0, J1[0]):
        jump = True  # bisect (rules.det_sign_flipped says why)
    if st == Status.CONVERGED and not jump:
        return q1, st
    failed = q1, (Status.BRANCH_JUMP if st == Status.CONVERGED else st)  # a1 not reached on the branch
    if depth >= max_depth:
        return failed
    am = 0.5 * (a0 + a1)
    qm, stm = _continue(mech, a0, q0, am, tol, depth + 1, max_depth, prev)
    if stm != Status.CONVERGED:
        return failed
    return _continue(mech, am, qm, a1, tol, depth + 1, max_depth, (a0, q0))


def _det_flips(mech, J0, J1) -> bool:
    """det J_p has opposite signs in the constraint Jacobians J0 (the step's start) and J1
    (n_c, n_q), seen from J0 when J_p is tall (:func:`_det_signs_seen_from`)."""
    if not _det_checked(mech):
        return False
    p = passive_indices(mech)
    return bool(rules.det_sign_flipped(*_det_signs_seen_from(J0[:, p], J1[:, p])))


def _first_point(mech, a, q_start, tol):
    """Assemble at the estimate's own actuated values (the assembly mode the user chose; seeded
    restarts when Newton from a poor estimate stalls), then follow that branch to the first
    input; plain assembly at the first input if that fails."""
    start = assemble(mech, q_start[mech.q_actuated], q_start, tol=tol)
    if start.status == Status.CONVERGED:
        q1, st1 = _continue(mech, q_start[mech.q_actuated], start.q, a, tol)
        if st1 == Status.CONVERGED:
            return q1, st1
    res = assemble(mech, a, q_start, tol=tol)
    return res.q, int(res.status)


def solve_sweep(mech: CompiledMechanism, Q_act: np.ndarray, q_start: np.ndarray, *, tol: float = 1e-10,
                max_step: float = np.radians(10.0), method: str = "auto") -> SweepResult:
    """Solve the configuration along an ordered path of actuated values.

    Q_act (n, n_act) SI, consecutive points close to each other (a sweep, or a grid in
    serpentine order); q_start (n_q,) starting estimate for the first point (assembly mode).
    ``method``: "auto" (the rule of the module docstring), or "many" for a caller that makes
    many sweeps in one process (a study's worker): the compiled kernel whenever it applies and
    numba is available, since its load cost is paid once per process. ``LINKCLI_SWEEP``
    overrides both.
    """
    Q_act = np.atleast_2d(np.asarray(Q_act, dtype=float))
    q_start = np.asarray(q_start, dtype=float)
    if method not in ("auto", "many"):
        raise ValueError(f"solve_sweep: method must be 'auto' or 'many', not {method!r}")
    if _use_compiled(mech, len(Q_act), many=method == "many"):
        return _solve_sweep_compiled(mech, Q_act, q_start, tol, max_step)
    return _solve_sweep_numpy(mech, Q_act, q_start, tol, max_step)


def _solve_sweep_numpy(mech: CompiledMechanism, Q_act: np.ndarray, q_start: np.ndarray, tol: float,
                       max_step: float) -> SweepResult:
    n = len(Q_act)
    q = np.empty((n, mech.n_q))
    status = np.zeros(n, dtype=int)
    coarse = _coarse_indices(Q_act, _input_step_limit(mech, max_step))
    events: list[SweepEvent] = []
    q_prev, last_ok, prev_ok = None, None, None
    for c in coarse:
        if q_prev is None:
            q[c], status[c] = _first_point(mech, Q_act[c], q_start, tol)
        elif last_ok is None:
            q[c], status[c] = _solve_one(mech, Q_act[c], q_prev, tol)
        else:
            prev = (Q_act[prev_ok], q[prev_ok]) if prev_ok is not None else None
            q[c], status[c] = _continue(mech, Q_act[last_ok], q[last_ok], Q_act[c], tol, prev=prev)
        if status[c] != Status.CONVERGED and last_ok is not None:
            # try a plain restart from the last good configuration: the mechanism may have
            # passed a limit position; a restart may land on another branch, so say so
            q_r, st_r = _solve_one(mech, Q_act[c], q[last_ok], tol)
            if st_r == Status.CONVERGED:
                q[c], status[c] = q_r, st_r
                events.append(SweepEvent(int(c), "reassembled"))
        if status[c] == Status.CONVERGED:
            prev_ok, last_ok = last_ok, c
        q_prev = q[c]
    _fill_between(mech, Q_act, q, status, coarse, tol)
    # final residuals and conditions
    res, J = _solve_configuration(mech, Q_act, q, tol, 0)
    status = np.where(status == Status.CONVERGED, res.status, status)
    events += _events(mech, status, res.residual, res.worst_loop, res.condition, _det_flips_along(mech, J))
    events.sort(key=lambda e: e.index)
    return SweepResult(res.q, status, res.residual, res.condition, res.worst_loop, tuple(events))


def _square(mech: CompiledMechanism) -> bool:
    n_p = mech.n_q - mech.n_actuated
    return mech.n_constraints == n_p and n_p > 0


def _det_checked(mech: CompiledMechanism) -> bool:
    """The det J_p sign checks apply: J_p (n_c, n_p) is square, or tall (more constraint rows
    than passive variables: planar loops written as spatial files, 6 rows per loop;
    overconstrained loops such as Bennett's), seen projected (:func:`_det_signs_seen_from`). Not when
    it is wide (idle freedoms such as an S-S coupler's spin): no square minor is then tied to
    the assembly mode."""
    n_p = mech.n_q - mech.n_actuated
    return mech.n_constraints >= n_p > 0


def _jit_available() -> bool:
    """numba importable and the kernels compiled in this process (jit.py's mode: not
    ``LINKCLI_JIT=never`` / ``LINKCLI_NO_JIT``, not fixed to interpreted kernels by an earlier
    analysis), checked without importing numba."""
    from .jit import compiled_kernels_possible

    return compiled_kernels_possible()


def _kernel_cached() -> bool:
    """numba's on-disk cache of the sweep kernel exists (found without importing numba)."""
    from .jit import numba_cache_exists

    return numba_cache_exists(__file__, "planar_kernel.sweep-*.nbi")


def _use_compiled(mech: CompiledMechanism, n: int, many: bool = False) -> bool:
    """The decision rule of the module docstring (``many``: see solve_sweep's ``method``)."""
    choice = os.environ.get("LINKCLI_SWEEP", "auto").strip().lower()
    if choice == "numpy" or n < 1:
        return False
    if choice != "compiled" and not many:
        if n < COMPILED_MIN_POINTS or (n < COMPILED_MIN_POINTS_COLD and not _kernel_cached()):
            return False
    return _planar_model(mech) is not None and _jit_available()


def _planar_model(mech: CompiledMechanism):
    """The kernel's model tuple (see planar_kernel's docstring), or None when the mechanism is
    not planar in the kernel's sense (checked on the compiled arrays, tolerance 1e-12); built on
    first use and kept on the mechanism."""
    return mech.derived("sweep.planar_model", _build_planar_model)


def _build_planar_model(mech: CompiledMechanism):
    from .forward import planar_frames, planar_steps

    planar = planar_steps(mech)  # the planar test of joint frames and axes, written once there
    if planar is None or not (mech.n_loops and mech.n_actuated and _square(mech)):
        return None
    steps, vax = planar
    vrot = np.asarray(mech.q_is_rotation, dtype=np.int64)
    stepi = [(st.v, st.u, st.s, st.n, int(st.forward)) for st in steps]
    stepf = [list(st.before) + list(st.after) for st in steps]
    fP, fC = planar_frames(mech.T_parent_joint), planar_frames(mech.T_child_joint)
    loopi = [(mech.joint_parent[j], mech.joint_child[j], mech.joint_q_start[j], mech.joint_q_count[j])
             for j in mech.loop_joint]
    loopf = [fP[j].tolist() + fC[j].tolist() for j in mech.loop_joint]
    lp = _loop_plan(mech)

    def i64(a, cols):  # writeable C-contiguous copies (one kernel signature for every mechanism)
        a = np.array(a, dtype=np.int64)
        return np.ascontiguousarray(a.reshape(-1, cols) if cols else a)

    def f64(a, cols=None):
        a = np.array(a, dtype=np.float64)
        return np.ascontiguousarray(a.reshape(-1, cols) if cols else a)

    return (i64(stepi, 5), f64(stepf, 8), i64(loopi, 4), f64(loopf, 8), vrot, vax, f64(lp.cA), f64(lp.cB),
            i64(lp.passive, None), i64(mech.q_actuated, None), f64(lp.scale))


def _packed(mech, pk):
    """The kernel's packed model of a mechanism (built on its first compiled sweep, kept on the
    mechanism)."""
    return mech.derived("sweep.kernel_pack", lambda m: pk.pack(_planar_model(m), _MAX_DEPTH))


def _solve_sweep_compiled(mech: CompiledMechanism, Q_act: np.ndarray, q_start: np.ndarray, tol: float,
                          max_step: float) -> SweepResult:
    """The same sweep in the compiled planar kernel (requires :func:`_planar_model`)."""
    from . import planar_kernel as pk

    model = _planar_model(mech)
    if model is None:
        raise ValueError(f"{mech.name}: the compiled sweep needs a planar mechanism with a square passive partition")
    n = len(Q_act)
    Q = np.ascontiguousarray(Q_act, dtype=np.float64)
    limit = np.ascontiguousarray(_input_step_limit(mech, max_step), dtype=np.float64)
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
    # The first point by the same routine as the numpy path (assembly at the estimate's own
    # inputs with seeded restarts, then continuation to the first input): the kernel's plain
    # Newton from a poor estimate can converge to another assembly mode, or to angles turns
    # away from the estimate, where the numpy path keeps the mode the user chose.
    q_first, st_first = _first_point(mech, Q[coarse[0]], q_start, tol)
    start = q_first if st_first == Status.CONVERGED else q_start
    pk.sweep(mi, mf, wf, wi, Q, np.array(start, dtype=np.float64), coarse, float(tol), rules.MAX_ITER, q, status,
             resid, worst, cond, det, reassembled)
    events = [SweepEvent(int(c), "reassembled") for c in np.flatnonzero(reassembled)]
    events += _events(mech, status, resid, worst, cond, rules.det_sign_flipped(det[:-1], det[1:]))
    events.sort(key=lambda e: e.index)
    return SweepResult(q, status.astype(int), resid, cond, worst.astype(int), tuple(events))


def _fill_between(mech, Q_act, q, status, coarse, tol) -> None:
    """Hermite guesses + batched Newton + branch check for the points between coarse points."""
    fine = np.setdiff1d(np.arange(len(Q_act)), coarse)
    if len(fine) == 0:
        return
    seg = np.searchsorted(coarse, fine) - 1  # coarse segment of each fine point
    c0, c1 = coarse[seg], coarse[seg + 1]
    ok_seg = (status[c0] == Status.CONVERGED) & (status[c1] == Status.CONVERGED)
    guess = np.empty((len(fine), mech.n_q))
    good = coarse[status[coarse] == Status.CONVERGED]
    J_good = _residual_jacobian(mech, q[good])[1] if len(good) else np.zeros((0, mech.n_constraints, mech.n_q))
    N = dict(zip(good, tangent_map(mech, J_good), strict=True)) if len(good) else {}
    for s in np.unique(seg):
        sel = seg == s
        a, b = coarse[s], coarse[s + 1]
        if ok_seg[sel][0]:
            guess[sel] = _hermite(Q_act, q, N, a, b, fine[sel])
        else:
            guess[sel] = q[a] if status[a] == Status.CONVERGED else q[b]
    res, J = _solve_configuration(mech, Q_act[fine], guess, tol, rules.MAX_ITER)
    span = np.abs(q[c1] - q[c0]).max(axis=-1)
    jumped = rules.fine_point_left_branch(np.abs(res.q - guess).max(axis=-1), span)
    if _det_checked(mech) and len(good):
        # det J_p at both ends of each segment and at its fine points, seen (tall J_p) from
        # the segment's start, as the continuation step to its end was checked (non-converged
        # ends: J_p = 0, masked by ok_seg)
        passive = passive_indices(mech)
        Jp_c = np.zeros((len(q), mech.n_constraints, len(passive)))
        Jp_c[good] = J_good[:, :, passive]
        d0, d1 = _det_signs_seen_from(Jp_c[coarse[:-1]], Jp_c[coarse[1:]])
        d = _det_signs_seen_from(Jp_c[c0], J[:, :, passive])[1]
        jumped |= ok_seg & rules.det_sign_left_branch(d, d0[seg], d1[seg])
    q[fine], status[fine] = res.q, res.status
    redo = fine[(jumped | (res.status != Status.CONVERGED)) & ok_seg]
    for i in redo:  # rare: sequential continuation from the left neighbour
        q[i], status[i] = _continue(mech, Q_act[i - 1], q[i - 1], Q_act[i], tol) if status[i - 1] == Status.CONVERGED \
            else _solve_one(mech, Q_act[i], q[i - 1], tol)


def _det_signs_seen_from(Jp_ref, Jp) -> tuple[np.ndarray, np.ndarray]:
    """Signs (-1, 0, 1) of det J_p at a reference point and at another, Jp_ref and Jp
    (..., n_c, n_p) broadcast together, for the branch checks to compare: a change of sign
    between them is a singular configuration crossed, or the other assembly mode.

    Square J_p: (sign det Jp_ref, sign det Jp). A tall J_p (n_c > n_p: planar loops written as
    spatial files, 6 rows per loop; overconstrained loops) has no det; it is projected on the
    constraint subspace its columns span at the reference point, the leading left singular
    vectors U of Jp_ref = U S V^T: det(U^T J_p) is continuous in q and vanishes where J_p loses
    rank (for U near J_p's own range, as along one step), and reduces to det J_p up to a fixed
    sign when J_p is square. Without the SVD: det(Jp_ref^T Jp) = det(V) prod(S) det(U^T Jp),
    the same up to a factor of fixed sign, whose value at the reference point itself is
    det(Jp_ref^T Jp_ref) = prod(S)^2 > 0 (taken as 1 exactly: computed, it is rounding noise
    where the reference point sits on a singularity, while Jp_ref^T Jp keeps a computable
    sign there, about s_min times O(1))."""
    if Jp_ref.shape[-2] == Jp_ref.shape[-1]:
        return _det_sign(Jp_ref), _det_sign(Jp)
    seen = _det_sign(np.swapaxes(Jp_ref, -1, -2) @ Jp)
    return np.ones_like(seen), seen


def _det_sign(Jp) -> np.ndarray:
    """Sign of det per point (-1, 0, 1), Jp (..., n_p, n_p). Large batches of 3 x 3 (one
    planar loop) by the triple product: 4x faster than np.linalg.det at 3600 points, 9x slower
    at 2 (measured)."""
    if Jp.shape[-1] == 3 and Jp.ndim == 3 and len(Jp) > 64:
        return np.sign(np.einsum("...i,...i->...", Jp[..., 0, :], np.cross(Jp[..., 1, :], Jp[..., 2, :])))
    return np.sign(np.linalg.det(Jp))


def _hermite(Q_act, q, N, a, b, idx) -> np.ndarray:
    """Cubic Hermite interpolation of q between coarse points a < b at indices idx, with end
    tangents N @ dQ (the actuated path is taken as linear in the index between a and b)."""
    t = ((idx - a) / (b - a))[:, None]
    dQ = Q_act[b] - Q_act[a]
    m0, m1 = N[a] @ dQ, N[b] @ dQ
    h00, h10, h01, h11 = rules.hermite_weights(t)
    return h00 * q[a] + h10 * m0 + h01 * q[b] + h11 * m1


def _det_flips_along(mech, J) -> np.ndarray | None:
    """(n - 1,) det J_p changes sign between points i and i + 1 of a sweep, J (n, n_c, n_q)
    (a tall J_p seen from point i, :func:`_det_signs_seen_from`); None when no det check
    applies (wide J_p)."""
    if not _det_checked(mech) or len(J) < 2:
        return None
    Jp = J[:, :, passive_indices(mech)]
    return rules.det_sign_flipped(*_det_signs_seen_from(Jp[:-1], Jp[1:]))


def _events(mech, status, residual, worst_loop, condition, det_flipped) -> list[SweepEvent]:
    """no_assembly / branch_jump events at the first point of every failed run, and singular
    crossings where det J_p changes sign (det_flipped (n - 1,), see :func:`_det_flips_along`;
    None when not checked) between two converged points."""
    events: list[SweepEvent] = []
    ok = status == Status.CONVERGED
    for i in np.flatnonzero(~ok):
        if i == 0 or ok[i - 1]:
            kind = "branch_jump" if status[i] == Status.BRANCH_JUMP else "no_assembly"
            events.append(SweepEvent(int(i), kind, int(worst_loop[i]), float(residual[i].max(initial=0))))
    crossings = set()
    if det_flipped is not None:
        flips = np.flatnonzero(ok[:-1] & ok[1:] & det_flipped)
        events += [SweepEvent(int(i), "singular_crossing", -1, float(condition[i])) for i in flips]
        crossings = {int(i) for i in flips} | {int(i) + 1 for i in flips}
    # points that sit on a singular configuration (a grid point exactly at a dead centre or
    # branch point: no sign change is seen there); one event per run of such points
    near = ok & (condition > SINGULAR_CONDITION)
    starts = np.flatnonzero(near & ~np.r_[False, near[:-1]])
    events += [SweepEvent(int(i), "singular_point", -1, float(condition[i])) for i in starts if int(i) not in crossings]
    return events
