"""Inverse kinematics: a target tool pose -> every joint variable (actuated ones included),
solved together with loop closure by damped least squares with joint limits.

Task components (``mode``): ``full`` (planar x, y, angle / spatial position + SO(3) log),
``position`` (planar x, y / spatial x, y, z), ``xy`` (x and y only, any kind). Loop-closure rows
are weighted heavily so they are met first; a task the mechanism cannot meet exactly is solved
in least squares and reported as UNREACHABLE with the closest pose, never as a success.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from . import transforms as tf
from .assembly import nearest_turn
from .forward import effector_pose
from .jacobian import _point_jacobian
from .loop_closure import _residual_jacobian, constraints, mechanism_size
from .mechanism import CompiledMechanism

# An attempt that closes its loops stops where the scaled gradient (:func:`_stationarity`) falls
# below this: a local minimum of the task error. Damped Gauss-Newton converges only linearly
# towards a singular closest pose (the cosine halves per step or so), and the step length there
# never falls below a test on it: attempts at an unreachable target ran until the damping blew up
# (~50-200 iterations each, nine attempts per target). The polish (SLSQP) finishes the minimum;
# the distance is stationary there, so its error is ~gtol^2 of the mechanism's size even if the
# polish cannot improve it.
GTOL_ATTEMPT = 1e-6


class IKStatus(IntEnum):
    CONVERGED = 0
    UNREACHABLE = 1  # least-squares minimum with a task residual above tolerance
    NO_ASSEMBLY = 2  # loop closure itself could not be met


@dataclass(frozen=True)
class IKResult:
    """q (n_q,) SI; status; task_residual (n_task,) target minus reached (m, rad);
    loop_residual max |loop closure|; iterations; T_reached (4, 4) the tool pose actually reached
    (verified by forward kinematics); n_task task equations; dof mobility used; restarts."""

    q: np.ndarray
    status: IKStatus
    task_residual: np.ndarray
    loop_residual: float
    iterations: int
    T_reached: np.ndarray
    n_task: int
    restarts: int


def task_rows(mech: CompiledMechanism, mode: str) -> np.ndarray:
    """Indices into the 6-vector (dx, dy, dz, rx, ry, rz) of the task components."""
    if mode == "xy":
        return np.array([0, 1])
    if mode == "position":
        return np.array([0, 1]) if mech.planar else np.array([0, 1, 2])
    if mode == "full":
        return np.array([0, 1, 5]) if mech.planar else np.arange(6)
    raise ValueError(f"mode must be full, position or xy, not {mode!r}")


def _task(mech, q, T_target, rows):
    """Task residual e (..., n_task) (reached - target) and its Jacobian d e / d q (..., n_task,
    n_q) for the chosen rows, at ``q`` (..., n_q)."""
    ev = constraints(mech, q)
    T = effector_pose(mech, ev.kin.T_world_link)
    J6 = _point_jacobian(ev.kin.J_link[..., mech.frame_link[mech.effector_frame], :, :], T[..., :3, 3])
    if rows[-1] < 3:  # position rows only: the orientation error (a third of the cost) is not needed
        return (T[..., :3, 3] - T_target[:3, 3])[..., rows], J6[..., rows, :], ev, T
    R = T[..., :3, :3]
    phi = tf.log_so3(T_target[:3, :3].T @ R)
    e = np.concatenate([T[..., :3, 3] - T_target[:3, 3], phi], axis=-1)
    Jr = np.concatenate([J6[..., :3, :], tf.right_jacobian_inv_so3(phi) @ np.swapaxes(R, -1, -2) @ J6[..., 3:, :]],
                        axis=-2)
    if mech.planar:  # the planar angle error is phi_z exactly, its rate w_z
        Jr[..., 5, :] = J6[..., 5, :]
    return e[..., rows], Jr[..., rows, :], ev, T


def solve_ik(mech: CompiledMechanism, T_target: np.ndarray, q_guess: np.ndarray, *, mode: str = "full",
             tol: float = 1e-9, max_iter: int = 200, restarts: int = 8, seed: int = 0) -> IKResult:
    """Solve IK from ``q_guess`` (n_q,), with seeded random restarts when the first attempt
    stalls. ``T_target`` (4, 4) world pose of the tool frame (SI)."""
    rows = task_rows(mech, mode)
    q_guess = np.asarray(q_guess, float)
    (best,) = _attempts(mech, T_target, q_guess[None], rows, tol, max_iter)
    n_restart = 0
    tried = [best]
    if best.status != IKStatus.CONVERGED and restarts > 0:
        # the restarts run together, one batched step for all (a tree pass costs about the same
        # for 8 poses as for one: eight restarts of the five-bar in ~3x one attempt's time); taken
        # in order, as one after another: the first that converges ends them, those after it
        # are not run
        rng = np.random.default_rng(seed)
        spread = np.where(mech.q_is_rotation, np.pi, 0.5 * mechanism_size(mech))
        starts = q_guess + rng.uniform(-1, 1, (restarts, mech.n_q)) * spread
        for trial in _attempts(mech, T_target, starts, rows, tol, max_iter, first_success_ends=True):
            n_restart += 1
            tried.append(trial)
            if (trial.status, _score(trial)) < (best.status, _score(best)):
                best = trial
            if best.status == IKStatus.CONVERGED:
                break
    if best.status == IKStatus.UNREACHABLE:
        # the damped Gauss-Newton steps crawl where the closest pose is singular (an arm
        # stretched towards the target: the residual is large and the Hessian's second-order
        # part, which Gauss-Newton drops, is what pins the minimum); polish the distinct local
        # minima found with a quasi-Newton SQP that keeps it, and keep the best
        polished = [_polish(mech, T_target, r, rows, tol) for r in _distinct(mech, tried)]
        best = min(polished, key=lambda r: (r.status, _task_norm(mech, r, rows)))
    best = _closed(mech, T_target, best, rows, tol)  # a pose presented closes its loops to tol
    q = nearest_turn(mech, best.q, q_guess)  # same pose, angles near the guess
    q = np.where((q >= mech.q_lower) & (q <= mech.q_upper), q, best.q)  # ... unless a turn leaves the limits
    return IKResult(q, best.status, best.task_residual, best.loop_residual, best.iterations, best.T_reached,
                    best.n_task, n_restart)


def _task_weights(mech: CompiledMechanism, rows: np.ndarray) -> np.ndarray:
    """Task row weights: positions relative to the mechanism size, angles in rad."""
    return np.where(rows < 3, 1.0 / mechanism_size(mech), 1.0)


def _task_norm(mech: CompiledMechanism, r: IKResult, rows: np.ndarray) -> float:
    return float(np.linalg.norm(r.task_residual * _task_weights(mech, rows)))


def _distinct(mech: CompiledMechanism, results: list[IKResult], keep: int = 3) -> list[IKResult]:
    """The ``keep`` best attempts that closed their loops, one per distinct task residual (1e-6
    relative: attempts that stalled near the same local minimum are polished once)."""
    ok = sorted((r for r in results if r.status == IKStatus.UNREACHABLE), key=lambda r: _score(r))
    out: list[IKResult] = []
    for r in ok:
        if all(abs(_score(r) - _score(o)) > 1e-6 * max(_score(o), 1e-12) for o in out):
            out.append(r)
        if len(out) == keep:
            break
    return out or results[:1]


def _polish(mech: CompiledMechanism, T_target: np.ndarray, start: IKResult, rows: np.ndarray, tol: float) -> IKResult:
    """Minimise the weighted task error 0.5 |W e(q)|^2 subject to loop closure and the joint
    limits with SLSQP (analytic gradients; its BFGS Hessian of the Lagrangian captures the
    curvature a singular closest pose needs). Returns ``start`` unless the result is better and
    still closes the loops."""
    from scipy.optimize import minimize

    L = mechanism_size(mech)
    w = _task_weights(mech, rows)
    scale = np.tile(np.array([1 / L, 1 / L, 1.0]) if mech.planar else np.array([1 / L] * 3 + [1.0] * 3), mech.n_loops)

    # the objective relative to its start, so SLSQP's stop on its change is relative: started near
    # the minimum, an absolute test stopped it at once, with the start's distance error (~1e-12)
    f_start = max(0.5 * _task_norm(mech, start, rows) ** 2, 1e-300)

    last: dict = {}

    def task_at(q):  # one tree pass per point for the objective, the constraints and their Jacobians
        if last.get("q") is None or not np.array_equal(last["q"], q):
            last["q"], last["task"] = np.array(q), _task(mech, q, T_target, rows)
        return last["task"]

    def objective(q):
        e, Jt, _, _ = task_at(q)
        r = e * w
        return 0.5 * float(r @ r) / f_start, (Jt * w[:, None]).T @ r / f_start

    def stop_when_stationary(q):
        # SLSQP reaches the minimum in a few iterations, then its quasi-Newton updates of rounding
        # noise can wander on (a four-bar's: 3 iterations to a scaled gradient of 3e-17, then 20
        # more and 140 evaluations at distances equal to 1e-15); a pose within 1e-10 of
        # stationary (~1e-10 rad from the minimum) is done
        e, Jt, ev, _ = task_at(q)
        if _loop_err(ev.r, L) < tol and _stationarity(mech, q, Jt * w[:, None], e * w, ev.J) < 1e-10:
            raise StopIteration

    cons = []
    if mech.n_constraints:
        cons = [{"type": "eq", "fun": lambda q: task_at(q)[2].r * scale,
                 "jac": lambda q: task_at(q)[2].J * scale[:, None]}]
    bounds = [(None if not np.isfinite(lo) else lo, None if not np.isfinite(hi) else hi)
              for lo, hi in zip(mech.q_lower, mech.q_upper, strict=True)]
    # ftol: SLSQP stops when the objective (~ (distance / size)^2 / 2) changes by less than this,
    # the step is shorter and the summed constraint violation (scaled by the size) is below it.
    # It must sit above the rounding floor of that sum (~1e-16 per constraint row): at 1e-30 (or
    # 1e-18) the five-bar never met it and ran all 500 iterations (~10 s), at 1e-14 it stops
    # after ~20 with the distance exact to 1e-15
    res = minimize(objective, start.q, jac=True, method="SLSQP", bounds=bounds, constraints=cons,
                   callback=stop_when_stationary, options={"ftol": 1e-14 * (1 + mech.n_constraints), "maxiter": 500})
    q = np.clip(res.x, mech.q_lower, mech.q_upper)
    e, _, ev, T = _task(mech, q, T_target, rows)
    if _loop_err(ev.r, L) >= 1e3 * tol or float(np.linalg.norm(e * w)) >= _task_norm(mech, start, rows):
        return start
    status = IKStatus.CONVERGED if _max(e * w) < 100 * tol else IKStatus.UNREACHABLE
    return IKResult(q, status, -e, _max(ev.r), start.iterations + int(res.nit), T, len(rows), 0)


def _score(r: IKResult) -> float:
    return float(np.abs(r.task_residual).max(initial=0.0) + r.loop_residual)


def _attempts(mech, T_target, q, rows, tol, max_iter, gtol=GTOL_ATTEMPT, first_success_ends=False) -> list[IKResult]:
    """Equality-constrained Levenberg-Marquardt from each start ``q`` (k, n_q), all advanced
    together (each with its own damping, stopping on its own): each step minimises the
    linearised task error plus damping subject to the linearised loop closure (a KKT system,
    solved in least squares so redundant constraints are harmless). Steps that do not lower the
    merit are damped. ``first_success_ends``: once attempt ``i`` converges, those after it stop
    (the caller takes the first success in order)."""
    L = mechanism_size(mech)
    w_task = np.where(rows < 3, 1.0 / L, 1.0)
    q = np.clip(q, mech.q_lower, mech.q_upper)
    k, n, c = len(q), mech.n_q, mech.n_constraints
    lam = np.full(k, 1e-3)
    e, Jt, ev, T = _task(mech, q, T_target, rows)
    r, Jc = ev.r, ev.J
    merit = _merit(e * w_task, r, L)
    it = np.zeros(k, int)  # iterations done
    active = np.ones(k, bool)
    n_acc, merit_ref = np.zeros(k, int), merit.copy()  # progress check every 10 accepted steps
    crawl = np.zeros(k, bool)
    while active.any():
        a = np.flatnonzero(active)
        it[a] += 1
        A = Jt[a] * w_task[:, None]
        K = np.zeros((len(a), n + c, n + c))
        K[:, :n, :n] = np.swapaxes(A, -1, -2) @ A + lam[a, None, None] * np.eye(n)
        K[:, :n, n:] = np.swapaxes(Jc[a], -1, -2)
        K[:, n:, :n] = Jc[a]
        rhs = -np.concatenate([np.einsum("bti,bt->bi", A, e[a] * w_task), r[a]], axis=-1)
        dq = _lstsq(K, rhs, rcond=1e-13)[:, :n]
        # once an attempt crawls (a step lowered the merit by under 1 %), a variable at a limit
        # that the step pushes out is held there and the step taken again for the others:
        # clipping alone leaves them a step that assumed it moves, and an attempt with an arm
        # joint at its limit crawled for all 200 iterations (UR5, unreachable target). Not
        # before: attempts that converge keep their path (a redundant arm's answer depends on it)
        held = ((q[a] <= mech.q_lower) & (dq < 0)) | ((q[a] >= mech.q_upper) & (dq > 0))
        held &= crawl[a, None]
        if held.any():
            h = np.flatnonzero(held.any(axis=1))
            Kh, rh = K[h], rhs[h]
            free = np.concatenate([~held[h], np.ones((len(h), c), bool)], axis=1)
            Kh *= free[:, :, None] & free[:, None, :]
            Kh[:, np.arange(n), np.arange(n)] += held[h]  # held: dq_i = 0
            rh *= free
            dq[h] = _lstsq(Kh, rh, rcond=1e-13)[:, :n]
        q_new = np.clip(q[a] + dq, mech.q_lower, mech.q_upper)
        # back onto the loop closure: the penalty merit alone trades a loop residual ~1e-7 for
        # task error at an unreachable target and stalls there; iterates on the closed-loop
        # manifold make the merit the task error and the closest pose a closed one
        q_new = _project_loops(mech, q_new, tol)
        e_n, Jt_n, ev_n, T_n = _task(mech, q_new, T_target, rows)
        merit_n = _merit(e_n * w_task, ev_n.r, L)
        better = merit_n < merit[a]
        b = a[better]
        slow = ~better | (merit_n > 0.99 * merit[a])  # this step lowered the merit by under 1 %
        crawl[b] |= merit_n[better] > 0.999 * merit[b]
        q[b], e[b], Jt[b], r[b], Jc[b], T[b], merit[b] = (q_new[better], e_n[better], Jt_n[better], ev_n.r[better],
                                                          ev_n.J[better], T_n[better], merit_n[better])
        lam[a] = np.where(better, np.maximum(lam[a] * 0.3, 1e-12), lam[a] * 10.0)
        closed = _loop_err(r[a], L) < tol
        done = (it[a] >= max_iter) | (closed & (_max(e[a] * w_task) < tol)) | (lam[a] > 1e8)
        for j in np.flatnonzero(~done & closed & slow):
            # a closed pose where no feasible direction lowers the task error, and the steps no
            # longer do: a local minimum (not a near-stationary point passed on the way)
            i = a[j]
            done[j] = _stationarity(mech, q[i], Jt[i] * w_task[:, None], e[i] * w_task, Jc[i]) < gtol
        # loops still open and the merit down by less than 1e-4 in 10 accepted steps: stalled
        # short of assembly (a Stephenson six-bar restart crawled 200 iterations at a loop gap of
        # 7 %; rejected steps are the damping's business, lam > 1e8 above)
        n_acc[b] += 1
        check = n_acc[a] >= 10
        done |= check & ~closed & (merit[a] > (1 - 1e-4) * merit_ref[a])
        n_acc[a[check]], merit_ref[a[check]] = 0, merit[a[check]]
        active[a[done]] = False
        if first_success_ends:
            ok = (_loop_err(r, L) < 1e3 * tol) & (_max(e * w_task) < 100 * tol) & ~active
            if ok.any():
                active[np.argmax(ok) + 1:] = False
    loop_ok = _loop_err(r, L) < 1e3 * tol
    task_ok = _max(e * w_task) < 100 * tol
    return [IKResult(q[i], IKStatus.CONVERGED if task_ok[i] and loop_ok[i] else
                     (IKStatus.UNREACHABLE if loop_ok[i] else IKStatus.NO_ASSEMBLY),
                     -e[i], float(_max(r[i])), int(it[i]), T[i], len(rows), 0) for i in range(k)]


def _lstsq(K: np.ndarray, b: np.ndarray, rcond: float) -> np.ndarray:
    """Minimum-norm least-squares solutions x (k, n) of K x = b for a batch K (k, m, n), b (k, m)
    (singular values below ``rcond`` times the largest dropped): LAPACK's gelsd per system. (One
    batched SVD instead took 13 ms against gelsd's 2.7 ms at the Stewart platform's 66 x 66 KKT
    system, and saved only ~15 us per system at the five-bar's 8 x 8.)"""
    return np.stack([np.linalg.lstsq(Ki, bi, rcond=rcond)[0] for Ki, bi in zip(K, b, strict=True)])


def _stationarity(mech: CompiledMechanism, q: np.ndarray, A: np.ndarray, r: np.ndarray, Jc: np.ndarray) -> float:
    """First-order optimality of 0.5 |r|^2 at ``q`` on the loop closure within the limits, scaled
    as MINPACK's ``gtol``: |P g| / (|A| |r|), ``g = A^T r`` the gradient (``A`` (n_task, n_q) the
    weighted task Jacobian, ``r`` the weighted residual), ``P`` the projection onto the feasible
    directions: variables at a limit that the descent direction would push out are held, the
    rest projected onto the null space of the loop-closure Jacobian ``Jc`` (n_c, n_q). Zero at a
    stationary point; it falls only linearly there when the pose is singular (an arm stretched
    towards an unreachable target), where the step length does not (see :func:`_attempts`)."""
    g = A.T @ r
    held = ((q <= mech.q_lower) & (g > 0)) | ((q >= mech.q_upper) & (g < 0))
    g = np.where(held, 0.0, g)
    if Jc.shape[0]:
        Jf = np.where(held, 0.0, Jc)
        g = g - Jf.T @ np.linalg.lstsq(Jf.T, g, rcond=1e-13)[0]
    scale = float(np.linalg.norm(A) * np.linalg.norm(r))
    return float(np.linalg.norm(g)) / scale if scale > 0 else 0.0


def _project_loops(mech: CompiledMechanism, q: np.ndarray, tol: float, max_iter: int = 12) -> np.ndarray:
    """``q`` (..., n_q) moved onto the loop closure by minimum-norm Newton steps over every joint
    variable (the smallest change that closes the loops), within the joint limits, until the
    loop error is 1e-3 ``tol`` (quadratic convergence: one or two steps from a nearly closed
    pose). A pose comes back unchanged when that does not close its loops to ``tol`` (a start far
    from assembly: the KKT steps bring it closer first). (Giving up earlier, when a step does not
    shrink the error, cost a Stephenson six-bar three of its eight restarts: Newton from afar
    often needs 6-12 steps.)"""
    if not mech.n_constraints:
        return q
    L = mechanism_size(mech)
    batch = np.ndim(q) > 1
    q = np.atleast_2d(q)
    p = q.copy()
    todo = np.arange(len(p))
    for _ in range(max_iter):
        r, J = _residual_jacobian(mech, p[todo])
        open_ = _loop_err(r, L) >= 1e-3 * tol
        todo = todo[open_]
        if not len(todo):
            break
        p[todo] = np.clip(p[todo] + _lstsq(J[open_], -r[open_], rcond=1e-13), mech.q_lower, mech.q_upper)
    else:
        closed = _loop_err(_residual_jacobian(mech, p[todo], jacobian=False)[0], L) < tol
        p[todo[~closed]] = q[todo[~closed]]
    return p if batch else p[0]


def _closed(mech: CompiledMechanism, T_target: np.ndarray, r: IKResult, rows: np.ndarray, tol: float) -> IKResult:
    """``r`` with its pose projected onto the loop closure (:func:`_project_loops`) and its task
    residual, reached pose and status evaluated there: ``NO_ASSEMBLY`` (no pose to present)
    when the loops do not close to ``tol``."""
    q = _project_loops(mech, r.q, tol)
    e, _, ev, T = _task(mech, q, T_target, rows)
    L = mechanism_size(mech)
    if _loop_err(ev.r, L) >= tol:
        status = IKStatus.NO_ASSEMBLY
    else:
        status = IKStatus.CONVERGED if _max(e * _task_weights(mech, rows)) < 100 * tol else IKStatus.UNREACHABLE
    return IKResult(q, status, -e, _max(ev.r), r.iterations, T, r.n_task, r.restarts)


def _loop_err(r: np.ndarray, L: float):
    """Largest loop-closure residual of ``r`` (..., n_c), relative to the size: (...)."""
    return _max(r) / max(L, 1.0)


def _merit(task: np.ndarray, loop: np.ndarray, L: float):
    """Task error plus a strong penalty on loop closure (for step acceptance only): (...)."""
    return np.sum(task * task, axis=-1) + 1e6 * np.sum(loop * loop, axis=-1) / max(L, 1.0) ** 2


def _max(a: np.ndarray):
    """max |a| over the last axis: (...) (a float for one vector)."""
    m = np.abs(a).max(axis=-1, initial=0.0)
    return float(m) if np.ndim(m) == 0 else m
