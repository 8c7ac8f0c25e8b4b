"""Joint reactions from the constraint multipliers.

The constraint force on the bodies is ``-G^T lambda``. The rows of joint ``j`` give the wrench
the joint exerts on its child: force ``f`` (N) and moment about the child's joint-frame origin
(N m), world frame. The multipliers come from :mod:`.node_multipliers` (minimum-norm when rows
are redundant).

A motion driver's row is not part of its joint's reaction: an ideal revolute joint transmits no
moment about its axis (a prismatic no force along it), whatever drives it; the driver's torque
or force (minus its multiplier) is reported once, in its own column, exactly like a ``torque``
driver's applied load. So the free-body balance of a link is the same for both kinds of
driver: its joints' reactions (plus on the child, minus on the parent) + the driver loads about
the driven axes (plus on the child, minus on the parent) + gravity, springs, dampers and loads
= its mass times acceleration (a sum of reactions and driver loads counts each once).
"""

from __future__ import annotations

import numpy as np

from ..jit import maybe_njit
from .constraints import DRV_ANGLE, ROT_PERP, constraint_rows, eval_row
from .kinematics import joint_geometry
from .layout import G_ARM_A, G_ARM_B, G_ORIGIN_A, G_ORIGIN_B, J_CHILD_BODY, N_GEOMETRY, R_DRIVER, R_JOINT, R_KIND
from .linalg import add, cross, row3, scale, sub


@maybe_njit
def joint_wrenches(m, rot, JW, drv_val, lam, force, moment, fa, ma):
    """Reaction ``force (n_j, 3)`` and ``moment (n_j, 3)`` on each joint's child for the
    multipliers ``lam (n_rows,)`` at one configuration (joint geometry ``JW``), the joints' own
    rows only (motion-driver rows are the drivers' loads: module docstring); ``fa``, ``ma``
    (n_j, 3) scratch for the parent-side wrench (used when the child is the base). Returns the
    constraint residual (m), which the same pass evaluates: the largest |row value|, an angular
    row's (rad, or the sine of an angle) times the mechanism size (the gap it opens at the
    mechanism's extent; the size is 1 / the rotational ``coordinate_scale``), so that one
    length measures every row."""
    force[:, :] = 0.0
    moment[:, :] = 0.0
    fa[:, :] = 0.0
    ma[:, :] = 0.0
    residual = 0.0
    size = 1.0 / m.coordinate_scale[2 if m.planar else 3] if m.coordinate_scale.shape[0] else 1.0
    for i in range(m.row_index.shape[0]):
        j = m.row_index[i, R_JOINT]
        val, ga_x, ga_t, gb_x, gb_t = eval_row(m, i, rot, JW, drv_val)
        kind = m.row_index[i, R_KIND]
        gap = abs(val) * size if kind == ROT_PERP or kind == DRV_ANGLE else abs(val)
        if not gap <= residual:
            residual = gap
        if m.row_index[i, R_DRIVER] >= 0:
            continue  # a driver's load, not its joint's reaction
        for c in range(3):
            force[j, c] -= lam[i] * gb_x[c]
            moment[j, c] -= lam[i] * gb_t[c]
            fa[j, c] -= lam[i] * ga_x[c]
            ma[j, c] -= lam[i] * ga_t[c]
    for j in range(force.shape[0]):
        o_a, s_a = row3(JW[j], G_ORIGIN_A), row3(JW[j], G_ARM_A)
        o_b, s_b = row3(JW[j], G_ORIGIN_B), row3(JW[j], G_ARM_B)
        if m.joint_index[j, J_CHILD_BODY] >= 0:  # moment about the CG -> about o_b = x_b + s_b
            f = (force[j, 0], force[j, 1], force[j, 2])
            mo = sub((moment[j, 0], moment[j, 1], moment[j, 2]), cross(s_b, f))
        else:  # child is the base: minus the parent's wrench, moved to o_b
            f = (fa[j, 0], fa[j, 1], fa[j, 2])
            m_oa = sub((ma[j, 0], ma[j, 1], ma[j, 2]), cross(s_a, f))
            mo = scale(-1.0, add(m_oa, cross(sub(o_a, o_b), f)))
            f = scale(-1.0, f)
        for c in range(3):
            force[j, c] = f[c]
            moment[j, c] = mo[c]
    return residual


@maybe_njit
def jacobians(m, pos, rot, drv, G):
    """Jacobians ``G (n_s, n_rows, n)`` of all rows at saved states."""
    n_rows = m.row_index.shape[0]
    rows = np.arange(n_rows)
    g = np.zeros(n_rows)
    JW = np.zeros((m.joint_index.shape[0], N_GEOMETRY, 3))
    for s in range(pos.shape[0]):
        joint_geometry(m, pos[s], rot[s], JW)
        constraint_rows(m, rows, n_rows, rot[s], JW, drv[s], g, G[s])
