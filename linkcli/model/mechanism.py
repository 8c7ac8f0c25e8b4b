"""Pydantic models of a mechanism file, 1:1 with the YAML (units as written in the file).

Types and shapes are checked here; cross references, topology and geometry (which need the
whole file) are checked in :mod:`linkcli.model.checks`. Every vector is a list of numbers whose
length depends on ``kind`` (2 for planar, 3 for spatial), checked there too.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import ConfigDict, Discriminator, Field, StringConstraints, Tag, ValidationInfo, model_validator

from .base import NonNeg, Num, Pos, Strict, located_error, numbers_or_lists
from .study import Study

Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_\-]*$")]
Vec = list[Num]
#: ``yes``/``on`` are text, not booleans (the YAML reader follows YAML 1.2): only true/false
Bool = Annotated[bool, Field(strict=True)]
#: planar: Izz about the CG; spatial: [Ixx, Iyy, Izz], [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] or 3x3
Inertia = Annotated[Union[Num, list[Num], list[list[Num]]],
                    numbers_or_lists("a number, a list of numbers or a 3x3 matrix", nested=True)]
#: "link" or "link.frame"
FrameRef = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z_][A-Za-z0-9_\-]*)?$")]

JointType = Literal["fixed", "revolute", "prismatic", "cylindrical", "universal", "spherical", "planar"]


class Units(Strict):
    """Units of every length and angle in the file and in the outputs. Mass is always kg,
    time s, force N, torque N m."""

    length: Literal["m", "cm", "mm", "in", "ft"] = "m"
    angle: Literal["deg", "rad"] = "deg"


class AxisAngle(Strict):
    axis: Vec
    angle: Num


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
    3x3 ``rotation``). Angles in the file's angle unit, lengths in its length unit."""

    model_config = ConfigDict(json_schema_extra=_frame_schema)

    origin: Vec = Field(default_factory=list)
    angle: Optional[Num] = None
    rpy: Optional[Vec] = None
    axis_angle: Optional[AxisAngle] = None
    rotation: Optional[list[Vec]] = None

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any, info: ValidationInfo) -> Any:
        """Short list forms; ``[a, b, c]`` means [x, y, angle] in a planar file (the loader passes
        the file's kind as validation context) and [x, y, z] in a spatial one."""
        if not isinstance(data, list):
            return data
        planar = (info.context or {}).get("kind", "planar") == "planar"
        if planar and len(data) == 3:
            return {"origin": data[:2], "angle": data[2]}
        return {"origin": data}

    @model_validator(mode="after")
    def _one_rotation(self) -> "Frame":
        given = [k for k in ("angle", "rpy", "axis_angle", "rotation") if getattr(self, k) is not None]
        if len(given) > 1:
            raise located_error(f"a frame takes one rotation, got {', '.join(given)}", sub=(given[1],),
                                hint="Keep only one of angle, rpy, axis_angle, rotation.")
        return self


class ShapeRod(Strict):
    """Uniform slender rod between two frames of the link (or of given length along x)."""

    type: Literal["rod"]
    mass: NonNeg
    between: Optional[list[Name]] = None  # two frame names of this link
    length: Optional[Pos] = None


class ShapeBox(Strict):
    """Uniform box (spatial) or rectangle (planar) centred at ``center``, edges along link axes."""

    type: Literal["box"]
    mass: NonNeg
    size: Vec
    center: Optional[Vec] = None


class ShapeDisk(Strict):
    """Uniform disk (planar) or cylinder about z of the link (spatial), centred at ``center``."""

    type: Literal["disk"]
    mass: NonNeg
    radius: Pos
    height: Optional[Pos] = None
    center: Optional[Vec] = None


Shape = Annotated[Union[ShapeRod, ShapeBox, ShapeDisk], Field(discriminator="type")]


class Link(Strict):
    frames: dict[Name, Frame] = Field(default_factory=dict)
    mass: Optional[NonNeg] = None
    cg: Optional[Vec] = None
    inertia: Optional[Inertia] = None
    shape: Optional[Shape] = None


class Joint(Strict):
    type: JointType
    parent: FrameRef
    child: FrameRef
    actuated: Bool = False
    #: revolute/prismatic/cylindrical axis in joint-frame coordinates (default z; planar
    #: prismatic default x)
    axis: Optional[Vec] = None
    #: [lower, upper] for a 1-variable joint, a list of pairs for more; null = unbounded
    limits: Optional[list[Any]] = None


class DHRow(Strict):
    """One Denavit-Hartenberg row: a link and its proximal joint."""

    name: Optional[Name] = None
    joint_name: Optional[Name] = None
    type: Literal["revolute", "prismatic"] = "revolute"
    a: Num = 0.0
    alpha: Num = 0.0
    d: Num = 0.0
    theta: Num = 0.0  # joint-angle offset (revolute) or angle (prismatic)
    actuated: Bool = True
    limits: Optional[list[Optional[Num]]] = None
    mass: Optional[NonNeg] = None
    cg: Optional[Vec] = None
    inertia: Optional[Inertia] = None
    frames: dict[Name, Frame] = Field(default_factory=dict)


class Serial(Strict):
    """A serial chain given by a DH table; expands into links ``name`` (default ``link1`` ...)
    and joints ``joint_name`` (default ``joint1`` ...). Each link gets frames ``origin`` (its
    body frame: the distal joint for standard DH, the proximal one for modified DH) and
    ``joint`` (the joint frame of its proximal joint)."""

    convention: Literal["standard", "modified"] = "standard"
    attach: FrameRef = ""  # link or link.frame the chain starts from; default: the base link
    base_transform: Optional[Frame] = None
    rows: list[DHRow] = Field(min_length=1)


class LinearSpring(Strict):
    type: Literal["linear"] = "linear"
    between: list[FrameRef]
    stiffness: NonNeg  # N per length unit
    free_length: NonNeg


class TorsionalSpring(Strict):
    type: Literal["torsional"]
    joint: Name
    stiffness: NonNeg  # N m per angle unit
    free_angle: Num = 0.0


class LinearDamper(Strict):
    type: Literal["linear"] = "linear"
    between: list[FrameRef]
    damping: NonNeg  # N s per length unit


class TorsionalDamper(Strict):
    type: Literal["torsional"]
    joint: Name
    damping: NonNeg  # N m s per angle unit


def _element_kind(data: Any) -> str:
    return data.get("type", "linear") if isinstance(data, dict) else "linear"


Spring = Annotated[Union[Annotated[LinearSpring, Tag("linear")], Annotated[TorsionalSpring, Tag("torsional")]],
                   Discriminator(_element_kind)]
Damper = Annotated[Union[Annotated[LinearDamper, Tag("linear")], Annotated[TorsionalDamper, Tag("torsional")]],
                   Discriminator(_element_kind)]


class Load(Strict):
    """Constant force (N, world frame) at a frame of a link, and/or a constant torque (N m)."""

    link: FrameRef  # link or link.frame: point of application
    force: Optional[Vec] = None
    torque: Optional[Annotated[Union[Num, Vec], numbers_or_lists("a number (planar) or [tx, ty, tz]")]] = None


class Driver(Strict):
    """Prescribed motion (``kind: motion``) or applied torque/force (``kind: torque``) of an
    actuated joint, as a function of time ``type``:
    constant(value) | constant_speed(speed, start) | ramp(start, end, t_start, t_end, shape) |
    harmonic(offset, amplitude, frequency [Hz], phase) | table(t, values, interpolation)."""

    joint: Name
    kind: Literal["motion", "torque"] = "motion"
    type: Literal["constant", "constant_speed", "ramp", "harmonic", "table"]
    value: Optional[Num] = None
    speed: Optional[Num] = None
    start: Optional[Num] = None
    end: Optional[Num] = None
    t_start: NonNeg = 0.0
    t_end: Optional[Pos] = None
    shape: Literal["linear", "cycloidal"] = "cycloidal"
    offset: Optional[Num] = None
    amplitude: Optional[Num] = None
    frequency: Optional[Pos] = None
    phase: Num = 0.0
    t: Optional[list[Num]] = None
    values: Optional[list[Num]] = None
    interpolation: Literal["linear", "cubic"] = "cubic"


class SweepRange(Strict):
    from_: Num = Field(alias="from")
    to: Num
    step: Optional[Pos] = None
    num: Optional[Annotated[int, Field(strict=True, ge=1)]] = None


class SolveDefaults(Strict):
    set: dict[str, Num] = Field(default_factory=dict)
    sweep: dict[str, SweepRange] = Field(default_factory=dict)
    mode: Literal["grid", "zip"] = "grid"
    rates: dict[str, Num] = Field(default_factory=dict)
    accelerations: dict[str, Num] = Field(default_factory=dict)
    output_frames: Optional[list[FrameRef]] = None


class SimulateDefaults(Strict):
    t_end: Pos = 1.0
    dt: Pos = 1e-3
    every: Annotated[int, Field(strict=True, ge=1)] = 1
    rates: dict[str, Num] = Field(default_factory=dict)  # initial rates (any joint variable)
    set: dict[str, Num] = Field(default_factory=dict)  # initial actuated values
    tol: Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0, le=1e-3, description=(
        "Relative tolerance of each time step's Newton iteration (dimensionless): momentum residual "
        "relative to the step's force impulses, constraint residual relative to its displacement."))] = 1e-10


class Analysis(Strict):
    solve: Optional[SolveDefaults] = None
    simulate: Optional[SimulateDefaults] = None


class Mechanism(Strict):
    """A mechanism file. See README.md for the format with a commented example."""

    name: Annotated[str, StringConstraints(min_length=1)]
    description: str = ""
    kind: Literal["planar", "spatial"] = "planar"
    units: Units = Field(default_factory=Units)
    gravity: Optional[Vec] = None
    links: dict[Name, Link] = Field(default_factory=dict)
    joints: dict[Name, Joint] = Field(default_factory=dict)
    serial: Optional[Serial] = None
    base: Name
    effector: Optional[FrameRef] = None
    tool: Optional[Frame] = None
    #: starting estimate of joint variables: ``J: value`` or ``J: [q1, q2, ...]`` (multi-variable)
    assembly: dict[str, Annotated[Union[Num, list[Num]],
                                  numbers_or_lists("a number, or a list of numbers for a multi-variable joint")]] \
        = Field(default_factory=dict)
    springs: dict[Name, Spring] = Field(default_factory=dict)
    dampers: dict[Name, Damper] = Field(default_factory=dict)
    loads: dict[Name, Load] = Field(default_factory=dict)
    drivers: dict[Name, Driver] = Field(default_factory=dict)
    analysis: Analysis = Field(default_factory=Analysis)
    #: a parameter study of this mechanism (paths into this file), run by `linkcli batch FILE`
    study: Optional[Study] = None
    schema_: Optional[str] = Field(default=None, alias="$schema")
