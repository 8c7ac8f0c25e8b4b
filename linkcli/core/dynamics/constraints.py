"""Holonomic constraints between bodies: one scalar row per constrained direction of a joint,
plus one rheonomic row per motion driver.

Row kinds (``u`` in frame-A/parent-body axes, ``w`` in frame-B/child-body axes, ``d = o_b - o_a``
the vector between the joint-frame origins, all dimensionless or m):

* ``POS``       ``e . d`` with ``e`` a fixed world axis (m)
* ``POS_PERP``  ``(R_a u) . d``, ``u`` perpendicular to a slide axis (m)
* ``ROT_PERP``  ``(R_a u) . (R_b w)``, two frame directions kept perpendicular (-)
* ``DRV_ANGLE`` ``wrap(phi - q_d(t))``: revolute angle minus its prescribed value (rad)
* ``DRV_SLIDE`` ``(R_a a) . d - q_d(t)``: prismatic slide minus its prescribed value (m)

Planar mechanisms use planar rows only (revolute: 2, prismatic: 2, fixed: 3, planar: 0), so
planar loops have no redundant rows. Spatial rows (revolute 5, prismatic 5, cylindrical 4,
universal 4, spherical 3, planar 3, fixed 6) may be dependent (a planar loop of spatial
revolutes, Bennett): :func:`independent_rows` picks a maximal independent subset.

The row gradients are laid out in the generalized velocity of the bodies, ``nd`` per body:
``(v_x, v_y, w_z)`` planar, ``(v, w)`` spatial (world frame, CG velocity).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..jit import maybe_njit
from ..mechanism import (
    CYLINDRICAL,
    DRIVE_MOTION,
    FIXED,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    SPHERICAL,
    UNIVERSAL,
    CompiledMechanism,
)
from .kinematics import direction, joint_angle, joint_slide
from .layout import (
    G_ARM_A,
    G_ARM_B,
    G_AXIS_A,
    G_ORIGIN_A,
    G_ORIGIN_B,
    J_CHILD_BODY,
    J_PARENT_BODY,
    R_DRIVER,
    R_JOINT,
    R_KIND,
)
from .linalg import cross, dot, row3, scale, sub, wrap_angle

POS, POS_PERP, ROT_PERP, DRV_ANGLE, DRV_SLIDE = range(5)
ANGULAR_KINDS = (ROT_PERP, DRV_ANGLE)  # rows that are not lengths

_E = np.eye(3)
_X, _Y, _Z = _E


def perpendiculars(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors ``(n1, n2)`` with ``(n1, n2, a)`` right-handed orthonormal."""
    a = np.asarray(a, float) / np.linalg.norm(a)
    helper = _X if abs(a[0]) < 0.9 else _Y
    n1 = np.cross(helper, a)
    n1 /= np.linalg.norm(n1)
    return n1, np.cross(a, n1)


def joint_rows(jtype: int, axis: np.ndarray, planar: bool) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Rows ``(kind, u, w)`` of one joint, ``u``/``w`` in joint-frame coordinates (``u`` in
    world coordinates for ``POS``)."""
    n1, n2 = perpendiculars(axis)
    zero = np.zeros(3)
    pos = lambda *axes: [(POS, e, zero) for e in axes]  # noqa: E731
    if planar:
        rows = {REVOLUTE: pos(_X, _Y),
                PRISMATIC: [(POS_PERP, np.cross(_Z, axis), zero), (ROT_PERP, _X, _Y)],
                FIXED: pos(_X, _Y) + [(ROT_PERP, _X, _Y)],
                PLANAR: []}
        return rows[jtype]
    lock = [(ROT_PERP, _Y, _Z), (ROT_PERP, _Z, _X), (ROT_PERP, _X, _Y)]
    hinge = [(ROT_PERP, n1, axis), (ROT_PERP, n2, axis)]
    perp = [(POS_PERP, n1, zero), (POS_PERP, n2, zero)]
    rows = {REVOLUTE: pos(_X, _Y, _Z) + hinge,
            PRISMATIC: perp + lock,
            CYLINDRICAL: perp + hinge,
            UNIVERSAL: pos(_X, _Y, _Z) + [(ROT_PERP, _X, _Y)],
            SPHERICAL: pos(_X, _Y, _Z),
            PLANAR: [(POS_PERP, _Z, zero), (ROT_PERP, _X, _Z), (ROT_PERP, _Y, _Z)],
            FIXED: pos(_X, _Y, _Z) + lock}
    return rows[jtype]


def row_table(mech: CompiledMechanism, joint_axis: np.ndarray) -> dict[str, np.ndarray]:
    """Every row: ``kind, joint, driver`` (motion-driver index or -1) and the vectors ``u, w``
    in body axes (world for ``POS`` rows and for vectors on the base)."""
    kind, joint, drv, u, w = [], [], [], [], []
    for j in range(mech.n_joints):
        Ra, Rb = mech.T_parent_joint[j, :3, :3], mech.T_child_joint[j, :3, :3]
        for k, uu, ww in joint_rows(int(mech.joint_type[j]), joint_axis[j], mech.planar):
            kind.append(k)
            joint.append(j)
            drv.append(-1)
            u.append(uu if k == POS else Ra @ uu)
            w.append(Rb @ ww)
    for d in range(len(mech.driver_names)):
        if mech.driver_kind[d] != DRIVE_MOTION:
            continue
        kind.append(DRV_ANGLE if mech.q_is_rotation[mech.driver_q[d]] else DRV_SLIDE)
        joint.append(int(mech.q_joint[mech.driver_q[d]]))
        drv.append(d)
        u.append(np.zeros(3))
        w.append(np.zeros(3))
    n = len(kind)
    return dict(kind=np.array(kind, np.int64), joint=np.array(joint, np.int64), driver=np.array(drv, np.int64),
                u=np.array(u, float).reshape(n, 3), w=np.array(w, float).reshape(n, 3))


# --- kernels ---------------------------------------------------------------------------------
@maybe_njit(inline=True, refcount=False)
def row_value(kind, pa, pb, u, w, target, Gj, rot):
    """``(g, ga_x, ga_t, gb_x, gb_t)``: value of a row of ``kind`` with vectors ``u``, ``w``
    (body axes) on the joint with geometry ``Gj`` (8, 3) between bodies ``pa`` and ``pb``, and
    its gradient with respect to both; ``target`` is the prescribed value of a driver row."""
    z = (0.0, 0.0, 0.0)
    if kind == POS:
        s_a, s_b = row3(Gj, G_ARM_A), row3(Gj, G_ARM_B)
        return dot(u, sub(row3(Gj, G_ORIGIN_B), row3(Gj, G_ORIGIN_A))), scale(-1.0, u), cross(u, s_a), u, cross(s_b, u)
    if kind == ROT_PERP:
        U, W = direction(pa, u, rot), direction(pb, w, rot)
        return dot(U, W), z, cross(U, W), z, cross(W, U)
    if kind == DRV_ANGLE:
        phi, g = joint_angle(Gj)
        return wrap_angle(phi - target), z, scale(-1.0, g), z, g
    n = direction(pa, u, rot) if kind == POS_PERP else row3(Gj, G_AXIS_A)
    val, ga_x, ga_t, gb_x, gb_t = joint_slide(Gj, n)
    return val - target, ga_x, ga_t, gb_x, gb_t


@maybe_njit(inline=True, refcount=False)
def eval_row(m, i, rot, JW, drv_val):
    """:func:`row_value` of row ``i`` (``drv_val`` (n_drivers,) prescribed driver values)."""
    j, d = m.row_index[i, R_JOINT], m.row_index[i, R_DRIVER]
    return row_value(m.row_index[i, R_KIND], m.joint_index[j, J_PARENT_BODY], m.joint_index[j, J_CHILD_BODY],
                     row3(m.row_vectors[i], 0), row3(m.row_vectors[i], 1),
                     drv_val[d] if d >= 0 else 0.0, JW[j], rot)


@maybe_njit(refcount=False)
def scatter_gradient(out, planar, body, coef, gx, gt):
    """``out[dofs of body] += coef * (gx, gt)`` in the generalized-velocity layout."""
    if body < 0:
        return
    if planar:
        b = 3 * body
        out[b] += coef * gx[0]
        out[b + 1] += coef * gx[1]
        out[b + 2] += coef * gt[2]
    else:
        b = 6 * body
        for c in range(3):
            out[b + c] += coef * gx[c]
            out[b + 3 + c] += coef * gt[c]


@maybe_njit(inline=True, refcount=False)
def _set_gradient(G, r, nd, body, gx, gt, add):
    """``G[r, dofs of body] = (gx, gt)`` (``+=`` when ``add``) in the generalized-velocity layout
    (``nd`` 3: planar x, y, angle; 6: spatial)."""
    if body < 0:
        return
    b = nd * body
    if nd == 3:
        if add:
            G[r, b] += gx[0]
            G[r, b + 1] += gx[1]
            G[r, b + 2] += gt[2]
        else:
            G[r, b] = gx[0]
            G[r, b + 1] = gx[1]
            G[r, b + 2] = gt[2]
        return
    for c in range(3):
        if add:
            G[r, b + c] += gx[c]
            G[r, b + 3 + c] += gt[c]
        else:
            G[r, b + c] = gx[c]
            G[r, b + 3 + c] = gt[c]


@maybe_njit(refcount=False)
def constraint_rows(m, rows, nrow, rot, JW, drv_val, g, G):
    """Values ``g[:nrow]`` and Jacobian ``G[:nrow]`` of the rows ``rows[:nrow]`` at the
    configuration with joint geometry ``JW``. Only the components of the row's two bodies are
    written (O(1) per row, not O(n)): the other entries of ``G[r]`` must be zero, as they stay
    when ``G`` starts zeroed and ``rows`` does not change (zero ``G`` when it does)."""
    nd = 3 if m.planar else 6
    for r in range(nrow):
        i = rows[r]
        j = m.row_index[i, R_JOINT]
        val, ga_x, ga_t, gb_x, gb_t = eval_row(m, i, rot, JW, drv_val)
        g[r] = val
        pa, pb = m.joint_index[j, J_PARENT_BODY], m.joint_index[j, J_CHILD_BODY]
        # the two bodies' components are assigned, not zeroed and then added to (W3's 8 rows in a
        # compiled loop: 0.32-0.33 us before, 0.18-0.23 us after); the same body on both sides adds
        _set_gradient(G, r, nd, pa, ga_x, ga_t, False)
        _set_gradient(G, r, nd, pb, gb_x, gb_t, pb == pa)


# --- independent rows (setup, numpy) ---------------------------------------------------------------
RANK_RTOL = 1e-9  # relative pivot size below which a scaled row counts as dependent


def row_scaling(m, length: float) -> tuple[np.ndarray, np.ndarray]:
    """``(row_scale (n_rows,), col_scale (n,))`` making a Jacobian dimensionless: angular rows
    times ``length`` and rotational columns divided by it (``length`` m, mechanism size)."""
    row = np.where(np.isin(m.row_index[:, R_KIND], ANGULAR_KINDS), length, 1.0)
    per_body = [1, 1, 1 / length] if m.planar else [1, 1, 1, 1 / length, 1 / length, 1 / length]
    return row, np.tile(np.array(per_body), m.body_mass.shape[0])


def independent_rows(G: np.ndarray, row_scale: np.ndarray, col_scale: np.ndarray,
                     required: np.ndarray) -> tuple[np.ndarray, int]:
    """Indices of a maximal independent subset of the rows of ``G`` (all rows listed in
    ``required`` first), by QR with column pivoting of the scaled ``G.T``; returns
    ``(rows sorted, rank of the required rows)``. A required row that is dependent on the
    others is a modelling error the caller reports."""
    Gs = G * row_scale[:, None] * col_scale[None, :]
    req = np.asarray(required, dtype=np.int64)
    rest = np.setdiff1d(np.arange(G.shape[0]), req)
    keep = list(req)
    rank_req = matrix_rank(Gs[req])
    if len(rest):
        # project the required rows out, then pick the strongest remaining rows
        if len(req):
            Q, _ = np.linalg.qr(Gs[req].T)
            R_rest = Gs[rest] - (Gs[rest] @ Q) @ Q.T
        else:
            R_rest = Gs[rest]
        _, Rr, piv = scipy.linalg.qr(R_rest.T, pivoting=True, mode="economic")
        scale = max(np.abs(Gs).max(), 1e-300)
        r = int(np.sum(np.abs(np.diag(Rr)) > RANK_RTOL * scale))
        keep += list(rest[piv[:r]])
    return np.array(sorted(keep), dtype=np.int64), rank_req


def matrix_rank(A: np.ndarray) -> int:
    """Numerical rank with the relative tolerance ``RANK_RTOL``."""
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > RANK_RTOL * max(s[0], 1e-300)))
