"""Constraint multipliers (joint reactions, motion-driver loads) of saved states from the
acceleration-level equations of motion.

At a state ``(q, v, t)`` the accelerations ``a`` and multipliers ``lambda`` solve the
saddle-point system (no inverse of the mass matrix, so massless directions are legal)::

    [[M(q), G(q)^T], [G(q), 0]] [a; lambda] = [F(q, v, t); c(q, v, t)]

with ``F`` the applied generalized force (gravity, springs, loads, torque drivers), the damper
forces ``-c (D v) D`` and, for spatial bodies, the gyroscopic moment ``-w x (R J R^T) w``, and
``c = -d2g/dt2`` at zero accelerations (minus the "centripetal" second derivative of every
constraint row along the motion, plus the driver's prescribed acceleration for motion-driver
rows). Since the integrator's ``q`` and ``v`` are second-order accurate, so are these
multipliers, and their round-off does not grow as dt shrinks (the integrator's own impulses
``nu`` are second differences of positions: round-off ``m eps L / dt^2``, 1e-5 of the weight at
dt 1e-6).

Second derivatives along the motion with zero body accelerations (world frame): a point with
lever arm ``s`` accelerates by ``w x (w x s)``, a body direction ``U`` changes by ``w x U``
and ``w x (w x U)``.
"""

from __future__ import annotations

import numpy as np

from ..jit import maybe_njit
from .constraints import DRV_ANGLE, DRV_SLIDE, POS, ROT_PERP, constraint_rows
from .forces import applied_forces, damper_coordinates
from .inertia import mass_block
from .kinematics import direction, joint_geometry
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
    J_PARENT_BODY,
    N_GEOMETRY,
    R_DRIVER,
    R_JOINT,
    R_KIND,
)
from .linalg import add, band_lu_factor, band_lu_solve, cross, dot, row3, sub
from .ordering import kkt_order
from .structs import as_kernel

SINGULAR_PIVOT = 1e-14  # as the integrator's: smallest |pivot| / max|entry| of a solvable system


@maybe_njit(inline=True)
def _omega(body, omg):
    if body < 0:
        return (0.0, 0.0, 0.0)
    return (omg[body, 0], omg[body, 1], omg[body, 2])


@maybe_njit(inline=True)
def _velocity(body, vel):
    if body < 0:
        return (0.0, 0.0, 0.0)
    return (vel[body, 0], vel[body, 1], vel[body, 2])


@maybe_njit
def _row_curvature(m, i, rot, vel, omg, JW):
    """``d2g/dt2`` of row ``i`` along the motion at zero body accelerations (m/s^2 or 1/s^2)."""
    j = m.row_index[i, R_JOINT]
    kind = m.row_index[i, R_KIND]
    pa, pb = m.joint_index[j, J_PARENT_BODY], m.joint_index[j, J_CHILD_BODY]
    wa, wb = _omega(pa, omg), _omega(pb, omg)
    Gj = JW[j]
    s_a, s_b = row3(Gj, G_ARM_A), row3(Gj, G_ARM_B)
    acc_a, acc_b = cross(wa, cross(wa, s_a)), cross(wb, cross(wb, s_b))
    if kind == POS:
        return dot(row3(m.row_vectors[i], 0), sub(acc_b, acc_a))
    if kind == ROT_PERP:
        U, W = direction(pa, row3(m.row_vectors[i], 0), rot), direction(pb, row3(m.row_vectors[i], 1), rot)
        dU, dW = cross(wa, U), cross(wb, W)
        return dot(cross(wa, dU), W) + 2.0 * dot(dU, dW) + dot(U, cross(wb, dW))
    if kind == DRV_ANGLE:  # phi = atan2(a2 . b1, a1 . b1)
        a1, a2, b1 = row3(Gj, G_NORMAL1_A), row3(Gj, G_NORMAL2_A), row3(Gj, G_NORMAL1_B)
        da1, da2, db1 = cross(wa, a1), cross(wa, a2), cross(wb, b1)
        c, s = dot(a1, b1), dot(a2, b1)
        dc, ds = dot(da1, b1) + dot(a1, db1), dot(da2, b1) + dot(a2, db1)
        ddb1 = cross(wb, db1)
        ddc = dot(cross(wa, da1), b1) + 2.0 * dot(da1, db1) + dot(a1, ddb1)
        dds = dot(cross(wa, da2), b1) + 2.0 * dot(da2, db1) + dot(a2, ddb1)
        r2 = c * c + s * s
        dphi = (c * ds - s * dc) / r2
        return (c * dds - s * ddc) / r2 - 2.0 * dphi * (c * dc + s * ds) / r2
    # POS_PERP and DRV_SLIDE: n . d with n fixed on body a, d = o_b - o_a
    n = direction(pa, row3(m.row_vectors[i], 0), rot) if kind != DRV_SLIDE else row3(Gj, G_AXIS_A)
    dn = cross(wa, n)
    d = sub(row3(Gj, G_ORIGIN_B), row3(Gj, G_ORIGIN_A))
    dd = sub(add(_velocity(pb, vel), cross(wb, s_b)), add(_velocity(pa, vel), cross(wa, s_a)))
    return dot(cross(wa, dn), d) + 2.0 * dot(dn, dd) + dot(n, sub(acc_b, acc_a))


@maybe_njit
def rows_and_forces(m, pos, rot, q, v, drv, JW, g, G, Q, s, D, rows):
    """At one state: the joint geometry ``JW`` (:func:`.kinematics.joint_geometry`), the
    constraint rows ``rows`` (values ``g``, Jacobian ``G``, :func:`.constraints.constraint_rows`)
    and the applied generalized force ``Q`` (n,) (N, N m, world): gravity, springs, constant
    loads, torque drivers (:func:`.forces.applied_forces`) and the dampers' ``-c (grad s . v)
    grad s`` at the generalized velocity ``v`` (n,) (coordinates ``s`` and gradients ``D`` of
    :func:`.forces.damper_coordinates` as scratch). ``pos``, ``rot`` body poses, ``q`` joint
    variables, ``drv`` driver values. Shared by the multipliers of saved states (below) and by
    kinetostatics (linkcli.core.kinetostatics)."""
    joint_geometry(m, pos, rot, JW)
    constraint_rows(m, rows, rows.shape[0], rot, JW, drv, g, G)
    applied_forces(m, pos, rot, JW, q, drv, Q)
    n_e, n = m.damper_index.shape[0], Q.shape[0]
    if n_e:
        damper_coordinates(m, pos, rot, JW, s, D)
        for e in range(n_e):
            rate = 0.0
            for i in range(n):
                rate += D[e, i] * v[i]
            c = m.damper_coefficient[e] * rate
            for i in range(n):
                Q[i] -= c * D[e, i]


@maybe_njit
def _build(m, pos, rot, vel, omg, q, drv, drv_acc, K, rhs, JW, g, G, Q, sd, D, S, v, rows):
    """Saddle-point matrix ``K`` (N, N) and right-hand side ``rhs`` (N,) of one state (all
    constraint rows; see the module doc); the other arguments after ``rhs`` are scratch."""
    nb, n_rows = m.body_mass.shape[0], m.row_index.shape[0]
    nd = 3 if m.planar else 6
    n = nd * nb
    for i in range(K.shape[0]):
        for j in range(K.shape[1]):
            K[i, j] = 0.0
    for b in range(nb):
        if m.planar:
            v[3 * b], v[3 * b + 1], v[3 * b + 2] = vel[b, 0], vel[b, 1], omg[b, 2]
        else:
            for c in range(3):
                v[6 * b + c], v[6 * b + 3 + c] = vel[b, c], omg[b, c]
    rows_and_forces(m, pos, rot, q, v, drv, JW, g, G, Q, sd, D, rows)
    for b in range(nb):
        mass_block(m, b, rot, K, nd * b, 1.0, S)
        if not m.planar:
            w = (omg[b, 0], omg[b, 1], omg[b, 2])
            Jw = (S[0, 0] * w[0] + S[0, 1] * w[1] + S[0, 2] * w[2],
                  S[1, 0] * w[0] + S[1, 1] * w[1] + S[1, 2] * w[2],
                  S[2, 0] * w[0] + S[2, 1] * w[1] + S[2, 2] * w[2])
            gyro = cross(w, Jw)
            for c in range(3):
                Q[6 * b + 3 + c] -= gyro[c]
    for i in range(n):
        rhs[i] = Q[i]
    for r in range(n_rows):
        for i in range(n):
            K[n + r, i] = G[r, i]
            K[i, n + r] = G[r, i]
        c = -_row_curvature(m, r, rot, vel, omg, JW)
        d = m.row_index[r, R_DRIVER]
        if d >= 0:
            c += drv_acc[d]
        rhs[n + r] = c


@maybe_njit
def solve_nodes(m, pos, rot, vel, omg, q, drv, drv_acc, sx, K_all, rhs_all, lam, solve, order, kl):
    """For every saved state: build the saddle-point system scaled by ``sx`` (N,) on both
    sides; with ``solve`` LU-solve it (banded LU in the ordering ``order`` (N,), the position
    of each unknown, with bandwidth ``kl``: see integrator.kkt_pattern) and write the
    multipliers (unscaled) into ``lam`` (n_s, n_rows) (NaN where singular), else store the
    scaled systems in ``K_all`` (n_s, N, N) and ``rhs_all`` (n_s, N) for a minimum-norm solve by
    the caller."""
    nb, n_rows, n_e = m.body_mass.shape[0], m.row_index.shape[0], m.damper_index.shape[0]
    n = (3 if m.planar else 6) * nb
    N = n + n_rows
    JW = np.zeros((m.joint_index.shape[0], N_GEOMETRY, 3))
    g, G, Q = np.zeros(n_rows), np.zeros((n_rows, n)), np.zeros(n)
    sd, D = np.zeros(n_e), np.zeros((n_e, n))
    S, v = np.zeros((3, 3)), np.zeros(n)
    K, rhs, piv = np.zeros((N, N)), np.zeros(N), np.zeros(N, dtype=np.int64)
    B, xb = np.zeros((N if solve else 0, 3 * kl + 1)), np.zeros(N)
    rows = np.arange(n_rows)
    for k in range(pos.shape[0]):
        _build(m, pos[k], rot[k], vel[k], omg[k], q[k], drv[k], drv_acc[k], K, rhs, JW, g, G, Q, sd, D, S, v, rows)
        for i in range(N):
            rhs[i] *= sx[i]
            for j in range(N):
                K[i, j] *= sx[i] * sx[j]
        if not solve:
            for i in range(N):
                rhs_all[k, i] = rhs[i]
                for j in range(N):
                    K_all[k, i, j] = K[i, j]
            continue
        B[:, :] = 0.0
        for i in range(N):
            p = order[i]
            xb[p] = rhs[i]
            for j in range(N):
                if K[i, j] != 0.0:
                    B[p, order[j] - p + kl] = K[i, j]
        if band_lu_factor(B, N, kl, piv) < SINGULAR_PIVOT:
            for r in range(n_rows):
                lam[k, r] = np.nan
            continue
        band_lu_solve(B, N, kl, piv, xb)
        for r in range(n_rows):
            lam[k, r] = xb[order[n + r]] * sx[n + r]


def node_multipliers(m, pos, rot, vel, omg, q, drv, drv_acc, row_scale, col_scale, redundant: bool,
                     chunk: int = 1024) -> np.ndarray:
    """Multipliers ``lambda`` (n_s, n_rows) of the saved states (``m`` a DynModel namedtuple,
    body states as saved by the integrator, ``drv``/``drv_acc`` (n_s, n_drivers)). When rows
    are redundant (``redundant``) the minimum-norm multipliers of the scaled rows (angular rows
    times the mechanism size, so that all are forces) are returned.
    Samples whose system is singular get NaN. The unknowns are scaled (rotations and angular
    rows by the mechanism size) so that pivoting and the minimum norm compare like with like."""
    km = as_kernel(m)
    n_rows = m.row_index.shape[0]
    N = col_scale.shape[0] + n_rows
    sx = np.ascontiguousarray(np.r_[col_scale, row_scale], dtype=float)
    lam = np.full((len(pos), n_rows), np.nan)
    args = [np.ascontiguousarray(a, dtype=float) for a in (pos, rot, vel, omg, q, drv, drv_acc)]
    if not redundant:
        order, kl = kkt_order(m)
        solve_nodes(km, *args, sx, np.zeros((1, N, N)), np.zeros((1, N)), lam, True, order, kl)
        return lam
    for a in range(0, len(pos), chunk):
        sl = slice(a, a + chunk)
        ns = len(pos[sl])
        K, rhs = np.zeros((ns, N, N)), np.zeros((ns, N))
        solve_nodes(km, *(x[sl] for x in args), sx, K, rhs, lam[sl], False, np.arange(N), 0)
        sol = np.einsum("sij,sj->si", np.linalg.pinv(K, rcond=1e-10), rhs)
        lam[sl] = sol[:, N - n_rows:] * row_scale[None, :]
    return lam
