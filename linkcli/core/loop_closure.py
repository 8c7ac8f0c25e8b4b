"""Loop-closure constraints, their analytic Jacobian, and the configuration solver.

Each loop-closing joint ``k`` gives two frames that must coincide: frame A, the joint's child
frame predicted from the parent side (``T_world_parent @ T_parent_joint @ M_k(q_k)``), and
frame B, the same frame on the child link (``T_world_child @ T_child_joint``). The residual
per loop is

* planar (3): ``[x_B - x_A, y_B - y_A, angle(R_A^T R_B)]`` (m, m, rad; angle in (-pi, pi]);
* spatial (6): ``[p_B - p_A, log(R_A^T R_B)]`` (m, rad) with the exact SO(3) logarithm.

The Jacobian is analytic, from the world spatial twists of the joint axes (see forward.py):
position rows are point-velocity differences, rotation rows ``Jr^-1(phi) R_B^T (w_B - w_A)``.
Everything is batched over leading dimensions of ``q``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from . import transforms as tf
from .forward import TreeKinematics, _cross, _pass, link_path_signs, tree_kinematics
from .mechanism import CompiledMechanism


class Status(IntEnum):
    """Outcome of a configuration solve at one point."""

    CONVERGED = 0
    MAX_ITER = 1  # residual still decreasing when the iteration limit was hit
    NO_ASSEMBLY = 2  # residual stalled above tolerance: the links cannot close the loop
    BRANCH_JUMP = 3  # converged, but not on the branch the continuation followed
    SINGULAR = 4  # converged at a singular passive partition (dead centre / branch point)


STATUS_TEXT = {Status.CONVERGED: "ok", Status.MAX_ITER: "max_iter", Status.NO_ASSEMBLY: "no_assembly",
               Status.BRANCH_JUMP: "branch_jump", Status.SINGULAR: "singular"}


@dataclass(frozen=True)
class ConstraintEval:
    """r (..., n_c) residual; J (..., n_c, n_q) its Jacobian (or None); kin the tree pass."""

    r: np.ndarray
    J: np.ndarray | None
    kin: TreeKinematics


def loop_frames(mech: CompiledMechanism, kin: TreeKinematics) -> tuple[np.ndarray, np.ndarray]:
    """(T_A, T_B), each (..., n_loops, 4, 4): the two world frames each loop must bring together."""
    k = mech.loop_joint
    T_A = kin.T_world_link[..., mech.joint_parent[k], :, :] @ mech.T_parent_joint[k] @ kin.M[..., k, :, :]
    T_B = kin.T_world_link[..., mech.joint_child[k], :, :] @ mech.T_child_joint[k]
    return T_A, T_B


def constraints(mech: CompiledMechanism, q: np.ndarray, jacobian: bool = True) -> ConstraintEval:
    """Loop-closure residual (and analytic Jacobian) at joint variables ``q`` (..., n_q)."""
    q = np.asarray(q, dtype=float)
    kin = tree_kinematics(mech, q, jacobian=jacobian)
    r, J = _loop_eval(mech, q.shape[:-1], kin.T_world_link, kin.S, kin.M, jacobian)
    return ConstraintEval(r, J, kin)


def _residual_jacobian(mech: CompiledMechanism, q: np.ndarray, jacobian: bool = True):
    """(r (..., n_c), J (..., n_c, n_q) or None) without the link-twist Jacobians (solver use)."""
    q = np.asarray(q, dtype=float)
    if mech.n_loops == 0:
        return _loop_eval(mech, q.shape[:-1], None, None, None, jacobian)
    T, _, S, _, M, batch = _pass(mech, q, True, None)
    return _loop_eval(mech, batch, T, S, M, jacobian, link_major=True)


class _LoopPlan:
    """Per-mechanism constants of the loop equations: for loop ``l`` and variable ``k``,
    ``cB[l, k]`` / ``cA[l, k]`` is the sign with which the variable's twist moves frame B / A."""

    def __init__(self, mech: CompiledMechanism):
        k = mech.loop_joint
        self.par, self.chi = mech.joint_parent[k], mech.joint_child[k]
        self.Tp, self.Tc = mech.T_parent_joint[k], mech.T_child_joint[k]
        path = link_path_signs(mech)
        self.cB = path[self.chi].copy()
        self.cA = path[self.par].copy()
        for li, j in enumerate(k):
            s, n = mech.joint_q_start[j], mech.joint_q_count[j]
            self.cA[li, s:s + n] += 1.0
        self.dC = self.cB - self.cA
        self.passive = passive_indices(mech)
        self.scale = _residual_scale(mech)


def _loop_plan(mech: CompiledMechanism) -> _LoopPlan:
    """The mechanism's loop-closure plan (built once, kept on the mechanism)."""
    return mech.derived("loop_closure.plan", _LoopPlan)


def _loop_eval(mech, batch, T, S, M, jacobian, link_major=False):
    """Residual (..., n_c) and Jacobian (..., n_c, n_q) from poses, unit twists and joint motions
    (batch-first arrays, or link-major (n, nb, ...) ones when ``link_major``)."""
    if mech.n_loops == 0:
        return np.zeros(batch + (0,)), (np.zeros(batch + (0, mech.n_q)) if jacobian else None)
    lp = _loop_plan(mech)
    k = mech.loop_joint
    if link_major:  # (L, nb, 4, 4) frames
        T_A = T[lp.par] @ lp.Tp[:, None] @ M[k]
        T_B = T[lp.chi] @ lp.Tc[:, None]
    else:  # -> (L, nb, ...) for the arithmetic below
        nb = math.prod(batch)
        T_A = np.moveaxis((T[..., lp.par, :, :] @ lp.Tp @ M[..., k, :, :]).reshape((nb,) + (len(k), 4, 4)), 1, 0)
        T_B = np.moveaxis((T[..., lp.chi, :, :] @ lp.Tc).reshape((nb,) + (len(k), 4, 4)), 1, 0)
        S = np.moveaxis(S.reshape((nb, mech.n_q, 6)), 1, 0)
    R_A, R_B = T_A[..., :3, :3], T_B[..., :3, :3]
    R_rel = np.swapaxes(R_A, -1, -2) @ R_B
    dp = T_B[..., :3, 3] - T_A[..., :3, 3]
    if mech.planar:
        r = np.stack([dp[..., 0], dp[..., 1], np.arctan2(R_rel[..., 1, 0], R_rel[..., 0, 0])], axis=-1)
        phi = None
    else:
        phi = tf.log_so3(R_rel)
        r = np.concatenate([dp, phi], axis=-1)
    r = np.moveaxis(r, 0, -2).reshape(batch + (mech.n_constraints,))  # (L, nb, d) -> (..., L * d)
    if not jacobian:
        return r, None
    v, w = S[None, ..., :3], S[None, ..., 3:]  # (1, n_q, nb, 3)
    cB, cA = lp.cB[:, :, None, None], lp.cA[:, :, None, None]
    VB = v + _cross(w, T_B[:, None, :, :3, 3])  # (L, n_q, nb, 3): velocity of B's origin per unit rate
    VA = v + _cross(w, T_A[:, None, :, :3, 3])
    dV = cB * VB - cA * VA
    dW = lp.dC[:, :, None, None] * w  # (L, n_q, nb, 3)
    if mech.planar:
        rows = np.stack([dV[..., 0], dV[..., 1], dW[..., 2]], axis=-1)  # (L, n_q, nb, 3)
    else:
        Q = tf.right_jacobian_inv_so3(phi) @ np.swapaxes(R_B, -1, -2)  # (L, nb, 3, 3)
        rot = np.einsum("lbij,lkbj->lkbi", Q, dW)
        rows = np.concatenate([dV, rot], axis=-1)  # (L, n_q, nb, 6)
    J = np.transpose(rows, (2, 0, 3, 1))  # (nb, L, d, n_q)
    return r, J.reshape(batch + (mech.n_constraints, mech.n_q))


def passive_indices(mech: CompiledMechanism) -> np.ndarray:
    """Indices of the variables not actuated (the unknowns of a configuration solve)."""
    mask = np.ones(mech.n_q, dtype=bool)
    mask[mech.q_actuated] = False
    return np.flatnonzero(mask)


def loop_residual_norms(mech: CompiledMechanism, r: np.ndarray) -> np.ndarray:
    """(..., n_loops) largest absolute residual component of each loop (m or rad)."""
    return np.abs(r.reshape(r.shape[:-1] + (mech.n_loops, mech.loop_dim))).max(axis=-1) if mech.n_loops \
        else np.zeros(r.shape[:-1] + (0,))


def loop_gaps(mech: CompiledMechanism, q: np.ndarray) -> np.ndarray:
    """(..., n_loops) how far each loop is from closed at joint variables ``q`` (..., n_q) SI,
    as one length (m): the largest of its residual components, the angular ones (rad) times
    :func:`mechanism_size` (the gap an angular misfit opens at the mechanism's extent, as the
    solver's own scaling weighs them). Below ``tol * mechanism_size`` where the solver converged."""
    if not mech.n_loops:
        return np.zeros(np.shape(q)[:-1] + (0,))
    r = constraints(mech, np.asarray(q, dtype=float), jacobian=False).r
    angular = np.array([0, 0, 1] if mech.planar else [0, 0, 0, 1, 1, 1], dtype=bool)
    weight = np.where(angular, mechanism_size(mech), 1.0)
    per_loop = r.reshape(r.shape[:-1] + (mech.n_loops, mech.loop_dim))
    return np.abs(per_loop * weight).max(axis=-1)


#: condition number of the passive partition J_p above which a configuration counts as singular
#: (a dead centre or branch point): the sweep's ``singular_point`` events and untrusted tangents,
#: the limit finder's untrusted determinant signs, the force analysis's toggles -- one threshold.
#: Scaled Jacobians (rows per mechanism size) put 1e8 eight decades above a well-conditioned
#: mechanism (~1-100) and far below float64 rank loss (~1e16).
SINGULAR_CONDITION = 1e8


def mechanism_size(mech: CompiledMechanism) -> float:
    """Characteristic size (m) of the mechanism, for relative tolerances: the largest frame or
    joint offset, at least 1e-3. (Not ``mech.length_scale``, which is metres per file length
    unit.)"""
    offsets = np.concatenate([mech.T_link_frame[:, :3, 3], mech.T_parent_joint[:, :3, 3],
                              mech.T_child_joint[:, :3, 3]]) if mech.n_joints else np.zeros((1, 3))
    return max(float(np.abs(offsets).max(initial=0.0)), 1e-3)


@dataclass(frozen=True)
class ConfigurationResult:
    """Outcome of a configuration solve, batched like the input.

    q (..., n_q) SI; status (...,) Status codes; residual (..., n_loops) per-loop max |r|;
    iterations (...,); condition (...,) condition number of the passive partition at the end
    (inf when singular); worst_loop (...,) index of the loop with the largest residual.
    """

    q: np.ndarray
    status: np.ndarray
    residual: np.ndarray
    iterations: np.ndarray
    condition: np.ndarray
    worst_loop: np.ndarray


def _least_squares_step(Jp: np.ndarray, r: np.ndarray, damping: np.ndarray | float = 0.0) -> np.ndarray:
    """Minimum-norm (damped) least-squares solution of Jp dx = -r, batched. Handles square,
    redundant (more rows) and under-determined (more columns) systems alike."""
    if Jp.shape[-1] == 0:
        return np.zeros(r.shape[:-1] + (0,))
    U, s, Vt = np.linalg.svd(Jp, full_matrices=False)
    damping = np.asarray(damping, dtype=float)[..., None]
    cutoff = s[..., :1] * 1e-13
    inv = np.where(s > cutoff, s / (s * s + damping**2), 0.0)
    coeff = inv * np.einsum("...ji,...j->...i", U, -r)
    return np.einsum("...ji,...j->...i", Vt, coeff)


def condition_number(Jp: np.ndarray) -> np.ndarray:
    """Condition number (...,) of the passive partition; inf when rank deficient."""
    if Jp.shape[-1] == 0 or Jp.shape[-2] == 0:
        return np.ones(Jp.shape[:-2])
    s = np.linalg.svd(Jp, compute_uv=False)
    k = min(Jp.shape[-2:])
    with np.errstate(divide="ignore"):
        return np.where(s[..., k - 1] > 0, s[..., 0] / s[..., k - 1], np.inf)


def solve_configuration(mech: CompiledMechanism, q_actuated: np.ndarray, q_guess: np.ndarray, *,
                        tol: float = 1e-10, max_iter: int = 50) -> ConfigurationResult:
    """Find every joint variable given the actuated ones (batched, points independent).

    Newton on the passive variables with the analytic Jacobian (least-squares / minimum-norm
    when the passive partition is not square), a backtracking line search, and a
    Levenberg-Marquardt damping fallback near singularities. Converged means every residual
    component is below ``tol * mechanism_size(mech)`` (positions) / ``tol`` (angles).

    q_actuated (..., n_act) SI; q_guess (..., n_q) starting estimate (picks the assembly mode).
    """
    return _solve_configuration(mech, q_actuated, q_guess, tol, max_iter)[0]


#: a step is accepted when it lowers the error by more than a relative 1e-12: far below any
#: real progress (Newton gains orders of magnitude), far above rounding, so once a point that
#: cannot be assembled has reached its least-squares residual, rounding noise (which differs
#: between the numpy path and the compiled kernel) cannot decide between MAX_ITER and NO_ASSEMBLY
_ACCEPT = 1.0 - 1e-12


def _solve_configuration(mech, q_actuated, q_guess, tol, max_iter):
    """:func:`solve_configuration` plus the constraint Jacobian (..., n_c, n_q) at the result.

    Each point is independent; only the points still iterating are evaluated (compressed index
    set), which is the same iteration as running the whole batch."""
    q = np.array(np.broadcast_to(q_guess,
                                 np.broadcast_shapes(np.shape(q_guess), np.shape(q_actuated)[:-1] + (mech.n_q,))),
                 dtype=float)
    q[..., mech.q_actuated] = q_actuated
    batch = q.shape[:-1]
    q = q.reshape(-1, mech.n_q)
    lp = _loop_plan(mech)
    passive, scale = lp.passive, lp.scale
    nb = len(q)
    iterations = np.zeros(nb, dtype=int)
    damping = np.zeros(nb)
    r, J = _residual_jacobian(mech, q)
    err = _err(r, scale)
    active = np.flatnonzero(err > tol)
    for _ in range(max_iter):
        if active.size == 0:
            break
        Ja = J[active]
        step = _least_squares_step(Ja[..., passive], r[active], damping[active])
        trial = q[active]
        trial[:, passive] += step
        r_t, J_t = _residual_jacobian(mech, trial)
        err_t = _err(r_t, scale)
        # accept improving steps; damp the others (Levenberg-Marquardt) and retry next round
        better = err_t < err[active] * _ACCEPT
        acc = active[better]
        q[acc], err[acc], r[acc], J[acc] = trial[better], err_t[better], r_t[better], J_t[better]
        d = damping[active]
        damping[active] = np.where(better, d * 0.1, np.maximum(d * 10.0, 1e-3))
        iterations[active] += 1
        active = active[(err[active] > tol) & (damping[active] < 1e6)]
    status = np.full(nb, Status.CONVERGED, dtype=int)
    stalled = (err > tol) & (damping >= 1e6)
    status[err > tol] = Status.MAX_ITER
    status[stalled] = Status.NO_ASSEMBLY
    resid = loop_residual_norms(mech, r)
    worst = resid.argmax(axis=-1) if mech.n_loops else np.zeros(nb, dtype=int)
    cond = condition_number(J[..., passive])
    res = ConfigurationResult(q.reshape(batch + (mech.n_q,)), status.reshape(batch),
                              resid.reshape(batch + (mech.n_loops,)), iterations.reshape(batch), cond.reshape(batch),
                              worst.reshape(batch))
    return res, J.reshape(batch + J.shape[1:])


def _residual_scale(mech: CompiledMechanism) -> np.ndarray:
    """Per-component divisor making position residuals relative to the mechanism size."""
    L = mechanism_size(mech)
    per_loop = np.array([1 / L, 1 / L, 1.0]) if mech.planar else np.array([1 / L] * 3 + [1.0] * 3)
    return np.tile(per_loop, mech.n_loops)


def _err(r: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.abs(r * scale).max(axis=-1, initial=0.0)


def tangent_map(mech: CompiledMechanism, J: np.ndarray) -> np.ndarray:
    """N (..., n_q, n_act) with qdot = N @ qdot_actuated satisfying J qdot = 0: passive rates
    from the (least-squares / minimum-norm) solution of J_p qdot_p = -J_a qdot_a."""
    passive = passive_indices(mech)
    batch = J.shape[:-2]
    N = np.zeros(batch + (mech.n_q, mech.n_actuated))
    N[..., mech.q_actuated, np.arange(mech.n_actuated)] = 1.0
    if len(passive) and mech.n_constraints:
        Jp, Ja = J[..., passive], J[..., mech.q_actuated]
        N[..., passive, :] = -np.linalg.pinv(Jp, rcond=1e-13) @ Ja
    return N
