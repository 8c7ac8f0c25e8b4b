"""What the masses the integrator uses make of the mechanism's freedoms, at one configuration:
which links have a free direction without mass or inertia, and how fast each spring's mode is.

All in maximal coordinates (:mod:`.bodies`): the motions the joints allow are the null space
``N`` of the constraint Jacobian ``G`` (all rows, driver rows included: a driven freedom is
not free), coordinates scaled to one unit (positions in m, rotations times the mechanism size
``L``, so that a rank threshold and a mass in kg measure every direction alike).

* :func:`massless_freedoms`: the links moved by the directions of ``N`` along which the file's
  own mass matrix (before :func:`.bodies.regularise`) vanishes: a link that truly has a free
  direction without mass or inertia (a point mass on a pin; not a block on a prismatic joint
  whose zero inertia its joint does not let turn, nor a rod about its own axis when a joint holds
  that spin).
* :func:`spring_modes`: a spring of stiffness ``k`` along a coordinate ``s`` with gradient ``g``
  (``ds = g . dx``) is the rank-one stiffness ``k g g^T``; on the allowed motions its only
  nonzero generalised eigenvalue is ``omega^2 = k g^T N (N^T M N)^-1 N^T g`` (the stiffness over
  the effective mass/inertia along the spring, ``m_eff = k / omega^2``), with ``M`` the mass
  matrix the integrator uses (regularised masses included). The spring is the explicit force of
  Stoermer-Verlet, stable for ``omega h < 2``. A mode whose ``omega^2`` follows the size of
  the regularising masses (doubling them changes it by more than :data:`REGULARISED_CHANGE`)
  acts on a freedom without inertia of its own: its motion is an artefact of the
  regularisation (``omega^2`` halves when they double).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..mechanism import CompiledMechanism
from .bodies import inertial_properties
from .setup import mass_matrix

#: relative change of a spring mode's omega^2 when the regularising masses double beyond which the
#: mode is governed by them (a mode on a freedom with inertia of its own changes by ~1e-6; one on
#: a freedom without changes by 1/2)
REGULARISED_CHANGE = 0.1
#: eigenvalues of the allowed motions' mass matrix below this times the largest are "no mass"
MASSLESS_RTOL = 1e-12


@dataclass(frozen=True)
class SpringMode:
    """A spring's mode: ``omega`` (rad/s) with the integrator's masses, ``inertia`` the effective
    mass (kg, linear spring) or inertia (kg m^2, torsional) along it, ``regularised`` True when
    that inertia is the regularisation's (no inertia of its own), ``links`` the links it moves
    most (names)."""

    name: str
    kind: str  # "linear" or "torsional"
    omega: float
    inertia: float
    regularised: bool
    links: tuple[str, ...]


def _scales(model) -> np.ndarray:
    nd = 3 if model.planar else 6
    c = np.ones(nd)
    c[2 if model.planar else slice(3, 6)] = model.mechanism_size
    return np.tile(c, len(model.body_mass))


def _allowed(G: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Orthonormal basis (scaled coordinates) of the null space of ``G`` (rows x raw coordinates)."""
    n = len(c)
    if not G.shape[0]:
        return np.eye(n)
    _, s, Vt = np.linalg.svd(G / c, full_matrices=True)
    rank = int(np.sum(s > 1e-9 * max(s[0], 1e-300)))
    return Vt[rank:].T


def _body_names(mech: CompiledMechanism, d: np.ndarray, nd: int, share: float = 0.1) -> tuple[str, ...]:
    """Links whose part of the (scaled) direction ``d`` is at least ``share`` of the largest."""
    per = np.linalg.norm(d.reshape(-1, nd), axis=1)
    if not per.max(initial=0.0) > 0:
        return ()
    return tuple(mech.link_names[b + 1] for b in np.flatnonzero(per >= share * per.max()))


def massless_freedoms(mech: CompiledMechanism, model, G: np.ndarray, rot: np.ndarray) -> tuple[str, ...]:
    """Links moved by an allowed direction (null space of the rows ``G``) without mass or inertia
    in the file's own masses (see the module docstring); ``rot`` (n_b, 3, 3) body rotations."""
    c = _scales(model)
    N = _allowed(G, c)
    if not N.shape[1]:
        return ()
    mass, inertia = inertial_properties(mech)
    M = mass_matrix(bool(model.planar), mass, inertia, rot) / np.outer(c, c)
    ev, V = np.linalg.eigh(N.T @ M @ N)
    low = ev <= MASSLESS_RTOL * max(ev.max(), float(np.abs(M).max()), 1e-300)
    nd = 3 if model.planar else 6
    names: list[str] = []
    for k in np.flatnonzero(low):
        names += [n for n in _body_names(mech, N @ V[:, k], nd) if n not in names]
    return tuple(names)


def _point(mech, b_link: int, frame: int, pos, rot) -> np.ndarray:
    p_link = mech.T_link_frame[frame][:3, 3]
    if b_link == 0:
        return p_link.copy()
    b = b_link - 1
    return pos[b] + rot[b] @ (p_link - mech.link_cg[b_link])


def _gradients(mech: CompiledMechanism, model, pos, rot) -> list[tuple[str, str, float, np.ndarray]]:
    """``(name, kind, stiffness, g)`` of every spring (k > 0), ``g`` (n,) the gradient of its
    coordinate (m or rad) in the raw body coordinates (planar: x, y, angle; spatial: v, w)."""
    planar, nd = bool(model.planar), 3 if model.planar else 6
    n = nd * len(model.body_mass)
    out = []
    for k, name in enumerate(mech.axial_names):
        if not mech.axial_stiffness[k] > 0:
            continue
        fa, fb = int(mech.axial_frame_a[k]), int(mech.axial_frame_b[k])
        la, lb = int(mech.frame_link[fa]), int(mech.frame_link[fb])
        pa, pb = _point(mech, la, fa, pos, rot), _point(mech, lb, fb, pos, rot)
        d = pb - pa
        length = float(np.linalg.norm(d))
        if not length > 0:
            continue
        u = d / length
        g = np.zeros(n)
        for link, p, sign in ((la, pa, -1.0), (lb, pb, 1.0)):
            if link == 0:
                continue
            b = link - 1
            arm = np.cross(p - pos[b], u)
            g[nd * b:nd * b + 3] += sign * (u if not planar else np.r_[u[:2], arm[2]])
            if not planar:
                g[nd * b + 3:nd * b + 6] += sign * arm
        out.append((name, "linear", float(mech.axial_stiffness[k]), g))
    for k, name in enumerate(mech.torsional_names):
        if not mech.torsional_stiffness[k] > 0:
            continue
        j = int(mech.torsional_joint[k])
        parent, child = int(mech.joint_parent[j]), int(mech.joint_child[j])
        axis_joint = mech.q_axis[mech.joint_q_start[j]]
        carrier = child if child > 0 else parent
        R = rot[carrier - 1] if carrier > 0 else np.eye(3)
        T = mech.T_child_joint[j] if carrier == child else mech.T_parent_joint[j]
        axis = R @ T[:3, :3] @ axis_joint
        g = np.zeros(n)
        for link, sign in ((parent, -1.0), (child, 1.0)):
            if link == 0:
                continue
            b = link - 1
            if planar:
                g[nd * b + 2] += sign * axis[2]
            else:
                g[nd * b + 3:nd * b + 6] += sign * axis
        out.append((name, "torsional", float(mech.torsional_stiffness[k]), g))
    return out


def spring_modes(mech: CompiledMechanism, model, G: np.ndarray, pos: np.ndarray, rot: np.ndarray
                 ) -> list[SpringMode]:
    """The mode of every spring at the body configuration ``pos`` (n_b, 3) m, ``rot`` (n_b, 3,
    3), with the masses of ``model`` (the integrator's) on the motions the rows ``G`` allow
    (see the module docstring). Springs the joints hold fixed are left out."""
    c = _scales(model)
    N = _allowed(G, c)
    if not N.shape[1]:
        return []
    planar, nd = bool(model.planar), 3 if model.planar else 6
    mass0, inertia0 = inertial_properties(mech)
    M_used = mass_matrix(planar, model.body_mass, model.body_inertia, rot)
    M_file = mass_matrix(planar, mass0, inertia0, rot)
    reduced = [N.T @ (M / np.outer(c, c)) @ N for M in (M_used, 2.0 * M_used - M_file)]  # regularisation x2
    out = []
    for name, kind, k, g in _gradients(mech, model, pos, rot):
        gr = N.T @ (g / c)
        if not np.linalg.norm(gr) > 1e-12 * max(float(np.linalg.norm(g / c)), 1e-300):
            continue  # the joints hold this spring's coordinate
        x_used, x_double = (np.linalg.solve(Mr, gr) for Mr in reduced)
        flex_used, flex_double = float(gr @ x_used), float(gr @ x_double)  # 1 / m_eff
        omega = float(np.sqrt(k * flex_used))
        regularised = abs(flex_double / flex_used - 1.0) > REGULARISED_CHANGE
        out.append(SpringMode(name, kind, omega, 1.0 / flex_used, regularised, _body_names(mech, N @ x_used, nd)))
    return out
