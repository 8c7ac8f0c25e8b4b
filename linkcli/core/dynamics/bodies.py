"""Rigid bodies in maximal coordinates, derived from a compiled mechanism.

Every link except the base (link 0) is one body. A body's reference point is its centre of
mass (CG) and its axes are the link-frame axes, so that

    T_world_link = [[R, x - R @ cg], [0, 1]]

with ``x`` (m, world) the CG position, ``R`` the link rotation and ``cg`` the CG in link
coordinates. Planar bodies move in the world x-y plane: ``x = (x, y, 0)``, ``R = Rz(angle)``
with a continuous (unwrapped) angle in rad; their mass matrix is ``diag(m, m, Izz)``. Spatial
bodies carry a full rotation matrix; their rotational inertia in world axes is
``R @ J @ R.T`` with ``J`` (kg m^2) about the CG in link axes.

Velocities: ``v`` (m/s, world) of the CG and ``w`` (rad/s, world) angular velocity; planar
``w = (0, 0, w_z)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import forward
from ..mechanism import CompiledMechanism

REGULARISATION = 1e-6  # relative size of the mass/inertia given to a body that has none


@dataclass(frozen=True)
class BodyState:
    """Positions and velocities of the bodies, batch dimensions allowed in front.

    pos (..., n_bodies, 3) m, CG in world; rot (..., n_bodies, 3, 3); angle (..., n_bodies) rad
    (planar: continuous rotation about z; spatial: zeros); vel (..., n_bodies, 3) m/s CG
    velocity; omega (..., n_bodies, 3) rad/s world angular velocity.
    """

    pos: np.ndarray
    rot: np.ndarray
    angle: np.ndarray
    vel: np.ndarray
    omega: np.ndarray


def body_links(mech: CompiledMechanism) -> tuple[np.ndarray, np.ndarray]:
    """``(body_link (n_bodies,), link_body (n_links,))``: the link of each body and the body of
    each link (-1 for the base)."""
    body_link = np.arange(1, mech.n_links, dtype=np.int64)
    link_body = np.arange(-1, mech.n_links - 1, dtype=np.int64)
    return body_link, link_body


def inertial_properties(mech: CompiledMechanism) -> tuple[np.ndarray, np.ndarray]:
    """``(mass (n_bodies,) kg, inertia (n_bodies, 3, 3) kg m^2 about the CG in link axes)``;
    planar bodies keep only Izz."""
    mass = np.array(mech.link_mass[1:], dtype=float)
    inertia = np.array(mech.link_inertia[1:], dtype=float).reshape(-1, 3, 3)
    if mech.planar:
        izz = inertia[:, 2, 2].copy()
        inertia[:] = 0.0
        inertia[:, 2, 2] = izz
    return mass, inertia


def regularise(mass: np.ndarray, inertia: np.ndarray, planar: bool, names, length: float
               ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Give every body whose mass is zero or whose inertia is singular a small mass/inertia (in
    the deficient principal directions only) so that the step equations are solvable; called
    when the mass matrix is singular on the motions the joints allow. Sizes: ``REGULARISATION``
    times the largest body mass (1 kg if none) and that mass times ``length**2`` (m). Returns
    the new arrays and one warning per changed body."""
    mass, inertia = mass.copy(), inertia.copy()
    m_ref = float(mass.max()) if mass.size and mass.max() > 0 else 1.0
    i_ref = m_ref * length**2
    warnings = []
    for b in range(len(mass)):
        changed = []
        if mass[b] <= REGULARISATION * m_ref:
            mass[b] = max(mass[b], REGULARISATION * m_ref)
            changed.append("mass")
        if planar:
            if inertia[b, 2, 2] <= REGULARISATION * i_ref:
                inertia[b, 2, 2] = max(inertia[b, 2, 2], REGULARISATION * i_ref)
                changed.append("inertia")
        else:  # raise only the deficient principal moments, keep the others exactly
            eig, V = np.linalg.eigh(inertia[b])
            floor = REGULARISATION * max(eig.max(), i_ref)
            low = eig <= floor
            if np.any(low):
                inertia[b] += (V[:, low] * (floor - eig[low])) @ V[:, low].T
                changed.append("inertia")
        if changed:
            warnings.append(f"link '{names[b]}' has no {' or '.join(changed)} (in some direction) and the mass "
                            f"matrix is singular on the mechanism's motions: added a regularising "
                            f"{' and '.join(changed)} of relative size {REGULARISATION:g}")
    return mass, inertia, warnings


def state_from_joints(mech: CompiledMechanism, q: np.ndarray, qd: np.ndarray) -> BodyState:
    """Body poses and velocities of the joint configuration ``q`` (n_q,) with joint rates
    ``qd`` (n_q,) via tree forward kinematics (link twists ``J_link @ qd``)."""
    tk = forward.tree_kinematics(mech, q, jacobian=True)
    T = tk.T_world_link[1:]
    twist = tk.J_link[1:] @ np.asarray(qd, dtype=float)  # (n_b, 6) spatial (v at origin, w)
    rot = T[:, :3, :3].copy()
    pos = T[:, :3, 3] + np.einsum("bij,bj->bi", rot, mech.link_cg[1:])
    omega = twist[:, 3:].copy()
    vel = twist[:, :3] + np.cross(omega, pos)
    angle = np.arctan2(rot[:, 1, 0], rot[:, 0, 0]) if mech.planar else np.zeros(len(pos))
    if mech.planar:  # exactly in the plane
        pos[:, 2] = vel[:, 2] = 0.0
        omega[:, :2] = 0.0
    return BodyState(pos, rot, angle, vel, omega)
