"""Kernels: world positions on bodies, joint-frame geometry, joint variables and rates.

Conventions (world frame, SI): a body's generalized velocity is ``(v, w)``, CG velocity (m/s)
and angular velocity (rad/s). The gradient of a scalar ``s`` of the configuration is, per body,
``(dx, dtheta)`` with ``ds = dx . delta_x + dtheta . delta_theta`` for a CG displacement
``delta_x`` and a small world rotation ``delta_theta`` (``R <- exp(hat(delta_theta)) R``).
Body index -1 is the base: its points and directions are world coordinates.

Joint ``j`` has frame A on its parent and frame B on its child (see :mod:`.model`); its
motion is ``B = A M_j(q)``. :func:`joint_geometry` evaluates, once per configuration, the world
quantities every row, element and joint variable is built from (rows ``G_*`` of ``JW``).
"""

from __future__ import annotations

import math

from ..jit import maybe_njit
from ..mechanism import CYLINDRICAL, FIXED, PLANAR, PRISMATIC, REVOLUTE, SPHERICAL, UNIVERSAL
from .layout import (
    G_ARM_A,
    G_ARM_B,
    G_AXIS_A,
    G_NORMAL1_A,
    G_NORMAL1_B,
    G_NORMAL2_A,
    G_ORIGIN_A,
    G_ORIGIN_B,
    J_CHILD_BODY,
    J_CHILD_NORMAL1,
    J_CHILD_ORIGIN,
    J_PARENT_AXIS,
    J_PARENT_BODY,
    J_PARENT_NORMAL1,
    J_PARENT_NORMAL2,
    J_PARENT_ORIGIN,
    J_Q_COUNT,
    J_Q_START,
    J_TYPE,
)
from .linalg import add, band_lu_factor, band_lu_solve, cross, dot, matTvec, matvec, row3, scale, sub, wrap_angle

ZERO3 = (0.0, 0.0, 0.0)


@maybe_njit(refcount=False)
def point(body, r, pos, rot):
    """``(p, s)``: world position of the body point ``r`` (relative to the CG, body axes; world
    for the base) and its lever arm ``s = p - x_cg`` (zero for the base)."""
    if body < 0:
        return r, ZERO3
    s = matvec(rot[body], r)
    return add(row3(pos, body), s), s


@maybe_njit(refcount=False)
def direction(body, u, rot):
    """World direction of the body-axes vector ``u`` (world for the base)."""
    if body < 0:
        return u
    return matvec(rot[body], u)


@maybe_njit(refcount=False)
def point_velocity(body, s, vel, omg):
    """World velocity (m/s) of the body point with lever arm ``s`` (zero for the base)."""
    if body < 0:
        return ZERO3
    return add(row3(vel, body), cross(row3(omg, body), s))


# one copy, not one per k
@maybe_njit(signature="void(float64[:, :, ::1], int64, int64, UniTuple(float64, 3))", refcount=False)
def _put(JW, j, k, v):
    JW[j, k, 0], JW[j, k, 1], JW[j, k, 2] = v[0], v[1], v[2]


@maybe_njit(refcount=False)
def joint_geometry(m, pos, rot, JW):
    """World geometry of every joint into ``JW (n_j, 8, 3)``: rows ``G_ORIGIN_A, G_ARM_A, G_ORIGIN_B, G_ARM_B``
    (frame origins and lever arms, m), ``G_NORMAL1_A, G_NORMAL2_A, G_NORMAL1_B`` (perpendiculars n1, n2 of frame A
    and n1 of frame B) and ``G_AXIS_A`` (joint axis on frame A)."""
    for j in range(m.joint_index.shape[0]):
        pa, pb = m.joint_index[j, J_PARENT_BODY], m.joint_index[j, J_CHILD_BODY]
        o_a, s_a = point(pa, row3(m.joint_vectors[j], J_PARENT_ORIGIN), pos, rot)
        o_b, s_b = point(pb, row3(m.joint_vectors[j], J_CHILD_ORIGIN), pos, rot)
        _put(JW, j, G_ORIGIN_A, o_a)
        _put(JW, j, G_ARM_A, s_a)
        _put(JW, j, G_ORIGIN_B, o_b)
        _put(JW, j, G_ARM_B, s_b)
        _put(JW, j, G_NORMAL1_A, direction(pa, row3(m.joint_vectors[j], J_PARENT_NORMAL1), rot))
        _put(JW, j, G_NORMAL2_A, direction(pa, row3(m.joint_vectors[j], J_PARENT_NORMAL2), rot))
        _put(JW, j, G_NORMAL1_B, direction(pb, row3(m.joint_vectors[j], J_CHILD_NORMAL1), rot))
        _put(JW, j, G_AXIS_A, direction(pa, row3(m.joint_vectors[j], J_PARENT_AXIS), rot))


@maybe_njit(refcount=False)
def joint_angle(Gj):
    """``(phi, grad)``: rotation (rad, in (-pi, pi]) of frame B relative to frame A about the
    joint axis, from the joint's geometry ``Gj = JW[j]``, and its gradient with respect to the
    child's rotation (world; the parent's is the opposite; no dependence on translations)."""
    a1, a2, b1 = row3(Gj, G_NORMAL1_A), row3(Gj, G_NORMAL2_A), row3(Gj, G_NORMAL1_B)
    c, s = dot(a1, b1), dot(a2, b1)
    r2 = c * c + s * s
    # dc = dtheta_b . (b1 x a1), ds = dtheta_b . (b1 x a2), dphi = (c ds - s dc) / r2
    return math.atan2(s, c), sub(scale(c / r2, cross(b1, a2)), scale(s / r2, cross(b1, a1)))


@maybe_njit(refcount=False)
def perp_gradient(n, s_a, s_b, ob_xa):
    """Gradient ``(ga_x, ga_t, gb_x, gb_t)`` of ``n . (o_b - o_a)`` with ``n`` fixed on body a
    (``ob_xa = o_b - x_a``, the child origin relative to the parent CG)."""
    return scale(-1.0, n), cross(n, ob_xa), n, cross(s_b, n)


@maybe_njit(refcount=False)
def joint_slide(Gj, n):
    """``(value, ga_x, ga_t, gb_x, gb_t)``: ``n . (o_b - o_a)`` for a world direction ``n``
    fixed on frame A, from the joint's geometry ``Gj = JW[j]``, and its gradient."""
    d = sub(row3(Gj, G_ORIGIN_B), row3(Gj, G_ORIGIN_A))
    ga_x, ga_t, gb_x, gb_t = perp_gradient(n, row3(Gj, G_ARM_A), row3(Gj, G_ARM_B), add(d, row3(Gj, G_ARM_A)))
    return dot(n, d), ga_x, ga_t, gb_x, gb_t


@maybe_njit(refcount=False)
def _unwrapped(raw, prev):
    return prev + wrap_angle(raw - prev)


@maybe_njit(refcount=False)
def _to_frame_a(m, j, v, rot):
    """World vector ``v`` in frame-A coordinates of joint ``j``."""
    pa = m.joint_index[j, J_PARENT_BODY]
    vb = v if pa < 0 else matTvec(rot[pa], v)
    return matTvec(m.joint_rotations[j, 0], vb)


@maybe_njit(refcount=False)
def _relative_rotation(m, j, rot, Rrel):
    """``Rrel = R_A^T R_B`` (3, 3): frame B's rotation in frame A."""
    for c in range(3):
        col = direction(m.joint_index[j, J_CHILD_BODY],
                        (m.joint_rotations[j, 1, 0, c], m.joint_rotations[j, 1, 1, c], m.joint_rotations[j, 1, 2, c]),
                        rot)
        col = _to_frame_a(m, j, col, rot)
        Rrel[0, c], Rrel[1, c], Rrel[2, c] = col[0], col[1], col[2]


@maybe_njit(refcount=False)
def joint_variables(m, pos, rot, JW, q_prev, q, Rrel):
    """Joint variables ``q`` (n_q,) of the configuration (``JW`` its joint geometry), every
    rotation unwrapped to within pi of ``q_prev`` (continuous angles). ``Rrel`` (3, 3) scratch.

    Per type (compile's variable order): revolute/cylindrical angle about the axis (then the
    slide along it), prismatic slide, universal Rx(q1) Ry(q2), spherical Rz(q1) Ry(q2) Rx(q3)
    (of its two solutions the one nearer ``q_prev``), planar x, y, then Rz.
    """
    for j in range(m.joint_index.shape[0]):
        t, k = m.joint_index[j, J_TYPE], m.joint_index[j, J_Q_START]
        if t == FIXED:
            continue
        if t == REVOLUTE or t == CYLINDRICAL:
            q[k] = _unwrapped(joint_angle(JW[j])[0], q_prev[k])
            if t == CYLINDRICAL:
                q[k + 1] = joint_slide(JW[j], row3(JW[j], G_AXIS_A))[0]
        elif t == PRISMATIC:
            q[k] = joint_slide(JW[j], row3(JW[j], G_AXIS_A))[0]
        else:
            _relative_rotation(m, j, rot, Rrel)
            if t == UNIVERSAL:
                q[k] = _unwrapped(math.atan2(Rrel[2, 1], Rrel[1, 1]), q_prev[k])
                q[k + 1] = _unwrapped(math.atan2(Rrel[0, 2], Rrel[0, 0]), q_prev[k + 1])
            elif t == SPHERICAL:
                _spherical(Rrel, q_prev, k, q)
            elif t == PLANAR:
                p = _to_frame_a(m, j, sub(row3(JW[j], G_ORIGIN_B), row3(JW[j], G_ORIGIN_A)), rot)
                q[k], q[k + 1] = p[0], p[1]
                q[k + 2] = _unwrapped(math.atan2(Rrel[1, 0], Rrel[0, 0]), q_prev[k + 2])


@maybe_njit(refcount=False)
def _spherical(R, q_prev, k, q):
    """Z-Y-X angles of ``R`` into ``q[k:k+3]``: of the two solutions, the nearer to ``q_prev``."""
    z = math.atan2(R[1, 0], R[0, 0])
    y = math.atan2(-R[2, 0], math.sqrt(R[0, 0] ** 2 + R[1, 0] ** 2))
    x = math.atan2(R[2, 1], R[2, 2])
    z1, y1, x1 = _unwrapped(z, q_prev[k]), _unwrapped(y, q_prev[k + 1]), _unwrapped(x, q_prev[k + 2])
    z2 = _unwrapped(z + math.pi, q_prev[k])
    y2 = _unwrapped(math.pi - y, q_prev[k + 1])
    x2 = _unwrapped(x + math.pi, q_prev[k + 2])
    d1 = abs(z1 - q_prev[k]) + abs(y1 - q_prev[k + 1]) + abs(x1 - q_prev[k + 2])
    d2 = abs(z2 - q_prev[k]) + abs(y2 - q_prev[k + 1]) + abs(x2 - q_prev[k + 2])
    if d2 < d1:
        q[k], q[k + 1], q[k + 2] = z2, y2, x2
    else:
        q[k], q[k + 1], q[k + 2] = z1, y1, x1


@maybe_njit(refcount=False)
def joint_rates(m, rot, vel, omg, JW, q, qd, S, N, rhs, idx, piv):
    """Joint rates ``qd`` (n_q,): the velocity of frame B relative to frame A (origin velocity
    and angular velocity in frame-A axes) decomposed on the variables' current axes by least
    squares (exact when the joint constraints hold). Scratch: ``S`` (2, 3, 3), ``N`` (3, 7)
    (a band-stored 3 x 3 matrix, :func:`_least_squares`), ``rhs`` (3,), ``idx``, ``piv`` (3,) int."""
    R, C = S[0], S[1]
    for j in range(m.joint_index.shape[0]):
        if m.joint_index[j, J_Q_COUNT] == 0:
            continue
        G = JW[j]
        pa, pb = m.joint_index[j, J_PARENT_BODY], m.joint_index[j, J_CHILD_BODY]
        w_a = ZERO3 if pa < 0 else row3(omg, pa)
        w_b = ZERO3 if pb < 0 else row3(omg, pb)
        d = sub(row3(G, G_ORIGIN_B), row3(G, G_ORIGIN_A))
        v_rel = sub(sub(point_velocity(pb, row3(G, G_ARM_B), vel, omg), point_velocity(pa, row3(G, G_ARM_A), vel, omg)),
                    cross(w_a, d))
        t, k = m.joint_index[j, J_TYPE], m.joint_index[j, J_Q_START]
        if t == REVOLUTE:  # fast paths: the rate along the (world) axis
            qd[k] = dot(row3(G, G_AXIS_A), sub(w_b, w_a))
            continue
        if t == PRISMATIC:
            qd[k] = dot(row3(G, G_AXIS_A), v_rel)
            continue
        targets = (_to_frame_a(m, j, v_rel, rot), _to_frame_a(m, j, sub(w_b, w_a), rot))
        for kind in range(2):  # 0: translations (match v_rel), 1: rotations (match w_rel)
            cnt = _current_axes(m, j, q, kind, R, C, idx)
            _least_squares(C, cnt, targets[kind], N, rhs, piv)
            for i in range(cnt):
                qd[idx[i]] = rhs[i]


@maybe_njit(refcount=False)
def _current_axes(m, j, q, kind, R, C, idx):
    """Frame-A axes of joint ``j``'s translation (kind 0) or rotation (kind 1) variables, each
    rotated by the joint's preceding rotations, into the rows of ``C``; their indices into
    ``idx``; returns their count (``R`` scratch)."""
    for a in range(3):
        for b in range(3):
            R[a, b] = 1.0 if a == b else 0.0
    cnt = 0
    for k in range(m.joint_index[j, J_Q_START], m.joint_index[j, J_Q_START] + m.joint_index[j, J_Q_COUNT]):
        is_rot = m.q_is_rotation[k] != 0
        if is_rot == (kind == 1):
            axis = matvec(R, row3(m.q_axis, k))
            C[cnt, 0], C[cnt, 1], C[cnt, 2] = axis[0], axis[1], axis[2]
            idx[cnt] = k
            cnt += 1
        if is_rot:
            _post_rotate(R, row3(m.q_axis, k), q[k])
    return cnt


@maybe_njit(refcount=False)
def _post_rotate(R, axis, angle):
    """``R <- R @ Rot(axis, angle)`` in place for a unit axis."""
    c, s = math.cos(angle), math.sin(angle)
    x, y, z = axis
    t = 1.0 - c
    e00, e01, e02 = t * x * x + c, t * x * y - s * z, t * x * z + s * y
    e10, e11, e12 = t * x * y + s * z, t * y * y + c, t * y * z - s * x
    e20, e21, e22 = t * x * z - s * y, t * y * z + s * x, t * z * z + c
    for a in range(3):
        r0, r1, r2 = R[a, 0], R[a, 1], R[a, 2]
        R[a, 0] = r0 * e00 + r1 * e10 + r2 * e20
        R[a, 1] = r0 * e01 + r1 * e11 + r2 * e21
        R[a, 2] = r0 * e02 + r1 * e12 + r2 * e22


@maybe_njit(refcount=False)
def _least_squares(C, cnt, target, N, rhs, piv):
    """``rhs[:cnt]`` minimising ``|C[:cnt].T @ x - target|`` (normal equations, at most 3 x 3,
    factorised by the step solver's banded LU with full bandwidth ``cnt - 1``, i.e. the dense LU:
    one factorisation routine for all kernels). Scratch: ``N`` (3, 7) band storage, ``piv``."""
    if cnt == 0:
        return
    kl = cnt - 1
    for a in range(cnt):
        rhs[a] = dot(row3(C, a), target)
        for col in range(N.shape[1]):
            N[a, col] = 0.0
        for b in range(cnt):
            N[a, b - a + kl] = dot(row3(C, a), row3(C, b))
    band_lu_factor(N, cnt, kl, piv)
    band_lu_solve(N, cnt, kl, piv, rhs)
