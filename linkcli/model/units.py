"""The unit of every number in a mechanism file, declared once, here.

The rule (README "Units"): a file's ``units: {length, angle}`` applies to lengths and angles
only, and to their rates (per s) and accelerations (per s^2). Every other quantity has one
fixed SI unit whatever the file says: mass kg, inertia kg m^2, gravity m/s^2, force N, torque
N m, stiffness N/m or N m/rad, damping N s/m or N m s/rad, time s, frequency Hz. Any number
may instead be a string with units (``"20 N/mm"``, ``"1250 kg*mm^2"``, ``"60 rpm"``), parsed by
pint with dimension checking and converted, at validation, to the unit a bare number has.

From the one declaration per field (a :class:`Q` in the field's annotation) derive:

* validation and conversion of numbers and unit strings (:meth:`Q.validate`);
* the field's ``description`` in the JSON schema (``Strict`` lifts it to the property);
* the README units table (:func:`units_table`, checked for staleness by a test);
* the SI factors compile uses (:data:`LENGTH_SCALE`, :data:`ANGLE_SCALE`).

How to give a new field a unit (for whoever adds one)::

    from .units import FORCE, LENGTH, Q
    class Thing(Strict):
        pull: Annotated[float, Q(FORCE, doc="Pull on the rope")]                      # N
        where: Annotated[list[float], Q(LENGTH, "vector", doc="Point of application")]  # file unit
        gap: Optional[Annotated[float, Q(LENGTH, ge=0, doc="Gap")]] = None

Pick a :class:`Dimension` below (add one if none fits: its SI unit as pint spells it, how the
docs write it, an example string); shapes are ``scalar``, ``vector`` (a list, or one string
``"[1, 2] mm"``), ``scalar|vector``, ``matrix`` (number, list or list of lists: inertia) and
``limits`` (``[lo, hi]`` or a list of pairs, ``null`` allowed). ``ge``/``gt`` bound the value
after conversion. Then regenerate schemas/ and the README table (``python -m
linkcli.model.units README.md``); tests/test_units.py checks both. compile.py converts: fields
that follow the file's length/angle unit are multiplied by the scale factor of their kind,
fixed-SI fields are used as they are.

Joint variables are lengths (prismatic) or angles (revolute), and a driver's values are
motions or efforts (N m / N) depending on its ``kind``: their fields accept any of those
dimensions; a value converted from a string remembers what it was (:class:`Given`), so the
semantic checks can tell a length given to a revolute joint.

pint is imported only when a string with units appears (it costs ~0.3-1.5 s to load), so
files of bare numbers validate without it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, get_args, get_origin

LENGTH_SCALE = {"m": 1.0, "cm": 0.01, "mm": 0.001, "in": 0.0254, "ft": 0.3048}  #: metres per unit
ANGLE_SCALE = {"deg": math.pi / 180.0, "rad": 1.0}  #: radians per unit
_PINT_NAME = {"m": "meter", "cm": "centimeter", "mm": "millimeter", "in": "inch", "ft": "foot",
              "deg": "degree", "rad": "radian"}
STANDARD_GRAVITY = 9.80665  #: m/s^2

_FILE_UNIT_COLUMN = re.compile(r"\s*(\w+)\s*(/\s*s(?:\^2|\*\*2|2)?)?\s*")


def file_unit_scale(unit: str) -> tuple[float, tuple[str, str]] | None:
    """For a column unit that depends on a file's ``units:`` -- a length or angle unit, or its
    rate (``/s``) or acceleration (``/s^2``), the only column units that do (README "Units") --
    ``(SI per unit, kind)`` with ``kind`` = (``"length"``/``"angle"``, time suffix), so two
    units of the same kind convert by the ratio of their scales; None for any other unit
    (those columns are SI whatever the file says)."""
    match = _FILE_UNIT_COLUMN.fullmatch(unit)
    if match is None:
        return None
    suffix = (match.group(2) or "").replace(" ", "").replace("**2", "^2").replace("/s2", "/s^2")
    for kind, scale in (("length", LENGTH_SCALE), ("angle", ANGLE_SCALE)):
        if match.group(1) in scale:
            return scale[match.group(1)], (kind, suffix)
    return None


@dataclass(frozen=True)
class Dimension:
    """What a number measures. ``si``: the unit of a bare number, as pint spells it (fixed-SI
    dimensions); ``follows``: the file unit kinds a bare number is in instead (``length``,
    ``angle``, or both for joint variables), ``per_s`` its time-derivative order; ``efforts``:
    also accepts a torque or force (driver values)."""

    key: str
    label: str
    si: str = ""
    shown: str = ""
    follows: tuple[str, ...] = ()
    per_s: int = 0
    efforts: bool = False
    example: str = ""

    @property
    def bare(self) -> str:
        """What a bare number means, for docs."""
        if not self.follows:
            return self.shown
        per = {0: "", 1: " per s", 2: " per s^2"}[self.per_s]
        if self.follows == ("length",):
            return f"file length unit{per}"
        if self.follows == ("angle",):
            return f"file angle unit{per}"
        text = (f"file angle unit{per} (revolute, and each angle variable of a multi-variable joint) or length "
                f"unit{per} (prismatic, each length variable)")
        if self.efforts:
            text += "; torque drivers: N m (revolute) or N (prismatic)" + ("" if not self.per_s else " per s")
        return text

    def describe(self) -> str:
        return f"Unit: {self.bare}; or a string with units, e.g. '{self.example}'."


LENGTH = Dimension("length", "length", follows=("length",), example="25 mm")
ANGLE = Dimension("angle", "angle", follows=("angle",), example="30 deg")
JOINT = Dimension("joint", "joint value (angle or length)", follows=("angle", "length"), example="30 deg")
JOINT_RATE = Dimension("joint_rate", "joint rate", follows=("angle", "length"), per_s=1, example="60 rpm")
JOINT_ACCEL = Dimension("joint_accel", "joint acceleration", follows=("angle", "length"), per_s=2,
                        example="10 rad/s^2")
DRIVEN = Dimension("driven", "driven value (motion or effort)", follows=("angle", "length"), efforts=True,
                   example="90 deg")
DRIVEN_RATE = Dimension("driven_rate", "driven rate", follows=("angle", "length"), per_s=1, efforts=True,
                        example="60 rpm")
MASS = Dimension("mass", "mass", "kilogram", "kg", example="250 g")
INERTIA = Dimension("inertia", "moment of inertia", "kilogram * meter ** 2", "kg m^2", example="1250 kg*mm^2")
ACCELERATION = Dimension("acceleration", "acceleration", "meter / second ** 2", "m/s^2", example="-9810 mm/s^2")
FORCE = Dimension("force", "force", "newton", "N", example="5 kN")
TORQUE = Dimension("torque", "torque", "newton * meter", "N m", example="300 N*mm")
LINEAR_STIFFNESS = Dimension("linear_stiffness", "translational stiffness", "newton / meter", "N/m",
                             example="20 N/mm")
TORSIONAL_STIFFNESS = Dimension("torsional_stiffness", "torsional stiffness", "newton * meter / radian",
                                "N m/rad", example="2 N*m/deg")
LINEAR_DAMPING = Dimension("linear_damping", "translational damping", "newton * second / meter", "N s/m",
                           example="0.5 N*s/mm")
TORSIONAL_DAMPING = Dimension("torsional_damping", "torsional damping", "newton * meter * second / radian",
                              "N m s/rad", example="0.02 N*m*s/deg")
TIME = Dimension("time", "time", "second", "s", example="20 ms")
FREQUENCY = Dimension("frequency", "frequency", "hertz", "Hz", example="120 / minute")
POWER = Dimension("power", "power", "watt", "W", example="1.5 kW")
ENERGY = Dimension("energy", "energy", "joule", "J", example="2 kJ")

DIMENSIONS = (LENGTH, ANGLE, JOINT, JOINT_RATE, JOINT_ACCEL, DRIVEN, DRIVEN_RATE, MASS, INERTIA, ACCELERATION,
              FORCE, TORQUE, LINEAR_STIFFNESS, TORSIONAL_STIFFNESS, LINEAR_DAMPING, TORSIONAL_DAMPING, TIME,
              FREQUENCY, POWER, ENERGY)


class Given(float):
    """A number converted from a string with units; ``kind`` says what it measured
    (``length``, ``angle``, ``force``, ``torque`` ...), for fields that accept several."""

    kind: str = ""

    def __new__(cls, value: float, kind: str) -> Given:
        obj = super().__new__(cls, value)
        obj.kind = kind
        return obj

    def __reduce__(self):  # pickles (batch workers) and deep-copies keep the kind
        return (Given, (float(self), self.kind))

    def __deepcopy__(self, memo):
        return self


# -- pint, lazily ----------------------------------------------------------------------------
_REGISTRY: Any = None


def registry() -> Any:
    """The pint UnitRegistry (created on first use)."""
    global _REGISTRY
    if _REGISTRY is None:
        import pint

        # pint's on-disk cache of the parsed definitions: building the registry drops from
        # ~2.5 s to ~0.5 s (measured at load 14 on 2 cores); without a writable cache folder,
        # the plain registry
        try:
            _REGISTRY = pint.UnitRegistry(cache_folder=":auto:")
        except Exception:  # noqa: BLE001 - any cache problem: build it without the cache
            _REGISTRY = pint.UnitRegistry()
    return _REGISTRY


class UnitProblem(ValueError):
    """A string that is not a quantity of the expected dimension; ``hint`` says how to fix it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


_VECTOR = re.compile(r"^\s*\[([^\]]*)\]\s*(.*)$")


def _candidates(dim: Dimension, units: dict[str, str]) -> list[tuple[str, str]]:
    """(kind, pint unit) a string of dimension ``dim`` may be converted to, in the file's units."""
    per = {0: "", 1: " / second", 2: " / second ** 2"}[dim.per_s]
    if not dim.follows:
        return [(dim.key, dim.si)]
    out = []
    for kind in dim.follows:
        unit = _PINT_NAME.get(units.get(kind, ""), _PINT_NAME["m" if kind == "length" else "deg"])
        out.append((kind, unit + per))
    if dim.efforts:
        out += [("torque", "newton * meter" + per), ("force", "newton" + per)]
    return out


def convert(text: str, dim: Dimension, units: dict[str, str]) -> Given:
    """The number a string with units stands for, in the unit a bare number of ``dim`` has in a
    file with ``units`` ({"length": "mm", "angle": "deg"}). Raises :class:`UnitProblem`."""
    try:
        float(text)
    except ValueError:
        pass
    else:  # quoted number, no unit (pint not needed to say so)
        raise UnitProblem(f"expected a number, got {text!r} (quoted, without a unit)",
                          f"Write {text.strip()} without quotes ({dim.bare}), or add a unit, e.g. '{dim.example}'.")
    ureg = registry()
    import pint

    try:
        q = ureg.Quantity(text.strip())
    except Exception as exc:  # pint raises several types (UndefinedUnitError, syntax errors ...)
        raise UnitProblem(f"expected a number, got {text!r} ({_first_line(exc)})",
                          f"Write a plain number such as 1.5 ({dim.bare}), or a number with a unit such as "
                          f"'{dim.example}' (pint's unit names, e.g. m/s^2, N*m, kg*mm^2).") from None
    if not isinstance(q, ureg.Quantity) or not isinstance(q.magnitude, (int, float)):
        raise UnitProblem(f"{text!r} is not a number with a unit", f"Write e.g. '{dim.example}'.")
    if q.unitless:
        raise UnitProblem(f"{text!r} has no unit", f"Write the number without quotes ({dim.bare}), "
                          f"or add a unit, e.g. '{dim.example}'.")
    # pint counts radians as dimensionless: 60 rpm "is" 6.28 Hz and 1 Hz "is" 1 rad/s. A
    # frequency given as an angular rate counts turns; an angular rate without an angle unit
    # is refused rather than guessed (rad/s or turns/s)
    has_angle = dict(q.to_root_units().unit_items()).get("radian", 0) != 0
    if dim.key == "frequency" and has_angle:
        try:
            return Given(float(q.to("radian / second").magnitude) / (2 * math.pi), "frequency")
        except pint.DimensionalityError:
            pass
    for kind, unit in _candidates(dim, units):
        pure_rate = q.dimensionality == ureg.Quantity(1, unit).dimensionality
        if kind == "angle" and dim.per_s and not has_angle and pure_rate:
            raise UnitProblem(f"{text!r} has no angle unit; is it turns or radians per second?",
                              "Write the angle: e.g. '60 rpm', '1 turn/s', '360 deg/s' or '6.28 rad/s'.")
        try:
            value = float(q.to(unit).magnitude)
        except pint.DimensionalityError:
            continue
        if not math.isfinite(value):
            raise UnitProblem(f"{text!r} is not a finite number", f"Write e.g. '{dim.example}'.")
        return Given(value, kind)
    if not math.isfinite(float(q.magnitude)):  # (nan in a unit none of the candidates has)
        raise UnitProblem(f"{text!r} is not a finite number", f"Write e.g. '{dim.example}'.")
    expected = dim.label if not dim.follows else " or ".join(
        [k for k, _ in _candidates(dim, units)]) + {0: "", 1: " per second", 2: " per second squared"}[dim.per_s]
    shown = f" ({dim.shown})" if dim.shown else ""
    raise UnitProblem(f"{text!r} is {_dimension_text(q, has_angle)}, expected {_article(expected)} {expected}{shown}",
                      f"Write e.g. '{dim.example}', or a bare number ({dim.bare}).")


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def _dimension_text(q: Any, has_angle: bool = False) -> str:
    """What ``q`` is, in words: an angle (pint counts radians as dimensionless), dimensionless, or
    its dimension."""
    dims = str(q.dimensionality)
    if dims == "dimensionless":
        return "an angle" if has_angle else "dimensionless"
    return f"a quantity of dimension {dims}"


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# -- the field declaration ---------------------------------------------------------------------
SHAPES = ("scalar", "vector", "scalar|vector", "matrix", "limits")


@dataclass(frozen=True)
class Q:
    """Declares the unit of a field: ``Annotated[float, Q(FORCE, doc="...")]``. See the module
    docstring."""

    dim: Dimension
    shape: str = "scalar"
    ge: float | None = None
    gt: float | None = None
    doc: str = ""

    def __post_init__(self) -> None:
        assert self.shape in SHAPES, self.shape

    @property
    def description(self) -> str:
        doc = self.doc.rstrip(".")
        return (f"{doc}. " if doc else "") + self.dim.describe()

    # pydantic hooks
    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.with_info_plain_validator_function(self.validate)

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict:
        number: dict[str, Any] = {"type": "number"}
        if self.ge is not None:
            number["minimum"] = self.ge
        if self.gt is not None:
            number["exclusiveMinimum"] = self.gt
        leaf = {"anyOf": [number, {"type": "string", "description": "a number with a unit"}]}
        schema: dict[str, Any]
        if self.shape == "scalar":
            schema = leaf
        elif self.shape == "vector":
            schema = {"anyOf": [{"type": "array", "items": leaf}, {"type": "string"}]}
        elif self.shape == "scalar|vector":
            schema = {"anyOf": [leaf, {"type": "array", "items": leaf}]}
        elif self.shape == "matrix":
            schema = {"anyOf": [leaf, {"type": "array", "items": leaf},
                                {"type": "array", "items": {"type": "array", "items": leaf}}]}
        else:
            item = {"anyOf": [leaf, {"type": "null"}]}
            schema = {"type": "array", "items": {"anyOf": [item, {"type": "array", "items": item}]}}
        return {**schema, "description": self.description}

    # validation
    def validate(self, value: Any, info: Any = None) -> Any:
        """The value with every string converted (see :func:`convert`); raises a located
        pydantic error naming the expected dimension."""
        from .base import located_error

        context = getattr(info, "context", None) or {}
        units = context.get("units", {})
        try:
            return self._shape(value, units)
        except _Located as exc:
            raise located_error(exc.message, sub=exc.sub, hint=exc.hint) from None

    def _shape(self, value: Any, units: dict) -> Any:
        shape = self.shape
        if shape == "scalar":
            return self._leaf(value, units, ())
        if shape == "vector" and isinstance(value, str) and _VECTOR.match(value):
            return self._vector_string(value, units)
        if isinstance(value, list):
            if shape in ("vector", "scalar|vector"):
                return [self._leaf(v, units, (i,)) for i, v in enumerate(value)]
            if shape == "matrix":
                if value and isinstance(value[0], list):
                    return [self._row(row, units, (i,), None) for i, row in enumerate(value)]
                return [self._leaf(v, units, (i,)) for i, v in enumerate(value)]
            # limits: [lo, hi] or [[lo, hi], ...]; null = unbounded
            if value and isinstance(value[0], list):
                return [self._row(row, units, (i,), True) for i, row in enumerate(value)]
            return [None if v is None else self._leaf(v, units, (i,)) for i, v in enumerate(value)]
        if shape == "matrix" and not isinstance(value, (int, float, str)):
            raise _Located(f"expected a number, a list of numbers or a 3x3 matrix, got {_short(value)}", (),
                           "Write a plain number such as 1.5 (or a list of them), each may carry a unit "
                           f"such as '{self.dim.example}'.")
        if shape in ("scalar|vector", "matrix"):
            return self._leaf(value, units, ())
        expected = {"vector": "a list such as [1, 2]", "limits": "a list such as [lower, upper]"}[shape]
        raise _Located(f"expected {expected}, got {_short(value)}", (), "Write the items in brackets: [a, b, ...], "
                       "each a number or a number with a unit.")

    def _row(self, row: Any, units: dict, where: tuple, nulls: bool | None) -> list:
        if not isinstance(row, list):
            raise _Located(f"expected a list of numbers, got {_short(row)}", where, NUMBER_OR_UNIT_HINT)
        return [None if (v is None and nulls) else self._leaf(v, units, where + (k,)) for k, v in enumerate(row)]

    def _vector_string(self, text: str, units: dict) -> list:
        body, unit = _VECTOR.match(text).groups()  # type: ignore[union-attr]
        items = [p.strip() for p in body.split(",")] if body.strip() else []
        out = []
        for item in items:
            try:
                number = float(item)
            except ValueError:
                raise _Located(f"{text!r}: {item!r} is not a number", (),
                               "Write e.g. '[0, -9810] mm/s^2' or give each component its unit.") from None
            out.append(self._leaf(f"{number!r} {unit}" if unit.strip() else number, units, ()))
        return out

    def _leaf(self, v: Any, units: dict | None, where: tuple) -> float:
        if isinstance(v, str) and units is None and self.dim.follows:
            raise _Located(f"{v!r}: a length or angle with a unit cannot be used here", where,
                           "Job options apply to mechanism files of any units: write a number in the "
                           "mechanism file's units.")
        if isinstance(v, str):
            try:
                number: float = convert(v, self.dim, units or {})
            except UnitProblem as exc:
                raise _Located(str(exc), where, exc.hint) from None
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            number = float(v)
            if not math.isfinite(number):
                raise _Located(f"expected a finite number, got {_short(v)}", where, "inf and nan are not allowed here.")
        else:
            raise _Located(f"expected a number, got {_short(v)}", where,
                           f"Write a plain number such as 1.5 or 1e-3 ({self.dim.bare}), or a number with a unit "
                           f"such as '{self.dim.example}'.")
        if self.ge is not None and number < self.ge:
            word = "negative" if self.ge == 0 else f"not >= {self.ge:g}"
            raise _Located(f"{_short(v)} is {word}", where, f"The value must be >= {self.ge:g}.")
        if self.gt is not None and number <= self.gt:
            raise _Located(f"{_short(v)} is not > {self.gt:g}", where, f"The value must be > {self.gt:g}.")
        return number


NUMBER_OR_UNIT_HINT = "Write numbers, e.g. [1, 2], or numbers with units, e.g. ['25 mm', '0 mm']."


class _Located(Exception):
    def __init__(self, message: str, sub: tuple, hint: str) -> None:
        super().__init__(message)
        self.message, self.sub, self.hint = message, sub, hint


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- reading the declarations back ---------------------------------------------------------------
def quantity_of(annotation: Any, metadata: Sequence[Any] = ()) -> Q | None:
    """The :class:`Q` declared on a field (its metadata or anywhere inside its annotation)."""
    for item in metadata:
        if isinstance(item, Q):
            return item
    for item in getattr(annotation, "__metadata__", ()):
        if isinstance(item, Q):
            return item
    for arg in get_args(annotation):
        if isinstance(arg, Q):
            return arg
        if isinstance(arg, type) or get_origin(arg) is not None or hasattr(arg, "__metadata__"):
            found = quantity_of(arg)
            if found is not None:
                return found
    return None


def declared_fields(model: Any, prefix: str = "", seen: frozenset = frozenset()) -> Iterator[tuple[str, Q]]:
    """(key path, Q) of every field with a unit, walking nested models (``*`` for names in a
    mapping, ``[]`` for list items, ``(type: x)`` for union members tagged by ``type``)."""
    from pydantic import BaseModel

    if model in seen:
        return
    seen = seen | {model}
    for name, f in model.model_fields.items():
        key = f"{prefix}{f.alias or name}"
        q = quantity_of(f.annotation, f.metadata)
        if q is not None:
            yield key, q
            continue
        for sub, path in _models_in(f.annotation, key):
            if isinstance(sub, type) and issubclass(sub, BaseModel):
                tag = _type_tag(sub)
                yield from declared_fields(sub, path + (f" (type: {tag})" if tag else "") + ".", seen)


def _models_in(tp: Any, path: str) -> Iterator[tuple[Any, str]]:
    from pydantic import BaseModel

    if isinstance(tp, type) and issubclass(tp, BaseModel):
        yield tp, path
        return
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is dict:
        yield from _models_in(args[1], path + ".*")
    elif origin is list:
        yield from _models_in(args[0], path + "[]")
    else:
        for arg in args:
            yield from _models_in(arg, path)


def _type_tag(model: Any) -> str:
    f = getattr(model, "model_fields", {}).get("type")
    args = get_args(f.annotation) if f is not None else ()
    return str(args[0]) if len(args) == 1 and isinstance(args[0], str) else ""


def quantity_at(model: Any, path: Sequence, data: Any = None, context: dict | None = None) -> Q | None:
    """The :class:`Q` declared on the field a key path of a document (``("links", "crank",
    "mass")``, ``("joints", "J", "limits", 0)``) names, walking ``model``'s annotations like
    validation does; keys past the field index into its value (a vector's item, a limit). ``data``
    (the document) picks the member of a union tagged by ``type`` and resolves a model's short
    list form (a model with a ``list_form(data, context)`` classmethod, e.g. a frame's ``[x, y,
    angle]``; ``context`` as validation gets it). None when the path names no field with a
    unit, or union members that disagree."""
    found = _quantity_at(model, tuple(path), data, context or {})
    return found if isinstance(found, Q) else None


_AMBIGUOUS = object()


def _quantity_at(tp: Any, path: tuple, data: Any, context: dict) -> Any:
    from pydantic import BaseModel

    q = quantity_of(tp) if get_origin(tp) is not None or hasattr(tp, "__metadata__") else None
    if q is not None:
        return q
    while hasattr(tp, "__metadata__"):  # Annotated without a unit
        tp = get_args(tp)[0]
    if not path:
        return None
    key, rest = path[0], path[1:]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if isinstance(key, int):  # a short list form: the index becomes the mapping's key path
            list_form = getattr(tp, "list_form", None)
            if not isinstance(data, list) or list_form is None:
                return None
            mapped = list_form(list(range(len(data))), context)
            sub = _where(mapped, key)
            return None if sub is None else _quantity_at(tp, sub + rest, mapped, context)
        fields = {f.alias or name: f for name, f in tp.model_fields.items()}
        if key not in fields:
            return None
        f = fields[key]
        q = quantity_of(f.annotation, f.metadata)
        if q is not None:
            return q
        return _quantity_at(f.annotation, rest, _item(data, key), context)
    origin, args = get_origin(tp), get_args(tp)
    if origin is dict:
        return _quantity_at(args[1], rest, _item(data, key), context)
    if origin is list and isinstance(key, int):
        return _quantity_at(args[0], rest, _item(data, key), context)
    if args:  # a union: the member the document's `type` tags, or every member that agrees
        members = [a for a in args if a is not type(None)]
        tag = data.get("type") if isinstance(data, dict) else None
        tagged = [m for m in members if _type_tag(_bare(m)) and _type_tag(_bare(m)) == (tag or _type_default(_bare(m)))]
        found = {id(x): x for x in (_quantity_at(m, path, data, context) for m in tagged or members)
                 if x is not None}
        dims = {x.dim.key if isinstance(x, Q) else "?" for x in found.values()}
        return next(iter(found.values())) if len(dims) == 1 and "?" not in dims else (
            _AMBIGUOUS if found else None)
    return None


def _bare(tp: Any) -> Any:
    while hasattr(tp, "__metadata__"):
        tp = get_args(tp)[0]
    return tp


def _type_default(model: Any) -> Any:
    """The default of a model's ``type`` field (the member an untagged mapping is), else None."""
    f = getattr(model, "model_fields", {}).get("type")
    return f.default if f is not None and isinstance(f.default, str) else None


def _item(data: Any, key: Any) -> Any:
    if isinstance(data, dict):
        return data.get(key)
    if isinstance(data, list) and isinstance(key, int) and key < len(data):
        return data[key]
    return None


def _where(mapped: Any, index: int) -> tuple | None:
    """The key path at which ``index`` sits in ``mapped`` (a short form applied to its indices)."""
    if mapped == index and not isinstance(mapped, bool):
        return ()
    items = mapped.items() if isinstance(mapped, dict) else enumerate(mapped) if isinstance(mapped, list) else ()
    for k, v in items:
        sub = _where(v, index)
        if sub is not None:
            return (k,) + sub
    return None


def column_unit(dim: Dimension, units: dict[str, str], kind: str = "") -> str:
    """The unit a bare number of ``dim`` has in a file with ``units`` ({"length": "mm", "angle":
    "deg"}, defaults m and deg), spelled as column headers spell it (``mm``, ``deg/s``, ``kg``).
    ``kind`` (``length``/``angle``) picks one for a dimension that follows both (joint
    variables); "" when that is unknown or the value may be an effort."""
    if not dim.follows:
        return dim.shown
    if len(dim.follows) > 1:
        if kind not in dim.follows or dim.efforts:
            return ""
    else:
        kind = dim.follows[0]
    unit = units.get(kind) or ("m" if kind == "length" else "deg")
    return unit + {0: "", 1: "/s", 2: "/s^2"}[dim.per_s]


def units_table(model: Any) -> str:
    """The README's units table (markdown): one row per dimension, the keys that have it."""
    by_dim: dict[str, list[str]] = {}
    for key, q in declared_fields(model):
        by_dim.setdefault(q.dim.key, []).append(key)
    lines = ["| quantity | a bare number means | example with units | keys |", "|---|---|---|---|"]
    for dim in DIMENSIONS:
        keys = by_dim.get(dim.key)
        if keys:
            lines.append(f"| {dim.label} | {dim.bare} | `{dim.example}` | "
                         + ", ".join(f"`{k}`" for k in keys) + " |")
    return "\n".join(lines)


TABLE_START, TABLE_END = "<!-- units table: generated by python -m linkcli.model.units README.md -->", \
    "<!-- end of units table -->"


def replace_table(text: str, table: str) -> str:
    """``text`` with the block between the table markers replaced by ``table``."""
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    return text[:start] + "\n" + table + "\n" + text[end:]


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    import sys

    from linkcli.model import units  # this file, imported as itself (its Q is the models' Q)
    from linkcli.model.mechanism import Mechanism

    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as fh:
            old = fh.read()
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(units.replace_table(old, units.units_table(Mechanism)))
