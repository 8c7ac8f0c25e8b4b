"""Velocity and acceleration analysis, batched over configurations.

Given an assembled configuration ``q`` (..., n_q), actuated rates and accelerations give every
joint rate and acceleration (from the derivatives of the loop-closure constraints), and then
the spatial twist/acceleration of every link and the velocity/acceleration of any frame point.

Spatial twists in world coordinates ``V = (v, w)``, their time derivatives ``A = (a, alpha)``;
a material point at world position ``p`` has velocity ``v + w x p`` and acceleration
``a + alpha x p + w x (v + w x p)``. A joint axis twist ``S`` carried by a body with twist
``V`` changes as ``dS/dt = ad_V S``, which gives the analytic acceleration bias (no finite
differences).
"""

from __future__ import annotations

import numpy as np

from .forward import TreeKinematics, tree_kinematics
from .loop_closure import constraints, loop_frames, passive_indices, tangent_map
from .mechanism import CompiledMechanism


def ad(V: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Lie bracket [V, S] of spatial twists (..., 6) ordered (v, w)."""
    v, w = V[..., :3], V[..., 3:]
    vs, ws = S[..., :3], S[..., 3:]
    return np.concatenate([np.cross(w, vs) + np.cross(v, ws), np.cross(w, ws)], axis=-1)


def joint_rates(mech: CompiledMechanism, q: np.ndarray, qd_actuated: np.ndarray) -> np.ndarray:
    """All joint rates qd (..., n_q) from actuated rates (..., n_act) at assembled ``q``."""
    N = tangent_map(mech, constraints(mech, q).J)
    return np.einsum("...ij,...j->...i", N, qd_actuated)


def closest_consistent_rates(mech: CompiledMechanism, q: np.ndarray, prescribed: dict[int, float],
                             requested: dict[int, float]) -> np.ndarray:
    """Joint rates (n_q,) SI at the assembled ``q`` (n_q,) that satisfy the loop closures
    (``J qd = 0``) and the ``prescribed`` rates exactly ({variable index: rate}, e.g. motion
    drivers), and come as close as possible (least squares) to the ``requested`` ones; motions
    that neither fixes get the minimum-norm rates (zero for an untouched free joint). The
    caller compares the result with ``requested`` to tell whether they had to be projected."""
    n = mech.n_q
    rows = [constraints(mech, q).J.reshape(-1, n)] if mech.n_constraints else []
    rhs = [np.zeros(len(rows[0]))] if rows else []
    for i, rate in prescribed.items():
        rows.append(np.eye(n)[[i]])
        rhs.append(np.array([rate]))
    C = np.vstack(rows) if rows else np.zeros((0, n))
    c = np.concatenate(rhs) if rhs else np.zeros(0)
    qd_p = np.linalg.lstsq(C, c, rcond=None)[0] if len(C) else np.zeros(n)
    _, s, Vt = np.linalg.svd(C) if len(C) else (None, np.zeros(0), np.eye(n))
    rank = int(np.sum(s > 1e-10 * max(s.max(initial=0.0), 1e-300)))
    Z = Vt[rank:].T  # basis of the rates the constraints allow
    T = np.array([i for i in requested if i not in prescribed], dtype=int)
    target = np.array([requested[i] for i in T], dtype=float)
    y = np.linalg.lstsq(Z[T], target - qd_p[T], rcond=1e-10)[0]
    return qd_p + Z @ y


def link_twists(mech: CompiledMechanism, kin: TreeKinematics, qd: np.ndarray) -> np.ndarray:
    """Spatial twist (..., n_links, 6) of every link."""
    return np.einsum("...lij,...j->...li", kin.J_link, qd)


def _axis_twists_and_rates(mech, kin, V_link, qd):
    """For each variable: its unit twist S (..., n_q, 6), the twist of the body carrying its
    axis (joint parent plus the joint's preceding variables) and S*qd."""
    Sqd = kin.S * qd[..., :, None]
    carrier = V_link[..., mech.joint_parent[mech.q_joint], :].copy()
    for j in range(mech.n_joints):
        s, n = mech.joint_q_start[j], mech.joint_q_count[j]
        for k in range(s + 1, s + n):
            carrier[..., k, :] = carrier[..., k - 1, :] + Sqd[..., k - 1, :]
    return Sqd, carrier


def link_accelerations(mech: CompiledMechanism, kin: TreeKinematics, qd: np.ndarray, qdd: np.ndarray):
    """(V, A): spatial twists and their derivatives (..., n_links, 6) of every link; also the
    per-variable axis derivative terms used by the loop constraints."""
    V = link_twists(mech, kin, qd)
    Sqd, carrier = _axis_twists_and_rates(mech, kin, V, qd)
    term = ad(carrier, Sqd) + kin.S * qdd[..., :, None]  # d/dt (S_k qd_k)
    A = np.zeros_like(V)
    for v in mech.link_order[1:]:
        u, j = mech.link_tree_parent[v], mech.link_tree_joint[v]
        s, n = mech.joint_q_start[j], mech.joint_q_count[j]
        sign = 1.0 if mech.link_tree_forward[v] else -1.0
        A[..., v, :] = A[..., u, :] + sign * term[..., s:s + n, :].sum(axis=-2)
    return V, A, term


def point_velocity(V: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Velocity (..., 3) of the point at world position p (..., 3) of a body with twist V."""
    return V[..., :3] + np.cross(V[..., 3:], p)


def point_acceleration(V: np.ndarray, A: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Acceleration (..., 3) of the material point at world position p."""
    return A[..., :3] + np.cross(A[..., 3:], p) + np.cross(V[..., 3:], point_velocity(V, p))


def constraint_bias(mech: CompiledMechanism, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """b (..., n_c) with  d2c/dt2 = J qdd + b  at a consistent (q, qd) (constraints and their
    rates satisfied)."""
    kin = tree_kinematics(mech, q)
    V, A, term = link_accelerations(mech, kin, qd, np.zeros_like(qd))
    return _loop_second_derivative(mech, kin, V, A, term, qd)


def _loop_second_derivative(mech, kin, V, A, term, qd) -> np.ndarray:
    batch = q_batch = V.shape[:-2]
    if mech.n_loops == 0:
        return np.zeros(q_batch + (0,))
    k = mech.loop_joint
    T_A, T_B = loop_frames(mech, kin)
    par, chi = mech.joint_parent[k], mech.joint_child[k]
    V_A, A_A = V[..., par, :].copy(), A[..., par, :].copy()
    Sqd = kin.S * qd[..., :, None]
    for li, j in enumerate(k):
        s, n = mech.joint_q_start[j], mech.joint_q_count[j]
        V_A[..., li, :] += Sqd[..., s:s + n, :].sum(axis=-2)
        A_A[..., li, :] += term[..., s:s + n, :].sum(axis=-2)
    V_B, A_B = V[..., chi, :], A[..., chi, :]
    acc = point_acceleration(V_B, A_B, T_B[..., :3, 3]) - point_acceleration(V_A, A_A, T_A[..., :3, 3])
    dalpha = A_B[..., 3:] - A_A[..., 3:]
    if mech.planar:
        rows = np.concatenate([acc[..., :2], dalpha[..., 2:3]], axis=-1)
    else:
        rows = np.concatenate([acc, np.einsum("...ji,...j->...i", T_B[..., :3, :3], dalpha)], axis=-1)
    return rows.reshape(batch + (mech.n_constraints,))


def joint_accelerations(mech: CompiledMechanism, q: np.ndarray, qd: np.ndarray,
                        qdd_actuated: np.ndarray) -> np.ndarray:
    """All joint accelerations qdd (..., n_q): J qdd = -b with the actuated ones given."""
    J = constraints(mech, q).J
    b = constraint_bias(mech, q, qd)
    qdd = np.zeros(np.shape(qd))
    qdd[..., mech.q_actuated] = qdd_actuated
    passive = passive_indices(mech)
    if len(passive) and mech.n_constraints:
        rhs = -(b + np.einsum("...ij,...j->...i", J[..., mech.q_actuated], qdd_actuated))
        qdd[..., passive] = np.einsum("...ij,...j->...i", np.linalg.pinv(J[..., passive], rcond=1e-13), rhs)
    return qdd


def frame_motion(mech: CompiledMechanism, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray | None = None):
    """Linear velocity (..., n_frames, 3), angular velocity (..., n_frames, 3) and, with qdd,
    linear acceleration (..., n_frames, 3) of every frame origin, world frame."""
    kin = tree_kinematics(mech, q)
    T_f = kin.T_world_link[..., mech.frame_link, :, :] @ mech.T_link_frame
    p = T_f[..., :3, 3]
    if qdd is None:
        V = link_twists(mech, kin, qd)[..., mech.frame_link, :]
        return point_velocity(V, p), V[..., 3:], None
    V, A, _ = link_accelerations(mech, kin, qd, qdd)
    Vf, Af = V[..., mech.frame_link, :], A[..., mech.frame_link, :]
    return point_velocity(Vf, p), Vf[..., 3:], point_acceleration(Vf, Af, p)


__all__ = ["ad", "joint_rates", "joint_accelerations", "constraint_bias", "frame_motion", "link_twists",
           "link_accelerations", "point_velocity", "point_acceleration"]
