"""Applied loads as generalized forces on the bodies, and the force elements' outputs.

Generalized forces use the generalized-velocity layout (see :mod:`.model`): per body the force
(N) at the CG and the moment (N m) about the CG, world frame (planar: fx, fy, mz). Gravity (at
the CG), axial and torsional springs, constant loads and torque drivers are evaluated at one
configuration; dampers are discretised by the integrator from the element coordinates and
gradients of :func:`damper_coordinates`.

Axial element ``e`` joins point ``axial_points[e, 0]`` of body ``axial_bodies[e, 0]`` to point
``axial_points[e, 1]`` of body ``axial_bodies[e, 1]``. Its force ``k (L - L0) + c dL/dt`` (N) is positive
in tension: it pulls the ends together. A torsional element acts on a revolute joint's continuous
angle ``phi`` (rad): torque ``-k (phi - phi0) - c dphi/dt`` (N m) on the child about the joint axis, the opposite on the
parent. A torque driver applies its profile value (N m or N) the same way, positive along
the joint variable.
"""

from __future__ import annotations

import numpy as np

from ..jit import maybe_njit
from .constraints import scatter_gradient
from .kinematics import direction, joint_angle, joint_slide, point, point_velocity
from .layout import (
    AXIAL,
    D_DRIVER,
    D_IS_ROTATION,
    D_JOINT,
    E_ELEMENT,
    E_KIND,
    G_AXIS_A,
    J_CHILD_BODY,
    J_PARENT_BODY,
    K_DAMPING,
    K_FREE_POSITION,
    K_STIFFNESS,
    L_FORCE,
    L_POINT,
    L_TORQUE,
)
from .linalg import add, cross, dot, row3, scale, sub, wrap_angle


# --- element geometry ---------------------------------------------------------------------------
@maybe_njit(refcount=False)
def axial_geometry(ba, bb, ra, rb, pos, rot):
    """``(L, u, s_a, s_b)`` of the element from point ``ra`` of body ``ba`` to ``rb`` of ``bb``:
    length (m), unit vector from end a to end b, lever arms about the CGs."""
    p_a, s_a = point(ba, ra, pos, rot)
    p_b, s_b = point(bb, rb, pos, rot)
    d = sub(p_b, p_a)
    L = np.sqrt(dot(d, d))
    u = scale(1.0 / L, d) if L > 0.0 else (0.0, 0.0, 0.0)
    return L, u, s_a, s_b


@maybe_njit(refcount=False)
def add_length_gradient(out, planar, ba, bb, coef, u, s_a, s_b):
    """``out += coef * grad L`` of an axial element (see :func:`axial_geometry`)."""
    scatter_gradient(out, planar, ba, coef, scale(-1.0, u), cross(u, s_a))
    scatter_gradient(out, planar, bb, coef, u, cross(s_b, u))


@maybe_njit(refcount=False)
def add_variable_gradient(out, planar, pa, pb, is_rot, coef, Gj):
    """``out += coef * grad q`` of a joint's first variable (angle if ``is_rot``, else slide
    along the axis) from the joint geometry ``Gj``; returns the raw value (rad in (-pi, pi],
    or m)."""
    if is_rot:
        phi, g = joint_angle(Gj)
        scatter_gradient(out, planar, pa, -coef, (0.0, 0.0, 0.0), g)
        scatter_gradient(out, planar, pb, coef, (0.0, 0.0, 0.0), g)
        return phi
    d, ga_x, ga_t, gb_x, gb_t = joint_slide(Gj, row3(Gj, G_AXIS_A))
    scatter_gradient(out, planar, pa, coef, ga_x, ga_t)
    scatter_gradient(out, planar, pb, coef, gb_x, gb_t)
    return d


# --- loads ----------------------------------------------------------------------------------------
@maybe_njit(refcount=False)
def applied_forces(m, pos, rot, JW, q, drv_val, Q):
    """Generalized applied force ``Q`` (n,) at one configuration (joint geometry ``JW``,
    continuous joint variables ``q``, driver values ``drv_val`` (n_drivers,) N m or N)."""
    Q[:] = 0.0
    z = (0.0, 0.0, 0.0)
    g = (m.gravity[0], m.gravity[1], m.gravity[2])
    for b in range(m.body_mass.shape[0]):
        scatter_gradient(Q, m.planar, b, m.body_mass[b], g, z)
    for i in range(m.load_body.shape[0]):
        b = m.load_body[i]
        f = row3(m.load_vectors[i], L_FORCE)
        s = direction(b, row3(m.load_vectors[i], L_POINT), rot)
        scatter_gradient(Q, m.planar, b, 1.0, f, add(cross(s, f), row3(m.load_vectors[i], L_TORQUE)))
    for e in range(m.axial_parameters.shape[0]):
        if m.axial_parameters[e, K_STIFFNESS] != 0.0:
            ba, bb = m.axial_bodies[e, 0], m.axial_bodies[e, 1]
            L, u, s_a, s_b = axial_geometry(ba, bb, row3(m.axial_points[e], 0), row3(m.axial_points[e], 1), pos, rot)
            add_length_gradient(Q, m.planar, ba, bb,
                                -m.axial_parameters[e, K_STIFFNESS] * (L - m.axial_parameters[e, K_FREE_POSITION]),
                                u, s_a, s_b)
    for e in range(m.torsional_parameters.shape[0]):
        if m.torsional_parameters[e, K_STIFFNESS] != 0.0:
            j = m.torsional_index[e, 0]
            torque = -m.torsional_parameters[e, K_STIFFNESS] * (
                q[m.torsional_index[e, 1]] - m.torsional_parameters[e, K_FREE_POSITION])
            add_variable_gradient(Q, m.planar, m.joint_index[j, J_PARENT_BODY], m.joint_index[j, J_CHILD_BODY], True,
                                  torque, JW[j])
    for d in range(m.torque_driver_index.shape[0]):
        j = m.torque_driver_index[d, D_JOINT]
        add_variable_gradient(Q, m.planar, m.joint_index[j, J_PARENT_BODY], m.joint_index[j, J_CHILD_BODY],
                              m.torque_driver_index[d, D_IS_ROTATION] != 0,
                              drv_val[m.torque_driver_index[d, D_DRIVER]], JW[j])


# --- dampers --------------------------------------------------------------------------------------
@maybe_njit(refcount=False)
def damper_coordinates(m, pos, rot, JW, s, D):
    """Coordinate ``s[e]`` (length m, or raw joint angle rad) and its gradient ``D[e]`` (n,) of
    every damper; the integrator differences them between steps."""
    for e in range(m.damper_index.shape[0]):
        D[e, :] = 0.0
        i = m.damper_index[e, E_ELEMENT]
        if m.damper_index[e, E_KIND] == AXIAL:
            ba, bb = m.axial_bodies[i, 0], m.axial_bodies[i, 1]
            L, u, s_a, s_b = axial_geometry(ba, bb, row3(m.axial_points[i], 0), row3(m.axial_points[i], 1), pos, rot)
            add_length_gradient(D[e], m.planar, ba, bb, 1.0, u, s_a, s_b)
            s[e] = L
        else:
            j = m.torsional_index[i, 0]
            s[e] = add_variable_gradient(D[e], m.planar, m.joint_index[j, J_PARENT_BODY],
                                         m.joint_index[j, J_CHILD_BODY], True, 1.0, JW[j])


@maybe_njit(refcount=False)
def damper_increment(m, e, s0, s1):
    """``s1 - s0`` of damper ``e``; angles wrapped to (-pi, pi] (continuous)."""
    if m.damper_index[e, E_KIND] == AXIAL:
        return s1 - s0
    return wrap_angle(s1 - s0)


# --- work of the loads ------------------------------------------------------------------------------
@maybe_njit(refcount=False)
def load_work(m, pos0, rot0, pos1, rot1):
    """Work (J) of the constant loads over one step: force times the displacement of its point
    plus torque times the body's rotation vector of ``R1 R0^T`` (world)."""
    W = 0.0
    for i in range(m.load_body.shape[0]):
        b = m.load_body[i]
        r = row3(m.load_vectors[i], L_POINT)
        W += dot(row3(m.load_vectors[i], L_FORCE), sub(point(b, r, pos1, rot1)[0], point(b, r, pos0, rot0)[0]))
        W += dot(row3(m.load_vectors[i], L_TORQUE), _rotation_increment(rot0[b], rot1[b]))
    return W


@maybe_njit(refcount=False)
def _rotation_increment(R0, R1):
    """Rotation vector (rad) of ``A = R1 R0^T``, exact for angles below pi:
    ``vee((A - A^T) / 2) = sin(t) axis``, ``trace A = 1 + 2 cos t``."""
    a21 = R1[2, 0] * R0[1, 0] + R1[2, 1] * R0[1, 1] + R1[2, 2] * R0[1, 2]
    a12 = R1[1, 0] * R0[2, 0] + R1[1, 1] * R0[2, 1] + R1[1, 2] * R0[2, 2]
    a02 = R1[0, 0] * R0[2, 0] + R1[0, 1] * R0[2, 1] + R1[0, 2] * R0[2, 2]
    a20 = R1[2, 0] * R0[0, 0] + R1[2, 1] * R0[0, 1] + R1[2, 2] * R0[0, 2]
    a10 = R1[1, 0] * R0[0, 0] + R1[1, 1] * R0[0, 1] + R1[1, 2] * R0[0, 2]
    a01 = R1[0, 0] * R0[1, 0] + R1[0, 1] * R0[1, 1] + R1[0, 2] * R0[1, 2]
    tr = 0.0
    for i in range(3):
        tr += R1[i, 0] * R0[i, 0] + R1[i, 1] * R0[i, 1] + R1[i, 2] * R0[i, 2]
    v = (0.5 * (a21 - a12), 0.5 * (a02 - a20), 0.5 * (a10 - a01))
    sn = np.sqrt(dot(v, v))
    if sn < 1e-12:
        return v
    return scale(np.arctan2(sn, 0.5 * (tr - 1.0)) / sn, v)


# --- outputs --------------------------------------------------------------------------------------
@maybe_njit(refcount=False)
def element_outputs(m, pos, rot, vel, omg, q, qd, axial, torsional):
    """Per axial element ``axial[e] = (length m, rate m/s, force N, tension positive)`` and per
    torsional element ``torsional[e] = (angle rad, rate rad/s, torque N m on the child)``."""
    for e in range(m.axial_parameters.shape[0]):
        ba, bb = m.axial_bodies[e, 0], m.axial_bodies[e, 1]
        L, u, s_a, s_b = axial_geometry(ba, bb, row3(m.axial_points[e], 0), row3(m.axial_points[e], 1), pos, rot)
        rate = dot(u, sub(point_velocity(bb, s_b, vel, omg), point_velocity(ba, s_a, vel, omg)))
        axial[e, 0], axial[e, 1] = L, rate
        axial[e, 2] = (m.axial_parameters[e, K_STIFFNESS] * (L - m.axial_parameters[e, K_FREE_POSITION])
                       + m.axial_parameters[e, K_DAMPING] * rate)
    for e in range(m.torsional_parameters.shape[0]):
        k = m.torsional_index[e, 1]
        torsional[e, 0], torsional[e, 1] = q[k], qd[k]
        torsional[e, 2] = (-m.torsional_parameters[e, K_STIFFNESS] * (q[k] - m.torsional_parameters[e, K_FREE_POSITION])
                           - m.torsional_parameters[e, K_DAMPING] * qd[k])
