"""The compiled mechanism: every name resolved to an integer id, every quantity in SI units.

This is the one representation the analyses read. It is built by :mod:`linkcli.compile` from a
validated model and never changed afterwards (arrays are read-only). Shapes use
``n_links, n_joints, n_q, n_frames, n_loops`` ...; units are SI (m, rad, kg, N, s).

Conventions
-----------
* Link 0 is the base (ground). Poses ``T_world_link`` are 4x4 homogeneous transforms,
  ``p_world = T_world_link @ p_link``. The world frame is the base link frame.
* A planar mechanism lives in the world x-y plane; its poses are still 4x4 (z = 0, rotation
  about z only) so one set of kinematics serves both kinds; planar analyses read x, y and the
  angle about z.
* Joint ``j`` connects ``joint_parent[j]`` and ``joint_child[j]``. Its joint frame is
  ``T_parent_joint[j]`` on the parent and ``T_child_joint[j]`` on the child. Its motion is

      T_world_child = T_world_parent @ T_parent_joint[j] @ M_j(q_j) @ inv(T_child_joint[j])

  with ``M_j(q) = E(q[s]) @ E(q[s+1]) ...`` a product of elementary motions, one per
  variable ``k`` in ``s = joint_q_start[j] ... s + joint_q_count[j] - 1``: a rotation by ``q[k]``
  about the unit axis ``q_axis[k]`` (when ``q_is_rotation[k]``) or a translation by ``q[k]``
  along it, both in joint-frame coordinates. All variables are zero when the parent and child
  joint frames coincide.
* Spanning tree: ``link_tree_joint[i]`` is the joint that attaches link ``i`` to its tree parent
  ``link_tree_parent[i]`` (-1 for the base); ``link_tree_forward[i]`` is True when that joint's
  parent is the tree parent (else the joint is traversed child -> parent, i.e. inverted).
  ``link_order`` lists links so that a parent precedes its children. Every joint not in the tree
  closes one loop: ``loop_joint[l]``.

Derived data
------------
Precomputations that the core builds from these arrays (the forward-kinematics plan, the
loop-closure plan, the planar SE(2) steps, the compiled-sweep kernel model and its packed form)
are kept ON the mechanism, in the private per-instance dict ``_derived``, through
:meth:`CompiledMechanism.derived`: built on first use (so the numba kernel model is only made for
compiled sweeps) and then reused for the life of the instance -- never in module-level caches.
``dataclasses.replace`` gives a new instance with an empty ``_derived`` (its arrays may differ),
and pickling (batch workers) ships only the fields, never ``_derived``: a worker rebuilds what it
uses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

import numpy as np

# Joint type codes (joint_type). The number of variables of each type is JOINT_DOF[type].
FIXED, REVOLUTE, PRISMATIC, CYLINDRICAL, UNIVERSAL, SPHERICAL, PLANAR = range(7)
JOINT_TYPE_NAMES = ("fixed", "revolute", "prismatic", "cylindrical", "universal", "spherical", "planar")
JOINT_DOF = (0, 1, 1, 2, 2, 3, 3)

# Driver kinds (driver_kind)
DRIVE_MOTION, DRIVE_TORQUE = 0, 1

_D = TypeVar("_D")


@dataclass(frozen=True)
class Profile:
    """A time function without user code: ``kind`` in constant, constant_speed, ramp, harmonic,
    table. ``params`` are SI numbers (see :mod:`linkcli.core.profiles`); ``t``/``values`` hold a
    table's knots; ``interpolation`` is ``linear`` or ``cubic``."""

    kind: str
    params: Mapping[str, float] = field(default_factory=dict)
    t: np.ndarray | None = None
    values: np.ndarray | None = None
    interpolation: str = "linear"


@dataclass(frozen=True, eq=False)
class CompiledMechanism:
    name: str
    planar: bool
    length_unit: str  # unit names of the file, for outputs
    angle_unit: str
    length_scale: float  # metres per file length unit
    angle_scale: float  # radians per file angle unit

    # links --------------------------------------------------------------------------------
    link_names: tuple[str, ...]  # (n_links,), index 0 = base
    link_mass: np.ndarray  # (n_links,) kg; 0 for the base and for links given no mass
    link_has_mass: np.ndarray  # (n_links,) bool, mass properties were given (or derived)
    link_cg: np.ndarray  # (n_links, 3) m, centre of mass in link frame
    link_inertia: np.ndarray  # (n_links, 3, 3) kg m^2 about the CG, link-frame axes

    # frames (named points/frames on links) --------------------------------------------------
    frame_names: tuple[str, ...]  # (n_frames,) "link.frame"
    frame_link: np.ndarray  # (n_frames,) link index
    T_link_frame: np.ndarray  # (n_frames, 4, 4) frame pose in its link frame (m)

    # joints ---------------------------------------------------------------------------------
    joint_names: tuple[str, ...]  # (n_joints,)
    joint_type: np.ndarray  # (n_joints,) code, see FIXED ... PLANAR
    joint_parent: np.ndarray  # (n_joints,) link index
    joint_child: np.ndarray  # (n_joints,) link index
    T_parent_joint: np.ndarray  # (n_joints, 4, 4) joint frame in parent link frame (m)
    T_child_joint: np.ndarray  # (n_joints, 4, 4) joint frame in child link frame (m)
    joint_q_start: np.ndarray  # (n_joints,) index of the joint's first variable in q
    joint_q_count: np.ndarray  # (n_joints,) number of variables
    joint_actuated: np.ndarray  # (n_joints,) bool

    # joint variables ------------------------------------------------------------------------
    q_names: tuple[str, ...]  # (n_q,) "crank_pin" or "U.q1", "U.q2" for multi-DOF joints
    q_joint: np.ndarray  # (n_q,) joint index
    q_is_rotation: np.ndarray  # (n_q,) bool: angle [rad] (True) or length [m]
    q_axis: np.ndarray  # (n_q, 3) unit axis in joint-frame coordinates
    q_actuated: np.ndarray  # (n_act,) indices of actuated variables, in q order
    q_init: np.ndarray  # (n_q,) starting estimate (file's `assembly`, else 0)
    q_lower: np.ndarray  # (n_q,) limits, -inf when none
    q_upper: np.ndarray  # (n_q,) limits, +inf when none

    # topology -------------------------------------------------------------------------------
    link_tree_joint: np.ndarray  # (n_links,) joint attaching the link to its tree parent, -1 base
    link_tree_parent: np.ndarray  # (n_links,) tree parent link, -1 for base
    link_tree_forward: np.ndarray  # (n_links,) bool, joint parent == tree parent
    link_order: np.ndarray  # (n_links,) parents before children
    loop_joint: np.ndarray  # (n_loops,) joints that close a loop (not in the tree)

    # effector ------------------------------------------------------------------------------
    effector_frame: int  # frame index carrying the effector
    T_frame_tool: np.ndarray  # (4, 4) tool frame in the effector frame

    # dynamics ------------------------------------------------------------------------------
    gravity: np.ndarray  # (3,) m/s^2, world frame
    axial_names: tuple[str, ...]  # (n_axial,) linear springs and dampers
    axial_frame_a: np.ndarray  # (n_axial,) frame index of end a
    axial_frame_b: np.ndarray  # (n_axial,) frame index of end b
    axial_stiffness: np.ndarray  # (n_axial,) N/m, 0 for a pure damper
    axial_free_length: np.ndarray  # (n_axial,) m
    axial_damping: np.ndarray  # (n_axial,) N s/m, 0 for a pure spring
    torsional_names: tuple[str, ...]  # (n_tors,)
    torsional_joint: np.ndarray  # (n_tors,) revolute joint index
    torsional_stiffness: np.ndarray  # (n_tors,) N m/rad
    torsional_free_angle: np.ndarray  # (n_tors,) rad
    torsional_damping: np.ndarray  # (n_tors,) N m s/rad
    load_names: tuple[str, ...]  # (n_loads,) constant forces/torques
    load_link: np.ndarray  # (n_loads,) link index
    load_point: np.ndarray  # (n_loads, 3) point of application in link frame (m)
    load_force: np.ndarray  # (n_loads, 3) N, world frame
    load_torque: np.ndarray  # (n_loads, 3) N m, world frame
    driver_names: tuple[str, ...]  # (n_drivers,)
    driver_q: np.ndarray  # (n_drivers,) index of the driven (actuated) variable
    driver_kind: np.ndarray  # (n_drivers,) DRIVE_MOTION or DRIVE_TORQUE
    driver_profile: tuple[Profile, ...]  # (n_drivers,) SI: rad or m (motion), N m or N (torque)

    # provenance ----------------------------------------------------------
    file: str = ""

    # derived data, built on first use (see "Derived data" in the module docstring) -------------
    _derived: dict[str, Any] = field(init=False, repr=False, compare=False)

    # derived counts -------------------------------------------------------------------------
    @property
    def n_links(self) -> int:
        return len(self.link_names)

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    @property
    def n_q(self) -> int:
        return len(self.q_names)

    @property
    def n_frames(self) -> int:
        return len(self.frame_names)

    @property
    def n_loops(self) -> int:
        return len(self.loop_joint)

    @property
    def n_actuated(self) -> int:
        return len(self.q_actuated)

    @property
    def loop_dim(self) -> int:
        """Constraint equations per loop: 3 planar (x, y, angle), 6 spatial."""
        return 3 if self.planar else 6

    @property
    def n_constraints(self) -> int:
        return self.n_loops * self.loop_dim

    @property
    def gruebler_mobility(self) -> int:
        """Gruebler-Kutzbach count: joint variables minus loop-closure equations."""
        return self.n_q - self.n_constraints

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.init:
                value = getattr(self, f.name)
                if isinstance(value, np.ndarray):
                    value.setflags(write=False)
        object.__setattr__(self, "_derived", {})

    def derived(self, key: str, build: Callable[[CompiledMechanism], _D]) -> _D:
        """``build(self)``, computed once per instance and kept under ``key`` (e.g.
        ``"forward.plan"``); ``build`` must depend only on this mechanism's fields."""
        try:
            return self._derived[key]
        except KeyError:
            return self._derived.setdefault(key, build(self))

    def __getstate__(self) -> dict[str, Any]:
        # pickle the fields only: derived data (plans, kernel packs) is rebuilt where it is used
        state = dict(self.__dict__)
        state.pop("_derived", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__["_derived"] = {}
        for value in state.values():  # unpickled arrays come back writeable
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    # name lookups (cheap; used at the edges, never in kernels) ---------------------------------
    def link_index(self, name: str) -> int:
        return self.link_names.index(name)

    def joint_index(self, name: str) -> int:
        return self.joint_names.index(name)

    def frame_index(self, name: str) -> int:
        return self.frame_names.index(name)
