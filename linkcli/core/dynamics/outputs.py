"""Everything reported per saved sample, derived from the saved body states in one pass.

The time loop stores only body states, joint variables, node multipliers and work; this module
turns them into link poses and velocities, joint rates, element states, reactions, energies and
the constraint residual, sample by sample with one joint-geometry evaluation each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..jit import maybe_njit
from .energy import kinetic_energy, potential_energy
from .forces import element_outputs
from .kinematics import joint_geometry, joint_rates
from .layout import N_GEOMETRY
from .reactions import joint_wrenches
from .structs import as_kernel


@dataclass(frozen=True)
class SampleOutputs:
    """Arrays over ``n_s`` samples: link_pose (n_s, n_links, 4, 4), link_velocity
    (n_s, n_links, 6) (link-origin velocity, angular velocity), qd (n_s, n_q), axial
    (n_s, n_axial, 3) and torsional (n_s, n_tors, 3) (see forces.element_outputs), force and
    moment (n_s, n_joints, 3) (joint reactions on the child), kinetic, potential, residual (n_s,)."""

    link_pose: np.ndarray
    link_velocity: np.ndarray
    qd: np.ndarray
    axial: np.ndarray
    torsional: np.ndarray
    force: np.ndarray
    moment: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    residual: np.ndarray


def sample_outputs(m, cg, pos, rot, vel, omg, q, drv, lam) -> SampleOutputs:
    """Outputs of saved states (``m`` a DynModel namedtuple, ``cg`` (n_b, 3) the bodies' CGs in
    link coordinates, ``drv`` (n_s, n_drivers) driver values, ``lam`` (n_s, n_rows) multipliers)."""
    n_s, nb = pos.shape[0], pos.shape[1]
    z = lambda *shape: np.zeros((n_s,) + shape)  # noqa: E731
    o = SampleOutputs(z(nb + 1, 4, 4), z(nb + 1, 6), z(q.shape[1]), z(m.axial_parameters.shape[0], 3),
                      z(m.torsional_parameters.shape[0], 3),
                      z(m.joint_index.shape[0], 3), z(m.joint_index.shape[0], 3), z(), z(), z())
    _fill(as_kernel(m), np.ascontiguousarray(cg, dtype=float), pos, rot, vel, omg, q, drv, lam, o.link_pose,
          o.link_velocity, o.qd, o.axial, o.torsional, o.force, o.moment, o.kinetic, o.potential, o.residual)
    return o


@maybe_njit
def _fill(m, cg, pos, rot, vel, omg, q, drv, lam, T, V, qd, axial, tors, force, moment, kin, pot, res):
    nj = m.joint_index.shape[0]
    JW = np.zeros((nj, N_GEOMETRY, 3))
    S, N, rhs = np.zeros((2, 3, 3)), np.zeros((3, 7)), np.zeros(3)
    idx, piv = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    fa, ma = np.zeros((nj, 3)), np.zeros((nj, 3))
    for s in range(pos.shape[0]):
        joint_geometry(m, pos[s], rot[s], JW)
        _links(cg, pos[s], rot[s], vel[s], omg[s], T[s], V[s])
        joint_rates(m, rot[s], vel[s], omg[s], JW, q[s], qd[s], S, N, rhs, idx, piv)
        element_outputs(m, pos[s], rot[s], vel[s], omg[s], q[s], qd[s], axial[s], tors[s])
        res[s] = joint_wrenches(m, rot[s], JW, drv[s], lam[s], force[s], moment[s], fa, ma)
        kin[s] = kinetic_energy(m, rot[s], vel[s], omg[s])
        pot[s] = potential_energy(m, pos[s], rot[s], q[s])


@maybe_njit
def _links(cg, pos, rot, vel, omg, T, V):
    """``T_world_link`` (n_links, 4, 4) and link-origin velocities ``V`` (n_links, 6) of one
    state; the base (row 0) is the identity at rest. The link origin is ``x_cg - R cg``."""
    for i in range(4):
        T[0, i, i] = 1.0
    for b in range(pos.shape[0]):
        t = T[b + 1]
        for i in range(3):
            arm = -(rot[b, i, 0] * cg[b, 0] + rot[b, i, 1] * cg[b, 1] + rot[b, i, 2] * cg[b, 2])
            for k in range(3):
                t[i, k] = rot[b, i, k]
            t[i, 3] = pos[b, i] + arm
        t[3, 3] = 1.0
        for i in range(3):
            V[b + 1, 3 + i] = omg[b, i]
        ax, ay, az = t[0, 3] - pos[b, 0], t[1, 3] - pos[b, 1], t[2, 3] - pos[b, 2]
        V[b + 1, 0] = vel[b, 0] + omg[b, 1] * az - omg[b, 2] * ay
        V[b + 1, 1] = vel[b, 1] + omg[b, 2] * ax - omg[b, 0] * az
        V[b + 1, 2] = vel[b, 2] + omg[b, 0] * ay - omg[b, 1] * ax
