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

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from . import transforms as tf
from .forward import TreeKinematics, tree_kinematics
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
    batch = q.shape[:-1]
    if mech.n_loops == 0:
        J = np.zeros(batch + (0, mech.n_q)) if jacobian else None
        return ConstraintEval(np.zeros(batch + (0,)), J, kin)
    T_A, T_B = loop_frames(mech, kin)
    R_rel = np.swapaxes(T_A[..., :3, :3], -1, -2) @ T_B[..., :3, :3]
    dp = T_B[..., :3, 3] - T_A[..., :3, 3]
    if mech.planar:
        r = np.concatenate([dp[..., :2], np.arctan2(R_rel[..., 1, 0], R_rel[..., 0, 0])[..., None]], axis=-1)
    else:
        phi = tf.log_so3(R_rel)
        r = np.concatenate([dp, phi], axis=-1)
    r = r.reshape(batch + (mech.n_constraints,))
    if not jacobian:
        return ConstraintEval(r, None, kin)
    return ConstraintEval(r, _jacobian(mech, kin, T_A, T_B, None if mech.planar else phi), kin)


def _jacobian(mech, kin, T_A, T_B, phi) -> np.ndarray:
    k = mech.loop_joint
    J_B = kin.J_link[..., mech.joint_child[k], :, :]  # (..., L, 6, n_q)
    J_A = kin.J_link[..., mech.joint_parent[k], :, :].copy()
    for l, j in enumerate(k):
        s, n = mech.joint_q_start[j], mech.joint_q_count[j]
        J_A[..., l, :, s:s + n] += np.swapaxes(kin.S[..., s:s + n, :], -1, -2)
    vel_B = J_B[..., :3, :] - tf.hat(T_B[..., :3, 3]) @ J_B[..., 3:, :]
    vel_A = J_A[..., :3, :] - tf.hat(T_A[..., :3, 3]) @ J_A[..., 3:, :]
    dw = J_B[..., 3:, :] - J_A[..., 3:, :]
    if mech.planar:
        rows = np.concatenate([(vel_B - vel_A)[..., :2, :], dw[..., 2:3, :]], axis=-2)
    else:
        rot = tf.right_jacobian_inv_so3(phi) @ np.swapaxes(T_B[..., :3, :3], -1, -2) @ dw
        rows = np.concatenate([vel_B - vel_A, rot], axis=-2)
    return rows.reshape(rows.shape[:-3] + (mech.n_constraints, mech.n_q))


def passive_indices(mech: CompiledMechanism) -> np.ndarray:
    """Indices of the variables not actuated (the unknowns of a configuration solve)."""
    mask = np.ones(mech.n_q, dtype=bool)
    mask[mech.q_actuated] = False
    return np.flatnonzero(mask)


def loop_residual_norms(mech: CompiledMechanism, r: np.ndarray) -> np.ndarray:
    """(..., n_loops) largest absolute residual component of each loop (m or rad)."""
    return np.abs(r.reshape(r.shape[:-1] + (mech.n_loops, mech.loop_dim))).max(axis=-1) if mech.n_loops \
        else np.zeros(r.shape[:-1] + (0,))


def length_scale(mech: CompiledMechanism) -> float:
    """Characteristic size (m) of the mechanism, for relative tolerances: the largest frame or
    joint offset, at least 1e-3."""
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
    component is below ``tol * length_scale(mech)`` (positions) / ``tol`` (angles).

    q_actuated (..., n_act) SI; q_guess (..., n_q) starting estimate (picks the assembly mode).
    """
    q = np.array(np.broadcast_to(q_guess, np.broadcast_shapes(np.shape(q_guess), np.shape(q_actuated)[:-1] + (mech.n_q,))),
                 dtype=float)
    q[..., mech.q_actuated] = q_actuated
    passive = passive_indices(mech)
    batch = q.shape[:-1]
    scale = _residual_scale(mech)
    iterations = np.zeros(batch, dtype=int)
    damping = np.zeros(batch)
    ev = constraints(mech, q)
    err = _err(ev.r, scale)
    active = err > tol
    for it in range(max_iter):
        if not active.any():
            break
        Jp = ev.J[..., passive]
        step = _least_squares_step(Jp, ev.r, damping)
        trial = q.copy()
        trial[..., passive] += step
        ev_t = constraints(mech, trial)
        err_t = _err(ev_t.r, scale)
        better = active & (err_t < err)
        # accept improving steps; damp the others (Levenberg-Marquardt) and retry next round
        q = np.where(better[..., None], trial, q)
        err = np.where(better, err_t, err)
        ev = _select(better, ev_t, ev)
        damping = np.where(better, damping * 0.1, np.maximum(damping * 10.0, 1e-3))
        iterations = iterations + active
        active = active & (err > tol) & (damping < 1e6)
    status = np.full(batch, Status.CONVERGED, dtype=int)
    stalled = (err > tol) & (damping >= 1e6)
    status[err > tol] = Status.MAX_ITER
    status[stalled] = Status.NO_ASSEMBLY
    resid = loop_residual_norms(mech, ev.r)
    worst = resid.argmax(axis=-1) if mech.n_loops else np.zeros(batch, dtype=int)
    return ConfigurationResult(q, status, resid, iterations, condition_number(ev.J[..., passive]), worst)


def _residual_scale(mech: CompiledMechanism) -> np.ndarray:
    """Per-component divisor making position residuals relative to the mechanism size."""
    L = length_scale(mech)
    per_loop = np.array([1 / L, 1 / L, 1.0]) if mech.planar else np.array([1 / L] * 3 + [1.0] * 3)
    return np.tile(per_loop, mech.n_loops)


def _err(r: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.abs(r * scale).max(axis=-1, initial=0.0)


def _select(mask: np.ndarray, a: ConstraintEval, b: ConstraintEval) -> ConstraintEval:
    """Per batch element: a where mask else b (residual and Jacobian only)."""
    return ConstraintEval(np.where(mask[..., None], a.r, b.r), np.where(mask[..., None, None], a.J, b.J), a.kin)


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
