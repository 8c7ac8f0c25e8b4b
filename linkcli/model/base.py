"""Shared pieces of the file-format models: the strict base class and error helpers.

Validators raise :func:`located_error`, a pydantic error of type ``linkcli`` whose context
carries a sub-path (appended to pydantic's location, so the message points at the exact key)
and a hint (how to fix). The loader turns these into file:line:col diagnostics.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Iterator, Sequence
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

#: strict numbers (no strings, no bools, finite) shared by every model of the format
Num = Annotated[float, Field(strict=True, allow_inf_nan=False)]
NonNeg = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]
Pos = Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0)]


def located_error(message: str, *, sub: Sequence[str | int] = (), hint: str = "") -> PydanticCustomError:
    """An error at ``<model location> + sub`` with a fix-it ``hint``."""
    # the text goes in as context, so braces in it (a quoted mapping) are never a placeholder
    return PydanticCustomError("linkcli", "{message}", {"message": message, "sub": tuple(sub), "hint": hint})


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``name`` (difflib ratio >= 0.6), or None."""
    match = difflib.get_close_matches(str(name), list(choices), n=1, cutoff=0.6)
    return match[0] if match else None


def suggest(name: str, choices: Iterable[str]) -> str:
    """``Did you mean 'x'?`` for the closest choice, or an empty string."""
    match = closest(name, choices)
    return f"Did you mean '{match}'?" if match else ""


def choices_hint(kind: str, name: str, choices: Iterable[str]) -> str:
    """Hint listing the valid names, with a did-you-mean when one is close."""
    choices = list(choices)
    listed = ", ".join(choices) if choices else "(none defined)"
    hint = f"Valid {kind}: {listed}."
    close = suggest(name, choices)
    return f"{hint} {close}" if close else hint


class Strict(BaseModel):
    """Base of every model: unknown keys are errors (``extra="forbid"``), models are frozen.

    Unknown keys are reported by pydantic together with every other problem of the file; the
    loader adds the did-you-mean from :func:`keys_at`."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> Any:
        """The schema, with the unit of every field declared with a :class:`~.units.Q` as the
        property's ``description`` (where editors show it)."""
        from .units import quantity_of

        schema = handler(core_schema)
        target = handler.resolve_ref_schema(schema)
        props = target.get("properties")
        if props is None:  # e.g. Frame: a list form or the mapping
            props = next((s["properties"] for s in target.get("anyOf", []) if "properties" in s), {})
        for name, f in cls.model_fields.items():
            q = quantity_of(f.annotation, f.metadata)
            key = f.alias or name
            if q is not None and key in props:
                props[key]["description"] = q.description
        return schema


def keys_at(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """Keys (aliases) a mapping at ``loc`` (a key path from the root of ``model``) accepts, the
    fields of every member for a union of models; [] when ``loc`` is not a model."""
    return list(dict.fromkeys(_keys_at(model, tuple(loc))))


def _keys_at(tp: Any, loc: tuple) -> Iterator[str]:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    origin = get_origin(tp)
    if origin in (Union, UnionType):
        for member in get_args(tp):
            yield from _keys_at(member, loc)
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        fields = {f.alias or name: f for name, f in tp.model_fields.items()}
        if not loc:
            yield from fields
        elif loc[0] in fields:
            yield from _keys_at(fields[loc[0]].annotation, loc[1:])
    elif origin is dict and loc:
        yield from _keys_at(get_args(tp)[1], loc[1:])
    elif origin is list and loc and isinstance(loc[0], int):
        yield from _keys_at(get_args(tp)[0], loc[1:])


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


NUMBER_HINT = "Write a plain number such as 1.5 or 1e-3 (no quotes, no units)."


def short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
