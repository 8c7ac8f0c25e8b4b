"""Error types of linkcli: they carry data (where, what, how to fix), never formatted output.

Every problem found in a mechanism file becomes a :class:`Diagnostic`; the loader collects all
of a file's diagnostics and raises one :class:`MechanismFileError` holding them, sorted by line.
The CLI formats them as ``path:line:col: error: key.path: message. hint``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Sequence

KeyPath = tuple  # tuple[str | int, ...]: path of keys/indices from the document root


def format_key_path(path: Sequence[str | int]) -> str:
    """``("joints", "B", "child")`` -> ``joints.B.child``; list indices as ``[i]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "<document>"


@dataclass(frozen=True)
class Diagnostic:
    """One problem in one file. ``line``/``col`` are 1-based; 0 means unknown."""

    file: str
    line: int
    col: int
    key_path: tuple
    message: str
    hint: str = ""
    severity: Literal["error", "warning"] = "error"

    @property
    def key(self) -> str:
        return format_key_path(self.key_path)

    def format(self) -> str:
        text = f"{self.file}:{self.line}:{self.col}: {self.severity}: {self.key}: {self.message}"
        if self.hint:
            text = text.rstrip(".") + ". " + self.hint[:1].upper() + self.hint[1:]
        return text

    def to_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "key": self.key,
            "severity": self.severity,
            "message": self.message,
            "hint": self.hint,
        }


class LinkcliError(Exception):
    """Base class of every error linkcli raises on purpose."""


@dataclass
class MechanismFileError(LinkcliError):
    """A mechanism file (or job file) is invalid: one or more diagnostics, sorted by line."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.diagnostics = sorted(self.diagnostics, key=lambda d: (d.line, d.col, d.key))
        super().__init__(self.__str__())

    def __str__(self) -> str:
        return "\n".join(d.format() for d in self.diagnostics)


class AnalysisInputError(LinkcliError):
    """Arguments of an analysis are inconsistent with the mechanism (e.g. unknown joint name in
    ``--set``). Raised before any numerics run; the message says how to fix it."""
