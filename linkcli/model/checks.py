"""Semantic checks of a validated :class:`Mechanism` that need the whole file: vector sizes for
the file's kind, names and references, planar geometry, mass properties, topology.

Each problem is a :class:`Problem` (key path, message, hint, severity); the loader attaches
file, line and column. Nothing here raises for bad input.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .base import choices_hint
from .mechanism import DHRow, Frame, Joint, Mechanism
from .units import ANGLE_SCALE, LENGTH_SCALE, STANDARD_GRAVITY, Given

#: a relative gap within which a gravity magnitude "is" g expressed in another length unit
#: (g varies by 0.5 % over the Earth; 3 % also covers rounded values such as 9.8, 386, 32)
GRAVITY_MATCH = 0.03
#: Stoermer-Verlet (the integrator's explicit treatment of springs) is linearly stable for a
#: harmonic oscillator of angular frequency omega when omega*dt < 2 (Hairer, Lubich, Wanner,
#: Geometric Numerical Integration, I.5.2)
VERLET_STABILITY = 2.0
#: a link's mass lies within about the distance R of its cg spanned by its frames, so Izz is at
#: most m R^2 (a ring of radius R); beyond 25 m R^2 the mass would have to lie 5 R away: more
#: likely an inertia written in kg mm^2 or kg cm^2. Below 1e-4 m R^2 (all the mass within
#: R/100 of the cg) it is more likely an inertia scaled by a length unit twice.
INERTIA_HIGH, INERTIA_LOW = 25.0, 1e-4

PLANAR_JOINTS = ("fixed", "revolute", "prismatic", "planar")
#: what each joint variable measures, in order (see docs/format.md, "Joint variables"):
#: cylindrical = rotation then slide along one axis; planar = slide x, slide y, turn about z
JOINT_VARIABLE_KINDS: dict[str, tuple[str, ...]] = {
    "fixed": (), "revolute": ("angle",), "prismatic": ("length",), "cylindrical": ("angle", "length"),
    "universal": ("angle", "angle"), "spherical": ("angle", "angle", "angle"),
    "planar": ("length", "length", "angle")}
JOINT_NVARS = {jtype: len(kinds) for jtype, kinds in JOINT_VARIABLE_KINDS.items()}
DRIVER_PARAMS = {"constant": ("value",), "constant_speed": ("speed",), "ramp": ("end", "t_end"),
                 "harmonic": ("amplitude", "frequency"), "table": ("t", "values")}


@dataclass(frozen=True)
class Problem:
    path: tuple
    message: str
    hint: str = ""
    severity: Literal["error", "warning"] = "error"
    code: str = ""  # what kind of problem, for callers that handle one kind apart (e.g. SPRING_STEP)


def variable_names(joint_name: str, joint_type: str) -> list[str]:
    """Names of a joint's variables: the joint name for 1 variable, ``J.q1 ...`` for more."""
    n = JOINT_NVARS[joint_type]
    return [joint_name] if n == 1 else [f"{joint_name}.q{i + 1}" for i in range(n)]


def dh_link_name(row: DHRow, i: int) -> str:
    return row.name or f"link{i + 1}"


def dh_joint_name(row: DHRow, i: int) -> str:
    return row.joint_name or f"joint{i + 1}"


def all_links(m: Mechanism) -> dict[str, set[str]]:
    """Every link (file links and DH rows) with the set of its frame names."""
    links = {name: set(link.frames) for name, link in m.links.items()}
    if m.serial:
        for i, row in enumerate(m.serial.rows):
            links.setdefault(dh_link_name(row, i), set()).update({"origin", "joint", *row.frames})
    return links


def all_joints(m: Mechanism) -> dict[str, tuple[str, bool, tuple]]:
    """Every joint name -> (type, actuated, key path of its definition)."""
    joints: dict[str, tuple[str, bool, tuple]] = {
        name: (j.type, j.actuated, ("joints", name)) for name, j in m.joints.items()}
    if m.serial:
        for i, row in enumerate(m.serial.rows):
            joints.setdefault(dh_joint_name(row, i), (row.type, row.actuated, ("serial", "rows", i)))
    return joints


class Checker:
    def __init__(self, m: Mechanism) -> None:
        self.m = m
        self.planar = m.kind == "planar"
        self.dim = 2 if self.planar else 3
        self.links = all_links(m)
        self.joints = all_joints(m)
        self.problems: list[Problem] = []
        self.refs: list[tuple[tuple, str]] = []  # (key path, link) of every valid link reference

    def error(self, path: tuple, message: str, hint: str = "") -> None:
        self.problems.append(Problem(tuple(path), message, hint))

    def warn(self, path: tuple, message: str, hint: str = "") -> None:
        self.problems.append(Problem(tuple(path), message, hint, "warning"))

    # -- helpers ---------------------------------------------------------------------------
    def vector(self, path: tuple, v: list[float] | None, what: str, size: int | None = None) -> None:
        size = size or self.dim
        if v is not None and len(v) != size:
            axes = "[x, y]" if size == 2 else "[x, y, z]"
            self.error(path, f"{what} needs {size} numbers for a {self.m.kind} mechanism, got {len(v)}",
                       f"Write it as {axes}." if size in (2, 3) else "")

    def frame_ref(self, path: tuple, ref: str, kind: str = "frame") -> None:
        link, _, frame = ref.partition(".")
        if link in self.links:
            self.refs.append((path, link))
        if link not in self.links:
            self.error(path, f"unknown link '{link}'", choices_hint("links", link, self.links))
        elif frame and frame not in self.links[link]:
            self.error(path, f"link '{link}' has no frame '{frame}'",
                       choices_hint(f"frames of {link}", frame, sorted(self.links[link])))

    def joint_ref(self, path: tuple, name: str) -> tuple[str, bool] | None:
        if name not in self.joints:
            self.error(path, f"unknown joint '{name}'", choices_hint("joints", name, self.joints))
            return None
        return self.joints[name][:2]

    # -- sections --------------------------------------------------------------------------
    def frame(self, path: tuple, f: Frame) -> None:
        if self.planar:
            if len(f.origin) == 3:
                self.error(path + ("origin",), "frame leaves the plane of a planar mechanism",
                           "Give [x, y] (or [x, y, angle] as a list), or set kind: spatial.")
            else:
                self.vector(path + ("origin",), f.origin, "origin")
            for key in ("rpy", "axis_angle", "rotation"):
                if getattr(f, key) is not None:
                    self.error(path + (key,), f"'{key}' rotates out of the plane",
                               "Planar frames take `angle` (about z); or set kind: spatial.")
            return
        if f.origin or f.angle is None:
            self.vector(path + ("origin",), f.origin, "origin")
        if f.angle is not None:
            self.error(path + ("angle",), "'angle' alone is ambiguous in a spatial mechanism",
                       "Use rpy: [roll, pitch, yaw] or axis_angle: {axis: [x, y, z], angle: a}.")
        if f.rpy is not None:
            self.vector(path + ("rpy",), f.rpy, "rpy", 3)
        if f.axis_angle is not None:
            self.vector(path + ("axis_angle", "axis"), f.axis_angle.axis, "axis", 3)
            if len(f.axis_angle.axis) == 3 and not np.any(f.axis_angle.axis):
                self.error(path + ("axis_angle", "axis"), "axis is the zero vector", "Give a nonzero axis.")
        if f.rotation is not None:
            R = np.array(f.rotation, dtype=float) if all(len(r) == 3 for r in f.rotation) else None
            if R is None or R.shape != (3, 3):
                self.error(path + ("rotation",), "rotation must be a 3x3 matrix (3 rows of 3 numbers)")
            elif not (np.allclose(R @ R.T, np.eye(3), atol=1e-6) and np.linalg.det(R) > 0):
                self.error(path + ("rotation",), "rotation is not a proper rotation matrix "
                           f"(orthonormality error {np.abs(R @ R.T - np.eye(3)).max():.2g}, "
                           f"det {np.linalg.det(R):.4g})",
                           "Give 6+ significant digits, or use rpy.")

    def mass_properties(self, path: tuple, mass, cg, inertia) -> None:
        if cg is not None:
            self.vector(path + ("cg",), cg, "cg")
        if inertia is None:
            return
        I = inertia_matrix(inertia, self.planar)
        if I is None:
            form = "one number (Izz about the CG)" if self.planar else \
                "[Ixx, Iyy, Izz], [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] or a 3x3 matrix"
            self.error(path + ("inertia",), "inertia has the wrong shape", f"Give {form}.")
            return
        if not np.allclose(I, I.T, atol=1e-9 * max(1.0, np.abs(I).max())):
            self.error(path + ("inertia",), "inertia matrix is not symmetric", "Make Ixy = Iyx etc.")
            return
        eig = np.linalg.eigvalsh(I)
        tol = 1e-9 * max(1.0, eig.max())
        if eig.min() < -tol:
            self.error(path + ("inertia",), f"inertia has a negative principal moment ({eig.min():.4g})",
                       "Moments of inertia are >= 0; check signs of products of inertia.")
        elif not self.planar and (eig[0] + eig[1] < eig[2] - tol):
            self.error(path + ("inertia",), "principal moments violate the triangle inequality "
                       f"({eig[0]:.4g} + {eig[1]:.4g} < {eig[2]:.4g})",
                       "No rigid body has these moments; check the values.")

    def links_section(self) -> None:
        for name, link in self.m.links.items():
            path = ("links", name)
            for fname, f in link.frames.items():
                self.frame(path + ("frames", fname), f)
            self.mass_properties(path, link.mass, link.cg, link.inertia)
            for pname, pm in link.masses.items():  # point masses sit at a frame of this link
                if pm.at not in link.frames:
                    self.error(path + ("masses", pname, "at"), f"link '{name}' has no frame '{pm.at}'",
                               choices_hint("frames", pm.at, list(link.frames)))
            if link.shape is not None:
                if link.mass is not None or link.inertia is not None:
                    self.error(path + ("shape",), "shape computes mass and inertia; they are also given",
                               "Remove mass/inertia, or remove shape.")
                shape = link.shape
                if shape.type == "rod":
                    if (shape.between is None) == (shape.length is None):
                        self.error(path + ("shape",), "a rod needs either `between: [frame, frame]` or `length`")
                    elif shape.between is not None:
                        for k, fr in enumerate(shape.between):
                            if fr not in link.frames:
                                self.error(path + ("shape", "between", k), f"link '{name}' has no frame '{fr}'",
                                           choices_hint(f"frames of {name}", fr, link.frames))
                        if len(shape.between) != 2:
                            self.error(path + ("shape", "between"), "a rod runs between exactly 2 frames")
                if shape.type == "box":
                    self.vector(path + ("shape", "size"), shape.size, "size")
                center = getattr(shape, "center", None)  # rods have none
                if center is not None:
                    self.vector(path + ("shape", "center"), center, "center")

    def joints_section(self) -> None:
        for name, j in self.m.joints.items():
            path = ("joints", name)
            self.frame_ref(path + ("parent",), j.parent)
            self.frame_ref(path + ("child",), j.child)
            if j.parent.split(".")[0] == j.child.split(".")[0]:
                self.error(path + ("child",), f"joint connects link '{j.child.split('.')[0]}' to itself",
                           "Parent and child must be different links.")
            if self.planar and j.type not in PLANAR_JOINTS:
                self.error(path + ("type",), f"a {j.type} joint does not keep motion in the plane",
                           f"Planar mechanisms take {', '.join(PLANAR_JOINTS)} joints; or set kind: spatial.")
            self.joint_axis(path, j)
            self.limits(path + ("limits",), j.limits, JOINT_NVARS[j.type])

    def joint_axis(self, path: tuple, j: Joint) -> None:
        if j.axis is None:
            return
        if j.type not in ("revolute", "prismatic", "cylindrical"):
            self.error(path + ("axis",), f"a {j.type} joint takes no axis",
                       "Orient the joint frames instead (universal: x then y; spherical: z-y-x).")
            return
        a = np.array(j.axis, dtype=float)
        if self.planar:
            if j.type == "revolute":
                if len(a) != 3 or abs(a[0]) + abs(a[1]) > 1e-12 or a[2] == 0:
                    self.error(path + ("axis",), "revolute axis is not normal to the plane",
                               "Planar revolute joints turn about z: remove `axis` (or give [0, 0, 1]).")
                return
            if len(a) == 3 and a[2] != 0:
                self.error(path + ("axis",), "prismatic axis leaves the plane",
                           "Give an in-plane direction [x, y].")
                return
            if len(a) not in (2, 3):
                self.vector(path + ("axis",), j.axis, "axis")
                return
        else:
            self.vector(path + ("axis",), j.axis, "axis", 3)
        if len(a) in (2, 3) and not np.any(a):
            self.error(path + ("axis",), "axis is the zero vector", "Give a nonzero direction.")

    def limits(self, path: tuple, limits, nvars: int) -> None:
        if limits is None:
            return
        pairs = limits if limits and isinstance(limits[0], list) else [limits]
        ok = len(pairs) == nvars and all(
            isinstance(p, list) and len(p) == 2
            and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in p)
            for p in pairs)
        if not ok:
            form = "[lower, upper]" if nvars == 1 else f"{nvars} pairs [[lower, upper], ...]"
            self.error(path, "limits have the wrong shape", f"Give {form}; null for no bound.")
            return
        for lo, hi in pairs:
            if lo is not None and hi is not None and lo > hi:
                self.error(path, f"lower limit {lo:g} is above upper limit {hi:g}", "Swap them.")

    def serial_section(self) -> None:
        s = self.m.serial
        if s is None:
            return
        if s.attach:
            if s.attach.partition(".")[0] in self.m.links:
                self.frame_ref(("serial", "attach"), s.attach)
            else:
                link = s.attach.partition(".")[0]
                self.error(("serial", "attach"), f"unknown link '{link}'",
                           choices_hint("links under `links:`", link, self.m.links))
        if s.base_transform is not None:
            self.frame(("serial", "base_transform"), s.base_transform)
        if self.planar and any(r.alpha != 0 for r in s.rows):
            k = next(i for i, r in enumerate(s.rows) if r.alpha != 0)
            self.error(("serial", "rows", k, "alpha"), "a nonzero twist takes the chain out of the plane",
                       "Set alpha: 0, or kind: spatial.")
        seen_links, seen_joints = set(self.m.links), set(self.m.joints)
        for i, row in enumerate(s.rows):
            path = ("serial", "rows", i)
            ln, jn = dh_link_name(row, i), dh_joint_name(row, i)
            if ln in seen_links:
                self.error(path + ("name",), f"link name '{ln}' is already used", "Give the row a unique `name`.")
            if jn in seen_joints:
                self.error(path + ("joint_name",), f"joint name '{jn}' is already used",
                           "Give the row a unique `joint_name`.")
            seen_links.add(ln)
            seen_joints.add(jn)
            for fname, f in row.frames.items():
                self.frame(path + ("frames", fname), f)
            self.mass_properties(path, row.mass, row.cg, row.inertia)
            self.limits(path + ("limits",), row.limits, 1)

    def references(self) -> None:
        m = self.m
        if m.base not in m.links:
            hint = choices_hint("links", m.base, m.links)
            if m.base in self.links:  # a DH row's link
                hint = "The base must be a link under `links:` (the serial chain attaches to it)."
            self.error(("base",), f"unknown link '{m.base}'", hint)
        if m.effector is not None:
            self.frame_ref(("effector",), m.effector)
        if m.tool is not None:
            self.frame(("tool",), m.tool)
        if m.gravity is not None:
            self.vector(("gravity",), m.gravity, "gravity")
        for group in ("springs", "dampers"):
            for name, e in getattr(m, group).items():
                path = (group, name)
                if e.type == "linear":
                    if len(e.between) != 2:
                        self.error(path + ("between",), f"a linear {group[:-1]} joins exactly 2 points",
                                   "Write between: [link.frame, link.frame].")
                    for k, ref in enumerate(e.between):
                        self.frame_ref(path + ("between", k), ref)
                else:
                    info = self.joint_ref(path + ("joint",), e.joint)
                    if info and info[0] != "revolute":
                        self.error(path + ("joint",), f"joint '{e.joint}' is {info[0]}; torsional "
                                   f"elements act on revolute joints",
                                   "Use a linear element (between: [link.frame, link.frame]) instead.")
        for name, load in m.loads.items():
            path = ("loads", name)
            self.frame_ref(path + ("link",), load.link)
            if load.force is None and load.torque is None:
                self.error(path, "load has neither force nor torque", "Give force: [...] and/or torque.")
            if load.force is not None:
                self.vector(path + ("force",), load.force, "force")
            if load.torque is not None:
                if self.planar and isinstance(load.torque, list):
                    self.error(path + ("torque",), "a planar torque is one number (about z)")
                elif not self.planar and not isinstance(load.torque, list):
                    self.error(path + ("torque",), "a spatial torque is a vector [tx, ty, tz]")
                elif isinstance(load.torque, list):
                    self.vector(path + ("torque",), load.torque, "torque", 3)
        self.drivers()
        self.variables()

    def drivers(self) -> None:
        driven: dict[str, str] = {}  # joint -> its driver
        for name, d in self.m.drivers.items():
            path = ("drivers", name)
            info = self.joint_ref(path + ("joint",), d.joint)
            if info:
                jtype, actuated = info
                if jtype not in ("revolute", "prismatic"):
                    self.error(path + ("joint",),
                               f"drivers act on revolute or prismatic joints, '{d.joint}' is {jtype}",
                               "Drive a revolute or prismatic joint (split this joint into such joints).")
                elif not actuated:
                    self.error(path + ("joint",), f"joint '{d.joint}' is not actuated",
                               f"Add `actuated: true` to joint {d.joint}.")
                if d.joint in driven:
                    self.error(path + ("joint",), f"joint '{d.joint}' already has driver '{driven[d.joint]}'",
                               "One driver per joint.")
                driven[d.joint] = name
            for key in DRIVER_PARAMS[d.type]:
                if getattr(d, key) is None:  # reported at the driver, named by its path
                    self.error(path + (key,), f"a {d.type} driver needs `{key}`",
                               f"Add {key}: ... (a {d.type} driver takes {', '.join(DRIVER_PARAMS[d.type])}).")
            if d.type == "table" and d.t is not None and d.values is not None:
                if len(d.t) != len(d.values) or len(d.t) < 2:
                    self.error(path + ("values",), "a table needs as many values as times, at least 2")
                elif np.any(np.diff(d.t) <= 0):
                    self.error(path + ("t",), "table times must increase strictly")
            if d.type == "ramp" and d.t_end is not None and d.t_end <= d.t_start:
                self.error(path + ("t_end",), "ramp ends before it starts", "Make t_end > t_start.")

    def variables(self) -> None:
        names: dict[str, bool] = {}
        for jn, (jtype, actuated, _) in self.joints.items():
            for v in variable_names(jn, jtype):
                names[v] = actuated
        for key, value in self.m.assembly.items():
            if isinstance(value, list) and key in self.joints:
                jvars = variable_names(key, self.joints[key][0])
                if len(value) != len(jvars):
                    n = len(jvars)
                    self.error(("assembly", key), f"joint '{key}' has {n} variable{'s' * (n != 1)}, "
                               f"got {len(value)} values",
                               f"Give {n} value{'s' * (n != 1)}: [{', '.join(jvars)}].")
            elif key not in names:
                self.error(("assembly", key), f"unknown joint variable '{key}'",
                           choices_hint("variables", key, names))
            elif isinstance(value, list):
                self.error(("assembly", key), f"variable '{key}' takes one number, got a list",
                           f"Write {key}: <value>.")
        self.angle_magnitudes(names)
        actuated_vars = [v for v, a in names.items() if a]
        solve, sim = self.m.analysis.solve, self.m.analysis.simulate
        for section, block in (("solve", solve), ("simulate", sim)):
            if block is None:
                continue
            for field in ("set", "sweep", "rates", "accelerations"):
                for key in getattr(block, field, {}) or {}:
                    if section == "simulate" and field == "rates":  # any joint variable may start moving
                        if key not in names:
                            self.error(("analysis", section, field, key), f"unknown joint variable '{key}'",
                                       choices_hint("variables", key, names))
                    elif key not in actuated_vars:
                        self.error(("analysis", section, field, key), f"'{key}' is not an actuated variable",
                                   choices_hint("actuated variables", key, actuated_vars))
        if solve is not None:
            for k, ref in enumerate(solve.output_frames or []):
                self.frame_ref(("analysis", "solve", "output_frames", k), ref)
            for key, r in solve.sweep.items():
                if r.step is None and r.num is None:
                    self.error(("analysis", "solve", "sweep", key), "a sweep needs a step or a number of points",
                               "Add step: <spacing> or num: <points> (e.g. from: 0, to: 360, step: 1).")
                elif r.step is not None and r.num is not None:
                    self.error(("analysis", "solve", "sweep", key, "num"), "a sweep takes step or num, not both",
                               "Remove step or num.")
            self.run_sizes(solve, sim)
        elif sim is not None:
            self.run_sizes(None, sim)

    def angle_magnitudes(self, names: dict[str, bool]) -> None:
        """Angles of joint variables (assembly, analysis set/sweep) too large for float64 to
        resolve to the solver's tolerance (see sizes.MAX_JOINT_MAGNITUDE) are refused."""
        from .sizes import joint_value_problem

        rad = math.pi / 180 if self.m.units.angle == "deg" else 1.0
        rotation = {}
        for jn, (jtype, _, _) in self.joints.items():
            for v in variable_names(jn, jtype):  # revolute, universal and spherical variables are angles
                rotation[v] = jtype in ("revolute", "universal", "spherical")
        entries: list[tuple[tuple, object, str]] = []  # (key path, value, variable name)
        for key, value in self.m.assembly.items():
            if isinstance(value, list) and key in self.joints:
                # strict=False: a wrong count of values is reported by variables()
                entries += [(("assembly", key, i), v, n) for i, (v, n) in
                            enumerate(zip(value, variable_names(key, self.joints[key][0]), strict=False))]
            elif not isinstance(value, list):
                entries.append((("assembly", key), value, key))
        solve = self.m.analysis.solve
        if solve is not None:
            entries += [(("analysis", "solve", "set", k), v, k) for k, v in solve.set.items()]
            for k, r in solve.sweep.items():
                entries += [(("analysis", "solve", "sweep", k, "from"), r.from_, k),
                            (("analysis", "solve", "sweep", k, "to"), r.to, k)]
        for path, entry, var in entries:
            if rotation.get(var) and isinstance(entry, (int, float)):
                problem = joint_value_problem(entry * rad, True)
                if problem:
                    self.error(path, f"{entry:g} {self.m.units.angle} {problem}")

    def run_sizes(self, solve, sim) -> None:
        """Sweeps and simulations too large to compute at once are refused here, at their line."""
        from .sizes import simulation_size_problem, sweep_points, sweep_size_problem

        if solve is not None and solve.sweep:
            counts = {k: sweep_points(r.from_, r.to, r.step, r.num) for k, r in solve.sweep.items()}
            total = max(counts.values()) if solve.mode == "zip" else math.prod(counts.values())
            problem = sweep_size_problem(total, "this sweep")
            if problem:
                key = max(counts, key=lambda k: counts[k])
                self.error(("analysis", "solve", "sweep", key), problem)
        if sim is not None:
            problem = simulation_size_problem(sim.t_end, sim.dt, sim.every)
            if problem:
                self.error(("analysis", "simulate", "dt"), problem)

    def topology(self) -> None:
        """Links reachable from the base through joints; loose links are errors or warnings."""
        adj: dict[str, set[str]] = defaultdict(set)
        edges = [(j.parent.split(".")[0], j.child.split(".")[0]) for j in self.m.joints.values()]
        if self.m.serial:
            prev = (self.m.serial.attach or self.m.base).split(".")[0]
            for i, row in enumerate(self.m.serial.rows):
                edges.append((prev, dh_link_name(row, i)))
                prev = dh_link_name(row, i)
        for a, b in edges:
            adj[a].add(b)
            adj[b].add(a)
        if self.m.base not in self.m.links:
            return
        seen, todo = {self.m.base}, deque([self.m.base])
        while todo:
            for nxt in adj[todo.popleft()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        for name in self.m.links:
            if name in seen:
                continue
            if not adj[name]:
                self.warn(("links", name), f"link '{name}' has no joints; it is ignored",
                          "Connect it with a joint or remove it.")
                for path, link in self.refs:
                    if link == name:
                        self.error(path, f"link '{name}' is not part of the mechanism (it has no joints)",
                                   "Connect it with a joint, or refer to a connected link.")
            else:
                self.error(("links", name), f"link '{name}' is not connected to the base '{self.m.base}'",
                           "Add a joint that connects this group of links to the rest of the mechanism.")

    def zero_length_links(self) -> None:
        """A link held by exactly two point joints (planar revolute, spatial spherical) whose
        joint frames coincide has no length: transmission angles and the Jacobian's condition
        become undefined (NaN, inf) and the loop degenerates. Warned, with both frames named."""
        point_joint = "revolute" if self.planar else "spherical"
        ends: dict[str, list[tuple[str, str]]] = {}  # link -> [(joint, frame)]
        for name, j in self.m.joints.items():
            for ref in (j.parent, j.child):
                link, _, frame = ref.partition(".")
                ends.setdefault(link, []).append((name if j.type == point_joint else "", frame))
        coords = [abs(c) for link in self.m.links.values() for f in link.frames.values() for c in f.origin]
        tol = 1e-9 * max(coords, default=1.0) or 1e-12  # relative to the mechanism's size
        for link, held in ends.items():
            spec = self.m.links.get(link)
            if spec is None or link == self.m.base or len(held) != 2 or not all(j for j, _ in held):
                continue
            (j1, f1), (j2, f2) = held
            # a reference without a frame means the link's origin
            p1, p2 = (spec.frames[f].origin if f else [0.0] * self.dim for f in (f1, f2))
            if len(p1) != len(p2) or max((abs(a - b) for a, b in zip(p1, p2, strict=True)), default=0.0) > tol:
                continue
            where = ("links", link, "frames", f2) if f2 else ("links", link)
            self.warn(where, f"link '{link}' has zero length: the frames of its joints {j1} and {j2} "
                      f"({f1 or 'origin'} and {f2 or 'origin'}) coincide, so angles along it are undefined "
                      "(transmission angle NaN, Jacobian condition infinite)",
                      "Give the two joint frames different positions (the link's length), or join the "
                      "neighbouring links with one joint.")

    # -- units and physical plausibility (warnings; the units rule in model/units.py) ----------
    def physical(self) -> None:
        self.gravity_magnitude()
        bodies: dict[str, tuple] = {name: (("links", name), link.mass, link.cg, link.inertia, link.frames, [])
                  for name, link in self.m.links.items() if link.shape is None}
        if self.m.serial:
            for i, row in enumerate(self.m.serial.rows):
                bodies[dh_link_name(row, i)] = (("serial", "rows", i), row.mass, row.cg, row.inertia, row.frames,
                                                [self._dh_joint_point(row)])
        jointed = {r.split(".")[0] for j in self.m.joints.values() for r in (j.parent, j.child)}
        for name, (path, mass, cg, inertia, frames, extra) in bodies.items():
            if path[0] == "links" and name not in jointed:
                continue  # not part of the mechanism (topology warns about it)
            self.mass_without_distribution(path, name, mass, cg, inertia)
            self.inertia_plausible(path, name, mass, cg, inertia, frames, extra)
        self.spring_steps()
        self.driver_rate_jumps()
        self.quantity_kinds()

    def gravity_magnitude(self) -> None:
        g = self.m.gravity
        if not g:
            return
        mag = float(np.linalg.norm(g))
        for unit, scale in LENGTH_SCALE.items():
            if unit != "m" and abs(mag * scale / STANDARD_GRAVITY - 1.0) < GRAVITY_MATCH:
                self.warn(("gravity",), f"gravity of magnitude {mag:g} m/s^2 looks like g in {unit}/s^2 "
                          f"({mag * scale:.4g} m/s^2)",
                          f"Gravity is in m/s^2 whatever the file's length unit; write 9.81 or '{mag:g} {unit}/s^2'.")
                return
        if mag > 10 * STANDARD_GRAVITY:
            self.warn(("gravity",), f"gravity of magnitude {mag:g} m/s^2 is more than 10 g",
                      "Gravity is in m/s^2 whatever the file's length unit (9.81 on Earth).")

    def mass_without_distribution(self, path: tuple, name: str, mass, cg, inertia) -> None:
        if not mass or (cg is not None and inertia is not None):
            return
        assumed = []
        if cg is None:
            assumed.append("cg at the link frame origin")
        if inertia is None:
            assumed.append("zero inertia about the cg")
        self.warn(path + ("mass",), f"link '{name}' has a mass but no {'cg' if cg is None else 'inertia'}"
                  + (" or inertia" if cg is None and inertia is None else "")
                  + f": assumed {' and '.join(assumed)} (a point mass)",
                  "Give cg: [x, ...] and inertia (kg m^2 about the cg), or a shape: {type: rod, ...} that "
                  "derives them.")

    def _dh_joint_point(self, row: DHRow) -> np.ndarray:
        """Where a DH row's proximal joint lies in its link frame (file length unit): standard
        DH puts the link frame at the distal joint, so the proximal one is at -R^T (a cos theta,
        a sin theta, d) = (-a, -d sin alpha, -d cos alpha); modified DH at (0, 0, -d)."""
        if self.m.serial is not None and self.m.serial.convention == "modified":
            return np.array([0.0, 0.0, -row.d])
        alpha = row.alpha * ANGLE_SCALE.get(self.m.units.angle, 1.0)
        return np.array([-row.a, -row.d * np.sin(alpha), -row.d * np.cos(alpha)])

    def inertia_plausible(self, path: tuple, name: str, mass, cg, inertia, frames, extra=()) -> None:
        I = inertia_matrix(inertia, self.planar) if inertia is not None else None
        if not mass or I is None:
            return
        ls = LENGTH_SCALE.get(self.m.units.length, 1.0)
        c = np.zeros(3)
        if cg:
            c[: len(cg)] = cg
        points = [np.zeros(3)] + [np.pad(np.asarray(f.origin[:3], float), (0, 3 - len(f.origin[:3])))
                                  for f in frames.values() if f.origin] + list(extra)
        R = max(float(np.linalg.norm(p - c)) for p in points) * ls  # m
        if R <= 0:
            return
        ratio = float(np.linalg.eigvalsh(I).max()) / (mass * R**2)
        what = "Izz" if self.planar else "the largest principal moment"
        if ratio > INERTIA_HIGH:
            self.warn(path + ("inertia",), f"inertia of link '{name}' is implausibly large for its mass and size: "
                      f"{what} = {ratio:.3g} m R^2 with m = {mass:g} kg, R = {R:.4g} m (farthest frame from the cg)",
                      "Inertia is in kg m^2 whatever the file's length unit; e.g. write '1250 kg*mm^2'.")
        elif 0 < ratio < INERTIA_LOW:
            self.warn(path + ("inertia",), f"inertia of link '{name}' is implausibly small for its mass and size: "
                      f"{what} = {ratio:.3g} m R^2 with m = {mass:g} kg, R = {R:.4g} m (farthest frame from the cg)",
                      "Inertia is in kg m^2 whatever the file's length unit (a rod of length L: m L^2/12).")

    def spring_steps(self) -> None:
        """omega*dt of each spring at the file's time step (``analysis.simulate.dt``, else the
        default); ``simulate`` checks again at the step it runs (:func:`spring_step_problems`)."""
        sim = self.m.analysis.simulate
        dt = sim.dt if sim is not None else 1e-3
        where = "analysis.simulate.dt" if sim is not None else "the default dt"
        self.problems += spring_step_problems(self.m, dt, where) + damper_step_problems(self.m, dt, where)

    def driver_rate_jumps(self) -> None:
        """A warning per motion driver whose prescribed rate jumps (:func:`motion_rate_jumps`):
        the integrator must change the joint's speed within one step, an impulse whose size
        depends on the step, so the energy balance, driver loads and reactions of that step are
        not physical (and no smaller dt removes it)."""
        for name, d in self.m.drivers.items():
            if d.kind != "motion" or d.joint not in self.joints:
                continue
            jumps = motion_rate_jumps(d, self.m.assembly.get(d.joint))
            if not jumps:
                continue
            rotation = self.joints[d.joint][0] == "revolute"
            unit = f"{self.m.units.angle if rotation else self.m.units.length}/s"
            listed = "; ".join(f"at t = {t:g} s ({what}) from {before:.4g} to {after:.4g} {unit}"
                               for t, before, after, what in jumps[:3])
            more = f"; and {len(jumps) - 3} more" if len(jumps) > 3 else ""
            t_last, what = jumps[-1][0], jumps[0][3]
            key = {"table": "t", "ramp": "t_end" if what == "end" else "t_start"}[d.type]
            hint = ("Use shape: cycloidal (zero rate at both ends)." if d.type == "ramp" else
                    ("Use interpolation: cubic (a linear table's rate jumps at every knot where its slope "
                     "changes); " if d.interpolation == "linear" else "")
                    + f"end the run at t = {t_last:g} s or before (t_end), or add knots that bring the joint to rest "
                    "(`linkcli validate` shows whether the end is still moving).")
            self.warn(("drivers", name, key),
                      f"motion driver '{name}' of joint '{d.joint}': the prescribed rate jumps {listed}{more}: the "
                      "joint's speed changes within one step (an impulsive start or stop), so the energy balance, "
                      "the driver's load and the reactions at that step are not physical, and no smaller dt "
                      "fixes them", hint)

    def quantity_kinds(self) -> None:
        """Values written with units in fields that take a length or an angle (joint values,
        limits, assembly estimates, analysis values, driver values): the unit must suit the
        variable -- each variable of a multi-variable joint has its own kind
        (:data:`JOINT_VARIABLE_KINDS`), and every element of a list or pair is checked."""
        def check(path: tuple, value, joint: str | None, index: int = 0, effort: bool = False) -> None:
            if not isinstance(value, Given) or joint not in self.joints:
                return
            jtype = self.joints[joint][0]
            kinds = JOINT_VARIABLE_KINDS.get(jtype, ())
            if index >= len(kinds):
                return  # a wrong count is reported by the shape checks
            want = kinds[index]
            if effort:
                want = {"angle": "torque", "length": "force"}[want]
            article = "an" if want == "angle" else "a"
            if value.kind != want:
                variable = variable_names(joint, jtype)[index]
                what = (f"variable '{variable}' of {jtype} joint '{joint}'" if len(kinds) > 1
                        else f"{jtype} joint '{joint}'")
                self.error(path, f"a {value.kind} given for {'a torque driver of ' if effort else ''}"
                           f"{what}, which takes {article} {want}",
                           f"Write {article} {want} (e.g. '{_EXAMPLE[want]}').")

        var_joint = {v: (jn, k) for jn, (jt, _, _) in self.joints.items()
                     for k, v in enumerate(variable_names(jn, jt))}

        def check_var(path: tuple, value, variable: str, effort: bool = False) -> None:
            jn, k = var_joint.get(variable, (None, 0))
            check(path, value, jn, k, effort)

        for name, d in self.m.drivers.items():
            for key in ("value", "speed", "start", "end", "offset", "amplitude"):
                check_var(("drivers", name, key), getattr(d, key), d.joint, d.kind == "torque")
            for k, v in enumerate(d.values or []):
                check_var(("drivers", name, "values", k), v, d.joint, d.kind == "torque")
        for key, value in self.m.assembly.items():
            if isinstance(value, list):  # J: [q1, q2, ...]
                for k, v in enumerate(value):
                    check(("assembly", key, k), v, key, k)
            else:
                check_var(("assembly", key), value, key)
        for section in ("solve", "simulate", "forces"):
            block = getattr(self.m.analysis, section)
            for field in ("set", "rates", "accelerations", "speed"):
                for key, value in (getattr(block, field, None) or {}).items():
                    for k, v in enumerate(value if isinstance(value, list) else [value]):
                        check_var(("analysis", section, field, key) + ((k,) if isinstance(value, list) else ()),
                                  v, key)
            for key, r in (getattr(block, "sweep", None) or {}).items():
                for attr, yaml_key in (("from_", "from"), ("to", "to"), ("step", "step")):
                    check_var(("analysis", section, "sweep", key, yaml_key), getattr(r, attr), key)
        limits: list[tuple[tuple, str, Any]] = [(("joints", name), name, j.limits)
                                                for name, j in self.m.joints.items()]
        if self.m.serial:
            limits += [(("serial", "rows", i), dh_joint_name(row, i), row.limits)
                       for i, row in enumerate(self.m.serial.rows)]
        for path, name, lim in limits:
            if not lim:
                continue
            pairs = lim if isinstance(lim[0], list) else [lim]
            for k, pair in enumerate(pairs):
                for side, v in enumerate(pair if isinstance(pair, list) else []):
                    where = (k, side) if isinstance(lim[0], list) else (side,)
                    check(path + ("limits",) + where, v, name, k)

    def run(self) -> list[Problem]:
        self.links_section()
        self.joints_section()
        self.serial_section()
        self.references()
        self.topology()
        if not any(p.severity == "error" for p in self.problems):
            self.zero_length_links()
            self.physical()
        return self.problems


_EXAMPLE = {"angle": "30 deg", "length": "25 mm", "torque": "2 N*m", "force": "10 N"}


#: :attr:`Problem.code` of the spring-too-stiff-for-the-step warnings (they depend on the step
#: of a run, so ``simulate`` replaces the file's with those of the step it runs)
SPRING_STEP = "spring_step"
#: :attr:`Problem.code` of the damper-too-strong-for-the-step warnings (replaced like SPRING_STEP)
DAMPER_STEP = "damper_step"
#: the trapezoidal damping update ``(1 - x/2) / (1 + x/2)``, x = c h / m, is negative (the velocity
#: flips every step: ringing) beyond x = 2 (see :func:`damper_step_problems`)
DAMPING_STEP_LIMIT = 2.0
#: the codes of the warnings that depend on the step of a run
STEP_CODES = (SPRING_STEP, DAMPER_STEP)


def _moved_inertia(m: Mechanism, e) -> tuple[float, str, str] | None:
    """``(inertia, what, unit)`` a spring or damper ``e`` acts on, for its step checks: a linear
    element's the mass (kg) of the lighter moving link it joins, a torsional element's the
    inertia (kg m^2) about its joint of the link the joint turns; None when not known.
    An approximation: the constrained mechanism's effective mass/inertia along the element can
    differ (the other bodies a joint carries add to it, a free body's rotation lowers it)."""
    planar = m.kind == "planar"
    ls = LENGTH_SCALE.get(m.units.length, 1.0)
    links = dict(m.links)
    if e.type == "linear":
        masses = [links[r.split(".")[0]].mass for r in e.between if r.split(".")[0] in links
                  and r.split(".")[0] != m.base]
        given = [mass for mass in masses if mass]
        if not given:
            return None
        return min(given), "the mass of the lighter moving link it joins", "kg"
    j = m.joints.get(e.joint)
    child = links.get(j.child.split(".")[0]) if j is not None else None
    if child is None or not child.mass or child.inertia is None or j is None:
        return None
    I = inertia_matrix(child.inertia, planar)
    if I is None:
        return None
    c = np.zeros(3)
    c[: len(child.cg or [])] = child.cg or []
    pin = child.frames.get(j.child.partition(".")[2])
    p = np.zeros(3)
    if pin is not None and pin.origin:
        p[: len(pin.origin[:3])] = pin.origin[:3]
    inertia = float(I[2, 2]) + child.mass * float(np.sum((c - p)[:2] ** 2)) * ls**2
    if inertia <= 0:
        return None
    return inertia, f"the inertia of link '{j.child.split('.')[0]}' about the joint", "kg m^2"


def spring_step_problems(m: Mechanism, dt: float, where: str) -> list[Problem]:
    """Warnings for the springs too stiff for the time step ``dt`` (s): omega*dt above
    :data:`VERLET_STABILITY`, with omega = sqrt(k/m) from the mass of the lighter moving link a
    linear spring joins (or the inertia about its joint of the link a torsional spring turns;
    :func:`_moved_inertia`). ``where`` says where ``dt`` comes from (shown in the message)."""
    problems: list[Problem] = []
    for name, e in m.springs.items():
        moved = _moved_inertia(m, e) if e.stiffness > 0 else None
        if moved is None:
            continue
        inertia, what, unit = moved
        omega = float(np.sqrt(e.stiffness / inertia))
        if omega * dt > VERLET_STABILITY:
            problems.append(Problem(
                ("springs", name, "stiffness"),
                f"spring '{name}' is too stiff for the time step: omega*dt = {omega * dt:.3g} > "
                f"{VERLET_STABILITY:g} (omega = sqrt(k/m) = {omega:.4g} rad/s with {what}, "
                f"{inertia:.4g} {unit}; dt = {dt:g} s from {where}); the step is unstable",
                f"Use dt < {VERLET_STABILITY / omega:.3g} s, or check the stiffness unit "
                "(N/m or N m/rad whatever the file's units, e.g. '20 N/mm').", "warning", SPRING_STEP))
    return problems


def damper_step_ratio(m: Mechanism, e, dt: float) -> tuple[float, float, str, str] | None:
    """``(c h / m, m, what, unit)`` of damper ``e`` at the step ``dt`` (s), ``m`` from
    :func:`_moved_inertia`; None when the moved mass is not known or c = 0."""
    moved = _moved_inertia(m, e) if e.damping > 0 else None
    if moved is None:
        return None
    inertia, what, unit = moved
    return e.damping * dt / inertia, inertia, what, unit


def damper_step_problems(m: Mechanism, dt: float, where: str) -> list[Problem]:
    """Warnings for the dampers too strong for the time step ``dt`` (s). The integrator
    discretises a damper by the trapezoidal rule (half its impulse ``c ds / 2`` at each end of a
    step, :mod:`linkcli.core.dynamics.integrator`): on a mass ``m`` the velocity update is
    ``v+ = (1 - c h / 2m) / (1 + c h / 2m) v-``, which is negative -- the velocity flips sign every
    step and the driver/reaction forces ring, while the energy balance still closes -- when
    ``c h / m`` exceeds :data:`DAMPING_STEP_LIMIT` = 2. ``m`` as for the springs
    (:func:`_moved_inertia`, an approximation). ``where`` says where ``dt`` comes from."""
    problems: list[Problem] = []
    for name, e in m.dampers.items():
        found = damper_step_ratio(m, e, dt)
        if found is None:
            continue
        ratio, inertia, what, unit = found
        if ratio > DAMPING_STEP_LIMIT:
            problems.append(Problem(
                ("dampers", name, "damping"),
                f"damper '{name}' is too strong for the time step: c*dt/m = {ratio:.3g} > {DAMPING_STEP_LIMIT:g} "
                f"(c = {e.damping:g}, m = {inertia:.4g} {unit}, {what}; dt = {dt:g} s from {where}); each step "
                "reverses the velocity it damps, so forces, torques and reactions ring (the energy balance "
                "does not show it)",
                f"Use dt < {DAMPING_STEP_LIMIT * inertia / e.damping:.3g} s, or check the damping unit "
                "(N s/m or N m s/rad whatever the file's units).", "warning", DAMPER_STEP))
    return problems


#: a prescribed rate jump smaller than this times the profile's own rate scale (its largest
#: |change of value| / duration) is round-off (a cubic table that ends flat has an end slope of
#: ~1e-15 of it), not an impulse
RATE_JUMP_RTOL = 1e-6


def motion_rate_jumps(d, assembly_value=None) -> list[tuple[float, float, float, str]]:
    """``(t, rate before, rate after, where)`` of each time ``t`` (s) at which motion driver
    ``d``'s prescribed rate jumps (file units per s; ``where``: "start", "end" or "knot"),
    following :mod:`linkcli.core.profiles` (the same profiles, held at their end values outside
    a ramp or table): a linear ramp jumps at both ends, a table where it starts after t = 0 and
    where it ends moving (a cubic table's end slope, scipy's not-a-knot spline as the core's),
    a linear table also at every knot where its slope changes. Constant, constant-speed,
    harmonic and cycloidal drivers are smooth. ``assembly_value``: a ramp's default start."""
    jumps: list[tuple[float, float, float, str]] = []
    if d.type == "ramp" and d.shape == "linear" and d.t_end is not None and d.end is not None:
        start = d.start if d.start is not None else assembly_value
        if not isinstance(start, (int, float)) or d.t_end <= d.t_start:
            return []
        rate = (d.end - start) / (d.t_end - d.t_start)
        scale = abs(rate)
        jumps = [(float(d.t_start), 0.0, rate, "start"), (float(d.t_end), rate, 0.0, "end")]
    elif d.type == "table" and d.t is not None and d.values is not None and len(d.t) == len(d.values) >= 2:
        t, v = np.asarray(d.t, float), np.asarray(d.values, float)
        if np.any(np.diff(t) <= 0):
            return []
        slopes = np.diff(v) / np.diff(t)
        scale = float(np.abs(slopes).max())
        if d.interpolation == "cubic":
            from scipy.interpolate import CubicSpline  # the core's table profile (model imports it lazily)

            spline = CubicSpline(t, v)
            first, last = float(spline(t[0], 1)), float(spline(t[-1], 1))
        else:
            first, last = float(slopes[0]), float(slopes[-1])
            jumps += [(float(t[k + 1]), float(slopes[k]), float(slopes[k + 1]), "knot")
                      for k in range(len(slopes) - 1)]
        jumps = [(float(t[0]), 0.0, first, "start"), *jumps, (float(t[-1]), last, 0.0, "end")]
    else:
        return []
    # a table that starts at t <= 0 starts the run at its own rate (no jump); a ramp's rate at
    # t_start itself is 0 (the core's profile), so a linear ramp from t = 0 jumps in the first step
    return [j for j in jumps if abs(j[2] - j[1]) > RATE_JUMP_RTOL * scale
            and not (d.type == "table" and j[3] == "start" and j[0] <= 0)]


def check(m: Mechanism) -> list[Problem]:
    """All semantic problems of a mechanism (errors and warnings)."""
    return Checker(m).run()


def inertia_matrix(inertia, planar: bool) -> np.ndarray | None:
    """3x3 inertia (about the CG, link axes) from any accepted form, None when malformed.
    Planar: one number Izz (others zero)."""
    if isinstance(inertia, (int, float)):
        return np.diag([0.0, 0.0, float(inertia)]) if planar else None
    if planar:
        return None
    if all(isinstance(v, (int, float)) for v in inertia):
        if len(inertia) == 3:
            return np.diag(np.asarray(inertia, dtype=float))
        if len(inertia) == 6:
            xx, yy, zz, xy, xz, yz = inertia
            return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)
        return None
    if len(inertia) == 3 and all(isinstance(r, list) and len(r) == 3 for r in inertia):
        return np.array(inertia, dtype=float)
    return None
