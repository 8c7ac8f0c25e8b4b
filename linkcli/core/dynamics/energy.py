"""Kinetic and potential energy of saved body states."""

from __future__ import annotations

import numpy as np

from ..jit import maybe_njit
from .forces import potential_energy
from .structs import as_kernel


@maybe_njit
def kinetic_energy(m, rot, vel, omg):
    """Kinetic energy (J) of one state: ``1/2 m |v|^2 + 1/2 w . (R J R^T) w`` per body."""
    T = 0.0
    for b in range(m.b_mass.shape[0]):
        T += 0.5 * m.b_mass[b] * (vel[b, 0] ** 2 + vel[b, 1] ** 2 + vel[b, 2] ** 2)
        # w . R J R^T w = (R^T w) . J (R^T w)
        wb0 = rot[b, 0, 0] * omg[b, 0] + rot[b, 1, 0] * omg[b, 1] + rot[b, 2, 0] * omg[b, 2]
        wb1 = rot[b, 0, 1] * omg[b, 0] + rot[b, 1, 1] * omg[b, 1] + rot[b, 2, 1] * omg[b, 2]
        wb2 = rot[b, 0, 2] * omg[b, 0] + rot[b, 1, 2] * omg[b, 1] + rot[b, 2, 2] * omg[b, 2]
        J = m.b_inertia[b]
        T += 0.5 * (wb0 * (J[0, 0] * wb0 + J[0, 1] * wb1 + J[0, 2] * wb2)
                    + wb1 * (J[1, 0] * wb0 + J[1, 1] * wb1 + J[1, 2] * wb2)
                    + wb2 * (J[2, 0] * wb0 + J[2, 1] * wb1 + J[2, 2] * wb2))
    return T


@maybe_njit
def energies(m, pos, rot, vel, omg, q, kinetic, potential):
    """Kinetic and potential energy (J) of every sample ``s`` of the saved states
    (``pos (n_s, n_b, 3)`` etc.) into ``kinetic (n_s,)`` and ``potential (n_s,)``."""
    for s in range(pos.shape[0]):
        kinetic[s] = kinetic_energy(m, rot[s], vel[s], omg[s])
        potential[s] = potential_energy(m, pos[s], rot[s], q[s])


def energy_history(m, pos, rot, vel, omg, q) -> tuple[np.ndarray, np.ndarray]:
    """``(kinetic (n_s,), potential (n_s,))`` J of saved states."""
    kin, pot = np.zeros(len(pos)), np.zeros(len(pos))
    energies(as_kernel(m), pos, rot, vel, omg, q, kin, pot)
    return kin, pot
