"""Kernels of the variational integrator (RATTLE / discrete Lagrange-d'Alembert).

One step from ``t_k`` to ``t_{k+1} = t_k + h`` (world frame, SI; ``n``-vectors in the
generalized-velocity layout of :mod:`.model`):

1. Position step (nonlinear; Newton with analytic Jacobian): unknowns ``q_{k+1}`` and the
   impulse ``nu = h/2 lambda_k`` of the active constraint rows::

       M_d(q_k, q_{k+1}) / h = M v_k + h/2 Q(q_k) + f^-(q_k, q_{k+1}) - G(q_k)^T nu
       g(q_{k+1}, t_{k+1}) = 0

   Planar bodies (Stoermer-Verlet): ``M_d = diag(m, m, Izz) (q_{k+1} - q_k)``. Spatial
   bodies: translation as planar; rotation by the Lee-Leok-McClamroch discrete rigid body
   ``M_d = R_k vee(F J_d - J_d F^T)``, ``F = R_k^T R_{k+1}``, ``J_d = tr(J)/2 I - J``, an exact
   Lie-group update (rotations stay rotations; world angular momentum is conserved).
   Dampers (discrete Lagrange-d'Alembert): for an element coordinate ``s`` (length or joint
   angle) with rate ``(s_{k+1} - s_k)/h``: ``f^- = -c/2 (s_{k+1} - s_k) grad s(q_k)``,
   ``f^+ = -c/2 (s_{k+1} - s_k) grad s(q_{k+1})``.
2. Velocity step (linear): unknowns ``v_{k+1}`` and ``nu2 = h/2 mu_k``::

       M(q_{k+1}) v_{k+1} = p_{k+1/2} + h/2 Q(q_{k+1}) + f^+ - G(q_{k+1})^T nu2
       G(q_{k+1}) v_{k+1} = -dg/dt(t_{k+1})

   with ``p_{k+1/2}`` the right-hand side of step 1 (a momentum balance, so momentum maps are
   conserved to round-off whatever the Newton tolerance).

The multipliers ``lambda_k`` (at q_k) and ``mu_k`` (at q_{k+1}) are first-order estimates
with opposite leading errors; the node value ``(mu_{k-1} + lambda_k) / 2`` is second order.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..jit import maybe_njit
from .constraints import DRV_ANGLE, DRV_SLIDE, constraint_rows, residual_norm
from .forces import applied_forces, damper_coordinates, damper_increment, load_work
from .kinematics import joint_geometry, joint_rates, joint_variables
from .layout import D_DRIVER, D_Q, N_GEOMETRY, R_DRV, R_KIND
from .linalg import lu_factor, lu_solve, reorthonormalize, rotate_world
from .structs import Work

OK, DIVERGED, SINGULAR, NOT_FINITE = 0, 1, 2, 3
STATUS_NAMES = ("ok", "diverged", "singular", "diverged")
SINGULAR_PIVOT = 1e-14  # smallest |pivot| / max|entry| of a step matrix before calling it singular

Out = namedtuple("Out", "pos rot ang vel omg q qd lam work res")


def make_work(m, rows: np.ndarray, pos, rot, ang, vel, omg, q) -> Work:
    """State and scratch arrays of the kernels, starting from the given body state. ``rows``
    (n_rows,) lists the active rows first."""
    nb, n_rows, nj = m.b_mass.shape[0], m.ri.shape[0], m.ji.shape[0]
    n = (3 if m.planar else 6) * nb
    n_e = m.ei.shape[0]
    N = n + n_rows
    z = lambda *shape: np.zeros(shape)  # noqa: E731
    cp = lambda a: np.array(a, dtype=float, order="C", copy=True)  # noqa: E731
    return Work(
        rows=np.array(rows, dtype=np.int64), pos=cp(pos), rot=cp(rot), ang=cp(ang), vel=cp(vel), omg=cp(omg),
        q=cp(q), JW=z(nj, N_GEOMETRY, 3), Qf=z(n), G=z(n_rows, n), s=z(n_e), D=z(n_e, n),
        pos1=cp(pos), rot1=cp(rot), ang1=cp(ang), q1=cp(q), JW1=z(nj, N_GEOMETRY, 3), Qf1=z(n), G1=z(n_rows, n),
        g1=z(n_rows), s1=z(n_e), D1=z(n_e, n), P=z(n), r=z(n), nu=z(n_rows), nu2=z(n_rows), K=z(N, N),
        piv=np.zeros(N, dtype=np.int64), rhs=z(N), S=z(3, 3, 3))


def make_out(m, n_save: int, n_q: int) -> Out:
    """Output buffers for ``n_save`` saved nodes."""
    nb, n_rows = m.b_mass.shape[0], m.ri.shape[0]
    z = lambda *shape: np.zeros(shape)  # noqa: E731
    return Out(z(n_save, nb, 3), z(n_save, nb, 3, 3), z(n_save, nb), z(n_save, nb, 3), z(n_save, nb, 3),
               z(n_save, n_q), z(n_save, n_q), z(n_save, n_rows), z(n_save, 3), z(n_save))


# --- body-level pieces ----------------------------------------------------------------------------
@maybe_njit
def _set_planar_rotation(ang, rot, b):
    c, s = math.cos(ang[b]), math.sin(ang[b])
    rot[b, 0, 0], rot[b, 0, 1], rot[b, 0, 2] = c, -s, 0.0
    rot[b, 1, 0], rot[b, 1, 1], rot[b, 1, 2] = s, c, 0.0
    rot[b, 2, 0], rot[b, 2, 1], rot[b, 2, 2] = 0.0, 0.0, 1.0


@maybe_njit
def world_inertia(J, R, out):
    """``out = R J R^T`` (3, 3)."""
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += R[i, k] * (J[k, 0] * R[j, 0] + J[k, 1] * R[j, 1] + J[k, 2] * R[j, 2])
            out[i, j] = s


@maybe_njit
def mass_block(m, b, rot, K, off, scale_, S):
    """``K[block of body b] = scale_ * M_b`` (at offset ``off``): ``diag(m, m, Izz)`` planar,
    ``diag(m, m, m, R J R^T)`` spatial; ``S`` (3, 3) scratch."""
    mb = m.b_mass[b] * scale_
    if m.planar:
        K[off, off] = mb
        K[off + 1, off + 1] = mb
        K[off + 2, off + 2] = m.b_inertia[b, 2, 2] * scale_
        return
    for i in range(3):
        K[off + i, off + i] = mb
    world_inertia(m.b_inertia[b], rot[b], S)
    for i in range(3):
        for j in range(3):
            K[off + 3 + i, off + 3 + j] = S[i, j] * scale_


@maybe_njit
def momentum(m, rot, vel, omg, out, S):
    """Generalized momentum ``out = M v`` (n,); ``S`` (3, 3) scratch."""
    for b in range(m.b_mass.shape[0]):
        mb = m.b_mass[b]
        if m.planar:
            out[3 * b], out[3 * b + 1] = mb * vel[b, 0], mb * vel[b, 1]
            out[3 * b + 2] = m.b_inertia[b, 2, 2] * omg[b, 2]
        else:
            world_inertia(m.b_inertia[b], rot[b], S)
            for i in range(3):
                out[6 * b + i] = mb * vel[b, i]
                out[6 * b + 3 + i] = S[i, 0] * omg[b, 0] + S[i, 1] * omg[b, 1] + S[i, 2] * omg[b, 2]


@maybe_njit
def _relative(R0, R1, F):
    """``F = R0^T R1``."""
    for i in range(3):
        for j in range(3):
            F[i, j] = R0[0, i] * R1[0, j] + R0[1, i] * R1[1, j] + R0[2, i] * R1[2, j]


@maybe_njit
def discrete_momentum(J, R0, R1, F, B):
    """World ``R0 vee(F J_d - J_d F^T)`` with ``F = R0^T R1``, ``J_d = tr(J)/2 I - J``: h times
    the LLM discrete angular momentum. ``F``, ``B`` (3, 3) scratch."""
    _relative(R0, R1, F)
    half_tr = 0.5 * (J[0, 0] + J[1, 1] + J[2, 2])
    for i in range(3):  # B = F J_d
        for j in range(3):
            B[i, j] = half_tr * F[i, j] - (F[i, 0] * J[0, j] + F[i, 1] * J[1, j] + F[i, 2] * J[2, j])
    v0, v1, v2 = B[2, 1] - B[1, 2], B[0, 2] - B[2, 0], B[1, 0] - B[0, 1]  # vee(B - B^T)
    return (R0[0, 0] * v0 + R0[0, 1] * v1 + R0[0, 2] * v2,
            R0[1, 0] * v0 + R0[1, 1] * v1 + R0[1, 2] * v2,
            R0[2, 0] * v0 + R0[2, 1] * v1 + R0[2, 2] * v2)


@maybe_njit
def discrete_momentum_jacobian(J, R0, R1, h, K, off, F, B):
    """``K[off:off+3, off:off+3] = d(discrete_momentum / h) / d theta`` for a world rotation
    ``theta`` of ``R1``: ``R1 (tr(J_d F) I - J_d F) R1^T / h`` (from ``hat(x) A + A^T hat(x) =
    hat((tr(A) I - A) x)``). ``F``, ``B`` (3, 3) scratch."""
    _relative(R0, R1, F)
    half_tr = 0.5 * (J[0, 0] + J[1, 1] + J[2, 2])
    for i in range(3):  # B = J_d F
        for j in range(3):
            B[i, j] = half_tr * F[i, j] - (J[i, 0] * F[0, j] + J[i, 1] * F[1, j] + J[i, 2] * F[2, j])
    tr = B[0, 0] + B[1, 1] + B[2, 2]
    for i in range(3):
        for j in range(3):
            F[i, j] = (tr if i == j else 0.0) - B[i, j]
    for i in range(3):  # K = R1 F R1^T / h
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += R1[i, k] * (F[k, 0] * R1[j, 0] + F[k, 1] * R1[j, 1] + F[k, 2] * R1[j, 2])
            K[off + i, off + j] = s / h


# --- step 1: positions ----------------------------------------------------------------------------
@maybe_njit
def _predict(m, w, h, nrow):
    """Initial guess of ``q_{k+1}``: for translations and planar rotations the step-1 equation
    with the Jacobian ``G_k`` and the impulse guess ``nu``, ``h (P - G_k^T nu) / m`` (one Newton
    iteration usually remains); ``h v`` for massless coordinates; spatial rotations by the
    exponential map of ``h w``."""
    nd = 3 if m.planar else 6
    for b in range(m.b_mass.shape[0]):
        for c in range(3):  # planar: x, y, angle; spatial: x, y, z
            i = nd * b + c
            rot = m.planar and c == 2
            mass = m.b_inertia[b, 2, 2] if rot else m.b_mass[b]
            if mass > 0.0:
                p = w.P[i]
                for r in range(nrow):
                    p -= w.G[r, i] * w.nu[r]
                step = h * p / mass
            else:
                step = h * (w.omg[b, 2] if rot else w.vel[b, c])
            if rot:
                w.ang1[b] = w.ang[b] + step
            else:
                w.pos1[b, c] = w.pos[b, c] + step
        if m.planar:
            _set_planar_rotation(w.ang1, w.rot1, b)
        else:
            w.rot1[b, :, :] = w.rot[b]
            rotate_world(w.rot1[b], (h * w.omg[b, 0], h * w.omg[b, 1], h * w.omg[b, 2]), w.S[0], w.S[1])


@maybe_njit
def _residual(m, w, h, nrow):
    """Step-1 residual ``w.r = M_d / h - P - f^- + G_k^T nu`` (``w.P = M v_k + h/2 Q_k``) at
    the current iterate; returns the error in length/angle units: the larger of max|g| and
    max ``|h r_i| / m_i``."""
    n = w.r.shape[0]
    for b in range(m.b_mass.shape[0]):
        mb = m.b_mass[b]
        if m.planar:
            w.r[3 * b] = mb * (w.pos1[b, 0] - w.pos[b, 0]) / h
            w.r[3 * b + 1] = mb * (w.pos1[b, 1] - w.pos[b, 1]) / h
            w.r[3 * b + 2] = m.b_inertia[b, 2, 2] * (w.ang1[b] - w.ang[b]) / h
        else:
            p = discrete_momentum(m.b_inertia[b], w.rot[b], w.rot1[b], w.S[0], w.S[1])
            for i in range(3):
                w.r[6 * b + i] = mb * (w.pos1[b, i] - w.pos[b, i]) / h
                w.r[6 * b + 3 + i] = p[i] / h
    for i in range(n):
        w.r[i] -= w.P[i]
    for e in range(m.ei.shape[0]):  # - f^- = + c/2 ds grad s_k
        coef = 0.5 * m.ec[e] * damper_increment(m, e, w.s[e], w.s1[e])
        for i in range(n):
            w.r[i] += coef * w.D[e, i]
    for r in range(nrow):
        nu = w.nu[r]
        for i in range(n):
            w.r[i] += w.G[r, i] * nu
    err = 0.0
    for r in range(nrow):
        a = abs(w.g1[r])
        if not a <= err:  # also propagates nan
            err = a
    for i in range(n):
        a = abs(w.r[i] * h) / m.m_scale[i]
        if not a <= err:
            err = a
    return err


@maybe_njit
def _newton_solve(m, w, h, nrow):
    """Solve the Newton system of step 1 for (position increment, nu increment) into
    ``w.rhs``; returns False when the matrix is singular."""
    n = w.r.shape[0]
    N = n + nrow
    K = w.K
    for i in range(N):
        for j in range(N):
            K[i, j] = 0.0
    for b in range(m.b_mass.shape[0]):
        if m.planar:
            mass_block(m, b, w.rot1, K, 3 * b, 1.0 / h, w.S[0])
        else:
            for i in range(3):
                K[6 * b + i, 6 * b + i] = m.b_mass[b] / h
            discrete_momentum_jacobian(m.b_inertia[b], w.rot[b], w.rot1[b], h, K, 6 * b + 3, w.S[0], w.S[1])
    for e in range(m.ei.shape[0]):  # d(-f^-)/dq_{k+1} = c/2 grad s_k grad s_{k+1}^T
        c = 0.5 * m.ec[e]
        for i in range(n):
            if w.D[e, i] != 0.0:
                for j in range(n):
                    K[i, j] += c * w.D[e, i] * w.D1[e, j]
    for r in range(nrow):
        for i in range(n):
            K[i, n + r] = w.G[r, i]
            K[n + r, i] = w.G1[r, i]
    for i in range(n):
        w.rhs[i] = -w.r[i]
    for r in range(nrow):
        w.rhs[n + r] = -w.g1[r]
    if lu_factor(K, N, w.piv) < SINGULAR_PIVOT:
        return False
    lu_solve(K, N, w.piv, w.rhs)
    return True


@maybe_njit
def _apply_increment(m, w, nrow):
    """Add the Newton solution ``w.rhs`` to the iterate (rotations by the exponential map)."""
    n = w.r.shape[0]
    for b in range(m.b_mass.shape[0]):
        if m.planar:
            w.pos1[b, 0] += w.rhs[3 * b]
            w.pos1[b, 1] += w.rhs[3 * b + 1]
            w.ang1[b] += w.rhs[3 * b + 2]
            _set_planar_rotation(w.ang1, w.rot1, b)
        else:
            for i in range(3):
                w.pos1[b, i] += w.rhs[6 * b + i]
            rotate_world(w.rot1[b], (w.rhs[6 * b + 3], w.rhs[6 * b + 4], w.rhs[6 * b + 5]), w.S[0], w.S[1])
    for r in range(nrow):
        w.nu[r] += w.rhs[n + r]


@maybe_njit
def evaluate_trial(m, w, nrow, drv1):
    """Joint geometry, constraint rows and damper data at the trial configuration."""
    joint_geometry(m, w.pos1, w.rot1, w.JW1)
    constraint_rows(m, w.rows, nrow, w.rot1, w.JW1, drv1, w.g1, w.G1)
    if m.ei.shape[0]:
        damper_coordinates(m, w.pos1, w.rot1, w.JW1, w.s1, w.D1)


@maybe_njit
def position_step(m, w, nrow, h, drv1, tol, max_iter):
    """Step 1 (see module doc) into ``pos1, rot1, ang1, nu, JW1, G1, g1, s1, D1``; ``nu`` holds
    the initial guess on entry, ``drv1`` the prescribed driver values at ``t_{k+1}``. Returns
    ``(status, iterations, error)``."""
    momentum(m, w.rot, w.vel, w.omg, w.P, w.S[0])
    for i in range(w.P.shape[0]):
        w.P[i] += 0.5 * h * w.Qf[i]
    _predict(m, w, h, nrow)
    err = 0.0
    for it in range(max_iter + 1):
        evaluate_trial(m, w, nrow, drv1)
        err = _residual(m, w, h, nrow)
        if not math.isfinite(err):
            return NOT_FINITE, it, err
        if err <= tol:
            return OK, it, err
        if it == max_iter:
            break
        if not _newton_solve(m, w, h, nrow):
            return SINGULAR, it, err
        _apply_increment(m, w, nrow)
    return DIVERGED, max_iter, err


# --- step 2: velocities ---------------------------------------------------------------------------
@maybe_njit
def _half_momentum(m, w, nrow):
    """``w.P <- p_{k+1/2} = P + f^- - G_k^T nu`` after a converged position step."""
    n = w.P.shape[0]
    for e in range(m.ei.shape[0]):
        coef = -0.5 * m.ec[e] * damper_increment(m, e, w.s[e], w.s1[e])
        for i in range(n):
            w.P[i] += coef * w.D[e, i]
    for r in range(nrow):
        for i in range(n):
            w.P[i] -= w.G[r, i] * w.nu[r]


@maybe_njit
def velocity_step(m, w, nrow, h, rate1):
    """Step 2 (see module doc): ``vel, omg`` at ``t_{k+1}`` and ``nu2``, from ``w.P``
    (p_{k+1/2}), ``Qf1``, ``G1``, ``D1`` and the driver rates ``rate1`` at ``t_{k+1}``.
    Returns False when the matrix is singular."""
    n = w.P.shape[0]
    N = n + nrow
    K = w.K
    for i in range(N):
        for j in range(N):
            K[i, j] = 0.0
    for i in range(n):
        w.rhs[i] = w.P[i] + 0.5 * h * w.Qf1[i]
    for e in range(m.ei.shape[0]):  # f^+
        coef = -0.5 * m.ec[e] * damper_increment(m, e, w.s[e], w.s1[e])
        for i in range(n):
            w.rhs[i] += coef * w.D1[e, i]
    nd = 3 if m.planar else 6
    for b in range(m.b_mass.shape[0]):
        mass_block(m, b, w.rot1, K, nd * b, 1.0, w.S[0])
    for r in range(nrow):
        for i in range(n):
            K[i, n + r] = w.G1[r, i]
            K[n + r, i] = w.G1[r, i]
        i_row = w.rows[r]
        kind = m.ri[i_row, R_KIND]
        w.rhs[n + r] = rate1[m.ri[i_row, R_DRV]] if (kind == DRV_ANGLE or kind == DRV_SLIDE) else 0.0
    if lu_factor(K, N, w.piv) < SINGULAR_PIVOT:
        return False
    lu_solve(K, N, w.piv, w.rhs)
    for b in range(m.b_mass.shape[0]):
        if m.planar:
            w.vel[b, 0], w.vel[b, 1], w.vel[b, 2] = w.rhs[3 * b], w.rhs[3 * b + 1], 0.0
            w.omg[b, 0], w.omg[b, 1], w.omg[b, 2] = 0.0, 0.0, w.rhs[3 * b + 2]
        else:
            for i in range(3):
                w.vel[b, i] = w.rhs[6 * b + i]
                w.omg[b, i] = w.rhs[6 * b + 3 + i]
    for r in range(nrow):
        w.nu2[r] = w.rhs[n + r]
    return True


# --- one full step --------------------------------------------------------------------------------
@maybe_njit
def refresh(m, w, nrow, drv_val):
    """Joint geometry, applied forces, constraint Jacobian and damper data at the current
    state (``JW, Qf, G, s, D``); ``drv_val`` (n_drivers,) driver values at the current time."""
    joint_geometry(m, w.pos, w.rot, w.JW)
    applied_forces(m, w.pos, w.rot, w.JW, w.q, drv_val, w.Qf)
    constraint_rows(m, w.rows, nrow, w.rot, w.JW, drv_val, w.g1, w.G)
    damper_coordinates(m, w.pos, w.rot, w.JW, w.s, w.D)


@maybe_njit
def _commit(m, w):
    w.pos[:, :] = w.pos1
    w.rot[:, :, :] = w.rot1
    w.ang[:] = w.ang1
    w.q[:] = w.q1
    w.JW[:, :, :] = w.JW1
    w.Qf[:] = w.Qf1
    w.G[:, :] = w.G1
    w.s[:] = w.s1
    w.D[:, :] = w.D1
    if not m.planar:
        for b in range(m.b_mass.shape[0]):
            reorthonormalize(w.rot[b], w.S[0], w.S[1])


@maybe_njit
def advance(m, w, nrow, h, drv0, drv1, rate1, tol, max_iter, acc):
    """One step ``t_k -> t_{k+1}``; ``drv0``, ``drv1`` (n_drivers,) are the driver values
    (prescribed motion, or torque/force) at both times, ``rate1`` the motion rates at
    ``t_{k+1}``. On success commits the new state and adds the step's work to ``acc`` =
    (dampers, drivers, loads) J. Returns ``(status, iterations, error)``; the multipliers are
    ``2 nu / h`` (at q_k) and ``2 nu2 / h`` (at q_{k+1})."""
    status, it, err = position_step(m, w, nrow, h, drv1, tol, max_iter)
    if status != OK:
        return status, it, err
    _half_momentum(m, w, nrow)
    joint_variables(m, w.pos1, w.rot1, w.JW1, w.q, w.q1, w.S[0])
    applied_forces(m, w.pos1, w.rot1, w.JW1, w.q1, drv1, w.Qf1)
    if not velocity_step(m, w, nrow, h, rate1):
        return SINGULAR, it, err
    _add_work(m, w, nrow, h, drv0, drv1, acc)
    _commit(m, w)
    return OK, it, err


@maybe_njit
def _add_work(m, w, nrow, h, drv0, drv1, acc):
    """Work of the step: dampers ``-c ds^2 / h``; motion drivers ``-(lambda + mu)/2 dq``;
    torque drivers ``(tau_k + tau_{k+1})/2 dq``; loads (see forces.load_work)."""
    for e in range(m.ei.shape[0]):
        ds = damper_increment(m, e, w.s[e], w.s1[e])
        acc[0] -= m.ec[e] * ds * ds / h
    for r in range(nrow):
        i = w.rows[r]
        if m.ri[i, R_KIND] == DRV_ANGLE or m.ri[i, R_KIND] == DRV_SLIDE:
            d = m.ri[i, R_DRV]
            acc[1] -= (w.nu[r] + w.nu2[r]) / h * (drv1[d] - drv0[d])
    for d in range(m.di.shape[0]):
        k, c = m.di[d, D_Q], m.di[d, D_DRIVER]
        acc[1] += 0.5 * (drv0[c] + drv1[c]) * (w.q1[k] - w.q[k])
    if m.li.shape[0]:
        acc[2] += load_work(m, w.pos, w.rot, w.pos1, w.rot1)


# --- the time loop --------------------------------------------------------------------------------
@maybe_njit
def _save_state(m, w, out, row, drv_val, acc):
    out.pos[row] = w.pos
    out.rot[row] = w.rot
    out.ang[row] = w.ang
    out.vel[row] = w.vel
    out.omg[row] = w.omg
    out.q[row] = w.q
    joint_rates(m, w.rot, w.vel, w.omg, w.JW, w.q, out.qd[row])
    out.work[row] = acc
    out.res[row] = residual_norm(m, w.rot, w.JW, drv_val)


@maybe_njit
def run_steps(m, w, nrow, k0, k1, n_steps, h, drv, rate, tol, max_iter, save_row, out, acc, mu_prev, stats):
    """Steps ``k0 .. k1-1`` (``k1 <= n_steps + 1``; step ``n_steps`` only supplies the last
    node's multipliers). ``drv``/``rate`` (n_steps + 3, n_drivers): driver values and rates at
    ``t = (i - 1) h``; ``save_row`` (n_steps + 1,): output row of each node or -1; ``mu_prev``
    (n_rows,): ``mu_{k-1}`` of the active rows (in/out); ``stats`` = (max iterations, max
    error) (in/out). Returns ``(status, step reached, error)``."""
    for k in range(k0, k1):
        row = save_row[k]
        if row >= 0:
            _save_state(m, w, out, row, drv[k + 1], acc)
        status, it, err = advance(m, w, nrow, h, drv[k + 1], drv[k + 2], rate[k + 2], tol, max_iter, acc)
        if status != OK:
            if k == n_steps and row >= 0:  # look-ahead step only: first-order multipliers
                for r in range(nrow):
                    out.lam[row, w.rows[r]] = mu_prev[r]
                return OK, k, err
            return status, k, err
        if it > stats[0]:
            stats[0] = it
        if err > stats[1]:
            stats[1] = err
        for r in range(nrow):
            lam = 2.0 * w.nu[r] / h
            if row >= 0:
                out.lam[row, w.rows[r]] = 0.5 * (mu_prev[r] + lam)
            mu_prev[r] = 2.0 * w.nu2[r] / h
    return OK, k1, 0.0
