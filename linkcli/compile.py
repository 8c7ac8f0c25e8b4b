"""Compile a validated :class:`~linkcli.model.mechanism.Mechanism` into a
:class:`~linkcli.core.mechanism.CompiledMechanism`: names -> integer ids, file units -> SI,
DH rows -> links and joints, spanning tree and loops.

This is the only module that imports both the model layer and the numerical core. It assumes
the model passed :func:`linkcli.model.checks.check` (the loader guarantees that).

Units (the rule of :mod:`linkcli.model.units`): lengths and angles (and their rates) are in the
file's units and are multiplied here by ``ls`` (m per length unit) or ``as_`` (rad per angle
unit); every other quantity (mass, inertia, gravity, force, torque, stiffness, damping, time,
frequency) is already SI in the model and is used as it is. Unit strings were converted to
these units by the model's validators.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .core import mechanism as cm
from .core import transforms as tf
from .model import mechanism as mm
from .model.checks import all_joints, dh_joint_name, dh_link_name, inertia_matrix, variable_names
from .model.units import ANGLE_SCALE, LENGTH_SCALE

JOINT_CODE = {name: code for code, name in enumerate(cm.JOINT_TYPE_NAMES)}
X, Y, Z = np.eye(3)


@dataclass
class _Joint:
    name: str
    type: str
    parent: int
    child: int
    T_parent: np.ndarray
    T_child: np.ndarray
    actuated: bool
    axes: list  # [(axis (3,), is_rotation)] per variable
    limits: list  # [(lo, hi)] per variable, SI


@dataclass
class _Builder:
    m: mm.Mechanism
    ls: float
    as_: float
    planar: bool
    link_names: list = field(default_factory=list)
    link_mass: list = field(default_factory=list)
    link_has_mass: list = field(default_factory=list)
    link_cg: list = field(default_factory=list)
    link_inertia: list = field(default_factory=list)
    frame_names: list = field(default_factory=list)
    frame_link: list = field(default_factory=list)
    frame_T: list = field(default_factory=list)
    joints: list = field(default_factory=list)

    # -- units and frames ------------------------------------------------------------------
    def vec3(self, v) -> np.ndarray:
        out = np.zeros(3)
        if v:
            out[: len(v)] = np.asarray(v, dtype=float) * self.ls
        return out

    def frame(self, f: mm.Frame | None) -> np.ndarray:
        """4x4 pose (m) of a file frame in its link frame."""
        if f is None:
            return np.eye(4)
        p = self.vec3(f.origin)
        if f.angle is not None:
            R = tf.rot_z(f.angle * self.as_)
        elif f.rpy is not None:
            R = tf.rpy_to_matrix(np.asarray(f.rpy) * self.as_)
        elif f.axis_angle is not None:
            R = tf.axis_angle_to_matrix(np.asarray(f.axis_angle.axis, float), f.axis_angle.angle * self.as_)
        elif f.rotation is not None:
            R = tf.orthonormalize(np.asarray(f.rotation, dtype=float))
        else:
            R = np.eye(3)
        return tf.make_transform(R, p)

    def var_scale(self, is_rotation: bool) -> float:
        return self.as_ if is_rotation else self.ls

    # -- links -----------------------------------------------------------------------------
    def add_link(self, name: str, frames: dict[str, np.ndarray], mass, cg, inertia, shape) -> None:
        idx = len(self.link_names)
        self.link_names.append(name)
        for fname, T in frames.items():
            self.frame_names.append(f"{name}.{fname}")
            self.frame_link.append(idx)
            self.frame_T.append(T)
        m, c, I, given = self.mass_properties(name, frames, mass, cg, inertia, shape)
        self.link_mass.append(m)
        self.link_cg.append(c)
        self.link_inertia.append(I)
        self.link_has_mass.append(given)

    def add_point_masses(self, frames, masses) -> None:
        """Combine point masses ``[(kg, frame name)]`` with the last added link's mass
        properties: total mass, common CG, inertia about it by the parallel-axis theorem
        ``sum m (|d|^2 I - d d^T)`` (planar links keep only Izz)."""
        m0, c0, I0 = self.link_mass[-1], np.asarray(self.link_cg[-1], float), np.asarray(self.link_inertia[-1], float)
        parts = [(m0, c0, I0)] + [(float(m), frames[f][:3, 3], np.zeros((3, 3))) for m, f in masses]
        total = sum(m for m, _, _ in parts)
        cg = sum(m * c for m, c, _ in parts) / total if total > 0 else c0
        inertia = np.zeros((3, 3))
        for m, c, I in parts:
            d = c - cg
            inertia += I + m * (d @ d * np.eye(3) - np.outer(d, d))
        if self.planar:
            izz = inertia[2, 2]
            inertia = np.zeros((3, 3))
            inertia[2, 2] = izz
        self.link_mass[-1], self.link_cg[-1], self.link_inertia[-1] = total, cg, inertia
        self.link_has_mass[-1] = True

    def mass_properties(self, name, frames, mass, cg, inertia, shape):
        """(mass kg, cg m (3,), inertia about CG kg m^2 (3,3), given?) of one link."""
        if shape is not None:
            return self.shape_properties(frames, shape)
        m = float(mass or 0.0)
        c = self.vec3(cg)
        I = inertia_matrix(inertia, self.planar) if inertia is not None else np.zeros((3, 3))  # kg m^2
        return m, c, I, mass is not None

    def shape_properties(self, frames, shape):
        """Mass properties of a uniform rod, box or disk (planar links keep only Izz)."""
        m = shape.mass
        if shape.type == "rod":
            if shape.between:
                a, b = (frames[n][:3, 3] for n in shape.between)
            else:
                a, b = np.zeros(3), np.array([shape.length * self.ls, 0.0, 0.0])
            L = float(np.linalg.norm(b - a))
            u = (b - a) / L if L > 0 else X
            c, I = (a + b) / 2.0, m * L**2 / 12.0 * (np.eye(3) - np.outer(u, u))
        elif shape.type == "box":
            c, s = self.vec3(shape.center), self.vec3(shape.size)
            I = m / 12.0 * np.diag([s[1] ** 2 + s[2] ** 2, s[0] ** 2 + s[2] ** 2, s[0] ** 2 + s[1] ** 2])
        else:  # disk / cylinder about z
            c, r, h = self.vec3(shape.center), shape.radius * self.ls, (shape.height or 0.0) * self.ls
            I = np.diag([m * (3 * r**2 + h**2) / 12.0, m * (3 * r**2 + h**2) / 12.0, m * r**2 / 2.0])
        if self.planar:
            I = np.diag([0.0, 0.0, I[2, 2]])
        return m, c, I, True

    def frame_index(self, ref: str) -> int:
        """Index of a ``link`` or ``link.frame`` reference (registering a bare link's origin)."""
        self.frame_pose(ref)
        return self.frame_names.index(ref)

    def frame_pose(self, ref: str) -> tuple[int, np.ndarray]:
        """(link index, pose in link frame) of a ``link`` or ``link.frame`` reference; a bare
        link name is its origin and is registered as frame ``link``."""
        link, _, frame = ref.partition(".")
        li = self.link_names.index(link)
        name = ref if frame else link
        if name not in self.frame_names:
            self.frame_names.append(name)
            self.frame_link.append(li)
            self.frame_T.append(np.eye(4))
        return li, self.frame_T[self.frame_names.index(name)]

    # -- joints ----------------------------------------------------------------------------
    def joint_axes(self, j: mm.Joint) -> list:
        if j.type in ("revolute", "prismatic", "cylindrical"):
            if j.axis is not None:
                a = np.zeros(3)
                a[: len(j.axis)] = j.axis
                a /= np.linalg.norm(a)
            else:
                a = X.copy() if (self.planar and j.type == "prismatic") else Z.copy()
            return {"revolute": [(a, True)], "prismatic": [(a, False)],
                    "cylindrical": [(a, True), (a, False)]}[j.type]
        return {"fixed": [], "universal": [(X, True), (Y, True)],
                "spherical": [(Z, True), (Y, True), (X, True)],
                "planar": [(X, False), (Y, False), (Z, True)]}[j.type]

    def limits(self, limits, axes) -> list:
        pairs = ([limits] if limits and not isinstance(limits[0], list) else limits) or [[None, None]] * len(axes)
        out = []
        for (lo, hi), (_, rot) in zip(pairs, axes, strict=True):
            s = self.var_scale(rot)
            out.append((-np.inf if lo is None else lo * s, np.inf if hi is None else hi * s))
        return out

    def add_joint(self, name: str, j: mm.Joint) -> None:
        pl, Tp = self.frame_pose(j.parent)
        cl, Tc = self.frame_pose(j.child)
        axes = self.joint_axes(j)
        self.joints.append(_Joint(name, j.type, pl, cl, Tp, Tc, j.actuated, axes, self.limits(j.limits, axes)))

    def add_serial(self, s: mm.Serial) -> None:
        prev_link, T_prev = self.frame_pose(s.attach or self.m.base)
        T_prev = T_prev @ self.frame(s.base_transform)
        for i, row in enumerate(s.rows):
            a, d, alpha, theta = row.a * self.ls, row.d * self.ls, row.alpha * self.as_, row.theta * self.as_
            if s.convention == "standard":
                T_parent, T_child = T_prev, tf.inverse_transform(tf.dh_standard(theta, d, a, alpha))
            else:
                T_parent = T_prev @ tf.dh_modified(0.0, 0.0, a, alpha)
                T_child = tf.inverse_transform(tf.dh_modified(theta, d, 0.0, 0.0))
            lname, jname = dh_link_name(row, i), dh_joint_name(row, i)
            frames = {"origin": np.eye(4), "joint": T_child}
            frames.update({k: self.frame(f) for k, f in row.frames.items()})
            self.add_link(lname, frames, row.mass, row.cg, row.inertia, None)
            axes = [(Z.copy(), row.type == "revolute")]
            self.joints.append(_Joint(jname, row.type, prev_link, len(self.link_names) - 1, T_parent, T_child,
                                      row.actuated, axes, self.limits(row.limits, axes)))
            prev_link, T_prev = len(self.link_names) - 1, np.eye(4)


def _spanning_tree(n_links: int, joints: list[_Joint]):
    """BFS from link 0. Returns (tree_joint, tree_parent, forward, order, loop_joints)."""
    tree_joint = np.full(n_links, -1)
    tree_parent = np.full(n_links, -1)
    forward = np.ones(n_links, dtype=bool)
    incident: list[list[int]] = [[] for _ in range(n_links)]
    for k, j in enumerate(joints):
        incident[j.parent].append(k)
        incident[j.child].append(k)
    seen, order, used = {0}, [0], set()
    todo = deque([0])
    while todo:
        u = todo.popleft()
        for k in incident[u]:
            j = joints[k]
            v = j.child if j.parent == u else j.parent
            if v in seen:
                continue
            seen.add(v)
            used.add(k)
            tree_joint[v], tree_parent[v], forward[v] = k, u, j.parent == u
            order.append(v)
            todo.append(v)
    loops = [k for k in range(len(joints)) if k not in used]
    return tree_joint, tree_parent, forward, np.array(order), np.array(loops, dtype=int)


def _profile(d: mm.Driver, s: float, angle_scale: float, q0: float) -> cm.Profile:
    """SI time profile of a driver; ``s`` converts the driven quantity (and its rate per s) to
    SI (1 for torque drivers: N m or N already), ``q0`` (SI) is the default start/offset of a
    motion. Times are s, frequencies Hz, the phase in the file's angle unit."""
    if d.type == "constant":
        return cm.Profile("constant", {"value": d.value * s})
    start = q0 if d.start is None else d.start * s
    if d.type == "constant_speed":
        return cm.Profile("constant_speed", {"start": start, "speed": d.speed * s})
    if d.type == "ramp":
        return cm.Profile("ramp", {"start": start, "end": d.end * s, "t_start": d.t_start, "t_end": d.t_end,
                                   "cycloidal": float(d.shape == "cycloidal")})
    if d.type == "harmonic":
        offset = q0 if d.offset is None else d.offset * s
        return cm.Profile("harmonic", {"offset": offset, "amplitude": d.amplitude * s,
                                       "frequency": d.frequency, "phase": d.phase * angle_scale})
    return cm.Profile("table", {}, t=np.asarray(d.t, float), values=np.asarray(d.values, float) * s,
                      interpolation=d.interpolation)


def force_elements(m: mm.Mechanism) -> tuple[list[tuple[str, str, Any]], list[tuple[str, str, Any]]]:
    """The file's springs and dampers in the order of the compiled arrays: ``(axial, torsional)``,
    lists of ``(section, name, element)`` with section ``"springs"`` or ``"dampers"``; entry ``k``
    of ``axial`` is element ``k`` of ``axial_*`` (linear ones), of ``torsional`` of
    ``torsional_*``. The one place that order is decided (springs first, each in file order):
    readers such as ``linkcli info`` take it from here (a spring and a damper may share a name)."""
    def of(kind: str) -> list[tuple[str, str, Any]]:
        return [("springs", n, e) for n, e in m.springs.items() if e.type == kind] + \
               [("dampers", n, e) for n, e in m.dampers.items() if e.type == kind]

    return of("linear"), of("torsional")


def compile_mechanism(m: mm.Mechanism, file: str = "") -> cm.CompiledMechanism:
    """Build the compiled mechanism (SI units, integer ids) from a checked model."""
    planar = m.kind == "planar"
    b = _Builder(m, LENGTH_SCALE[m.units.length], ANGLE_SCALE[m.units.angle], planar)
    connected = _connected_links(m)
    order = [m.base] + [n for n in m.links if n != m.base and n in connected]
    for name in order:
        link = m.links[name]
        frames = {k: b.frame(f) for k, f in link.frames.items()}
        b.add_link(name, frames, link.mass, link.cg, link.inertia, link.shape)
        if link.masses:
            b.add_point_masses(frames, [(pm.mass, pm.at) for pm in link.masses.values()])
    if m.serial is not None:
        b.add_serial(m.serial)
    for name, j in m.joints.items():
        b.add_joint(name, j)
    return _assemble(m, b, file)


def _connected_links(m: mm.Mechanism) -> set[str]:
    linked = {r.split(".")[0] for j in m.joints.values() for r in (j.parent, j.child)}
    if m.serial is not None:
        linked.add((m.serial.attach or m.base).split(".")[0])
    return linked | {m.base}


def _assemble(m: mm.Mechanism, b: _Builder, file: str) -> cm.CompiledMechanism:
    joints = b.joints
    planar = b.planar
    q_names, q_joint, q_rot, q_axis, q_lo, q_hi, q_start, q_count = [], [], [], [], [], [], [], []
    for k, j in enumerate(joints):
        q_start.append(len(q_names))
        q_count.append(len(j.axes))
        names = variable_names(j.name, j.type)
        for name, (axis, rot), (lo, hi) in zip(names, j.axes, j.limits, strict=True):
            q_names.append(name)
            q_joint.append(k)
            q_rot.append(rot)
            q_axis.append(axis)
            q_lo.append(lo)
            q_hi.append(hi)
    q_rot_arr = np.array(q_rot, dtype=bool)
    scale = np.where(q_rot_arr, b.as_, b.ls) if q_names else np.zeros(0)
    q_init = np.zeros(len(q_names))
    for key, value in m.assembly.items():
        if isinstance(value, list):
            s = q_start[[j.name for j in joints].index(key)]
            q_init[s: s + len(value)] = np.asarray(value) * scale[s: s + len(value)]
        else:
            i = q_names.index(key)
            q_init[i] = value * scale[i]
    actuated = np.array([i for i, jk in enumerate(q_joint) if joints[jk].actuated], dtype=int)

    n_links = len(b.link_names)
    tree_joint, tree_parent, forward, order, loops = _spanning_tree(n_links, joints)

    effector_ref = m.effector or b.link_names[-1]
    effector_frame = b.frame_index(effector_ref)
    T_tool = b.frame(m.tool)

    gravity = np.zeros(3)
    if m.gravity:
        gravity[: len(m.gravity)] = m.gravity  # m/s^2 whatever the file's length unit
    axial, torsional = ([(n, e) for _, n, e in elements] for elements in force_elements(m))
    axial_ends = [tuple(b.frame_index(r) for r in e.between) for _, e in axial]
    jnames = [j.name for j in joints]
    loads = list(m.loads.items())
    load_frames = [b.frame_pose(ld.link) for _, ld in loads]
    drivers = list(m.drivers.items())
    driver_q = [q_start[jnames.index(d.joint)] for _, d in drivers]
    profiles = tuple(_profile(d, (b.as_ if q_rot[qi] else b.ls) if d.kind == "motion" else 1.0, b.as_,
                              q_init[qi] if d.kind == "motion" else 0.0)
                     for (_, d), qi in zip(drivers, driver_q, strict=True))

    def arr(values, shape_tail=(), dtype=float):
        return np.array(values, dtype=dtype).reshape((len(values),) + shape_tail)

    def force3(f):
        out = np.zeros(3)
        if f:
            out[: len(f)] = f
        return out

    def torque3(t):
        if t is None:
            return np.zeros(3)
        return np.array([0.0, 0.0, float(t)]) if not isinstance(t, list) else np.asarray(t, float)

    return cm.CompiledMechanism(
        name=m.name, planar=planar, length_unit=m.units.length, angle_unit=m.units.angle,
        length_scale=b.ls, angle_scale=b.as_,
        link_names=tuple(b.link_names), link_mass=arr(b.link_mass), link_has_mass=arr(b.link_has_mass, dtype=bool),
        link_cg=arr(b.link_cg, (3,)), link_inertia=arr(b.link_inertia, (3, 3)),
        frame_names=tuple(b.frame_names), frame_link=arr(b.frame_link, dtype=int), T_link_frame=arr(b.frame_T, (4, 4)),
        joint_names=tuple(jnames), joint_type=arr([JOINT_CODE[j.type] for j in joints], dtype=int),
        joint_parent=arr([j.parent for j in joints], dtype=int), joint_child=arr([j.child for j in joints], dtype=int),
        T_parent_joint=arr([j.T_parent for j in joints], (4, 4)),
        T_child_joint=arr([j.T_child for j in joints], (4, 4)),
        joint_q_start=arr(q_start, dtype=int), joint_q_count=arr(q_count, dtype=int),
        joint_actuated=arr([j.actuated for j in joints], dtype=bool),
        q_names=tuple(q_names), q_joint=arr(q_joint, dtype=int), q_is_rotation=q_rot_arr.reshape(len(q_names)),
        q_axis=arr(q_axis, (3,)), q_actuated=actuated, q_init=q_init, q_lower=arr(q_lo), q_upper=arr(q_hi),
        link_tree_joint=tree_joint, link_tree_parent=tree_parent, link_tree_forward=forward, link_order=order,
        loop_joint=loops, effector_frame=effector_frame, T_frame_tool=T_tool, gravity=gravity,
        axial_names=tuple(n for n, _ in axial),
        axial_frame_a=arr([e[0] for e in axial_ends], dtype=int),
        axial_frame_b=arr([e[1] for e in axial_ends], dtype=int),
        axial_stiffness=arr([getattr(e, "stiffness", 0.0) for _, e in axial]),  # N/m
        axial_free_length=arr([getattr(e, "free_length", 0.0) * b.ls for _, e in axial]),
        axial_damping=arr([getattr(e, "damping", 0.0) for _, e in axial]),  # N s/m
        torsional_names=tuple(n for n, _ in torsional),
        torsional_joint=arr([jnames.index(e.joint) for _, e in torsional], dtype=int),
        torsional_stiffness=arr([getattr(e, "stiffness", 0.0) for _, e in torsional]),  # N m/rad
        torsional_free_angle=arr([getattr(e, "free_angle", 0.0) * b.as_ for _, e in torsional]),
        torsional_damping=arr([getattr(e, "damping", 0.0) for _, e in torsional]),  # N m s/rad
        load_names=tuple(n for n, _ in loads), load_link=arr([lf[0] for lf in load_frames], dtype=int),
        load_point=arr([lf[1][:3, 3] for lf in load_frames], (3,)),
        load_force=arr([force3(ld.force) for _, ld in loads], (3,)),  # N
        load_torque=arr([torque3(ld.torque) for _, ld in loads], (3,)),
        driver_names=tuple(n for n, _ in drivers), driver_q=arr(driver_q, dtype=int),
        driver_kind=arr([cm.DRIVE_TORQUE if d.kind == "torque" else cm.DRIVE_MOTION for _, d in drivers], dtype=int),
        driver_profile=profiles,
        file=file,
    )


def driver_rate_jumps(m: mm.Mechanism) -> dict[str, list[tuple[float, float, float, str]]]:
    """``{driver: [(t, rate before, rate after, where), ...]}`` (s, the file's units per s) of the
    file's motion drivers whose prescribed rate jumps, by the core's rule
    (:func:`linkcli.core.profiles.rate_jumps`, the one the run's blame uses): each driver's SI
    profile as :func:`compile_mechanism` builds it, the rates converted back to the file's units.
    A ramp without ``start`` starts at the joint's assembly value; without one it is skipped.
    For a checked model (the loader warns with :func:`linkcli.model.checks.rate_jump_problems`)."""
    from .core.profiles import rate_jumps

    joints = all_joints(m)
    out = {}
    for name, d in m.drivers.items():
        if d.kind != "motion" or d.joint not in joints or d.type not in ("ramp", "table"):
            continue
        start = d.start if d.start is not None else m.assembly.get(d.joint)
        if (d.type == "ramp" and (not isinstance(start, (int, float)) or d.end is None or d.t_end is None)) or \
                (d.type == "table" and (d.t is None or d.values is None or len(d.t) != len(d.values))):
            continue  # reported by the model's checks
        s = ANGLE_SCALE[m.units.angle] if joints[d.joint][0] == "revolute" else LENGTH_SCALE[m.units.length]
        q0 = float(start) * s if isinstance(start, (int, float)) else 0.0  # a table's start is its first value
        prof = _profile(d, s, ANGLE_SCALE[m.units.angle], q0)
        out[name] = [(t, before / s, after / s, where) for t, before, after, where in rate_jumps(prof)]
    return out
