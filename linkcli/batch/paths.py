"""Parameter paths into a parsed mechanism document: look a value up, check that a path can be
set, and build a variant document with new values (the original is never changed).

A path is a tuple of keys and list positions, from :func:`linkcli.model.jobs.parse_parameter_path`
(``"links.coupler.frames.B[0]"`` -> ``("links", "coupler", "frames", "B", 0)``). Variants share
every container they do not change with the original document (copy on write along the paths),
so making one costs a few dict copies, not a deep copy; the original's SourceMap still gives the
line of every key, which is how an invalid variant's diagnostics name the file's lines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import format_key_path
from ..model.base import closest, keys_at
from ..model.mechanism import Mechanism
from ..model.study import parse_parameter_path

_MISSING = object()


class PathProblem(ValueError):
    """A parameter path that does not fit the document: ``message`` and a fix-it ``hint``."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


@dataclass(frozen=True)
class ParameterPath:
    text: str  # as written in the job file
    keys: tuple  # parsed key path

    @classmethod
    def parse(cls, text: str) -> ParameterPath:
        return cls(text, parse_parameter_path(text))


def _step(node: Any, key: Any, done: tuple) -> Any:
    """``node[key]`` or _MISSING; PathProblem when ``node`` cannot hold ``key`` at all."""
    where = format_key_path(done) if done else "the document"
    if isinstance(key, int):
        if not isinstance(node, list):
            raise PathProblem(f"{where} is {_kind(node)}, so [{key}] does not apply", _kind_hint(node))
        return node[key] if key < len(node) else _MISSING
    if not isinstance(node, dict):
        raise PathProblem(f"{where} is {_kind(node)}, so it has no key '{key}'", _kind_hint(node))
    return node.get(key, _MISSING)


def _kind(node: Any) -> str:
    return "a list" if isinstance(node, list) else "a mapping" if isinstance(node, dict) else f"the value {node!r}"


def _kind_hint(node: Any) -> str:
    if isinstance(node, list):
        return f"Use a position such as [0] (it has {len(node)} items)."
    if isinstance(node, dict):
        return f"Use one of its keys: {', '.join(list(node)[:12])}."
    return "The path goes past a single value; shorten it."


def get_value(data: Any, path: Sequence) -> Any:
    """The value at ``path`` (PathProblem when it does not exist)."""
    node = data
    for i, key in enumerate(path):
        node = _step(node, key, tuple(path[:i]))
        if node is _MISSING:
            raise PathProblem(f"{format_key_path(path[:i + 1])} is not in the file")
    return node


def check_settable(data: Any, path: Sequence) -> Any:
    """Check that ``path`` can be set in ``data`` and return its current value (None when the
    last key is absent). Every key must exist, except a last key that the file format allows at
    that place (e.g. `mass` of a link that has none yet). Raises PathProblem with a
    did-you-mean."""
    node = data
    for i, key in enumerate(path):
        parent, node = node, _step(node, key, tuple(path[:i]))
        if node is not _MISSING:
            continue
        here = format_key_path(path[:i + 1])
        if isinstance(key, int):
            raise PathProblem(f"{here}: position {key} is past the end of the list ({len(parent)} items)",
                              f"Use [0] to [{len(parent) - 1}].")
        allowed = keys_at(Mechanism, tuple(path[:i]))
        if i == len(path) - 1 and key in allowed:
            return None
        choices = list(parent) + [k for k in allowed if k not in parent]
        close = closest(key, choices)
        hint = f"Did you mean '{close}'?" if close else (
            f"Keys at {format_key_path(path[:i])}: {', '.join(choices[:12])}." if choices else "")
        raise PathProblem(f"{here} is not in the file", hint)
    return node


def nominal_number(data: Any, path: Sequence) -> float | None:
    """The number at ``path`` (None when absent or not a finite number)."""
    try:
        value = get_value(data, path)
    except PathProblem:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def parameter_unit(data: Any, path: Sequence) -> str:
    """The unit of the value at ``path`` of a mechanism document, as a column header spells it
    (``mm``, ``deg``, ``kg``): its field's declared dimension (:mod:`linkcli.model.units`) in the
    file's ``units`` for lengths and angles, SI otherwise; a joint variable's (limits, assembly
    estimates) by its joint's type. "" when the path names no number with a known unit."""
    from ..model.checks import JOINT_VARIABLE_KINDS
    from ..model.units import column_unit, quantity_at

    data = data if isinstance(data, dict) else {}
    q = quantity_at(Mechanism, path, data, {"kind": data.get("kind", "planar")})
    if q is None:
        return ""
    units = data.get("units") if isinstance(data.get("units"), dict) else {}
    return column_unit(q.dim, units, _joint_variable_kind(data, tuple(path), JOINT_VARIABLE_KINDS))


def parameter_number(data: Any, path: Sequence, value: Any) -> float | None:
    """A study parameter's value as a number in the unit of :func:`parameter_unit`: a number as
    it is; a string with a unit (``"0.5 lbf*in/deg"``, ``"25 mm"``) converted by pint
    (:func:`linkcli.model.units.convert`, as the file's loader converts it) when the path has a
    known unit; None otherwise (the column stays text)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str) or not parameter_unit(data, path):
        return None
    from ..model.units import UnitProblem, convert, quantity_at

    data = data if isinstance(data, dict) else {}
    q = quantity_at(Mechanism, path, data, {"kind": data.get("kind", "planar")})
    units = data.get("units") if isinstance(data.get("units"), dict) else {}
    try:
        return float(convert(value, q.dim, units)) if q is not None else None
    except UnitProblem:
        return None


def _joint_variable_kind(data: dict, path: tuple, kinds_of: dict) -> str:
    """``length``/``angle`` for a joint's limit or assembly estimate at ``path``, "" otherwise."""
    if path[:1] == ("joints",) and len(path) >= 3 and path[2] == "limits":
        joint, rest = _get(data, path[:2]), path[3:]
    elif path[:2] == ("serial", "rows") and len(path) >= 4 and path[3] == "limits":
        joint, rest = {"type": "revolute", **(_get(data, path[:3]) or {})}, path[4:]
    elif path[:1] == ("assembly",) and len(path) >= 2:
        joint, rest = _get(data, ("joints", path[1])), path[2:]
    else:
        return ""
    kinds = kinds_of.get(joint.get("type"), ()) if isinstance(joint, dict) else ()
    value = _get(data, path[:len(path) - len(rest)])
    # a value per variable: limits as a list of pairs, an assembly estimate as a list
    per_variable = isinstance(value, list) and (path[0] == "assembly" or bool(value) and isinstance(value[0], list))
    index = (rest[0] if rest and isinstance(rest[0], int) else None) if per_variable else \
        (0 if len(kinds) == 1 else None)
    return kinds[index] if index is not None and index < len(kinds) else ""


def _get(data: Any, path: Sequence) -> Any:
    try:
        return get_value(data, path)
    except PathProblem:
        return None


def with_values(data: Any, paths: Sequence[Sequence], values: Sequence[Any]) -> Any:
    """A copy of ``data`` with ``values[k]`` at ``paths[k]``; containers off the paths are shared
    with ``data`` (treat both as read-only)."""
    root = data
    for path, value in zip(paths, values, strict=True):
        root = _set(root, tuple(path), value)
    return root


def _set(node: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(node, dict):
        out = dict(node)
        out[key] = _set(node.get(key), rest, value)
        return out
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        out = list(node)
        out[key] = _set(node[key], rest, value)
        return out
    raise PathProblem(f"cannot set {key!r} in {_kind(node)}")  # check_settable() rules this out


__all__ = ["ParameterPath", "PathProblem", "get_value", "check_settable", "nominal_number", "parameter_number",
           "parameter_unit", "with_values"]
