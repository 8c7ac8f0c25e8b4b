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

The impulses serve the momentum balance only; the reported multipliers (reactions) are computed
from the saved states by :mod:`.node_multipliers`.

Newton convergence is tested on scaled quantities (:func:`_residual`, :func:`_update_ratio`):
momentum residuals relative to the step's force impulses, constraint residuals relative to the
step's displacement, the update relative to both; at least one iteration. Neither the predictor
nor the step matrices need the inverse of the mass matrix when a body has zero or tiny inertia
(the full saddle-point matrix is factorised), so point masses and massless directions are legal
whenever the constrained system is well posed. Both steps' matrices are solved by block
elimination: the body components whose own mass block is well conditioned (and on no damper,
:func:`.ordering.eliminable_components`) are eliminated first by that block's inverse (exact;
for W3 this leaves the 8 x 8 constraint Schur complement of the 17 x 17 system), and the rest
(point masses, massless directions, damped bodies, and the rows) is assembled directly in band
storage in the reverse Cuthill-McKee order of :mod:`.ordering` and factorised by LU with partial
pivoting (:func:`.linalg.band_lu_factor`, which handles the zero diagonal blocks); a constraint
row is touched only on its two bodies. For a chain of loops the bandwidth is constant, so a step
costs O(N) (dense LU: O(N^3)). A step
that fails or turns a body by more than ``MAX_STEP_ROTATION`` is reported to the caller, which
refines it (:mod:`.runner`).

Branch check (free, from the Newton factorisation): the step matrix
``N = [[A, G_k^T], [G_{k+1}, 0]]`` pairs the constraint Jacobians at both ends of the step, and
``det N = det A det(-G_{k+1} A^-1 G_k^T)``. At ``G_{k+1} = G_k`` (A positive on the tangent
space, rows independent) its sign is ``(-1)^rows``; by Cauchy-Binet ``det(G_{k+1} A^-1
G_k^T) det A = det(T_k^T A T_{k+1})`` with ``T`` the null-space basis of ``G`` oriented by its
cofactors (the Hodge dual of the rows), which varies continuously with the configuration and
vanishes only where the rows lose rank. So ``orientation = (-1)^rows sign det N < 0`` means the
orientation of the constraint Jacobian flipped within the step: the step jumped to another
assembly branch, or passed a singular position (rank loss: a toggle, the aligned position of a
parallelogram). With every joint variable driven (no free motion, ``G`` square) it is the sign
change of ``det G``, the assembly-branch indicator of the kinematic sweeps. A step that flips
is reported (``BRANCH``) and refined by the caller, which accepts a flip only as a continuous
passage seen consistently at two substep sizes (:mod:`.runner`).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..jit import maybe_njit
from .accuracy import ROUNDOFF
from .constraints import DRV_ANGLE, DRV_SLIDE, ROT_PERP, constraint_rows
from .forces import applied_forces, damper_coordinates, damper_increment, load_work
from .inertia import discrete_momentum, discrete_momentum_jacobian, momentum, world_inertia
from .kinematics import joint_geometry, joint_variables
from .layout import D_DRIVER, D_VARIABLE, J_CHILD_BODY, J_PARENT_BODY, N_GEOMETRY, R_DRIVER, R_JOINT, R_KIND
from .linalg import (
    band_lu_det_sign,
    band_lu_factor,
    band_lu_solve,
    copy1,
    copy2,
    copy3,
    invert3,
    reorthonormalize,
    rotate_world,
    rotation_z,
)
from .ordering import eliminable_components, kkt_order, kkt_pattern
from .structs import Work

OK, DIVERGED, SINGULAR, NOT_FINITE, IMPLAUSIBLE, BRANCH, OPEN = 0, 1, 2, 3, 4, 5, 6
STATUS_NAMES = ("ok", "diverged", "singular", "diverged", "diverged", "diverged", "diverged")
# A step that turns a body by more than this (rad) is rejected and refined: at omega h = 0.5 the
# Stoermer-Verlet phase error is already ~ (omega h)^2 / 24 = 1 % per step, and a Newton
# iteration that lands on another root of the step equations (another assembly branch, a rod
# flipped through its pivot) turns bodies by far more.
MAX_STEP_ROTATION = 0.5
SINGULAR_PIVOT = 1e-14  # smallest |pivot| / max|entry| of a step matrix before calling it singular
TINY = 1e-300
NEWTON_REGION = 1e-2  # largest last Newton update of an accepted step, relative to its displacement

Out = namedtuple("Out", "pos rot ang vel omg q work")


def make_work(m, rows: np.ndarray, pos, rot, ang, vel, omg, q) -> Work:
    """State and scratch arrays of the kernels, starting from the given body state. ``rows``
    (n_rows,) lists the active rows first, then the dropped ones (checked by
    :func:`dropped_rows_closure`); call :func:`order_unknowns` with the active rows' number."""
    nb, n_rows, nj = m.body_mass.shape[0], m.row_index.shape[0], m.joint_index.shape[0]
    n = (3 if m.planar else 6) * nb
    n_e = m.damper_index.shape[0]
    N = n + n_rows
    eliminated = eliminable_components(m)
    order, bw = kkt_order(m, eliminated)
    z = lambda *shape: np.zeros(shape)  # noqa: E731
    cp = lambda a: np.array(a, dtype=float, order="C", copy=True)  # noqa: E731
    return Work(
        rows=np.array(rows, dtype=np.int64), pos=cp(pos), rot=cp(rot), ang=cp(ang), vel=cp(vel), omg=cp(omg),
        q=cp(q), JW=z(nj, N_GEOMETRY, 3), Qf=z(n), G=z(n_rows, n), s=z(n_e), D=z(n_e, n),
        pos1=cp(pos), rot1=cp(rot), ang1=cp(ang), q1=cp(q), JW1=z(nj, N_GEOMETRY, 3), Qf1=z(n), G1=z(n_rows, n),
        g1=z(n_rows), s1=z(n_e), D1=z(n_e, n), P=z(n), r=z(n), nu=z(n_rows), nu2=z(n_rows),
        B=z(N, 3 * bw + 1), piv=np.zeros(N, dtype=np.int64), rhs=z(N), xb=z(N), S=z(3, 3, 3), acc=z(n),
        order=order, kkt_pos=np.arange(N, dtype=np.int64), band=np.array([bw, N], dtype=np.int64),
        eliminated=eliminated, inverse_blocks=z(nb, n // max(nb, 1), n // max(nb, 1)), eliminated_rows=z(n_rows, n),
        eliminated_rhs=z(n), body_row_start=np.zeros(nb + 1, dtype=np.int64),
        body_row_list=np.zeros(2 * n_rows, dtype=np.int64))


def order_unknowns(m, w, nrow: int) -> None:
    """Set ``w.kkt_pos`` (position in the banded system of each unknown of the step: body
    components, then the active rows ``w.rows[:nrow]``; -1 for the components eliminated by
    their mass blocks, ``w.eliminated``), ``w.band`` (bandwidth and order of the banded
    system) from the model's ordering ``w.order``, and the active rows touching each body
    (``w.body_row_start``, ``w.body_row_list``). Call after the active rows change."""
    n = m.coordinate_scale.shape[0]
    rows = np.asarray(w.rows[:nrow], dtype=np.int64)
    unknown_nodes = np.r_[np.arange(n), n + rows]
    kept = np.r_[np.asarray(w.eliminated) == 0, np.ones(nrow, dtype=bool)]
    nodes = unknown_nodes[kept]
    rank = np.empty(len(nodes), dtype=np.int64)
    rank[np.argsort(w.order[nodes], kind="stable")] = np.arange(len(nodes))
    w.kkt_pos[:] = -1
    w.kkt_pos[np.flatnonzero(kept)] = rank
    ii, jj = kkt_pattern(m, w.eliminated)
    where = np.full(n + m.row_index.shape[0], -1, dtype=np.int64)
    where[nodes] = rank
    pi, pj = where[ii], where[jj]
    keep = (pi >= 0) & (pj >= 0)
    w.band[0] = int(np.abs(pi[keep] - pj[keep]).max()) if keep.any() else 0
    w.band[1] = len(nodes)
    nb = m.body_mass.shape[0]
    touching: list[list[int]] = [[] for _ in range(nb)]
    for r in range(nrow):
        j = m.row_index[rows[r], R_JOINT]
        for body in (m.joint_index[j, J_PARENT_BODY], m.joint_index[j, J_CHILD_BODY]):
            if body >= 0:
                touching[body].append(r)
    w.body_row_start[:] = np.r_[0, np.cumsum([len(t) for t in touching])]
    flat = [r for t in touching for r in t]
    w.body_row_list[:len(flat)] = flat


def make_out(m, n_save: int, n_q: int) -> Out:
    """Output buffers for ``n_save`` saved nodes: body states, joint variables and cumulative
    work (dampers, drivers, loads)."""
    nb = m.body_mass.shape[0]
    z = lambda *shape: np.zeros(shape)  # noqa: E731
    return Out(z(n_save, nb, 3), z(n_save, nb, 3, 3), z(n_save, nb), z(n_save, nb, 3), z(n_save, nb, 3),
               z(n_save, n_q), z(n_save, 3))


# --- step 1: positions ----------------------------------------------------------------------------
@maybe_njit(refcount=False)
def _predict(m, w, h):
    """Initial guess of ``q_{k+1}`` without any mass inverse (massless directions are legal):
    ``q_k + h v_k + h^2/2 a`` with ``a = w.acc``, the velocity change of the previous step over
    h (zero at the start); spatial rotations by the exponential map of ``h (w + h/2 a)``. The
    impulses ``nu`` keep the previous step's values."""
    nd = 3 if m.planar else 6
    hh = 0.5 * h * h
    for b in range(m.body_mass.shape[0]):
        o = nd * b
        for c in range(3 if not m.planar else 2):
            w.pos1[b, c] = w.pos[b, c] + h * w.vel[b, c] + hh * w.acc[o + c]
        if m.planar:
            w.ang1[b] = w.ang[b] + h * w.omg[b, 2] + hh * w.acc[o + 2]
            rotation_z(w.rot1[b], w.ang1[b])
        else:
            copy2(w.rot1[b], w.rot[b])
            rotate_world(w.rot1[b], (h * w.omg[b, 0] + hh * w.acc[o + 3], h * w.omg[b, 1] + hh * w.acc[o + 4],
                                     h * w.omg[b, 2] + hh * w.acc[o + 5]), w.S[0], w.S[1])


@maybe_njit(refcount=False)
def _residual(m, w, h, nrow, tol):
    """Step-1 residual ``w.r = M_d / h - P - f^- + G_k^T nu`` (``w.P = M v_k + h/2 Q_k``) at
    the current iterate, and the convergence ratios ``(momentum, constraints)``: 1 or less means
    converged. Scales (rotational entries divided by the model length ``m.mechanism_size``, so that
    everything is in N s and m):

    * momentum: ``tol`` times the step's impulse scale ``I = max(h force_scale, |G_k^T nu|, h/2 |Q|,
      damper impulses)`` (the reactions are then accurate to ``tol`` relative to the forces),
      plus the round-off of the largest term of the sum and of the differences ``q_{k+1} - q_k``;
    * constraints: ``tol`` times the step's largest displacement, plus round-off of the size.
    """
    n = w.r.shape[0]
    L = m.mechanism_size
    res, P, Qf, pos1, pos, ang1, ang, g1 = w.r, w.P, w.Qf, w.pos1, w.pos, w.ang1, w.ang, w.g1  # hoisted loads
    cs, mass, inertia = m.coordinate_scale, m.body_mass, m.body_inertia
    impulse = abs(h) * m.force_scale
    big = 0.0
    disp = 0.0
    for b in range(m.body_mass.shape[0]):
        mb = mass[b]
        if m.planar:
            res[3 * b] = mb * (pos1[b, 0] - pos[b, 0]) / h
            res[3 * b + 1] = mb * (pos1[b, 1] - pos[b, 1]) / h
            res[3 * b + 2] = inertia[b, 2, 2] * (ang1[b] - ang[b]) / h
            disp = max(disp, abs(pos1[b, 0] - pos[b, 0]), abs(pos1[b, 1] - pos[b, 1]),
                       abs(ang1[b] - ang[b]) * L)
            # round-off of the differences q_{k+1} - q_k, as momenta
            big = max(big, mb * max(abs(pos1[b, 0]), abs(pos1[b, 1])) / abs(h),
                      inertia[b, 2, 2] * abs(ang1[b]) / (abs(h) * L))
        else:
            big = max(big, mb * max(abs(pos1[b, 0]), abs(pos1[b, 1]), abs(pos1[b, 2])) / abs(h),
                      (inertia[b, 0, 0] + inertia[b, 1, 1] + inertia[b, 2, 2]) / (abs(h) * L))
            p = discrete_momentum(inertia[b], w.rot[b], w.rot1[b], w.S[0], w.S[1])
            for i in range(3):
                res[6 * b + i] = mb * (pos1[b, i] - pos[b, i]) / h
                res[6 * b + 3 + i] = p[i] / h
                disp = max(disp, abs(pos1[b, i] - pos[b, i]))
            disp = max(disp, _rotation_angle(w.rot[b], w.rot1[b]) * L)
    for i in range(n):
        f = cs[i]
        big = max(big, f * abs(res[i]), f * abs(P[i]))
        impulse = max(impulse, 0.5 * abs(h) * f * abs(Qf[i]))
        res[i] -= P[i]
    for e in range(m.damper_index.shape[0]):  # - f^- = + c/2 ds grad s_k
        coef = 0.5 * m.damper_coefficient[e] * damper_increment(m, e, w.s[e], w.s1[e])
        for i in range(n):
            t = coef * w.D[e, i]
            res[i] += t
            f = cs[i]
            impulse = max(impulse, f * abs(t))
    # G_k^T nu, body by body over the active rows on it (w.body_row_list), folded into this loop:
    # no call, no pass to zero a product vector, no row -> joint -> body lookups
    nd = 3 if m.planar else 6
    start, listed, G, nu = w.body_row_start, w.body_row_list, w.G, w.nu
    for b in range(m.body_mass.shape[0]):
        for i in range(nd * b, nd * b + nd):
            t = 0.0
            for q in range(start[b], start[b + 1]):
                t += G[listed[q], i] * nu[listed[q]]
            res[i] += t
            f = cs[i]
            impulse = max(impulse, f * abs(t))
            big = max(big, f * abs(t))
    err_p = 0.0
    for i in range(n):
        f = cs[i]
        a = f * abs(res[i])
        if not a <= err_p:  # also propagates nan
            err_p = a
    err_g = 0.0
    for r in range(nrow):
        a = abs(g1[r]) * (L if _angular_row(m, w.rows[r]) else 1.0)
        if not a <= err_g:
            err_g = a
    return (err_p / (tol * impulse + ROUNDOFF * big + TINY),
            err_g / (tol * disp + ROUNDOFF * _extent(m, w)))


@maybe_njit(refcount=False)
def _extent(m, w):
    """The larger of the model length and the largest |coordinate| of a body (m): the scale
    of the round-off of positions."""
    e = m.mechanism_size
    for b in range(m.body_mass.shape[0]):
        for c in range(3):
            e = max(e, abs(w.pos1[b, c]))
    return e


@maybe_njit(inline=True, refcount=False)
def _angular_row(m, i):
    """True for rows whose value is an angle or a dot product of directions (not a length)."""
    k = m.row_index[i, R_KIND]
    return k == ROT_PERP or k == DRV_ANGLE


@maybe_njit(refcount=False)
def _rotation_angle(R0, R1):
    """Angle (rad, in [0, pi]) of the rotation ``R1 R0^T``."""
    tr = 0.0
    for i in range(3):
        tr += R1[i, 0] * R0[i, 0] + R1[i, 1] * R0[i, 1] + R1[i, 2] * R0[i, 2]
    return math.acos(min(1.0, max(-1.0, 0.5 * (tr - 1.0))))


@maybe_njit(refcount=False)
def _update_ratio(m, w, h, nrow, tol):
    """Size of the Newton update of the positions in ``w.rhs`` relative to
    ``NEWTON_REGION`` times the step's displacement (from the trial ``q_{k+1}``; round-off floor
    as in :func:`_residual`). Accuracy is the residuals' test; this one requires the iteration
    to be inside Newton's region of quadratic convergence (a converged step's last update is
    orders of magnitude below its displacement: measured 1e-5 on the W3 four-bar at dt 1e-3),
    which a stagnating iteration or a jump to another root is not. (The impulses enter the
    step equations linearly: their accuracy is what the momentum residual measures.)"""
    n = w.r.shape[0]
    L = m.mechanism_size
    disp = 0.0
    for b in range(m.body_mass.shape[0]):
        if m.planar:
            disp = max(disp, abs(w.pos1[b, 0] - w.pos[b, 0]), abs(w.pos1[b, 1] - w.pos[b, 1]),
                       abs(w.ang1[b] - w.ang[b]) * L)
        else:
            for i in range(3):
                disp = max(disp, abs(w.pos1[b, i] - w.pos[b, i]))
            disp = max(disp, _rotation_angle(w.rot[b], w.rot1[b]) * L)
    dq = 0.0
    for i in range(n):
        dq = max(dq, abs(w.rhs[i]) / m.coordinate_scale[i])
    return dq / (NEWTON_REGION * disp + ROUNDOFF * _extent(m, w))


@maybe_njit(refcount=False)
def _newton_solve(m, w, h, nrow):
    """Solve the Newton system of step 1 for (position increment, nu increment) into
    ``w.rhs``. The Jacobian of (step-1 residual, constraints) by (position increment, nu) is
    ``[[A, G_k^T], [G(q_{k+1}), 0]]``, ``A`` the mass blocks over h (spatial rotations: the
    discrete-momentum Jacobian) plus the damper terms ``c/2 grad s_k grad s_{k+1}^T``; it is
    solved as ``[[h A, G_k^T], [G(q_{k+1}), 0]] [dq; h dnu] = [-h r; -g]`` (momentum rows
    times h): the mass blocks are then the masses themselves, as in the velocity step, and the
    singular-pivot test (pivot relative to the largest entry) does not depend on the step size
    (with ``A = M / h`` a substep h / 64 near a singular position looked 4096 times more
    singular than the step). Returns False when the matrix is singular."""
    n = w.r.shape[0]
    for i in range(n):
        w.rhs[i] = -h * w.r[i]
    for r in range(nrow):
        w.rhs[n + r] = -w.g1[r]
    if not (_assemble_reduced(m, w, nrow, h, True, w.G, w.G1) and _reduced_solve(m, w, nrow, w.G1)):
        return False
    for r in range(nrow):
        w.rhs[n + r] /= h
    return True


@maybe_njit(refcount=False)
def _assemble_reduced(m, w, nrow, h, newton, GT, GB):
    """Band storage ``w.B`` of a step matrix ``[[A, GT^T], [GB, 0]]`` (rows ``GT``, ``GB`` of the
    active constraints) after eliminating the components ``w.eliminated`` by their own mass
    blocks (block Gaussian elimination, exact): the other components and the rows remain, the
    rows coupled through the eliminated components by ``-GB A_e^-1 GT^T`` (the constraint Schur
    complement where every component is eliminated). Keeps ``A_e^-1`` (``w.inverse_blocks``)
    and ``A_e^-1 GT^T`` (``w.eliminated_rows``) for :func:`_reduced_solve`.

    ``A`` of the position step (``newton``), scaled as the rows of :func:`_newton_solve`
    (times h): the masses, the discrete-momentum Jacobian times h for spatial rotations, and h
    c/2 grad s_k grad s_{k+1}^T of the dampers; of the velocity step: the mass matrix at
    ``q_{k+1}``. Returns False when an eliminated block is singular."""
    nd = 3 if m.planar else 6
    n = w.r.shape[0]
    B, pos, kl = w.B, w.kkt_pos, w.band[0]  # local names: loads hoisted out of the loops
    E, inv, X, S = w.eliminated, w.inverse_blocks, w.eliminated_rows, w.S
    mass, inertia, planar, nb = m.body_mass, m.body_inertia, m.planar, m.body_mass.shape[0]  # hoisted loads
    _clear_band(B, w.band[1], kl)
    for b in range(nb):
        o = nd * b
        if planar:
            for i in range(3):
                d = mass[b] if i < 2 else inertia[b, 2, 2]
                if E[o + i]:
                    inv[b, i, i] = 1.0 / d
                else:
                    _band_add(B, pos, kl, o + i, o + i, d)
            continue
        for i in range(3):
            if E[o + i]:
                inv[b, i, i] = 1.0 / mass[b]
            else:
                _band_add(B, pos, kl, o + i, o + i, mass[b])
        if newton:
            discrete_momentum_jacobian(inertia[b], w.rot[b], w.rot1[b], h, S[2], S[0], S[1])
            for i in range(3):
                for j in range(3):
                    S[2, i, j] *= h
        else:
            world_inertia(inertia[b], w.rot1[b], S[2])
        if E[o + 3]:
            if not invert3(S[2], S[0]):
                return False
            for i in range(3):
                for j in range(3):
                    inv[b, 3 + i, 3 + j] = S[0, i, j]
        else:
            for i in range(3):
                for j in range(3):
                    _band_add(B, pos, kl, o + 3 + i, o + 3 + j, S[2, i, j])
    if newton and m.damper_index.shape[0]:
        _damper_block(m, w.D, w.D1, B, pos, kl, h)  # damped bodies are never eliminated
    start, listed = w.body_row_start, w.body_row_list
    for b in range(nb):  # body by body: the active rows on it (no row -> joint lookups)
        o = nd * b
        any_eliminated = False
        for q in range(start[b], start[b + 1]):
            r = listed[q]
            for i in range(o, o + nd):
                if E[i]:
                    any_eliminated = True
                    c = i - o
                    if planar or c < 3:  # diagonal blocks
                        X[r, i] = inv[b, c, c] * GT[r, i]
                    else:  # a spatial rotation block (eliminated as a whole)
                        X[r, i] = (inv[b, c, 3] * GT[r, o + 3] + inv[b, c, 4] * GT[r, o + 4]
                                   + inv[b, c, 5] * GT[r, o + 5])
                else:
                    X[r, i] = 0.0
                    _band_add(B, pos, kl, i, n + r, GT[r, i])
                    _band_add(B, pos, kl, n + r, i, GB[r, i])
        if not any_eliminated:
            continue
        for q1 in range(start[b], start[b + 1]):  # fill: -GB A_e^-1 GT^T between the rows on the body
            r1 = listed[q1]
            p1 = pos[n + r1]  # band row of r1, hoisted (as _band_add(B, pos, kl, n + r1, n + r2, -t))
            if planar:  # the three components written out: W3's assembly 0.40 -> 0.31 us (compiled loop)
                g0, g1, g2 = GB[r1, o], GB[r1, o + 1], GB[r1, o + 2]
                for q2 in range(start[b], start[b + 1]):
                    r2 = listed[q2]
                    B[p1, pos[n + r2] - p1 + kl] -= g0 * X[r2, o] + g1 * X[r2, o + 1] + g2 * X[r2, o + 2]
                continue
            for q2 in range(start[b], start[b + 1]):
                r2 = listed[q2]
                t = 0.0
                for i in range(o, o + nd):  # X is zero on the kept components
                    t += GB[r1, i] * X[r2, i]
                B[p1, pos[n + r2] - p1 + kl] -= t
    return True


@maybe_njit(refcount=False)
def _reduced_solve(m, w, nrow, GB):
    """Solve the step matrix assembled by :func:`_assemble_reduced` for the right-hand side
    ``w.rhs[:n + nrow]`` (components, then rows; kernels' order), in place: the eliminated
    components' part moved to the rows, banded LU with partial pivoting of the rest
    (:func:`.linalg.band_lu_factor`), then the eliminated components by back-substitution.
    Returns False when the matrix is singular."""
    nd = 3 if m.planar else 6
    n = w.r.shape[0]
    E, inv, X, ya, rhs = w.eliminated, w.inverse_blocks, w.eliminated_rows, w.eliminated_rhs, w.rhs
    start, listed = w.body_row_start, w.body_row_list
    planar, nb = m.planar, m.body_mass.shape[0]  # hoisted loads
    for b in range(nb):
        o = nd * b
        for i in range(o, o + nd):
            c = i - o
            if not E[i]:
                ya[i] = 0.0
            elif planar or c < 3:  # diagonal blocks
                ya[i] = inv[b, c, c] * rhs[i]
            else:
                ya[i] = inv[b, c, 3] * rhs[o + 3] + inv[b, c, 4] * rhs[o + 4] + inv[b, c, 5] * rhs[o + 5]
    for b in range(nb):
        o = nd * b
        for q in range(start[b], start[b + 1]):
            r = listed[q]
            t = 0.0
            for i in range(o, o + nd):  # ya is zero on the kept components
                t += GB[r, i] * ya[i]
            rhs[n + r] -= t
    xb, pos, kl, N = w.xb, w.kkt_pos, w.band[0], w.band[1]
    for u in range(n + nrow):
        if pos[u] >= 0:
            xb[pos[u]] = rhs[u]
    if band_lu_factor(w.B, N, kl, w.piv) < SINGULAR_PIVOT:
        return False
    band_lu_solve(w.B, N, kl, w.piv, xb)
    for u in range(n + nrow):
        if pos[u] >= 0:
            rhs[u] = xb[pos[u]]
    for b in range(nb):
        o = nd * b
        for i in range(o, o + nd):
            if E[i]:
                t = ya[i]
                for q in range(start[b], start[b + 1]):
                    r = listed[q]
                    t -= X[r, i] * rhs[n + r]
                rhs[i] = t
    return True


@maybe_njit(refcount=False)
def _damper_block(m, D, D1, B, pos, kl, factor):
    """``B += factor c/2 grad s_k grad s_{k+1}^T`` over the dampers (``D``, ``D1``: gradients at
    both ends of the step; nonzero only on the components of the damper's two bodies, inside
    the band by construction of the ordering)."""
    n = D.shape[1]
    for e in range(m.damper_index.shape[0]):
        c = 0.5 * factor * m.damper_coefficient[e]
        for i in range(n):
            if D[e, i] != 0.0:
                for j in range(n):
                    if D1[e, j] != 0.0:
                        _band_add(B, pos, kl, i, j, c * D[e, i] * D1[e, j])


@maybe_njit(refcount=False)
def _clear_band(B, N, kl):
    """Zero the band storage of an N x N step matrix (fill columns included)."""
    for i in range(N):
        for c in range(3 * kl + 1):
            B[i, c] = 0.0


@maybe_njit(inline=True, refcount=False)
def _band_add(B, pos, kl, i, j, v):
    """Entry (i, j) of the step matrix (unknowns in the kernels' order) += v, stored at the
    positions ``pos`` (``w.kkt_pos``) of the bandwidth-reducing order."""
    pi = pos[i]
    B[pi, pos[j] - pi + kl] += v


@maybe_njit(refcount=False)
def _apply_increment(m, w, nrow):
    """Add the Newton solution ``w.rhs`` to the iterate (rotations by the exponential map)."""
    n = w.r.shape[0]
    for b in range(m.body_mass.shape[0]):
        if m.planar:
            w.pos1[b, 0] += w.rhs[3 * b]
            w.pos1[b, 1] += w.rhs[3 * b + 1]
            w.ang1[b] += w.rhs[3 * b + 2]
            rotation_z(w.rot1[b], w.ang1[b])
        else:
            for i in range(3):
                w.pos1[b, i] += w.rhs[6 * b + i]
            rotate_world(w.rot1[b], (w.rhs[6 * b + 3], w.rhs[6 * b + 4], w.rhs[6 * b + 5]), w.S[0], w.S[1])
    for r in range(nrow):
        w.nu[r] += w.rhs[n + r]


@maybe_njit(refcount=False)
def evaluate_trial(m, w, nrow, drv1):
    """Joint geometry, constraint rows and damper data at the trial configuration."""
    joint_geometry(m, w.pos1, w.rot1, w.JW1)
    constraint_rows(m, w.rows, nrow, w.rot1, w.JW1, drv1, w.g1, w.G1)
    if m.damper_index.shape[0]:
        damper_coordinates(m, w.pos1, w.rot1, w.JW1, w.s1, w.D1)


@maybe_njit(refcount=False)
def position_step(m, w, nrow, h, drv1, tol, max_iter):
    """Step 1 (see module doc) into ``pos1, rot1, ang1, nu, JW1, G1, g1, s1, D1``; ``nu`` holds
    the initial guess on entry, ``drv1`` the prescribed driver values at ``t_{k+1}``. At least
    one Newton iteration; converged when the scaled residuals of :func:`_residual` and the
    scaled update of :func:`_update_ratio` are at most 1. Returns ``(status, iterations,
    ratio, orientation)``, ratio the largest scaled residual (how many times the tolerance),
    orientation +1 or -1 from the last Newton matrix (see the module doc: -1 when the
    constraint Jacobian's orientation flipped between the ends of the step; valid for h > 0)."""
    momentum(m, w.rot, w.vel, w.omg, w.P, w.S[0])
    for i in range(w.P.shape[0]):
        w.P[i] += 0.5 * h * w.Qf[i]
    _predict(m, w, h)
    evaluate_trial(m, w, nrow, drv1)
    ratio = 0.0
    orientation = 0
    for it in range(1, max_iter + 1):
        _residual(m, w, h, nrow, tol)  # w.r at the iterate (the ratios are checked after the update)
        if not _newton_solve(m, w, h, nrow):
            return SINGULAR, it, ratio, 0
        # the eliminated mass blocks have positive determinants: the sign is the reduced matrix's
        orientation = band_lu_det_sign(w.B, w.band[1], w.band[0], w.piv) * (1 - 2 * (nrow % 2))
        upd = _update_ratio(m, w, h, nrow, tol)
        _apply_increment(m, w, nrow)
        evaluate_trial(m, w, nrow, drv1)
        rp, rg = _residual(m, w, h, nrow, tol)
        ratio = max(rp, rg)
        if not (math.isfinite(ratio) and math.isfinite(upd)):
            return NOT_FINITE, it, ratio, orientation
        if ratio <= 1.0 and upd <= 1.0:
            return OK, it, ratio, orientation
        ratio = max(ratio, upd)
    return DIVERGED, max_iter, ratio, orientation


# --- step 2: velocities ---------------------------------------------------------------------------
@maybe_njit(refcount=False)
def _half_momentum(m, w, nrow):
    """``w.P <- p_{k+1/2} = P + f^- - G_k^T nu`` after a converged position step."""
    n = w.P.shape[0]
    for e in range(m.damper_index.shape[0]):
        coef = -0.5 * m.damper_coefficient[e] * damper_increment(m, e, w.s[e], w.s1[e])
        for i in range(n):
            w.P[i] += coef * w.D[e, i]
    # - G_k^T nu, body by body over the active rows on it (w.body_row_list; as in _residual)
    nd = 3 if m.planar else 6
    start, listed, G, nu, P = w.body_row_start, w.body_row_list, w.G, w.nu, w.P
    for b in range(m.body_mass.shape[0]):
        for i in range(nd * b, nd * b + nd):
            t = 0.0
            for q in range(start[b], start[b + 1]):
                t += G[listed[q], i] * nu[listed[q]]
            P[i] -= t


@maybe_njit(refcount=False)
def velocity_step(m, w, nrow, h, rate1):
    """Step 2 (see module doc): ``vel, omg`` at ``t_{k+1}`` and ``nu2``, from ``w.P``
    (p_{k+1/2}), ``Qf1``, ``G1``, ``D1`` and the driver rates ``rate1`` at ``t_{k+1}`` (``w.g1``
    is reused for the constraint right-hand side). Returns False when the matrix is singular."""
    n = w.P.shape[0]
    for i in range(n):
        w.rhs[i] = w.P[i] + 0.5 * h * w.Qf1[i]
    for e in range(m.damper_index.shape[0]):  # f^+
        coef = -0.5 * m.damper_coefficient[e] * damper_increment(m, e, w.s[e], w.s1[e])
        for i in range(n):
            w.rhs[i] += coef * w.D1[e, i]
    for r in range(nrow):
        i_row = w.rows[r]
        kind = m.row_index[i_row, R_KIND]
        w.g1[r] = rate1[m.row_index[i_row, R_DRIVER]] if (kind == DRV_ANGLE or kind == DRV_SLIDE) else 0.0
    if not _kkt_solve(m, w, nrow):
        return False
    for b in range(m.body_mass.shape[0]):  # the velocity change over h: the next predictor's acceleration
        if m.planar:
            w.acc[3 * b] = (w.rhs[3 * b] - w.vel[b, 0]) / h
            w.acc[3 * b + 1] = (w.rhs[3 * b + 1] - w.vel[b, 1]) / h
            w.acc[3 * b + 2] = (w.rhs[3 * b + 2] - w.omg[b, 2]) / h
        else:
            for i in range(3):
                w.acc[6 * b + i] = (w.rhs[6 * b + i] - w.vel[b, i]) / h
                w.acc[6 * b + 3 + i] = (w.rhs[6 * b + 3 + i] - w.omg[b, i]) / h
    for b in range(m.body_mass.shape[0]):
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


@maybe_njit(refcount=False)
def _kkt_solve(m, w, nrow):
    """Solve ``[[M(q_{k+1}), G1^T], [G1, 0]] [v; nu2] = [w.rhs[:n]; w.g1]`` into ``w.rhs``
    (:func:`_assemble_reduced`, :func:`_reduced_solve`)."""
    n = w.P.shape[0]
    for r in range(nrow):
        w.rhs[n + r] = w.g1[r]
    return _assemble_reduced(m, w, nrow, 0.0, False, w.G1, w.G1) and _reduced_solve(m, w, nrow, w.G1)


# --- one full step --------------------------------------------------------------------------------
@maybe_njit(refcount=False)
def refresh(m, w, nrow, drv_val):
    """Joint geometry, applied forces, constraint Jacobian and damper data at the current
    state (``JW, Qf, G, s, D``); ``drv_val`` (n_drivers,) driver values at the current time."""
    joint_geometry(m, w.pos, w.rot, w.JW)
    applied_forces(m, w.pos, w.rot, w.JW, w.q, drv_val, w.Qf)
    constraint_rows(m, w.rows, nrow, w.rot, w.JW, drv_val, w.g1, w.G)
    damper_coordinates(m, w.pos, w.rot, w.JW, w.s, w.D)


@maybe_njit(refcount=False)
def _copy_row_blocks(w, nd, dst, src):
    """``dst[r] = src[r]`` of the active rows on the components of their bodies, the only
    nonzero ones (O(rows), where copying the dense rows is O(rows x n)); body by body over
    ``w.body_row_list`` (no row -> joint -> body lookups). The inactive rows are not read."""
    start, listed = w.body_row_start, w.body_row_list
    for b in range(start.shape[0] - 1):
        for q in range(start[b], start[b + 1]):
            r = listed[q]
            for i in range(nd * b, nd * b + nd):
                dst[r, i] = src[r, i]


@maybe_njit(refcount=False)
def _commit(m, w):
    copy2(w.pos, w.pos1)
    copy3(w.rot, w.rot1)
    copy1(w.ang, w.ang1)
    copy1(w.q, w.q1)
    copy3(w.JW, w.JW1)
    copy1(w.Qf, w.Qf1)
    _copy_row_blocks(w, 3 if m.planar else 6, w.G, w.G1)
    copy1(w.s, w.s1)
    copy2(w.D, w.D1)
    if not m.planar:
        for b in range(m.body_mass.shape[0]):
            reorthonormalize(w.rot[b], w.S[0], w.S[1])


@maybe_njit(refcount=False)
def advance(m, w, nrow, h, drv0, drv1, rate1, tol, max_iter, acc, allow_flip):
    """One step ``t_k -> t_{k+1}``; ``drv0``, ``drv1`` (n_drivers,) are the driver values
    (prescribed motion, or torque/force) at both times, ``rate1`` the motion rates at
    ``t_{k+1}``. On success commits the new state and adds the step's work to ``acc`` =
    (dampers, drivers, loads) J. A step whose constraint Jacobian flips orientation (module
    doc) is rejected (``BRANCH``, nothing committed) unless ``allow_flip``. Returns ``(status,
    iterations, error, orientation)``; the multipliers are ``2 nu / h`` (at q_k) and ``2 nu2 /
    h`` (at q_{k+1})."""
    status, it, err, orientation = position_step(m, w, nrow, h, drv1, tol, max_iter)
    if status != OK:
        return status, it, err, orientation
    if largest_rotation(m, w) > MAX_STEP_ROTATION:
        return IMPLAUSIBLE, it, err, orientation
    opening = dropped_rows_closure(m, w, nrow, drv1, tol)
    if not opening <= 1.0:
        return OPEN, it, opening, orientation
    if orientation < 0 and not allow_flip:
        return BRANCH, it, err, orientation
    _half_momentum(m, w, nrow)
    joint_variables(m, w.pos1, w.rot1, w.JW1, w.q, w.q1, w.S[0])
    applied_forces(m, w.pos1, w.rot1, w.JW1, w.q1, drv1, w.Qf1)
    if not velocity_step(m, w, nrow, h, rate1):
        return SINGULAR, it, err, orientation
    _add_work(m, w, nrow, h, drv0, drv1, acc)
    _commit(m, w)
    return OK, it, err, orientation


@maybe_njit(refcount=False)
def dropped_rows_closure(m, w, nrow, drv1, tol):
    """The largest value of the dropped (dependent, not solved for) constraint rows
    ``w.rows[nrow:]`` at the trial state, angular rows times the model length (m), relative to
    the run's closure tolerance ``tol L + ROUNDOFF extent`` (m): at most 1 when the joints are
    closed. The solved rows are closed to ``tol`` times the step's displacement by Newton; the
    dropped ones follow only while the solved subset stays well conditioned. Where the subset
    loses rank (the Bennett linkage's subset chosen at j1 = 90 deg is singular at j1 = 180 deg,
    where all rows are not), Newton may follow a spurious solution branch of the subset along
    which the dropped rows open (measured 1e-4 m one step after the crossing, 1.5 m later), and
    near it the dropped rows open by the solved rows' residual over the subset's smallest
    singular value. Evaluated into the unused tail ``g1[nrow:]``, ``G1[nrow:]``."""
    n_rows = w.rows.shape[0]
    if nrow >= n_rows:
        return 0.0
    constraint_rows(m, w.rows[nrow:], n_rows - nrow, w.rot1, w.JW1, drv1, w.g1[nrow:], w.G1[nrow:])
    worst = 0.0
    for r in range(nrow, n_rows):
        a = abs(w.g1[r]) * (m.mechanism_size if _angular_row(m, w.rows[r]) else 1.0)
        if not a <= worst:
            worst = a
    return worst / (tol * m.mechanism_size + ROUNDOFF * _extent(m, w))


@maybe_njit(refcount=False)
def largest_rotation(m, w):
    """Largest rotation (rad) of a body from the state to the trial state of the step."""
    worst = 0.0
    for b in range(m.body_mass.shape[0]):
        a = abs(w.ang1[b] - w.ang[b]) if m.planar else _rotation_angle(w.rot[b], w.rot1[b])
        if not a <= worst:
            worst = a
    return worst


@maybe_njit(refcount=False)
def _add_work(m, w, nrow, h, drv0, drv1, acc):
    """Work of the step: dampers ``-c ds^2 / h``; motion drivers ``-(lambda + mu)/2 dq``;
    torque drivers ``(tau_k + tau_{k+1})/2 dq``; loads (see forces.load_work)."""
    for e in range(m.damper_index.shape[0]):
        ds = damper_increment(m, e, w.s[e], w.s1[e])
        acc[0] -= m.damper_coefficient[e] * ds * ds / h
    for r in range(nrow):
        i = w.rows[r]
        if m.row_index[i, R_KIND] == DRV_ANGLE or m.row_index[i, R_KIND] == DRV_SLIDE:
            d = m.row_index[i, R_DRIVER]
            acc[1] -= (w.nu[r] + w.nu2[r]) / h * (drv1[d] - drv0[d])
    for d in range(m.torque_driver_index.shape[0]):
        k, c = m.torque_driver_index[d, D_VARIABLE], m.torque_driver_index[d, D_DRIVER]
        acc[1] += 0.5 * (drv0[c] + drv1[c]) * (w.q1[k] - w.q[k])
    if m.load_body.shape[0]:
        acc[2] += load_work(m, w.pos, w.rot, w.pos1, w.rot1)


# --- the time loop --------------------------------------------------------------------------------
@maybe_njit(refcount=False)
def _save_state(w, out, row, acc):
    copy2(out.pos[row], w.pos)
    copy3(out.rot[row], w.rot)
    copy1(out.ang[row], w.ang)
    copy2(out.vel[row], w.vel)
    copy2(out.omg[row], w.omg)
    copy1(out.q[row], w.q)
    copy1(out.work[row], acc)


@maybe_njit(refcount=False)
def run_steps(m, w, nrow, k0, k1, n_steps, h, drv, rate, tol, max_iter, save_row, out, acc, stats):
    """Steps ``k0 .. k1-1`` (``k1 <= n_steps + 1``; at node ``n_steps`` only the state is
    saved). ``drv``/``rate`` (n_steps + 3, n_drivers): driver values and rates at
    ``t = (i - 1) h``; ``save_row`` (n_steps + 1,): output row of each node or -1; ``stats[0]``:
    the largest number of Newton iterations of a step (in/out). Returns ``(status, node
    reached, error)``; on failure the state is that of the node reached (saved)."""
    for k in range(k0, k1):
        row = save_row[k]
        if row >= 0:
            _save_state(w, out, row, acc)
        if k == n_steps:
            break
        status, it, err, _ = advance(m, w, nrow, h, drv[k + 1], drv[k + 2], rate[k + 2], tol, max_iter, acc, False)
        if status != OK:
            return status, k, err
        if it > stats[0]:
            stats[0] = it
    return OK, k1, 0.0
