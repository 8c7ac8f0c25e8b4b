"""Load a mechanism file: YAML with a source map -> validated model, or every problem at once.

``load_mechanism(path)`` returns a :class:`LoadedMechanism` (model, warnings, provenance) or
raises :class:`MechanismFileError` whose diagnostics name file, line, column and key path and
say how to fix each problem.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

from pydantic import BaseModel, ValidationError

from ..errors import MAX_DIAGNOSTICS, Diagnostic, MechanismFileError
from ..model.base import NUMBER_HINT, choices_hint, closest, keys_at, short_repr, suggest
from ..model.checks import check
from ..model.mechanism import Mechanism
from .yaml_source import SourceMap, load_yaml, read_source, source_name

NAME_RULE = "Names start with a letter or '_' and hold letters, digits, '_' or '-'"


ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass(frozen=True)
class LoadedMechanism(Generic[ModelT]):
    model: ModelT  # a Mechanism, or the model_cls given to validate_document (a JobFile)
    path: str
    sha256: str
    source: SourceMap
    warnings: list[Diagnostic] = field(default_factory=list)

    def line_of(self, *key_path: Any) -> tuple[int, int]:
        return self.source.locate(tuple(key_path))


def load_mechanism(path: str | os.PathLike) -> LoadedMechanism[Mechanism]:
    """Read, parse and validate one mechanism file (``-``: standard input). The SHA-256 is
    that of the bytes parsed (the file is read once)."""
    raw = read_source(path)
    name = source_name(path)
    data, smap = load_yaml(raw, name)
    return validate_document(data, smap, name, hashlib.sha256(raw).hexdigest())


@overload
def validate_document(data: Any, smap: SourceMap, path: str, sha256: str = "") -> LoadedMechanism[Mechanism]: ...
@overload
def validate_document(data: Any, smap: SourceMap, path: str, sha256: str = "", *,
                      model_cls: type[ModelT]) -> LoadedMechanism[ModelT]: ...
def validate_document(data: Any, smap: SourceMap, path: str, sha256: str = "",
                      model_cls: type[BaseModel] = Mechanism) -> LoadedMechanism[Any]:
    """Validate parsed YAML against the model and the semantic checks."""
    kind = data.get("kind", "planar") if isinstance(data, dict) else "planar"
    try:
        model = model_cls.model_validate(data, context=validation_context(data, model_cls))
    except ValidationError as exc:
        found, omitted = _pydantic_problems(exc, data, smap, path, model_cls)
        diags = [d for d, _ in found]
        prune = [p for _, p in found if p is not None]
        if model_cls is Mechanism and not omitted and len(prune) == len(found):
            diags += _checks_without(data, prune, smap, path, kind)
        raise MechanismFileError(diags, omitted) from None
    problems = check(model) if isinstance(model, Mechanism) else []
    if isinstance(model, Mechanism) and not any(p.severity == "error" for p in problems):
        # the rate jumps of motion drivers: the core's rule on the compiled profiles (numerics the
        # model layer does not duplicate; the run's blame uses the same rule)
        from ..compile import driver_rate_jumps
        from ..model.checks import rate_jump_problems

        problems += rate_jump_problems(model, driver_rate_jumps(model))
    diags = diagnostics(path, smap, problems)
    errors = [d for d in diags if d.severity == "error"]
    if errors:
        raise MechanismFileError(errors)
    return LoadedMechanism(model, path, sha256, smap, [d for d in diags if d.severity == "warning"])


def strict_errors(warnings: list[Diagnostic]) -> list[Diagnostic]:
    """Warnings as errors (``validate --strict``, batch ``strict: true``)."""
    return [dataclasses.replace(d, severity="error") for d in warnings]


def validation_context(data: Any, model_cls: type[BaseModel] = Mechanism) -> dict:
    """What field validators need from the rest of the file: its kind (frame list forms) and
    its length and angle units (unit strings convert to them); defaults when not given or
    invalid (an invalid `units` is reported on its own)."""
    doc = data if isinstance(data, dict) else {}
    given = doc.get("units")
    units = given if isinstance(given, dict) else {}
    length, angle = units.get("length", "m"), units.get("angle", "deg")
    if model_cls is not Mechanism:  # a job file: its options apply to mechanisms of any units
        return {"kind": doc.get("kind", "planar"), "units": None}
    return {"kind": doc.get("kind", "planar"),
            "units": {"length": length if isinstance(length, str) else "m",
                      "angle": angle if isinstance(angle, str) else "deg"}}


def diagnostics(path: str, smap: SourceMap, problems) -> list[Diagnostic]:
    """The model's :class:`~linkcli.model.checks.Problem` s of the file ``path`` as Diagnostics
    (file, line, column from the source map)."""
    return [dataclasses.replace(_diag(path, smap, p.path, p.message, p.hint, p.severity), code=p.code)
            for p in problems]


def _diag(path: str, smap: SourceMap, key_path: tuple, message: str, hint: str = "",
          severity: str = "error") -> Diagnostic:
    line, col = smap.locate(tuple(key_path))
    return Diagnostic(path, line, col, tuple(key_path), message, hint, severity)  # type: ignore[arg-type]


def clean_loc(loc: tuple, data: Any, missing: bool = False) -> tuple:
    """Key path in the file of a pydantic error location: drop pydantic's entries that are not
    keys of ``data`` (union members such as 'LinearSpring', tags, '[key]'). A final key that
    is not in ``data`` is kept when it names what is ``missing`` (a required key to add)."""
    out: list = []
    node = data
    for i, part in enumerate(loc):
        if isinstance(node, dict) and part in node:
            out.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            out.append(part)
            node = node[part]
        elif missing and isinstance(node, dict) and isinstance(part, str) and i == len(loc) - 1:
            out.append(part)
    return tuple(out)


def describe(err: Mapping[str, Any], loc: tuple, model_cls: type[BaseModel]) -> tuple[str, str]:
    """(message, hint) for one pydantic error dict whose key path in the file is ``loc``."""
    typ, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    key = next((p for p in reversed(loc) if isinstance(p, str)), "")
    if typ == "linkcli":
        return err["msg"], ctx.get("hint", "")
    if typ == "missing":
        return f"missing required key '{key}'", f"Add `{key}: ...` here."
    if typ == "extra_forbidden":
        allowed = keys_at(model_cls, loc[:-1])
        return f"unknown key '{key}'", suggest(key, allowed) or f"Allowed keys here: {', '.join(allowed)}."
    if typ in ("float_type", "float_parsing", "int_type", "int_parsing", "int_from_float"):
        want = "a whole number" if typ.startswith("int") else "a number"
        return f"expected {want}, got {short_repr(value)}", NUMBER_HINT
    if typ == "finite_number":
        return f"expected a finite number, got {short_repr(value)}", "inf and nan are not allowed here."
    if typ in ("bool_type", "bool_parsing"):
        return f"expected true or false, got {short_repr(value)}", "Write true or false (yes/no/on/off are text)."
    if typ == "string_type":
        return f"expected text, got {short_repr(value)}", "Write plain text (quote it if it holds ': ' or '#')."
    if typ == "string_pattern_mismatch":
        if "\\." in ctx.get("pattern", ""):
            return f"{short_repr(value)} is not a reference", "Write `link` or `link.frame`. " + NAME_RULE + "."
        return f"{short_repr(value)} is not a valid name", NAME_RULE + "."
    if typ == "string_too_short":
        return "must not be empty", ""
    if typ == "literal_error":
        expected = ctx.get("expected", "")
        options = [o.strip().strip("'") for o in expected.replace(" or ", ",").split(",") if o.strip()]
        close = suggest(str(value), options)
        return f"{short_repr(value)} is not allowed", f"Use one of {expected}." + (f" {close}" if close else "")
    if typ in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        relation = ">=" if typ == "greater_than_equal" else ">"
        word = "negative" if bound == 0 and relation == ">=" else f"not {relation} {bound:g}"
        return f"{short_repr(value)} is {word}", f"The value must be {relation} {bound:g}."
    if typ in ("dict_type", "model_type", "model_attributes_type"):
        return (f"expected a mapping (key: value lines), got {short_repr(value)}",
                "Write indented `key: value` lines below this key, or {key: value, ...}.")
    if typ == "list_type":
        return f"expected a list such as [1, 2], got {short_repr(value)}", "Write the items in brackets: [a, b, ...]."
    if typ == "too_short":
        return "list is too short", err["msg"] + "."
    if typ == "union_tag_invalid":
        tags = [t.strip().strip("'") for t in str(ctx.get("expected_tags", "")).split(",")]
        close = suggest(str(ctx.get("tag")), tags)
        return f"unknown type '{ctx.get('tag')}'", f"Use one of {', '.join(tags)}." + (f" {close}" if close else "")
    if typ == "union_tag_not_found":
        return "missing required key 'type'", "Add `type: ...` here."
    return err["msg"], ""


#: Keys that nothing else in a file depends on: when the model rejects only values under such
#: keys (or unknown keys that stand for one), the rest of the file is checked without them, so
#: the semantic problems (references, topology, geometry) are reported in the same run. Values
#: that others refer to (names, frames, kind, `actuated`, joint types ...) are never left out:
#: that would add follow-on errors the user did not make.
INERT_KEYS = frozenset({"description", "units", "gravity", "effector", "tool", "assembly", "analysis",
                        "mass", "cg", "inertia", "shape", "axis", "limits", "$schema",
                        "springs", "dampers", "loads", "drivers"})
ELEMENT_GROUPS = ("springs", "dampers", "loads", "drivers")  # left out one element at a time


def _prune_path(typ: str, loc: tuple, data: Any, model_cls: type[BaseModel]) -> tuple | None:
    """What to leave out so that the rest of the file validates despite this error, or None
    when leaving anything out could change the meaning of the rest."""
    if typ == "extra_forbidden":
        close = closest(loc[-1], keys_at(model_cls, loc[:-1]))
        if close is None or (close not in INERT_KEYS and not _exists(data, loc[:-1] + (close,))):
            return None  # it may stand for a missing required or meaningful key
        return loc
    for i, part in enumerate(loc):
        if isinstance(part, str) and part in INERT_KEYS and part in keys_at(model_cls, loc[:i]):
            return loc[: i + 2] if part in ELEMENT_GROUPS else loc[: i + 1]
    return None


def _checks_without(data: Any, prune: list[tuple], smap: SourceMap, path: str, kind: str) -> list[Diagnostic]:
    """Semantic errors of ``data`` without the ``prune`` paths (none if it still does not validate)."""
    data = copy.deepcopy(data)
    for loc in prune:
        node = data
        for part in loc[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(loc[-1], None)
    try:
        model = Mechanism.model_validate(data, context=validation_context(data))
    except ValidationError:
        return []
    return [_diag(path, smap, p.path, p.message, p.hint) for p in check(model)
            if p.severity == "error" and not any(p.path[:len(loc)] == loc for loc in prune)]


def _exists(data: Any, loc: tuple) -> bool:
    for part in loc:
        if not (isinstance(data, dict) and part in data):
            return False
        data = data[part]
    return True


def _pydantic_problems(exc: ValidationError, data: Any, smap: SourceMap, path: str, model_cls: type[BaseModel]
                       ) -> tuple[list[tuple[Diagnostic, tuple | None]], int]:
    """One diagnostic per distinct location (unions report every member; keep the first): a
    missing required key is not reported when an unknown key next to it is its misspelling
    (``nmae:`` reports "unknown key 'nmae'. Did you mean 'name'?" only).
    (diagnostic, path to leave out for the semantic checks or None) per distinct location,
    for the first MAX_DIAGNOSTICS locations, and the number of further locations (counted, not
    described: thousands of unknown keys cost milliseconds, not a difflib search each). The
    allowed keys of a mapping are listed once, with its first unknown key."""
    out: dict[tuple, tuple[Diagnostic, tuple | None]] = {}
    misspelt: set[tuple] = set()  # paths of required keys that an unknown key misspells
    listed: dict[tuple, Diagnostic] = {}  # mapping path -> diagnostic that lists its allowed keys
    omitted: set[tuple] = set()
    for err in exc.errors(include_url=False, include_context=True, include_input=True):
        typ = err["type"]
        missing = typ in ("missing", "union_tag_not_found")
        loc = tuple(err["loc"]) + tuple((err.get("ctx") or {}).get("sub", ()))
        if typ == "union_tag_not_found":
            loc += ("type",)
        loc = clean_loc(loc, data, missing=missing)
        if typ == "union_tag_invalid" and "type" in _node(data, loc):
            loc += ("type",)
        if loc in out:
            continue
        if len(out) >= MAX_DIAGNOSTICS:
            omitted.add(loc)
            continue
        if typ == "extra_forbidden":
            misspelt.add(loc[:-1] + (closest(loc[-1], keys_at(model_cls, loc[:-1])),))
        message, hint = describe(err, loc, model_cls)
        line, col = smap.locate(loc[:-1] if missing else loc)
        if typ == "extra_forbidden" and hint.startswith("Allowed keys here"):
            first = listed.setdefault(loc[:-1], Diagnostic(path, line, col, loc, message, hint))
            if first.key_path != loc:
                hint = f"Allowed keys here: as listed for '{first.key_path[-1]}' (line {first.line})."
        out[loc] = Diagnostic(path, line, col, loc, message, hint), _prune_path(typ, loc, data, model_cls)
    return [found for loc, found in out.items() if loc not in misspelt], len(omitted - set(out))


def _node(data: Any, loc: tuple) -> Any:
    for part in loc:
        data = data[part]
    return data if isinstance(data, dict) else {}


__all__ = ["LoadedMechanism", "load_mechanism", "validate_document", "choices_hint"]
