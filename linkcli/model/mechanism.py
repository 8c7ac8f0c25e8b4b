"""Pydantic models of a mechanism file, 1:1 with the YAML (units as written in the file).

Types and shapes are checked here; cross references, topology and geometry (which need the
whole file) are checked in :mod:`linkcli.model.checks`. Every vector is a list of numbers whose
length depends on ``kind`` (2 for planar, 3 for spatial), checked there too.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, StringConstraints, Tag, ValidationInfo, model_validator

from .base import NonNeg, Num, Pos, Strict, located_error  # noqa: F401 - NonNeg, Pos re-exported (jobs)
from .study import Study
from .units import (
    ACCELERATION,
    ANGLE,
    DRIVEN,
    DRIVEN_RATE,
    FORCE,
    FREQUENCY,
    INERTIA,
    JOINT,
    JOINT_ACCEL,
    JOINT_RATE,
    LENGTH,
    LINEAR_DAMPING,
    LINEAR_STIFFNESS,
    MASS,
    TIME,
    TORQUE,
    TORSIONAL_DAMPING,
    TORSIONAL_STIFFNESS,
    Q,
)

Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_\-]*$")]
Vec = list[Num]  # unitless (directions, rotation matrices)
Angle = Annotated[float, Q(ANGLE)]
#: a point or offset in the file's length unit: [x, y] or [x, y, z]
Point = Annotated[list[float], Q(LENGTH, "vector", doc="Coordinates")]
Mass = Annotated[float, Q(MASS, ge=0, doc="Mass")]
Time = Annotated[float, Q(TIME)]
#: ``yes``/``on`` are text, not booleans (the YAML reader follows YAML 1.2): only true/false
Bool = Annotated[bool, Field(strict=True)]
#: planar: Izz about the CG; spatial: [Ixx, Iyy, Izz], [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] or 3x3
Inertia = Annotated[float | list[float] | list[list[float]],
                    Q(INERTIA, "matrix", doc="Inertia about the cg, link axes: planar Izz; spatial [Ixx, Iyy, "
                      "Izz], [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] or a 3x3 matrix")]
#: "link" or "link.frame"
FrameRef = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z_][A-Za-z0-9_\-]*)?$")]

JointType = Literal["fixed", "revolute", "prismatic", "cylindrical", "universal", "spherical", "planar"]


class Units(Strict):
    """Units of every length and angle in the file and in the outputs (and of their rates, per
    s). Every other quantity is SI whatever these say: mass kg, inertia kg m^2, gravity m/s^2,
    force N, torque N m, stiffness N/m or N m/rad, damping N s/m or N m s/rad, time s."""

    length: Literal["m", "cm", "mm", "in", "ft"] = "m"
    angle: Literal["deg", "rad"] = "deg"


class AxisAngle(Strict):
    axis: Vec
    angle: Annotated[float, Q(ANGLE, doc="Rotation angle about the axis")]


def _frame_schema(schema: dict[str, Any]) -> None:
    """JSON schema of a frame: the mapping form, or the short list form the validator accepts."""
    mapping = {k: v for k, v in schema.items() if k not in ("title", "description")}
    for key in mapping:
        del schema[key]
    schema["anyOf"] = [{"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 3},
                       mapping]


class Frame(Strict):
    """A frame on a link. Planar: ``[x, y]``, ``[x, y, angle]`` or ``{origin: [x, y], angle: a}``.
    Spatial: ``[x, y, z]`` or ``{origin: [x, y, z], rpy: [r, p, y]}`` (or ``axis_angle`` or a
    3x3 ``rotation``). Angles in the file's angle unit, lengths in its length unit. rpy is
    ``Rz(yaw) Ry(pitch) Rx(roll)`` (fixed x, then y, then z): docs/format.md, "Links and frames"."""

    model_config = ConfigDict(json_schema_extra=_frame_schema)

    origin: Annotated[list[float], Q(LENGTH, "vector", doc="Origin in the link frame")] = Field(default_factory=list)
    angle: Annotated[float, Q(ANGLE, doc="Rotation about z (planar)")] | None = None
    rpy: Annotated[list[float], Q(ANGLE, "vector", doc="Roll, pitch, yaw about fixed x, y, z")] | None = None
    axis_angle: AxisAngle | None = None
    rotation: list[Vec] | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any, info: ValidationInfo) -> Any:
        """Short list forms; ``[a, b, c]`` means [x, y, angle] in a planar file (the loader passes
        the file's kind as validation context) and [x, y, z] in a spatial one."""
        return cls.list_form(data, info.context) if isinstance(data, list) else data

    @classmethod
    def list_form(cls, data: list, context: dict | None) -> dict:
        """The mapping a short list form stands for (``context``: the validation context)."""
        planar = (context or {}).get("kind", "planar") == "planar"
        if planar and len(data) == 3:
            return {"origin": data[:2], "angle": data[2]}
        return {"origin": data}

    @model_validator(mode="after")
    def _one_rotation(self) -> Frame:
        given = [k for k in ("angle", "rpy", "axis_angle", "rotation") if getattr(self, k) is not None]
        if len(given) > 1:
            raise located_error(f"a frame takes one rotation, got {', '.join(given)}", sub=(given[1],),
                                hint="Keep only one of angle, rpy, axis_angle, rotation.")
        return self


class ShapeRod(Strict):
    """Uniform slender rod between two frames of the link (or of given length along x)."""

    type: Literal["rod"]
    mass: Mass
    between: list[Name] | None = None  # two frame names of this link
    length: Annotated[float, Q(LENGTH, gt=0, doc="Rod length along x")] | None = None


class ShapeBox(Strict):
    """Uniform box (spatial) or rectangle (planar) centred at ``center``, edges along link axes."""

    type: Literal["box"]
    mass: Mass
    size: Annotated[list[float], Q(LENGTH, "vector", doc="Edge lengths along the link axes")]
    center: Annotated[list[float], Q(LENGTH, "vector", doc="Centre in the link frame")] | None = None


class ShapeDisk(Strict):
    """Uniform disk (planar) or cylinder about z of the link (spatial), centred at ``center``."""

    type: Literal["disk"]
    mass: Mass
    radius: Annotated[float, Q(LENGTH, gt=0, doc="Radius")]
    height: Annotated[float, Q(LENGTH, gt=0, doc="Height along z (spatial)")] | None = None
    center: Annotated[list[float], Q(LENGTH, "vector", doc="Centre in the link frame")] | None = None


Shape = Annotated[ShapeRod | ShapeBox | ShapeDisk, Field(discriminator="type")]


class PointMass(Strict):
    """A point mass (counterweight, bob, flyball weight) at a frame of its link: adds its mass,
    moves the link's CG and adds its parallel-axis inertia."""

    at: Name  # a frame of this link
    mass: Mass


class Link(Strict):
    frames: dict[Name, Frame] = Field(default_factory=dict)
    mass: Mass | None = None
    cg: Annotated[list[float], Q(LENGTH, "vector", doc="Centre of gravity in the link frame")] | None = None
    inertia: Inertia | None = None
    shape: Shape | None = None
    masses: dict[Name, PointMass] = Field(default_factory=dict)  # point masses by name


class Joint(Strict):
    """A joint between a frame of the parent link and a frame of the child link. Its variables
    move the child's joint frame relative to the parent's, all 0 when the frames coincide;
    variables, axes, order and signs of every type: docs/format.md, "Joints"."""

    type: JointType
    parent: FrameRef
    child: FrameRef
    actuated: Bool = False
    #: revolute/prismatic/cylindrical axis in joint-frame coordinates (default z; planar
    #: prismatic default x)
    axis: Vec | None = None
    #: [lower, upper] for a 1-variable joint, a list of pairs for more; null = unbounded
    limits: Annotated[list[Any], Q(JOINT, "limits",
                                   doc="[lower, upper] (a list of pairs for a multi-variable joint); "
                                       "null = unbounded")] | None = None


class DHRow(Strict):
    """One Denavit-Hartenberg row: a link and its proximal joint."""

    name: Name | None = None
    joint_name: Name | None = None
    type: Literal["revolute", "prismatic"] = "revolute"
    a: Annotated[float, Q(LENGTH, doc="Link length a")] = 0.0
    alpha: Annotated[float, Q(ANGLE, doc="Link twist alpha")] = 0.0
    d: Annotated[float, Q(LENGTH, doc="Link offset d (offset of the variable, prismatic)")] = 0.0
    theta: Annotated[float, Q(ANGLE, doc="Joint angle offset (revolute) or angle (prismatic)")] = 0.0
    actuated: Bool = True
    limits: Annotated[list[float | None], Q(JOINT, "limits", doc="[lower, upper]; null = unbounded")] | None \
        = None
    mass: Mass | None = None
    cg: Annotated[list[float], Q(LENGTH, "vector", doc="Centre of gravity in the link frame")] | None = None
    inertia: Inertia | None = None
    frames: dict[Name, Frame] = Field(default_factory=dict)


class Serial(Strict):
    """A serial chain given by a DH table; expands into links ``name`` (default ``link1`` ...)
    and joints ``joint_name`` (default ``joint1`` ...). Each link gets frames ``origin`` (its
    body frame: the distal joint for standard DH, the proximal one for modified DH) and
    ``joint`` (the joint frame of its proximal joint). Conventions and a worked row:
    docs/format.md, "serial"."""

    convention: Literal["standard", "modified"] = "standard"
    attach: FrameRef = ""  # link or link.frame the chain starts from; default: the base link
    base_transform: Frame | None = None
    rows: list[DHRow] = Field(min_length=1)


class LinearSpring(Strict):
    type: Literal["linear"] = "linear"
    between: list[FrameRef]
    stiffness: Annotated[float, Q(LINEAR_STIFFNESS, ge=0, doc="Stiffness")]
    free_length: Annotated[float, Q(LENGTH, ge=0, doc="Free (unstretched) length")]


class TorsionalSpring(Strict):
    type: Literal["torsional"]
    joint: Name
    stiffness: Annotated[float, Q(TORSIONAL_STIFFNESS, ge=0, doc="Stiffness")]
    free_angle: Annotated[float, Q(ANGLE, doc="Joint angle at which the spring is relaxed")] = 0.0


class LinearDamper(Strict):
    type: Literal["linear"] = "linear"
    between: list[FrameRef]
    damping: Annotated[float, Q(LINEAR_DAMPING, ge=0, doc="Damping coefficient")]


class TorsionalDamper(Strict):
    type: Literal["torsional"]
    joint: Name
    damping: Annotated[float, Q(TORSIONAL_DAMPING, ge=0, doc="Damping coefficient")]


def _element_kind(data: Any) -> str:
    return data.get("type", "linear") if isinstance(data, dict) else "linear"


Spring = Annotated[Annotated[LinearSpring, Tag("linear")] | Annotated[TorsionalSpring, Tag("torsional")],
                   Discriminator(_element_kind)]
Damper = Annotated[Annotated[LinearDamper, Tag("linear")] | Annotated[TorsionalDamper, Tag("torsional")],
                   Discriminator(_element_kind)]


class Load(Strict):
    """Constant force (N, world frame) at a frame of a link, and/or a constant torque (N m)."""

    link: FrameRef  # link or link.frame: point of application
    force: Annotated[list[float], Q(FORCE, "vector", doc="Force, world frame")] | None = None
    torque: Annotated[float | list[float], Q(TORQUE, "scalar|vector",
                                             doc="Torque: a number (planar) or [tx, ty, tz]")] | None = None


class Driver(Strict):
    """Prescribed motion (``kind: motion``) or applied torque/force (``kind: torque``) of an
    actuated joint, as a function of time ``type``:
    constant(value) | constant_speed(speed, start) | ramp(start, end, t_start, t_end, shape) |
    harmonic(offset, amplitude, frequency [Hz], phase) | table(t, values, interpolation).
    Motion values are in the file's angle (revolute) or length (prismatic) unit, rates per s;
    torque drivers in N m (revolute) or N (prismatic); times in s; phase in the angle unit."""

    joint: Name
    kind: Literal["motion", "torque"] = "motion"
    type: Literal["constant", "constant_speed", "ramp", "harmonic", "table"]
    value: Annotated[float, Q(DRIVEN, doc="Constant value")] | None = None
    speed: Annotated[float, Q(DRIVEN_RATE, doc="Rate of a constant_speed driver")] | None = None
    start: Annotated[float, Q(DRIVEN, doc="Value at the start (default: the assembly value)")] | None = None
    end: Annotated[float, Q(DRIVEN, doc="Value at the end of a ramp")] | None = None
    t_start: Annotated[float, Q(TIME, ge=0, doc="Start time")] = 0.0
    t_end: Annotated[float, Q(TIME, gt=0, doc="End time of a ramp")] | None = None
    shape: Literal["linear", "cycloidal"] = "cycloidal"
    offset: Annotated[float, Q(DRIVEN, doc="Mean value of a harmonic (default: the assembly value)")] | None = None
    amplitude: Annotated[float, Q(DRIVEN, doc="Amplitude of a harmonic")] | None = None
    frequency: Annotated[float, Q(FREQUENCY, gt=0, doc="Frequency of a harmonic")] | None = None
    phase: Annotated[float, Q(ANGLE, doc="Phase of a harmonic: offset + amplitude sin(2 pi f t + phase)")] = 0.0
    t: Annotated[list[float], Q(TIME, "vector", doc="Table times")] | None = None
    values: Annotated[list[float], Q(DRIVEN, "vector", doc="Table values")] | None = None
    interpolation: Literal["linear", "cubic"] = "cubic"


class SweepRange(Strict):
    from_: Annotated[float, Q(JOINT, doc="First value")] = Field(alias="from")
    to: Annotated[float, Q(JOINT, doc="Last value")]
    step: Annotated[float, Q(JOINT, gt=0, doc="Spacing")] | None = None
    num: Annotated[int, Field(strict=True, ge=1)] | None = None


class SolveDefaults(Strict):
    set: dict[str, Annotated[float, Q(JOINT, doc="Actuated values by variable name")]] = Field(default_factory=dict)
    sweep: dict[str, SweepRange] = Field(default_factory=dict)
    mode: Literal["grid", "zip"] = "grid"
    rates: dict[str, Annotated[float, Q(JOINT_RATE, doc="Actuated rates by variable name")]] = \
        Field(default_factory=dict)
    accelerations: dict[str, Annotated[float, Q(JOINT_ACCEL, doc="Actuated accelerations by variable name")]] = \
        Field(default_factory=dict)
    output_frames: list[FrameRef] | None = None


class SimulateDefaults(Strict):
    t_end: Annotated[float, Q(TIME, gt=0, doc="Duration")] = 1.0
    dt: Annotated[float, Q(TIME, gt=0, doc="Time step")] = 1e-3
    every: Annotated[int, Field(strict=True, ge=1)] = 1
    rates: dict[str, Annotated[float, Q(JOINT_RATE, doc="Initial rates by variable name (any joint variable; "
                                              "projected onto the constraints)")]] = Field(default_factory=dict)
    set: dict[str, Annotated[float, Q(JOINT, doc="Initial actuated values by variable name")]] = \
        Field(default_factory=dict)
    tol: Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0, le=1e-3, description=(
        "Relative tolerance of each time step's Newton iteration (dimensionless): momentum residual "
        "relative to the step's force impulses, constraint residual relative to its displacement."))] = 1e-10


class ForcesDefaults(Strict):
    """Defaults of `linkcli forces`: the motion (``set``/``sweep``/``mode``; default: the
    ``solve`` block's), input ``speed`` and ``accelerations`` (file units per s, per s^2, or a
    string with a unit such as ``60 rpm``), ``static`` (kinetostatics: no velocities or
    accelerations), extra ``loads`` (force in N, world components, at a frame:
    ``coupler.P: [0, -100]``) and whether ``gravity`` acts."""

    set: dict[str, Annotated[float, Q(JOINT, doc="Actuated values by variable name")]] = Field(default_factory=dict)
    sweep: dict[str, SweepRange] = Field(default_factory=dict)
    mode: Literal["grid", "zip"] = "grid"
    speed: dict[str, Annotated[float, Q(JOINT_RATE, doc="Input speed by variable name")]] = \
        Field(default_factory=dict)
    accelerations: dict[str, Annotated[float, Q(JOINT_ACCEL, doc="Input acceleration by variable name")]] = \
        Field(default_factory=dict)
    static: Bool = False
    loads: dict[FrameRef, Annotated[list[float], Q(FORCE, "vector", doc="Force at the frame, world components")]] = \
        Field(default_factory=dict)
    gravity: Bool = True


class Analysis(Strict):
    solve: SolveDefaults | None = None
    simulate: SimulateDefaults | None = None
    forces: ForcesDefaults | None = None


class Mechanism(Strict):
    """A mechanism file. Field-by-field reference (units, defaults, conventions): docs/format.md;
    a commented example: README.md."""

    name: Annotated[str, StringConstraints(min_length=1)]
    description: str = ""
    kind: Literal["planar", "spatial"] = "planar"
    units: Units = Field(default_factory=Units)
    gravity: Annotated[list[float], Q(ACCELERATION, "vector", doc="Gravity, world frame")] | None = None
    links: dict[Name, Link] = Field(default_factory=dict)
    joints: dict[Name, Joint] = Field(default_factory=dict)
    serial: Serial | None = None
    base: Name
    effector: FrameRef | None = None
    tool: Frame | None = None
    #: starting estimate of joint variables: ``J: value`` or ``J: [q1, q2, ...]`` (multi-variable)
    assembly: dict[str, Annotated[float | list[float],
                                  Q(JOINT, "scalar|vector", doc="Starting estimate of joint variables: `J: value`, "
                                    "or `J: [q1, q2, ...]` for a multi-variable joint")]] = Field(default_factory=dict)
    springs: dict[Name, Spring] = Field(default_factory=dict)
    dampers: dict[Name, Damper] = Field(default_factory=dict)
    loads: dict[Name, Load] = Field(default_factory=dict)
    drivers: dict[Name, Driver] = Field(default_factory=dict)
    analysis: Analysis = Field(default_factory=Analysis)
    #: a parameter study of this mechanism (paths into this file), run by `linkcli batch FILE`
    study: Study | None = None
    schema_: str | None = Field(default=None, alias="$schema")
