"""Forward kinematics over the spanning tree, batched over leading dimensions of ``q``.

``q`` has shape ``(..., n_q)`` (SI: rad, m). Poses are 4x4 world-frame transforms; twists are
*spatial* twists in world coordinates ordered ``(v, w)``: the velocity of a material point at
world position ``x`` is ``v + w x x``. With spatial twists, the twist of a tree child is its
parent's plus ``sum_k S_k dq_k`` over the connecting joint's variables (minus when the joint is
traversed child -> parent).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import transforms as tf
from .mechanism import CompiledMechanism


@dataclass(frozen=True)
class TreeKinematics:
    """Poses of a configuration batch and, optionally, the link-twist Jacobians.

    T_world_link: (..., n_links, 4, 4) m
    T_world_axis: (..., n_q, 4, 4) frame of each variable's axis (joint frame after the
        preceding variables of the same joint), on the joint-parent side
    S: (..., n_q, 6) world spatial unit twist of each variable (v, w)
    J_link: (..., n_links, 6, n_q) spatial twist of each link per unit joint rate (or None)
    M: (..., n_joints, 4, 4) joint motions (child joint frame in parent joint frame)
    """

    T_world_link: np.ndarray
    T_world_axis: np.ndarray
    S: np.ndarray
    J_link: np.ndarray | None
    M: np.ndarray


def joint_motions(mech: CompiledMechanism, q: np.ndarray):
    """Per joint: motion ``M_j`` (..., n_joints, 4, 4) and the partial products before each
    variable ``P_k`` (..., n_q, 4, 4) so that ``M_j = P_last @ E_last``."""
    q = np.asarray(q, dtype=float)
    batch = q.shape[:-1]
    E = tf.elementary_motion(mech.q_axis, mech.q_is_rotation, q)  # (..., n_q, 4, 4)
    M = np.broadcast_to(np.eye(4), batch + (mech.n_joints, 4, 4)).copy()
    P = np.empty(batch + (mech.n_q, 4, 4))
    for j in range(mech.n_joints):
        s, n = mech.joint_q_start[j], mech.joint_q_count[j]
        acc = np.broadcast_to(np.eye(4), batch + (4, 4))
        for k in range(s, s + n):
            P[..., k, :, :] = acc
            acc = acc @ E[..., k, :, :]
        M[..., j, :, :] = acc
    return M, P


def tree_kinematics(mech: CompiledMechanism, q: np.ndarray, jacobian: bool = True) -> TreeKinematics:
    """Link poses (and link twist Jacobians) for joint variables ``q`` (..., n_q)."""
    q = np.asarray(q, dtype=float)
    batch = q.shape[:-1]
    M, P = joint_motions(mech, q)
    T = np.empty(batch + (mech.n_links, 4, 4))
    T[..., 0, :, :] = np.eye(4)
    T_axis = np.empty(batch + (mech.n_q, 4, 4))
    J = np.zeros(batch + (mech.n_links, 6, mech.n_q)) if jacobian else None
    Tc_inv = tf.inverse_transform(mech.T_child_joint)
    done = np.zeros(mech.n_joints, dtype=bool)
    for v in mech.link_order[1:]:
        u, j = mech.link_tree_parent[v], mech.link_tree_joint[v]
        if mech.link_tree_forward[v]:
            T_jp = T[..., u, :, :] @ mech.T_parent_joint[j]  # joint frame on the joint parent
            T[..., v, :, :] = T_jp @ M[..., j, :, :] @ Tc_inv[j]
        else:
            T_jc = T[..., u, :, :] @ mech.T_child_joint[j]  # joint frame on the joint child
            T_jp = T_jc @ tf.inverse_transform(M[..., j, :, :])
            T[..., v, :, :] = T_jp @ tf.inverse_transform(mech.T_parent_joint[j])
        _axes(mech, j, T_jp, P, T_axis)
        done[j] = True
        if jacobian:
            J[..., v, :, :] = J[..., u, :, :]
            s, n = mech.joint_q_start[j], mech.joint_q_count[j]
            sign = 1.0 if mech.link_tree_forward[v] else -1.0
            J[..., v, :, s:s + n] += sign * _unit_twists(mech, T_axis, s, n)
    for j in np.flatnonzero(~done):  # loop-closing joints: axes on their parent side
        T_jp = T[..., mech.joint_parent[j], :, :] @ mech.T_parent_joint[j]
        _axes(mech, j, T_jp, P, T_axis)
    S = np.swapaxes(_unit_twists(mech, T_axis, 0, mech.n_q), -1, -2)
    return TreeKinematics(T, T_axis, S, J, M)


def _axes(mech, j, T_jp, P, T_axis) -> None:
    s, n = mech.joint_q_start[j], mech.joint_q_count[j]
    for k in range(s, s + n):
        T_axis[..., k, :, :] = T_jp @ P[..., k, :, :]


def _unit_twists(mech: CompiledMechanism, T_axis: np.ndarray, s: int, n: int) -> np.ndarray:
    """World spatial twists (..., 6, n) of variables s..s+n-1 from their axis frames."""
    R = T_axis[..., s:s + n, :3, :3]
    p = T_axis[..., s:s + n, :3, 3]
    a = np.einsum("...ij,...j->...i", R, mech.q_axis[s:s + n])  # (..., n, 3)
    rot = mech.q_is_rotation[s:s + n][:, None]
    w = np.where(rot, a, 0.0)
    v = np.where(rot, np.cross(p, a), a)  # rotation: v = p x w; translation: v = axis
    return np.swapaxes(np.concatenate([v, w], axis=-1), -1, -2)


def link_poses(mech: CompiledMechanism, q: np.ndarray) -> np.ndarray:
    """T_world_link (..., n_links, 4, 4) for joint variables q (..., n_q)."""
    return tree_kinematics(mech, q, jacobian=False).T_world_link


def frame_poses(mech: CompiledMechanism, T_world_link: np.ndarray) -> np.ndarray:
    """T_world_frame (..., n_frames, 4, 4) of every named frame."""
    return T_world_link[..., mech.frame_link, :, :] @ mech.T_link_frame


def effector_pose(mech: CompiledMechanism, T_world_link: np.ndarray) -> np.ndarray:
    """T_world_tool (..., 4, 4): effector frame composed with the tool frame."""
    f = mech.effector_frame
    return T_world_link[..., mech.frame_link[f], :, :] @ mech.T_link_frame[f] @ mech.T_frame_tool


def point_velocity(twist: np.ndarray, p_world: np.ndarray) -> np.ndarray:
    """Velocity (..., 3) of the material point at world position p of a body with spatial twist
    (..., 6) = (v, w): v + w x p."""
    return twist[..., :3] + np.cross(twist[..., 3:], p_world)
