"""Parameter studies: which values of a mechanism document vary, and how. Used by job files
(``jobs.<name>.study``) and by mechanism files (top-level ``study``), run by ``linkcli batch``."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from .base import NonNeg, Num, Pos, Strict, located_error

Text = Annotated[str, StringConstraints(min_length=1)]
Count = Annotated[int, Field(strict=True, ge=1)]

#: most variants a study may have (a grid's product included)
MAX_VARIANTS = 10_000_000

# -- parameter paths ---------------------------------------------------------------------------------
_KEY = r"[A-Za-z_$][A-Za-z0-9_\-$]*"
_PATH = re.compile(rf"{_KEY}(\[\d+\])*(\.{_KEY}(\[\d+\])*)*")
_PART = re.compile(rf"({_KEY})|\[(\d+)\]")
PATH_HINT = ("Write keys joined by '.' and list positions in brackets, e.g. `links.coupler.frames.B[0]` "
             "or `springs.s1.stiffness`.")


def parse_parameter_path(text: str) -> tuple:
    """``"links.coupler.frames.B[0]"`` -> ``("links", "coupler", "frames", "B", 0)``.
    ValueError when the text is not a path."""
    if not isinstance(text, str) or not _PATH.fullmatch(text):
        raise ValueError(f"{text!r} is not a parameter path")
    return tuple(m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PART.finditer(text))


# -- studies ------------------------------------------------------------------------------------------
StudyMethod = Literal["grid", "list", "random", "lhs", "normal"]
_NEEDS = {"grid": "`values: [...]` or `from:`, `to:` and `num:` or `step:`",
          "list": "`values: [...]` (the same number in every parameter)",
          "random": "`low:` and `high:`", "lhs": "`low:` and `high:`",
          "normal": "`sd:` or `tolerance:` (3 sd), and `mean:` when the file has no number there"}
_FIELDS = {"grid": ("values", "from_", "to", "num", "step"), "list": ("values",),
           "random": ("low", "high"), "lhs": ("low", "high"), "normal": ("sd", "tolerance", "mean")}


class Parameter(Strict):
    """How one parameter varies; which keys apply depends on the study's method:
    grid: ``values`` or ``from``/``to`` with ``num`` or ``step``; list: ``values``;
    random and lhs: ``low``/``high`` (uniform); normal: ``sd`` or ``tolerance`` (= 3 sd) about
    ``mean`` (default: the value in the mechanism file)."""

    values: Annotated[list[Any], Field(min_length=1)] | None = None
    from_: Num | None = Field(default=None, alias="from")
    to: Num | None = None
    num: Count | None = None
    step: Pos | None = None
    low: Num | None = None
    high: Num | None = None
    sd: NonNeg | None = None
    tolerance: NonNeg | None = None
    mean: Num | None = None

    def given(self) -> list[str]:
        return [k for k in type(self).model_fields if getattr(self, k) is not None]


def _alias(field: str) -> str:
    return "from" if field == "from_" else field


class Study(Strict):
    """Variants of each mechanism document of the job: parameters by path into the document,
    varied by ``method``. ``variants`` and ``seed`` for random, lhs and normal; variant ``i``'s
    random numbers come from ``(seed, i)`` only (lhs: from ``seed`` and ``variants``)."""

    method: StudyMethod
    parameters: Annotated[dict[str, Parameter], Field(min_length=1)]
    variants: Annotated[int, Field(strict=True, ge=1, le=MAX_VARIANTS)] | None = None
    seed: Annotated[int, Field(strict=True, ge=0)] = 0
    #: variants per task (default: about 8 tasks per worker, at most 256 variants each)
    chunk_size: Count | None = None
    #: the job passes when at least this fraction of the variants pass
    pass_fraction: Annotated[float, Field(strict=True, ge=0, le=1)] = 1.0
    #: the study table's file name in the output folder: .csv, .json or .parquet
    output: Text | None = None

    @field_validator("parameters")
    @classmethod
    def _paths(cls, value: dict) -> dict:
        for key in value:
            try:
                parse_parameter_path(key)
            except ValueError:
                raise located_error(f"{key!r} is not a parameter path", sub=(key,), hint=PATH_HINT) from None
        return value

    @model_validator(mode="after")
    def _method_fields(self) -> Study:
        m = self.method
        for key, p in self.parameters.items():
            wrong = [f for f in p.given() if f not in _FIELDS[m]]
            if wrong:
                raise located_error(f"`{_alias(wrong[0])}` does not apply to method {m}",
                                    sub=("parameters", key, _alias(wrong[0])),
                                    hint=f"A {m} parameter takes {_NEEDS[m]}.")
            ok = {"grid": p.values is not None or (p.from_ is not None and p.to is not None
                                                   and (p.num is not None or p.step is not None)),
                  "list": p.values is not None,
                  "random": p.low is not None and p.high is not None,
                  "lhs": p.low is not None and p.high is not None,
                  "normal": (p.sd is None) != (p.tolerance is None)}[m]
            if not ok:
                raise located_error(f"parameter {key!r} of a {m} study is incomplete", sub=("parameters", key),
                                    hint=f"Give {_NEEDS[m]}.")
            if m == "grid" and p.values is not None and len(p.given()) > 1:
                raise located_error("give `values` or a range, not both", sub=("parameters", key, "values"))
            if m == "grid" and p.values is None and p.num is not None and p.step is not None:
                raise located_error("give `num` or `step`, not both", sub=("parameters", key, "step"))
            if m in ("random", "lhs") and p.low is not None and p.high is not None and not p.low < p.high:
                raise located_error(f"low ({p.low:g}) must be below high ({p.high:g})", sub=("parameters", key, "high"))
        if m == "list":
            sizes = {len(p.values or ()) for p in self.parameters.values()}
            if len(sizes) > 1:
                raise located_error(f"every parameter of a list study needs the same number of values, got "
                                    f"{sorted(sizes)}", sub=("parameters",),
                                    hint="Variant i takes the i-th value of each parameter; use method grid for "
                                         "every combination.")
        if m in ("random", "lhs", "normal") and self.variants is None:
            raise located_error(f"a {m} study needs `variants:` (how many)", hint="Add e.g. `variants: 1000`.")
        if m in ("grid", "list") and self.variants is not None:
            raise located_error(f"`variants` does not apply to a {m} study (its values give the count)",
                                sub=("variants",))
        if m == "grid" and self.grid_size() > MAX_VARIANTS:
            raise located_error(f"the grid has {self.grid_size():.3g} variants, more than {MAX_VARIANTS}",
                                sub=("parameters",), hint="Use fewer values, or method random/lhs.")
        return self

    def grid_size(self) -> int:
        n = 1
        for p in self.parameters.values():
            if p.values is not None:
                n *= len(p.values)
            elif p.num is not None:
                n *= p.num
            else:  # the validator requires from/to/step here
                assert p.to is not None and p.from_ is not None and p.step is not None
                n *= int(math.floor(abs(p.to - p.from_) / p.step + 1e-9)) + 1
        return n


__all__ = ["Study", "Parameter", "StudyMethod", "parse_parameter_path", "PATH_HINT", "MAX_VARIANTS"]
