"""Forward kinematics over the spanning tree, batched over leading dimensions of ``q``.

``q`` has shape ``(..., n_q)`` (SI: rad, m). Poses are 4x4 world-frame transforms; twists are
*spatial* twists in world coordinates ordered ``(v, w)``: the velocity of a material point at
world position ``x`` is ``v + w x x``. With spatial twists, the twist of a tree child is its
parent's plus ``sum_k S_k dq_k`` over the connecting joint's variables (minus when the joint is
traversed child -> parent).

How it is computed (one implementation for every tree; see benchmarks/README.md for timings)
-------------------------------------------------------------------------------------------
* An elementary motion is linear in the features ``F(q) = (cos q, sin q, q, 1)``: Rodrigues'
  ``R = I + sin q K + (1 - cos q) K^2`` for a rotation about the unit axis ``a`` (``K = hat(a)``),
  ``p = q a`` for a translation. So ``E_k(q) = sum_f F_f(q) B_kf`` with four constant 4x4
  patterns per variable, and for a one-variable tree joint the whole link step
  ``T_parent_joint @ E(q) @ inv(T_child_joint)`` is ``F(q)`` times four *pre-composed* constant
  patterns. All of these are evaluated for the whole batch by one small matrix product (no
  per-configuration Rodrigues, no 4x4 products with constants inside the loop).
* One batched 4x4 product per link then chains the tree (``T_child = T_parent @ G_joint``);
  multi-variable joints (universal, spherical, planar, cylindrical) take the general route
  through their partial products.
* Arrays are stored link-major internally (each link's ``(batch, 4, 4)`` block contiguous) and
  returned as views with the batch dimensions first, so the documented shapes are unchanged.
* ``jacobian_links`` restricts the link twist Jacobians to the links a caller needs (e.g. only
  the effector link): the full ``(..., n_links, 6, n_q)`` array is the largest output by far.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
    J_link: (..., n_links, 6, n_q) spatial twist of each link per unit joint rate (or None);
        with ``tree_kinematics(..., jacobian_links=links)`` (..., len(links), 6, n_q), row ``i``
        belonging to link ``links[i]``
    M: (..., n_joints, 4, 4) joint motions (child joint frame in parent joint frame)

    The arrays are views of link-major storage and may share memory with each other (e.g. the
    axis frames of a DH chain are its link poses): treat them as read-only.
    """

    T_world_link: np.ndarray
    T_world_axis: np.ndarray
    S: np.ndarray
    J_link: np.ndarray | None
    M: np.ndarray


# --- per-mechanism constants (built once per compiled mechanism) --------------------------------
def _motion_basis(axis: np.ndarray, is_rotation: bool) -> np.ndarray:
    """B (4, 4, 4) with ``E(q) = sum_f F_f(q) B[f]``, ``F(q) = (cos q, sin q, q, 1)``."""
    B = np.zeros((4, 4, 4))
    if is_rotation:
        ax, ay, az = (float(a) for a in axis)
        K = np.array([[0.0, -az, ay], [az, 0.0, -ax], [-ay, ax, 0.0]])  # hat(axis), without the batched helper
        K2 = K @ K
        B[0, :3, :3] = -K2
        B[1, :3, :3] = K
        B[3, :3, :3] = np.eye(3) + K2
        B[3, 3, 3] = 1.0
    else:
        B[2, :3, 3] = axis
        B[3] = np.eye(4)
    return B


def _is_identity(T: np.ndarray) -> bool:
    return bool(np.array_equal(T, np.eye(4)))


def tree_steps(mech: CompiledMechanism):
    """The spanning tree in order, parents before children: ``(v, u, j, forward)`` for every
    link ``v`` but the base, hung from its tree parent ``u`` by joint ``j``; ``forward`` when
    ``u`` is the joint's parent (``T_v = T_u Tp E(q) Tc^-1``), else inverted
    (``T_v = T_u Tc E(-q) Tp^-1``)."""
    for v in (int(x) for x in mech.link_order[1:]):
        yield v, int(mech.link_tree_parent[v]), int(mech.link_tree_joint[v]), bool(mech.link_tree_forward[v])


class _Plan:
    """Constant data of the tree pass of one mechanism (see module docstring)."""

    def __init__(self, mech: CompiledMechanism):
        n_q, n_j, n_l = mech.n_q, mech.n_joints, mech.n_links
        self.n_q, self.n_joints, self.n_links = n_q, n_j, n_l
        basis = np.stack([_motion_basis(mech.q_axis[k], bool(mech.q_is_rotation[k])) for k in range(n_q)]) \
            if n_q else np.zeros((0, 4, 4, 4))
        self.basis = basis.reshape(n_q, 4, 16)
        inv_basis = basis.copy()  # E(-q): features (cos q, -sin q, -q, 1)
        inv_basis[:, 1:3] *= -1.0
        self.inv_basis = inv_basis.reshape(n_q, 4, 16)
        self.Tp = np.array(mech.T_parent_joint, dtype=float).reshape(n_j, 4, 4)
        self.Tc = np.array(mech.T_child_joint, dtype=float).reshape(n_j, 4, 4)
        self.Tp_inv = tf.inverse_transform(self.Tp)
        self.Tc_inv = tf.inverse_transform(self.Tc)
        self.Tp_eye = [_is_identity(T) for T in self.Tp]
        self.Tc_eye = [_is_identity(T) for T in self.Tc]
        start = [int(s) for s in mech.joint_q_start]
        count = [int(c) for c in mech.joint_q_count]
        self.start, self.count = start, count

        # tree steps; one-variable joints get a pre-composed pattern
        # forward:  T_child = T_parent @ [Tp @ E(q) @ inv(Tc)]
        # inverted: T_child = T_parent @ [Tc @ E(-q) @ inv(Tp)]
        steps, g_var, g_pat = [], [], []
        path = np.zeros((n_l, n_q))
        in_tree = np.zeros(n_j, dtype=bool)
        for v, u, j, fwd in tree_steps(mech):
            s, n = start[j], count[j]
            in_tree[j] = True
            g = -1
            if n == 1:
                g = len(g_var)
                g_var.append(s)
                if fwd:
                    pat = self.Tp[j] @ basis[s] @ self.Tc_inv[j]
                else:
                    pat = self.Tc[j] @ inv_basis[s] @ self.Tp_inv[j]
                g_pat.append(pat.reshape(4, 16))
            steps.append((v, u, j, fwd, s, n, g))
            path[v] = path[u]
            path[v, s:s + n] += 1.0 if fwd else -1.0
        self.steps = steps
        self.g_var = np.array(g_var, dtype=int)
        self.g_pat = np.array(g_pat).reshape(len(g_var), 4, 16)
        self.loop_joints = [int(j) for j in np.flatnonzero(~in_tree)]
        self.joint_parent = [int(p) for p in mech.joint_parent]
        self.path = path
        self.path.setflags(write=False)

        # joint motions M: one-variable joints are their variable's E; others composed
        single = [j for j in range(n_j) if count[j] == 1]
        self.single_j = np.array(single, dtype=int)
        self.single_k = np.array([start[j] for j in single], dtype=int)
        self.M_is_E = len(single) == n_j and np.array_equal(self.single_k, np.arange(n_q))
        self.other_j = [j for j in range(n_j) if count[j] != 1]

        # unit twists
        self.axis = np.array(mech.q_axis, dtype=float).reshape(n_q, 3)
        self.rot = np.array(mech.q_is_rotation, dtype=bool).reshape(n_q)
        self.all_rot = bool(self.rot.all())
        self.rot_idx = np.flatnonzero(self.rot)
        self.tr_idx = np.flatnonzero(~self.rot)
        self.axis_origin = np.zeros((n_q, 4, 2))  # (axis, 0) and (0, 0, 0, 1) columns
        self.axis_origin[:, :3, 0] = self.axis
        self.axis_origin[:, 3, 1] = 1.0
        self.need_E = bool(self.other_j)

        # when every joint has one variable and its parent-side joint frame is the parent link
        # frame, the axis frames are link poses: T_axis = T[axis_link] (a slice when consecutive)
        self.axis_link = np.array([self.joint_parent[int(mech.q_joint[k])] for k in range(n_q)], dtype=int)
        self.axis_from_links = n_q > 0 and not self.other_j and all(self.Tp_eye)
        self.axis_link0 = int(self.axis_link[0]) if n_q else 0
        self.axis_slice = bool(np.array_equal(self.axis_link, np.arange(self.axis_link0, self.axis_link0 + n_q)))

        # effector: link frame composed with the tool frame
        f = mech.effector_frame
        self.eff_link = int(mech.frame_link[f]) if mech.n_frames else 0
        C = mech.T_link_frame[f] @ mech.T_frame_tool if mech.n_frames else np.eye(4)
        self.eff_C = None if _is_identity(C) else C


def _plan(mech: CompiledMechanism) -> _Plan:
    """The mechanism's forward-kinematics plan (built once, kept on the mechanism)."""
    return mech.derived("forward.plan", _Plan)


def link_path_signs(mech: CompiledMechanism) -> np.ndarray:
    """(n_links, n_q) read-only: +1 / -1 for the variables on the tree path from the base to each
    link (sign of their twist in the link's twist), 0 elsewhere; ``J_link[i] = S^T * path[i]``."""
    return _plan(mech).path


# --- the tree pass ------------------------------------------------------------------------------
#: largest rows * k * n of one BLAS product: OpenBLAS runs bigger ones on several threads, which
#: on a busy 2-core machine made them 5-40x slower (measured in benchmarks/README.md)
_BLAS_MNK = 1 << 18


def _mm(A: np.ndarray, B: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.matmul(A, B, out)`` for tall A (..., m, k) and small B (..., k, n), with A's rows
    split into blocks of at most _BLAS_MNK / (k n) rows (single-threaded BLAS calls)."""
    m, k, n = A.shape[-2], A.shape[-1], B.shape[-1]
    rows = max(1, _BLAS_MNK // (k * n))
    if m <= rows:
        return np.matmul(A, B, out=out)
    if out is None:
        out = np.empty(np.broadcast_shapes(A.shape[:-2], B.shape[:-2]) + (m, n))
    for s in range(0, m, rows):
        np.matmul(A[..., s:s + rows, :], B, out=out[..., s:s + rows, :])
    return out


def _rmul(X: np.ndarray, C: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """X (nb, 4, 4) @ constant C (4, 4) as one matrix product (nb * 4, 4) @ (4, 4)."""
    nb = X.shape[0]
    X2 = np.ascontiguousarray(X).reshape(nb * 4, 4)
    if out is None:
        return _mm(X2, C).reshape(nb, 4, 4)
    _mm(X2, C, out=out.reshape(nb * 4, 4))
    return out


def _features(q2: np.ndarray) -> np.ndarray:
    """F (n_q, nb, 4) = (cos q, sin q, q, 1) of q2 (nb, n_q), as a view of a (n_q, 4, nb) array
    (each feature row contiguous; matrix products read it in place)."""
    qT = q2.T
    F = np.empty((qT.shape[0], 4, qT.shape[1]))
    np.cos(qT, out=F[:, 0])
    np.sin(qT, out=F[:, 1])
    F[:, 2] = qT
    F[:, 3] = 1.0
    return F.transpose(0, 2, 1)


def _pass(mech: CompiledMechanism, q: np.ndarray, axes: bool, jac_links):
    """The tree pass on q (..., n_q). Returns link-major arrays
    (T (n_links, nb, 4, 4), T_axis (n_q, nb, 4, 4) | None, S (n_q, nb, 6) | None,
    J (nb, n_sel, 6, n_q) | None, M (n_joints, nb, 4, 4) | None) and the batch shape."""
    p = _plan(mech)
    q = np.asarray(q, dtype=float)
    if q.shape[-1:] != (p.n_q,):
        raise ValueError(f"q must have shape (..., {p.n_q}), got {q.shape}")
    batch = q.shape[:-1]
    nb = math.prod(batch)
    F = _features(q.reshape(nb, p.n_q))
    E = _mm(F, p.basis).reshape(p.n_q, nb, 4, 4) if (axes or p.need_E) else None

    T = np.empty((p.n_links, nb, 4, 4))
    T[0] = np.eye(4)
    T_axis = None
    if axes and not p.axis_from_links:
        T_axis = np.empty((p.n_q, nb, 4, 4))
    for v, u, j, fwd, s, n, g in p.steps:
        if g >= 0:  # one-variable joint: T_v = T_u @ G, G = pre-composed pattern @ F
            if u == 0:
                _mm(F[s], p.g_pat[g], out=T[v].reshape(nb, 16))
            else:
                np.matmul(T[u], _mm(F[s], p.g_pat[g]).reshape(nb, 4, 4), out=T[v])
            if T_axis is not None:  # joint frame on the joint-parent side
                if fwd:
                    if u == 0:
                        T_axis[s] = p.Tp[j]
                    elif p.Tp_eye[j]:
                        T_axis[s] = T[u]
                    else:
                        _rmul(T[u], p.Tp[j], out=T_axis[s])
                else:  # T_v = T_jp @ inv(Tp)  =>  T_jp = T_v @ Tp
                    _rmul(T[v], p.Tp[j], out=T_axis[s])
            continue
        Tu = np.broadcast_to(np.eye(4), (nb, 4, 4)) if u == 0 else T[u]
        if fwd:
            T_jp = _rmul(Tu, p.Tp[j])
        else:
            acc = _rmul(Tu, p.Tc[j])
            for k in range(s + n - 1, s - 1, -1):
                acc = acc @ tf.inverse_transform(E[k])
            T_jp = acc
        acc = T_jp
        for k in range(s, s + n):
            if T_axis is not None:
                T_axis[k] = acc
            acc = acc @ E[k]
        if fwd:
            _rmul(acc, p.Tc_inv[j], out=T[v])
        else:
            _rmul(T_jp, p.Tp_inv[j], out=T[v])
    if axes:
        if p.axis_from_links:  # every variable's axis frame is its joint parent's link frame
            T_axis = T[p.axis_link0:p.axis_link0 + p.n_q] if p.axis_slice else T[p.axis_link]
        else:
            for j in p.loop_joints:  # loop-closing joints: axes on their parent side
                s, n = p.start[j], p.count[j]
                par = p.joint_parent[j]
                acc = np.broadcast_to(p.Tp[j], (nb, 4, 4)) if par == 0 else _rmul(T[par], p.Tp[j])
                for k in range(s, s + n):
                    T_axis[k] = acc
                    if k + 1 < s + n:
                        acc = acc @ E[k]

    S = J = M = None
    if axes:
        S = _unit_twists(p, T_axis)
        if jac_links is not None:
            sel = p.path if jac_links is True else p.path[np.asarray(jac_links, dtype=int)]
            J = np.transpose(S, (1, 2, 0))[:, None, :, :] * sel[None, :, None, :]
        M = _joint_motions(p, E, nb)
    return T, T_axis, S, J, M, batch


def _unit_twists(p: _Plan, T_axis: np.ndarray) -> np.ndarray:
    """World spatial unit twists (n_q, nb, 6) from the axis frames (n_q, nb, 4, 4): rotation
    ``(o x a, a)``, translation ``(a, 0)`` with ``a`` the world axis, ``o`` the frame origin."""
    n_q, nb = T_axis.shape[:2]
    # one product per variable gives both the world axis R @ axis and the origin T @ e4
    ao = _mm(T_axis.reshape(n_q, nb * 4, 4), p.axis_origin).reshape(n_q, nb, 4, 2)
    a, o = ao[..., :3, 0], ao[..., :3, 1]
    S = np.empty((n_q, nb, 6))
    if p.all_rot:
        _cross(o, a, S[..., :3])
        S[..., 3:] = a
    else:
        r, t = p.rot_idx, p.tr_idx
        S[r, :, :3] = _cross(o[r], a[r])
        S[r, :, 3:] = a[r]
        S[t, :, :3] = a[t]
        S[t, :, 3:] = 0.0
    return S


def _cross(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    if out is None:
        out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    np.subtract(a1 * b2, a2 * b1, out=out[..., 0])
    np.subtract(a2 * b0, a0 * b2, out=out[..., 1])
    np.subtract(a0 * b1, a1 * b0, out=out[..., 2])
    return out


def _joint_motions(p: _Plan, E: np.ndarray, nb: int) -> np.ndarray:
    """M (n_joints, nb, 4, 4) from the elementary motions E (n_q, nb, 4, 4)."""
    if p.M_is_E:
        return E
    M = np.empty((p.n_joints, nb, 4, 4))
    if len(p.single_j):
        M[p.single_j] = E[p.single_k]
    for j in p.other_j:
        s, n = p.start[j], p.count[j]
        acc = np.broadcast_to(np.eye(4), (nb, 4, 4))
        for k in range(s, s + n):
            acc = acc @ E[k]
        M[j] = acc
    return M


def _batch_first(A: np.ndarray, batch: tuple) -> np.ndarray:
    """Link-major (m, nb, ...) -> (*batch, m, ...) view."""
    return np.moveaxis(A.reshape((A.shape[0],) + batch + A.shape[2:]), 0, len(batch))


def joint_motions(mech: CompiledMechanism, q: np.ndarray):
    """Per joint: motion ``M_j`` (..., n_joints, 4, 4) and the partial products before each
    variable ``P_k`` (..., n_q, 4, 4) so that ``M_j = P_last @ E_last``."""
    p = _plan(mech)
    q = np.asarray(q, dtype=float)
    batch = q.shape[:-1]
    nb = math.prod(batch)
    E = _mm(_features(q.reshape(nb, p.n_q)), p.basis).reshape(p.n_q, nb, 4, 4)
    M = _joint_motions(p, E, nb)
    P = np.empty((p.n_q, nb, 4, 4))
    for j in range(p.n_joints):
        acc = np.broadcast_to(np.eye(4), (nb, 4, 4))
        for k in range(p.start[j], p.start[j] + p.count[j]):
            P[k] = acc
            acc = acc @ E[k]
    return _batch_first(M, batch), _batch_first(P, batch)


def tree_kinematics(mech: CompiledMechanism, q: np.ndarray, jacobian: bool = True,
                    jacobian_links: Sequence[int] | None = None) -> TreeKinematics:
    """Link poses (and link twist Jacobians) for joint variables ``q`` (..., n_q).

    ``jacobian_links``: compute ``J_link`` only for these link indices, in this order
    ((..., len(jacobian_links), 6, n_q)); default all links. Ignored when ``jacobian`` is False.
    """
    links = (True if jacobian_links is None else jacobian_links) if jacobian else None
    T, T_axis, S, J, M, batch = _pass(mech, q, True, links)
    if J is not None:
        J = J.reshape(batch + J.shape[1:])
    return TreeKinematics(_batch_first(T, batch), _batch_first(T_axis, batch), _batch_first(S, batch), J,
                          _batch_first(M, batch))


def link_poses(mech: CompiledMechanism, q: np.ndarray) -> np.ndarray:
    """T_world_link (..., n_links, 4, 4) for joint variables q (..., n_q)."""
    T, _, _, _, _, batch = _pass(mech, q, False, None)
    return _batch_first(T, batch)


def frame_poses(mech: CompiledMechanism, T_world_link: np.ndarray) -> np.ndarray:
    """T_world_frame (..., n_frames, 4, 4) of every named frame."""
    return T_world_link[..., mech.frame_link, :, :] @ mech.T_link_frame


def frame_positions(mech: CompiledMechanism, T_world_link: np.ndarray) -> np.ndarray:
    """p_world (..., n_frames, 3) m: origin of every named frame, ``t_link + R_link p`` column
    by column, frame by frame (elementwise over the batch: no (..., n_frames, 4, 4) products
    or arrays; 3600 four-bar configurations ~1.2-1.6 ms against ~5 ms for frame_poses; one
    gather of all frames' link poses measured slower, its (..., n_frames, 3, 4) copy costs)."""
    p = mech.T_link_frame[:, :3, 3]
    out = np.empty(T_world_link.shape[:-3] + (mech.n_frames, 3))
    for f in range(mech.n_frames):
        T = T_world_link[..., int(mech.frame_link[f]), :3, :]
        out[..., f, :] = T[..., 3] + T[..., 0] * p[f, 0] + T[..., 1] * p[f, 1] + T[..., 2] * p[f, 2]
    return out


# --- planar mechanisms: the tree in SE(2) ---------------------------------------------------------
# A planar pose is (x, y, c, s): origin and cos / sin of the angle about z. The compiled sweep
# kernel (sweep_kernel.py, model built in sweep.py) runs the tree pass on these; the test that
# a mechanism is planar in this sense and its tree steps are written once, here, and so is the
# elementwise pass on them (planar_link_poses / planar_frame_positions), which the result tables
# of planar mechanisms (analyses/solve.py) and the variants of a study (variant_sweep.py) use.
# link_poses keeps the one general 4x4 pass: building 4x4 outputs from planar poses ate the gain.
@dataclass(frozen=True)
class PlanarStep:
    """One tree step ``T_v = T_u @ before @ E(+-q[s:s+n]) @ after`` in planar form:
    before / after (4,) (x, y, c, s) constant frames (``T_parent_joint`` and
    ``inv(T_child_joint)`` for a forward joint; ``T_child_joint`` and ``inv(T_parent_joint)``
    when the tree runs child -> parent, ``forward`` False, variables then applied negated in
    reverse order)."""

    v: int
    u: int
    s: int
    n: int
    forward: bool
    before: tuple
    after: tuple
    #: the tree joint of the step
    joint: int = -1


_PLANAR_TOL = 1e-12


def planar_frames(T: np.ndarray) -> np.ndarray | None:
    """(..., 4) (x, y, c, s) of 4x4 transforms (..., 4, 4) that are planar poses (rotation about
    z, no z offset, to 1e-12), else None."""
    T = np.asarray(T, dtype=float)
    R = T[..., :3, :3]
    if T.size and (np.abs(T[..., 2, 3]).max() > _PLANAR_TOL or np.abs(R[..., 2, :2]).max() > _PLANAR_TOL
                   or np.abs(R[..., :2, 2]).max() > _PLANAR_TOL or np.abs(R[..., 2, 2] - 1).max() > _PLANAR_TOL):
        return None
    return np.stack([T[..., 0, 3], T[..., 1, 3], T[..., 0, 0], T[..., 1, 0]], axis=-1)


def planar_axes(mech: CompiledMechanism) -> np.ndarray | None:
    """(n_q, 2): (sign of the z axis, 0) for a rotation, the in-plane unit axis for a translation
    (joint-frame coordinates); None when an axis does not fit a planar mechanism."""
    ax = np.zeros((mech.n_q, 2))
    for k, a in enumerate(mech.q_axis):
        if mech.q_is_rotation[k]:
            if abs(abs(a[2]) - 1) > _PLANAR_TOL or np.abs(a[:2]).max() > _PLANAR_TOL:
                return None
            ax[k, 0] = np.sign(a[2])
        else:
            if abs(a[2]) > _PLANAR_TOL:
                return None
            ax[k] = a[:2]
    return ax


def planar_steps(mech: CompiledMechanism):
    """(steps (PlanarStep, ...), axes (n_q, 2)) when every joint frame and axis of a planar
    mechanism is planar in SE(2), else None (built once, kept on the mechanism)."""
    return mech.derived("forward.planar_steps", _build_planar_steps)


def _build_planar_steps(mech: CompiledMechanism):
    out = None
    if mech.planar:
        fP, fC = planar_frames(mech.T_parent_joint), planar_frames(mech.T_child_joint)
        axes = planar_axes(mech)
        if fP is not None and fC is not None and axes is not None:
            fPi, fCi = planar_inverse(fP), planar_inverse(fC)
            steps = []
            for v, u, j, fwd in tree_steps(mech):
                before, after = (fP[j], fCi[j]) if fwd else (fC[j], fPi[j])
                steps.append(PlanarStep(v, u, int(mech.joint_q_start[j]), int(mech.joint_q_count[j]), fwd,
                                        tuple(float(t) for t in before), tuple(float(t) for t in after), j))
            out = (tuple(steps), axes)
    return out


def planar_inverse(F: np.ndarray) -> np.ndarray:
    """Inverses (..., 4) of planar poses F (..., 4) (x, y, c, s)."""
    x, y, c, s = F[..., 0], F[..., 1], F[..., 2], F[..., 3]
    return np.stack([-(c * x + s * y), s * x - c * y, c, -s], axis=-1)


# The elementwise planar pass. Components are numpy arrays over the batch or, for constants of
# the mechanism, Python floats; products and sums with a constant 0 or 1 are skipped, which
# leaves the same floating-point number (x * 1 == x, x + 0 * y == x up to the sign of zero), so
# a step whose joint frames sit at link origins or along a link's x axis costs only its motion.
# Measured at 3600 four-bar points (random q, medians of 200 calls, load 2.1): link poses
# 0.26 ms and all 9 frame origins 0.07 ms, against 0.48 + 0.76 ms for link_poses +
# frame_positions (4x4). A numba kernel of the same pass (one loop over points, all steps and
# frames per point; equal to this pass bit for bit) took 0.24-0.35 ms against this pass's
# 0.37-1.1 ms in the same processes at load 2.5: the pass is bound by its cos/sin (three per
# point; numpy's vectorised cos and sin of 3600 angles take 0.06 ms), which the kernel calls one
# at a time, so a kernel (and a JIT decision for it) does not earn its place.
_IDENTITY = (0.0, 0.0, 1.0, 0.0)  # (x, y, c, s) of the identity


def _mul(a, b):
    """a * b, exact shortcuts for a constant 0 or 1 (a Python float)."""
    if type(a) is float:
        if a == 0.0:
            return 0.0
        if a == 1.0:
            return b
    if type(b) is float:
        if b == 0.0:
            return 0.0
        if b == 1.0:
            return a
    return a * b


def _add(a, b, sign: float = 1.0):
    """a + sign * b, sign +1 or -1, exact shortcuts for a constant 0."""
    if type(b) is float and b == 0.0:
        return a
    if type(a) is float and a == 0.0:
        return b if sign > 0 else -b
    return a + b if sign > 0 else a - b


def _compose(a: tuple, b: tuple) -> tuple:
    """(x, y, c, s) poses a @ b, elementwise over the components' shapes (broadcast)."""
    x1, y1, c1, s1 = a
    x2, y2, c2, s2 = b
    return (_add(_add(x1, _mul(c1, x2)), _mul(s1, y2), -1.0), _add(_add(y1, _mul(s1, x2)), _mul(c1, y2)),
            _add(_mul(c1, c2), _mul(s1, s2), -1.0), _add(_mul(s1, c2), _mul(c1, s2)))


def _components(F) -> tuple:
    """(x, y, c, s) of constant frames: a tuple of floats, or arrays (..., 4) -> 4 arrays (...)."""
    if isinstance(F, tuple):
        return tuple(float(t) for t in F)
    return F[..., 0], F[..., 1], F[..., 2], F[..., 3]


def planar_link_poses(mech: CompiledMechanism, q: np.ndarray, joint_frames: tuple | None = None) -> np.ndarray:
    """World poses (x, y, c, s) (..., n_links, 4) of every link at q (..., n_q) SI (x, y in m;
    c, s the cosine and sine of the link's angle about z) of a mechanism with
    :func:`planar_steps` (else ValueError): the tree steps composed elementwise in SE(2), the
    same link poses as :func:`link_poses` to rounding (tests/test_planar_poses.py).

    ``joint_frames``: optional ``(fP, fC)`` (..., n_joints, 4) planar ``T_parent_joint`` /
    ``T_child_joint`` frames (x, y, c, s) of variants of the mechanism (a study), their leading
    dimensions broadcast against q's batch (e.g. fP (V, 1, n_joints, 4) with q (V, n, n_q)).

    A row whose variables on a link's tree path are not finite gives that link a NaN pose
    (as the 4x4 pass does, where NaN spreads through its matrix products).

    numpy elementwise, not a numba kernel: see the measurement above ``_mul``.
    """
    planar = planar_steps(mech)
    if planar is None:
        raise ValueError("planar_link_poses: the mechanism is not planar in SE(2) (use link_poses)")
    steps, axes = planar
    q = np.asarray(q, dtype=float)
    if q.shape[-1:] != (mech.n_q,):
        raise ValueError(f"q must have shape (..., {mech.n_q}), got {q.shape}")
    batch = q.shape[:-1]
    inv = None
    if joint_frames is not None:
        fP, fC = (np.asarray(f, dtype=float) for f in joint_frames)
        batch = np.broadcast_shapes(batch, fP.shape[:-2], fC.shape[:-2])
        inv = (planar_inverse(fP), planar_inverse(fC))
    out = np.empty((mech.n_links, 4) + batch)
    out[0] = np.array(_IDENTITY).reshape((4,) + (1,) * len(batch))
    poses: list[tuple | None] = [None] * mech.n_links
    poses[0] = _IDENTITY
    for st in steps:
        if inv is None:
            before, after = st.before, st.after
        else:
            j = st.joint
            before = (fP if st.forward else fC)[..., j, :]
            after = (inv[1] if st.forward else inv[0])[..., j, :]
        T = _compose(poses[st.u], _components(before))
        ks = range(st.s, st.s + st.n) if st.forward else range(st.s + st.n - 1, st.s - 1, -1)
        sign = 1.0 if st.forward else -1.0
        for k in ks:
            qk = q[..., k]
            if mech.q_is_rotation[k]:
                a = qk * (sign * axes[k, 0])
                T = _compose(T, (0.0, 0.0, np.cos(a), np.sin(a)))
            else:
                d = qk * sign
                T = _compose(T, (_mul(d, float(axes[k, 0])), _mul(d, float(axes[k, 1])), 1.0, 0.0))
        T = _compose(T, _components(after))
        for i in range(4):
            out[st.v, i] = T[i]
        poses[st.v] = tuple(out[st.v])
    finite = np.isfinite(q)
    if not finite.all():  # NaN poses where a variable on the link's path is not finite
        bad = (~finite).astype(float) @ (_plan(mech).path != 0).T  # (..., n_links) count
        bad = np.broadcast_to(np.moveaxis(bad > 0, -1, 0), (mech.n_links,) + batch)
        out[np.broadcast_to(bad[:, None], out.shape)] = np.nan
    return np.moveaxis(out, (0, 1), (-2, -1))



def planar_point(pose: tuple, px, py) -> tuple:
    """World (x, y) m of the point (px, py) m given in a link's frame, from the link's planar
    pose components ``(x, y, c, s)`` (:func:`planar_link_poses`; any broadcastable shapes):
    ``t + R p``, with exact shortcuts for a constant 0 or 1 (a Python float)."""
    x, y, c, s = pose
    return _add(_add(x, _mul(c, px)), _mul(s, py), -1.0), _add(_add(y, _mul(s, px)), _mul(c, py))


def planar_frame_positions(mech: CompiledMechanism, P: np.ndarray, frames: Sequence[int] | None = None,
                           T_link_frame: np.ndarray | None = None) -> np.ndarray:
    """World (x, y) (..., len(frames), 2) m of the origins of named frames (default all) from
    planar link poses P (..., n_links, 4) (:func:`planar_link_poses`): ``t_link + R_link p``.
    ``T_link_frame``: optional (..., n_frames, 4, 4) frames of variants, broadcast against P's
    batch (default the mechanism's)."""
    frames = range(mech.n_frames) if frames is None else frames
    batch = P.shape[:-2]
    if T_link_frame is not None:
        batch = np.broadcast_shapes(batch, T_link_frame.shape[:-3])
    out = np.empty((len(frames), 2) + batch)
    for i, f in enumerate(frames):
        f = int(f)
        link = P[..., int(mech.frame_link[f]), :]
        x, y, c, s = link[..., 0], link[..., 1], link[..., 2], link[..., 3]
        px: float | np.ndarray
        py: float | np.ndarray
        if T_link_frame is None:
            px, py = float(mech.T_link_frame[f, 0, 3]), float(mech.T_link_frame[f, 1, 3])
        else:
            px, py = T_link_frame[..., f, 0, 3], T_link_frame[..., f, 1, 3]
        out[i, 0], out[i, 1] = planar_point((x, y, c, s), px, py)
    return np.moveaxis(out, (0, 1), (-2, -1))


def planar_effector_pose(mech: CompiledMechanism, P: np.ndarray) -> np.ndarray | None:
    """(x, y, c, s) (..., 4) of the effector frame composed with the tool frame, from planar link
    poses P (..., n_links, 4); None when that constant frame is not a planar pose."""
    p = _plan(mech)
    C = planar_frames(p.eff_C) if p.eff_C is not None else np.array(_IDENTITY)
    if C is None:
        return None
    link = P[..., p.eff_link, :]
    T = _compose((link[..., 0], link[..., 1], link[..., 2], link[..., 3]), tuple(float(t) for t in C))
    out = np.empty((4,) + P.shape[:-2])
    for i in range(4):
        out[i] = T[i]
    return np.moveaxis(out, 0, -1)


def effector_pose(mech: CompiledMechanism, T_world_link: np.ndarray) -> np.ndarray:
    """T_world_tool (..., 4, 4): effector frame composed with the tool frame."""
    p = _plan(mech)
    T = T_world_link[..., p.eff_link, :, :]
    if p.eff_C is None:
        return np.array(T)
    if T.ndim == 2:
        return T @ p.eff_C
    return _rmul(T.reshape(-1, 4, 4), p.eff_C).reshape(T.shape)


def point_velocity(twist: np.ndarray, p_world: np.ndarray) -> np.ndarray:
    """Velocity (..., 3) of the material point at world position p of a body with spatial twist
    (..., 6) = (v, w): v + w x p."""
    return twist[..., :3] + np.cross(twist[..., 3:], p_world)
