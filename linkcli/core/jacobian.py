"""Effector Jacobians, the serial geometric Jacobian, and their metrics (batched).

Rows are ordered ``(v, w)``: the linear velocity of the tool-frame origin and the angular
velocity (planar: ``vx, vy, wz``). ``frame="base"`` expresses both in the base (world)
frame; ``frame="effector"`` in the tool frame (the reference library's mechanism Jacobian).
The default is ``base``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .forward import effector_pose, tree_kinematics
from .loop_closure import constraints, tangent_map
from .mechanism import CompiledMechanism

PLANAR_ROWS = np.array([0, 1, 5])


def _point_jacobian(J_link: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(..., 6, n) twist Jacobian -> (..., 6, n) of (point velocity at p, angular velocity)."""
    v = J_link[..., :3, :] + np.cross(J_link[..., 3:, :], p[..., :, None], axisa=-2, axisb=-2, axisc=-2)
    return np.concatenate([v, J_link[..., 3:, :]], axis=-2)


def _express(mech: CompiledMechanism, J6: np.ndarray, T_tool: np.ndarray, frame: str) -> np.ndarray:
    if frame == "effector":
        Rt = np.swapaxes(T_tool[..., :3, :3], -1, -2)
        J6 = np.concatenate([Rt @ J6[..., :3, :], Rt @ J6[..., 3:, :]], axis=-2)
    elif frame != "base":
        raise ValueError(f"frame must be 'base' or 'effector', not {frame!r}")
    return J6[..., PLANAR_ROWS, :] if mech.planar else J6


def geometric_jacobian(mech: CompiledMechanism, q: np.ndarray, frame: str = "base") -> np.ndarray:
    """Tool-point Jacobian with respect to ALL joint variables, ignoring loop closure:
    (..., 6, n_q) (planar (..., 3, n_q)). For a serial arm this is the classic geometric
    Jacobian."""
    kin = tree_kinematics(mech, q, jacobian_links=[mech.frame_link[mech.effector_frame]])
    T_tool = effector_pose(mech, kin.T_world_link)
    J6 = _point_jacobian(kin.J_link[..., 0, :, :], T_tool[..., :3, 3])
    return _express(mech, J6, T_tool, frame)


def effector_jacobian(mech: CompiledMechanism, q: np.ndarray, frame: str = "base") -> np.ndarray:
    """Actuated rates -> tool twist at an assembled configuration ``q``: (..., 6, n_act)
    (planar (..., 3, n_act)). Loop closure enters through the tangent map N (qdot = N qa_dot)."""
    ev = constraints(mech, q)
    N = tangent_map(mech, ev.J)
    T_tool = effector_pose(mech, ev.kin.T_world_link)
    J6 = _point_jacobian(ev.kin.J_link[..., mech.frame_link[mech.effector_frame], :, :], T_tool[..., :3, 3])
    return _express(mech, J6 @ N, T_tool, frame)


@dataclass(frozen=True)
class JacobianMetrics:
    """singular_values (..., k) descending; condition (...,) (inf when rank deficient);
    manipulability (...,) product of singular values (Yoshikawa's sqrt(det(J J^T)))."""

    singular_values: np.ndarray
    condition: np.ndarray
    manipulability: np.ndarray


def characteristic_length(mech: CompiledMechanism) -> float:
    """The mechanism's characteristic length (m): the largest distance between two frames of one
    link (its origin included), i.e. the size of its largest link. A geometric constant (no
    configuration, no file unit), 1 m when every link is a point."""
    best = 0.0
    p = mech.T_link_frame[:, :3, 3]
    for link in range(mech.n_links):
        pts = np.vstack([np.zeros((1, 3)), p[mech.frame_link == link]])
        d = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=-1)
        best = max(best, float(d.max(initial=0.0)))
    return best if best > 0 else 1.0


def homogenized_jacobian(mech: CompiledMechanism, J: np.ndarray, length: float) -> np.ndarray:
    """The SI Jacobian (..., m, n_act) made dimensionless with the characteristic ``length`` L
    (m): linear-velocity rows divided by L, prismatic input columns multiplied by L. Its
    singular values, condition number and manipulability do not depend on the file's units
    (they would with m/s and rad/s, or m and deg, mixed as they are)."""
    n_lin = 2 if mech.planar else 3
    rows = np.ones(J.shape[-2])
    rows[:n_lin] = 1.0 / length
    cols = np.where(mech.q_is_rotation[mech.q_actuated], 1.0, length)
    return J * rows[:, None] * cols[None, :]


def jacobian_metrics(J: np.ndarray) -> JacobianMetrics:
    """Metrics of a (..., m, n) Jacobian, used as given: homogenise a mixed linear/angular
    Jacobian first (:func:`homogenized_jacobian`), or the numbers depend on its units."""
    s = np.linalg.svd(J, compute_uv=False)
    with np.errstate(divide="ignore", invalid="ignore"):  # rank deficient: inf (0/0 never selected)
        cond = np.where(s[..., -1] > 1e-14 * np.maximum(s[..., 0], 1e-300), s[..., 0] / s[..., -1], np.inf)
    return JacobianMetrics(s, cond, np.prod(s, axis=-1))
