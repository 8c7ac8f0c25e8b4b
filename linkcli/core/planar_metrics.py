"""Classic planar linkage metrics where they apply: four-bar loops (four links joined in a ring
by four revolute joints, one of them the base), Grashof classification, the analytic range of
motion of a four-bar's input, and the transmission angle along a sweep.

Lengths are distances between a link's two joint centres (m); angles in radians.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .forward import link_poses, planar_link_poses, planar_point, planar_steps
from .mechanism import REVOLUTE, CompiledMechanism


@dataclass(frozen=True)
class FourBarLoop:
    """A four-bar ring: ``joints`` in ring order (ground-input, input-coupler, coupler-output,
    output-ground); ``links`` (ground, input, coupler, output); ``lengths`` (d, a, b, c) =
    (ground, input, coupler, output) in m."""

    joints: tuple[int, int, int, int]
    links: tuple[int, int, int, int]
    lengths: tuple[float, float, float, float]


def _joint_centre(mech: CompiledMechanism, j: int, link: int) -> np.ndarray:
    """Joint-frame origin of joint j in the frame of ``link`` (one of its two links)."""
    T = mech.T_parent_joint[j] if mech.joint_parent[j] == link else mech.T_child_joint[j]
    return T[:3, 3]


def fourbar_loops(mech: CompiledMechanism) -> list[FourBarLoop]:
    """Every four-bar ring of revolutes through the base whose input (the link next to the base
    at an actuated joint, when there is one) is identifiable. Planar mechanisms only."""
    if not mech.planar:
        return []
    rev = [j for j in range(mech.n_joints) if mech.joint_type[j] == REVOLUTE]
    by_link: dict[int, list[int]] = {}
    for j in rev:
        for link in (mech.joint_parent[j], mech.joint_child[j]):
            by_link.setdefault(int(link), []).append(j)
    other = lambda j, link: int(mech.joint_child[j] if mech.joint_parent[j] == link else mech.joint_parent[j])  # noqa: E731
    found, seen = [], set()
    for j0 in by_link.get(0, []):
        l1 = other(j0, 0)
        for j1 in by_link.get(l1, []):
            l2 = other(j1, l1)
            if j1 == j0 or l2 == 0:
                continue
            for j2 in by_link.get(l2, []):
                l3 = other(j2, l2)
                if j2 == j1 or l3 in (0, l1):
                    continue
                for j3 in by_link.get(l3, []):
                    if j3 == j2 or other(j3, l3) != 0 or j3 == j0:
                        continue
                    key = frozenset((j0, j1, j2, j3))
                    if key in seen:
                        continue
                    if mech.joint_actuated[j3] and not mech.joint_actuated[j0]:
                        continue  # the same ring is found from the other side with the input first
                    seen.add(key)
                    links = (0, l1, l2, l3)
                    joints = (j0, j1, j2, j3)
                    d = np.linalg.norm(_joint_centre(mech, j0, 0) - _joint_centre(mech, j3, 0))
                    a = np.linalg.norm(_joint_centre(mech, j0, l1) - _joint_centre(mech, j1, l1))
                    b = np.linalg.norm(_joint_centre(mech, j1, l2) - _joint_centre(mech, j2, l2))
                    c = np.linalg.norm(_joint_centre(mech, j2, l3) - _joint_centre(mech, j3, l3))
                    found.append(FourBarLoop(joints, links, (float(d), float(a), float(b), float(c))))
    return found


def grashof_class(d: float, a: float, b: float, c: float, rtol: float = 1e-9) -> str:
    """Grashof classification of a four-bar with ground d, input a, coupler b, output c:
    crank-rocker, double-crank, double-rocker (Grashof, shortest = coupler), change-point
    (s + l = p + q), or triple-rocker (non-Grashof)."""
    lengths = [d, a, b, c]
    s_min, l_max = min(lengths), max(lengths)  # Grashof's s and l
    pq = sum(lengths) - s_min - l_max
    if abs(s_min + l_max - pq) <= rtol * max(l_max, 1e-300):
        return "change-point"
    if s_min + l_max > pq:
        return "triple-rocker"
    shortest = int(np.argmin(lengths))
    return {0: "double-crank", 1: "crank-rocker", 2: "double-rocker", 3: "rocker-crank"}[shortest]


def input_range(loop: FourBarLoop) -> tuple[float, float] | None:
    """Range of the input angle theta (rad, measured from the ground line joint0 -> joint3 to the
    input line) over which the loop assembles: (theta_min, theta_max) with the range centred on
    theta = 0 or pi as appropriate, or None when the input turns fully (or never assembles)."""
    d, a, b, c = loop.lengths
    # |A - O4|^2 = a^2 + d^2 - 2 a d cos(theta) must lie in [(b - c)^2, (b + c)^2]
    lo, hi = (b - c) ** 2, (b + c) ** 2
    cos_max = (a * a + d * d - lo) / (2 * a * d)  # cos(theta) <= cos_max  (distance >= |b - c|)
    cos_min = (a * a + d * d - hi) / (2 * a * d)  # cos(theta) >= cos_min  (distance <= b + c)
    if cos_max >= 1 and cos_min <= -1:
        return None
    if cos_min > -1 and cos_max < 1:
        return None if cos_min > cos_max else (float(np.arccos(cos_max)), float(np.arccos(cos_min)))
    if cos_min > -1:  # the input swings about theta = 0: |theta| <= arccos(cos_min)
        t = float(np.arccos(np.clip(cos_min, -1, 1)))
        return (-t, t)
    t = float(np.arccos(np.clip(cos_max, -1, 1)))  # it swings about pi: theta in [t, 2 pi - t]
    return (t, 2 * np.pi - t)


def transmission_angle(mech: CompiledMechanism, loop: FourBarLoop, q: np.ndarray) -> np.ndarray:
    """Transmission angle (..., ) in [0, pi] (rad): the angle between the coupler line
    (joint1 -> joint2) and the output line (joint3 -> joint2), at configurations q (..., n_q)."""
    if planar_steps(mech) is not None:
        return transmission_angle_planar(mech, loop, planar_link_poses(mech, q))
    T = link_poses(mech, q)
    j0, j1, j2, j3 = loop.joints
    _, l1, l2, l3 = loop.links
    p1 = _world(T, l2, _joint_centre(mech, j1, l2))
    p2 = _world(T, l2, _joint_centre(mech, j2, l2))
    p3 = _world(T, l3, _joint_centre(mech, j3, l3))
    u, v = p1 - p2, p3 - p2
    cos = np.einsum("...i,...i->...", u, v) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))
    return np.arccos(np.clip(cos, -1.0, 1.0))


def transmission_angle_planar(mech: CompiledMechanism, loop: FourBarLoop, P: np.ndarray,
                              T_parent_joint: np.ndarray | None = None,
                              T_child_joint: np.ndarray | None = None) -> np.ndarray:
    """:func:`transmission_angle` (..., ) rad from planar link poses P (..., n_links, 4)
    (:func:`~linkcli.core.forward.planar_link_poses`). ``T_parent_joint`` / ``T_child_joint``:
    optional joint frames (..., n_joints, 4, 4) of variants of the mechanism, broadcast against
    P's batch (default the mechanism's)."""
    TP = mech.T_parent_joint if T_parent_joint is None else T_parent_joint
    TC = mech.T_child_joint if T_child_joint is None else T_child_joint
    j0, j1, j2, j3 = loop.joints
    _, l1, l2, l3 = loop.links

    def world(j: int, link: int):  # joint j's centre on ``link`` in world (x, y), as in _joint_centre
        p = (TP if mech.joint_parent[j] == link else TC)[..., j, :2, 3]
        return planar_point(tuple(P[..., link, i] for i in range(4)), p[..., 0], p[..., 1])

    (x1, y1), (x2, y2), (x3, y3) = world(j1, l2), world(j2, l2), world(j3, l3)
    ux, uy, wx, wy = x1 - x2, y1 - y2, x3 - x2, y3 - y2
    cos = (ux * wx + uy * wy) / (np.sqrt(ux * ux + uy * uy) * np.sqrt(wx * wx + wy * wy))
    return np.arccos(np.clip(cos, -1.0, 1.0))


def input_angle(mech: CompiledMechanism, loop: FourBarLoop, q: np.ndarray) -> np.ndarray:
    """Geometric input angle theta (..., ) (rad) of the input link from the ground line."""
    T = link_poses(mech, q)
    j0, j1, _, j3 = loop.joints
    o2 = _joint_centre(mech, j0, 0)
    o4 = _joint_centre(mech, j3, 0)
    pa = _world(T, loop.links[1], _joint_centre(mech, j1, loop.links[1]))
    g = o4 - o2
    r = pa - o2
    return np.arctan2(g[0] * r[..., 1] - g[1] * r[..., 0], g[0] * r[..., 0] + g[1] * r[..., 1])


def _world(T: np.ndarray, link: int, p: np.ndarray) -> np.ndarray:
    return (T[..., link, :3, :3] @ p) + T[..., link, :3, 3]
