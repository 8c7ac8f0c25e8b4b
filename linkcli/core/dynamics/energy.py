"""Kinetic and potential energy of a body state (J)."""

from __future__ import annotations

from ..jit import maybe_njit
from .forces import axial_geometry
from .layout import K_FREE_POSITION, K_STIFFNESS
from .linalg import row3


@maybe_njit(refcount=False)
def kinetic_energy(m, rot, vel, omg):
    """Kinetic energy (J) of one state: ``1/2 m |v|^2 + 1/2 w . (R J R^T) w`` per body."""
    T = 0.0
    for b in range(m.body_mass.shape[0]):
        T += 0.5 * m.body_mass[b] * (vel[b, 0] ** 2 + vel[b, 1] ** 2 + vel[b, 2] ** 2)
        # w . R J R^T w = (R^T w) . J (R^T w)
        wb0 = rot[b, 0, 0] * omg[b, 0] + rot[b, 1, 0] * omg[b, 1] + rot[b, 2, 0] * omg[b, 2]
        wb1 = rot[b, 0, 1] * omg[b, 0] + rot[b, 1, 1] * omg[b, 1] + rot[b, 2, 1] * omg[b, 2]
        wb2 = rot[b, 0, 2] * omg[b, 0] + rot[b, 1, 2] * omg[b, 1] + rot[b, 2, 2] * omg[b, 2]
        J = m.body_inertia[b]
        T += 0.5 * (wb0 * (J[0, 0] * wb0 + J[0, 1] * wb1 + J[0, 2] * wb2)
                    + wb1 * (J[1, 0] * wb0 + J[1, 1] * wb1 + J[1, 2] * wb2)
                    + wb2 * (J[2, 0] * wb0 + J[2, 1] * wb1 + J[2, 2] * wb2))
    return T


@maybe_njit(refcount=False)
def potential_energy(m, pos, rot, q):
    """Gravity and spring potential energy (J) of one configuration (``q`` continuous joint
    variables for torsional springs); gravity's zero is at the world origin."""
    V = 0.0
    for b in range(m.body_mass.shape[0]):
        V -= m.body_mass[b] * (m.gravity[0] * pos[b, 0] + m.gravity[1] * pos[b, 1] + m.gravity[2] * pos[b, 2])
    for e in range(m.axial_parameters.shape[0]):
        L = axial_geometry(m.axial_bodies[e, 0], m.axial_bodies[e, 1], row3(m.axial_points[e], 0),
                           row3(m.axial_points[e], 1), pos, rot)[0]
        V += 0.5 * m.axial_parameters[e, K_STIFFNESS] * (L - m.axial_parameters[e, K_FREE_POSITION]) ** 2
    for e in range(m.torsional_parameters.shape[0]):
        V += 0.5 * m.torsional_parameters[e, K_STIFFNESS] * (
            q[m.torsional_index[e, 1]] - m.torsional_parameters[e, K_FREE_POSITION]) ** 2
    return V
