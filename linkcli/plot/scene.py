"""What to draw for a mechanism at a configuration: pure geometry, numpy only (no matplotlib).

A :class:`Scene` lists the drawable elements of a compiled mechanism at joint variables ``q``
(SI, ``(n_q,)``) as arrays of world coordinates in the FILE'S LENGTH UNIT (the unit the axes of
a drawing are labelled with), each shaped ``(k, 3)`` (planar mechanisms have z = 0):

* :class:`LinkShape` per moving link: the distinct points on it (its frames' origins and the
  centres of the joint frames it carries) and what is drawn through them: a ``bar`` between two
  points, a filled ``polygon`` (the convex hull, vertices in order) through three or more, or a
  ``point``. The base link is not drawn as a link: its joint points get ground marks.
* :class:`JointMark` per joint: the centre of its joint frame on the parent link (revolute,
  spherical, universal ... drawn as circles), and its world axis.
* :class:`SliderMark` per prismatic/cylindrical joint: a block centred on the child's joint frame,
  on a guide line along the sliding axis through the parent's joint frame.
* :class:`GroundMark` per joint point on the base: a triangle and a hatched strip on the side of
  gravity (or -y planar, -z spatial when there is no gravity).
* :class:`Label` texts (link, joint and effector names) and the effector point.

Symbol sizes (joint radius, ground marks, slider blocks) are fractions of ``Scene.size``, the
extent of the mechanism, so drawings look alike at any scale; pass the same ``size`` to every
scene of an animation so the symbols do not change from frame to frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.forward import effector_pose, frame_poses, link_poses, tree_kinematics
from ..core.mechanism import CYLINDRICAL, JOINT_TYPE_NAMES, PRISMATIC, CompiledMechanism

SLIDING = (PRISMATIC, CYLINDRICAL)

#: symbol sizes as fractions of Scene.size
JOINT_RADIUS = 0.022
GROUND_WIDTH = 0.035  # half width of the ground triangle
GROUND_HEIGHT = 0.05
STRIP = 0.022  # thickness of hatched strips
BLOCK_LENGTH = 0.10
BLOCK_HEIGHT = 0.055


@dataclass(frozen=True)
class LinkShape:
    index: int
    name: str
    points: np.ndarray  # (k, 3) distinct points on the link (frame origins, joint centres)
    outline: np.ndarray  # bar (2, 3) ends; polygon (m, 3) hull vertices in order (open); point (1, 3)
    kind: str  # "bar" | "polygon" | "point"


@dataclass(frozen=True)
class JointMark:
    index: int
    name: str
    type: str  # "revolute", "prismatic", ... (JOINT_TYPE_NAMES)
    position: np.ndarray  # (3,) centre of the joint frame on the parent link
    child_position: np.ndarray  # (3,) centre of the joint frame on the child link
    axis: np.ndarray  # (3,) world unit axis of the joint's first variable (0 for fixed joints)
    ground: bool  # one of its two links is the base


@dataclass(frozen=True)
class SliderMark:
    joint: int
    name: str
    link: str  # the link carrying the block (the joint's child)
    anchor: np.ndarray  # (3,) joint frame origin on the parent (where the variable is 0)
    centre: np.ndarray  # (3,) block centre: joint frame origin on the child
    axis: np.ndarray  # (3,) world unit sliding axis
    guide: np.ndarray  # (2, 3) ends of the guide line (on the parent)
    block: np.ndarray  # (4, 3) corners of the block, in order
    strip: np.ndarray | None  # (4, 3) hatched strip along the guide when the parent is the base
    ground: bool


@dataclass(frozen=True)
class GroundMark:
    position: np.ndarray  # (3,) the base point (a joint centre)
    triangle: np.ndarray  # (3, 3) apex at the point, base on the gravity side
    strip: np.ndarray  # (4, 3) hatched strip under the triangle


@dataclass(frozen=True)
class Label:
    text: str
    position: np.ndarray  # (3,) anchor of the text
    kind: str  # "link" | "joint" | "effector"
    direction: np.ndarray = field(default_factory=lambda: np.zeros(3))  # (3,) unit: text extends this way


@dataclass(frozen=True)
class Scene:
    name: str
    planar: bool
    unit: str  # file length unit of every coordinate
    size: float  # reference length for symbol sizes (file units)
    q: np.ndarray  # (n_q,) SI, the configuration drawn
    links: tuple[LinkShape, ...]
    joints: tuple[JointMark, ...]
    sliders: tuple[SliderMark, ...]
    grounds: tuple[GroundMark, ...]
    labels: tuple[Label, ...]
    effector: np.ndarray  # (3,) effector (tool) point
    effector_name: str
    down: np.ndarray = field(default_factory=lambda: np.array([0.0, -1.0, 0.0]))  # (3,) unit

    @property
    def joint_radius(self) -> float:
        return JOINT_RADIUS * self.size

    def all_points(self) -> np.ndarray:
        """(k, 3) every coordinate of the scene (for axis limits)."""
        parts = [s.outline for s in self.links] + [s.points for s in self.links]
        parts += [j.position[None] for j in self.joints] + [j.child_position[None] for j in self.joints]
        parts += [s.guide for s in self.sliders] + [s.block for s in self.sliders]
        parts += [s.strip for s in self.sliders if s.strip is not None]
        parts += [g.triangle for g in self.grounds] + [g.strip for g in self.grounds]
        parts += [self.effector[None]]
        return np.concatenate([np.asarray(p, float).reshape(-1, 3) for p in parts])

    def bounds(self, extra: np.ndarray | None = None) -> np.ndarray:
        """(2, 3) lower and upper corner of everything drawn (joint circles included) and of the
        finite ``extra`` points (..., 3), e.g. a traced path or every animation frame."""
        p = self.all_points()
        r = self.joint_radius
        b = np.stack([np.nanmin(p, axis=0) - r, np.nanmax(p, axis=0) + r])
        if extra is not None:
            e = np.asarray(extra, float).reshape(-1, 3)
            e = e[np.all(np.isfinite(e), axis=1)]
            if len(e):
                b = np.stack([np.minimum(b[0], e.min(axis=0)), np.maximum(b[1], e.max(axis=0))])
        return b


# --- points on links, batched --------------------------------------------------------------------
def _point_owners(mech: CompiledMechanism) -> np.ndarray:
    """(n_frames + 2 n_joints,) link of every point returned by :func:`_points`."""
    return np.concatenate([mech.frame_link, mech.joint_parent, mech.joint_child]).astype(int)


def _points(mech: CompiledMechanism, T_world_link: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World points (m): frame origins (..., n_frames, 3), joint frame origins on the parent and
    on the child (..., n_joints, 3) each."""
    frames = frame_poses(mech, T_world_link)[..., :3, 3]
    parent = (T_world_link[..., mech.joint_parent, :, :] @ mech.T_parent_joint)[..., :3, 3]
    child = (T_world_link[..., mech.joint_child, :, :] @ mech.T_child_joint)[..., :3, 3]
    return frames, parent, child


def reference_size(mech: CompiledMechanism, q: np.ndarray) -> float:
    """Extent (file units) of all link points over configurations ``q`` (..., n_q) SI: the
    largest coordinate range. Symbol sizes are fractions of it."""
    T = link_poses(mech, np.asarray(q, float))
    p = np.concatenate(_points(mech, T), axis=-2).reshape(-1, 3) / mech.length_scale
    p = p[np.all(np.isfinite(p), axis=1)]
    if len(p) == 0:
        return 1.0
    extent = float(np.max(np.ptp(p, axis=0)))
    return extent if extent > 0 else 1.0


def effector_path(mech: CompiledMechanism, q: np.ndarray) -> np.ndarray:
    """(n, 3) effector (tool) positions in file units for configurations q (n, n_q) SI; rows
    of q holding NaN (points that did not assemble) give NaN."""
    q = np.atleast_2d(np.asarray(q, float))
    return effector_pose(mech, link_poses(mech, q))[:, :3, 3] / mech.length_scale


def frame_path(mech: CompiledMechanism, q: np.ndarray, frame: int) -> np.ndarray:
    """(n, 3) positions of one named frame (index) in file units over q (n, n_q) SI."""
    q = np.atleast_2d(np.asarray(q, float))
    return frame_poses(mech, link_poses(mech, q))[:, frame, :3, 3] / mech.length_scale


# --- hulls --------------------------------------------------------------------------------------
def _hull_2d(xy: np.ndarray, tol: float) -> list[int]:
    """Indices of the convex hull of 2-D points, counter-clockwise (Andrew's monotone chain);
    collinear points are dropped, so collinear input gives its two extreme points."""
    order = sorted(range(len(xy)), key=lambda i: (xy[i, 0], xy[i, 1]))
    if len(order) <= 2:
        return order

    def cross(o, a, b):
        return (xy[a, 0] - xy[o, 0]) * (xy[b, 1] - xy[o, 1]) - (xy[a, 1] - xy[o, 1]) * (xy[b, 0] - xy[o, 0])

    lower: list[int] = []
    for i in order:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], i) <= tol:
            lower.pop()
        lower.append(i)
    upper: list[int] = []
    for i in reversed(order):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], i) <= tol:
            upper.pop()
        upper.append(i)
    return lower[:-1] + upper[:-1]


def link_outline(points: np.ndarray, tol: float) -> tuple[np.ndarray, str]:
    """Outline of a link through its points (k, 3): ``(outline, kind)`` with kind ``point``
    (k = 1), ``bar`` (two points or collinear ones: the two extremes) or ``polygon`` (convex
    hull in the points' best-fit plane; the vertices are the original points, in order)."""
    k = len(points)
    if k == 0:
        return points.reshape(0, 3), "point"
    if k == 1:
        return points.copy(), "point"
    c = points.mean(axis=0)
    _, s, vt = np.linalg.svd(points - c)
    uv = (points - c) @ vt[:2].T  # coordinates in the best-fit plane
    if k == 2 or s[1] <= tol * max(s[0], tol):
        t = uv[:, 0]
        return points[[int(np.argmin(t)), int(np.argmax(t))]], "bar"
    idx = _hull_2d(uv, tol * tol)
    if len(idx) <= 2:
        t = uv[:, 0]
        return points[[int(np.argmin(t)), int(np.argmax(t))]], "bar"
    return points[idx], "polygon"


def _dedupe(points: np.ndarray, tol: float) -> np.ndarray:
    out: list[np.ndarray] = []
    for p in points:
        if not any(np.linalg.norm(p - o) <= tol for o in out):
            out.append(p)
    return np.array(out).reshape(-1, 3)


# --- directions ---------------------------------------------------------------------------------
def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def down_direction(mech: CompiledMechanism) -> np.ndarray:
    """Where ground marks point: along gravity (in the plane for planar mechanisms), else -y
    (planar) or -z (spatial)."""
    g = np.array(mech.gravity, float)
    if mech.planar:
        g[2] = 0.0
    if np.linalg.norm(g) > 0:
        return _unit(g)
    return np.array([0.0, -1.0, 0.0]) if mech.planar else np.array([0.0, 0.0, -1.0])


def _perpendicular(axis: np.ndarray, planar: bool, prefer: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to ``axis``: in the x-y plane (planar), else the component
    of ``prefer`` normal to the axis (any normal when they are parallel)."""
    if planar:
        return np.array([-axis[1], axis[0], 0.0])
    v = prefer - axis * (prefer @ axis)
    if np.linalg.norm(v) < 1e-9:
        v = np.cross(axis, [1.0, 0.0, 0.0])
        if np.linalg.norm(v) < 1e-9:
            v = np.cross(axis, [0.0, 1.0, 0.0])
    return _unit(v)


def _rectangle(centre: np.ndarray, u: np.ndarray, v: np.ndarray, a0: float, a1: float, b0: float,
               b1: float) -> np.ndarray:
    """(4, 3) corners of the rectangle centre + s u + t v, s in [a0, a1], t in [b0, b1]."""
    return np.array([centre + a0 * u + b0 * v, centre + a1 * u + b0 * v, centre + a1 * u + b1 * v,
                     centre + a0 * u + b1 * v])


# --- the scene ----------------------------------------------------------------------------------
def build_scene(mech: CompiledMechanism, q: np.ndarray, *, size: float | None = None,
                q_range: np.ndarray | None = None) -> Scene:
    """The drawable elements of ``mech`` at joint variables ``q`` (n_q,) SI.

    ``size``: reference length for symbols (file units; default: this configuration's extent).
    ``q_range``: (2, n_q) SI lowest and highest value of each variable over the motion shown
    (a sweep, an animation); guide lines of sliders then cover the whole stroke.
    """
    q = np.asarray(q, float).reshape(mech.n_q)
    s = mech.length_scale
    T = link_poses(mech, q)
    kin = tree_kinematics(mech, q, jacobian=False)
    frames, parent, child = (p / s for p in _points(mech, T))
    if size is None:
        size = reference_size(mech, q)
    tol = 1e-9 * size
    owners = _point_owners(mech)
    all_points = np.concatenate([frames, parent, child])
    down = down_direction(mech)

    links = []
    for i in range(1, mech.n_links):
        pts = _dedupe(all_points[owners == i], tol)
        outline, kind = link_outline(pts, 1e-9)
        links.append(LinkShape(i, mech.link_names[i], pts, outline, kind))

    axis_world = np.einsum("kij,kj->ki", kin.T_world_axis[:, :3, :3], mech.q_axis) if mech.n_q else np.zeros((0, 3))
    joints, sliders, ground_points = [], [], []
    for j in range(mech.n_joints):
        start, count = int(mech.joint_q_start[j]), int(mech.joint_q_count[j])
        axis = _unit(axis_world[start]) if count else np.zeros(3)
        on_base = bool(mech.joint_parent[j] == 0 or mech.joint_child[j] == 0)
        jt = int(mech.joint_type[j])
        joints.append(JointMark(j, mech.joint_names[j], JOINT_TYPE_NAMES[jt], parent[j].copy(), child[j].copy(),
                                axis, on_base))
        if jt in SLIDING:
            k = next(k for k in range(start, start + count) if not mech.q_is_rotation[k])
            sliders.append(_slider(mech, j, k, parent[j], child[j], _unit(axis_world[k]), q, q_range, size, down))
        elif on_base:
            ground_points.append(parent[j] if mech.joint_parent[j] == 0 else child[j])

    grounds = [_ground(p, down, size, mech.planar) for p in _dedupe(np.array(ground_points).reshape(-1, 3), tol)]
    effector = effector_pose(mech, T)[:3, 3] / s
    effector_name = mech.frame_names[mech.effector_frame] if mech.n_frames else "effector"
    labels = _labels(links, joints, effector, effector_name, size, down, mech.planar)
    return Scene(mech.name, bool(mech.planar), mech.length_unit, float(size), q.copy(), tuple(links), tuple(joints),
                 tuple(sliders), tuple(grounds), tuple(labels), effector, effector_name, down)


def _slider(mech, j, k, anchor, centre, axis, q, q_range, size, down) -> SliderMark:
    L, H = BLOCK_LENGTH * size, BLOCK_HEIGHT * size
    perp = _perpendicular(axis, mech.planar, -down)
    if perp @ down > 0:  # perp points away from gravity: blocks stand on their guide
        perp = -perp
    s_now = float((centre - anchor) @ axis)
    if q_range is not None and np.all(np.isfinite(q_range[:, k])):
        lo, hi = np.sort(np.asarray(q_range, float)[:, k]) / mech.length_scale
        lo, hi = min(lo, s_now), max(hi, s_now)
    else:
        lo = hi = s_now
    if mech.joint_parent[j] != 0:  # a guide on a moving link (telescope, cylinder) reaches its anchor
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    ends = np.array([anchor + (lo - 1.5 * L) * axis, anchor + (hi + 1.5 * L) * axis])
    block = _rectangle(centre, axis, perp, -L / 2, L / 2, -H / 2, H / 2)
    ground = bool(mech.joint_parent[j] == 0)
    strip = None
    if ground:  # hatched strip along the guide, on the gravity side, just clear of the block
        strip = _rectangle(ends[0], axis, perp, 0.0, float(np.linalg.norm(ends[1] - ends[0])),
                           -H / 2 - STRIP * size, -H / 2)
    return SliderMark(j, mech.joint_names[j], mech.link_names[int(mech.joint_child[j])], anchor.copy(), centre.copy(),
                      axis, ends, block, strip, ground)


def _ground(p: np.ndarray, down: np.ndarray, size: float, planar: bool) -> GroundMark:
    w, h, t = GROUND_WIDTH * size, GROUND_HEIGHT * size, STRIP * size
    side = _perpendicular(down, planar, np.array([1.0, 0.0, 0.0]) if not planar else down)
    triangle = np.array([p, p + h * down + w * side, p + h * down - w * side])
    strip = _rectangle(p + h * down, side, down, -1.4 * w, 1.4 * w, 0.0, t)
    return GroundMark(p.copy(), triangle, strip)


def _labels(links, joints, effector, effector_name, size, down, planar) -> list[Label]:
    r = JOINT_RADIUS * size
    up = -down
    out = []
    for link in links:
        c = link.outline.mean(axis=0)
        n = np.zeros(3)
        if link.kind == "bar":  # beside the middle of the bar, on its upper side
            d = _unit(link.outline[1] - link.outline[0])
            n = _perpendicular(d, planar, up)
            if n @ up < 0:
                n = -n
            c = c + 1.5 * r * n
        elif link.kind == "point":  # above a slider block
            n = up
            c = c + (BLOCK_HEIGHT / 2 * size + 1.2 * r) * up
        out.append(Label(link.name, c, "link", n))
    side = _perpendicular(down, planar, np.array([1.0, 0.0, 0.0]) if not planar else down)
    if planar and side[0] < 0:
        side = -side
    for j in joints:
        if j.type in ("prismatic", "cylindrical"):  # under the block (and its guide's strip)
            out.append(Label(j.name, j.child_position + (BLOCK_HEIGHT / 2 + STRIP) * size * down + 0.5 * r * down,
                             "joint", down))
            continue
        d = _unit(side + up)
        out.append(Label(j.name, j.position + 1.3 * r * d, "joint", d))
    if effector_name not in {link.name for link in links}:  # "hand": the link's own label says it
        d = _unit(up - side)
        out.append(Label(effector_name, effector + 1.0 * r * d, "effector", d))
    return out


# --- the configuration to draw ------------------------------------------------------------------
# --- helpers for figures and animations ---------------------------------------------------------
def q_from_table(mech: CompiledMechanism, table) -> np.ndarray:
    """(n, n_q) SI joint variables from a result table's ``J.q [unit]`` columns (solve and
    simulate tables both have them); NaN where a row has no value."""
    cols = []
    for name, rot in zip(mech.q_names, mech.q_is_rotation, strict=True):
        unit = mech.angle_unit if rot else mech.length_unit
        scale = mech.angle_scale if rot else mech.length_scale
        cols.append(np.asarray(table[f"{name}.q [{unit}]"], float) * scale)
    return np.stack(cols, axis=1) if cols else np.zeros((table.n, 0))


def swept_inputs(mech: CompiledMechanism, q: np.ndarray) -> list[int]:
    """Indices (into q) of the actuated variables that change over the rows of q (n, n_q)."""
    q = np.atleast_2d(np.asarray(q, float))
    out = []
    for i in mech.q_actuated:
        v = q[:, int(i)]
        v = v[np.isfinite(v)]
        if len(v) > 1 and np.ptp(v) > 0:
            out.append(int(i))
    return out


def q_range_of(q: np.ndarray) -> np.ndarray | None:
    """(2, n_q) lowest and highest finite value of each variable over the rows of q, or None."""
    q = np.atleast_2d(np.asarray(q, float))
    ok = np.all(np.isfinite(q), axis=1)
    if not ok.any():
        return None
    return np.stack([q[ok].min(axis=0), q[ok].max(axis=0)])


def frame_indices(n: int, frames: int | None) -> np.ndarray:
    """Row indices for an animation of ``n`` rows subsampled to at most ``frames`` frames,
    evenly spaced, first and last rows included."""
    if n <= 0:
        return np.zeros(0, dtype=int)
    if frames is None or frames >= n:
        return np.arange(n)
    if frames <= 1:
        return np.zeros(1, dtype=int)
    return np.unique(np.round(np.linspace(0, n - 1, frames)).astype(int))


__all__ = ["Scene", "LinkShape", "JointMark", "SliderMark", "GroundMark", "Label", "build_scene",
           "reference_size", "effector_path", "frame_path", "link_outline", "down_direction", "q_from_table",
           "swept_inputs", "q_range_of", "frame_indices"]
