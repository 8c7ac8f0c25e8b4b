"""Error types of linkcli: they carry data (where, what, how to fix), never formatted output.

Every problem found in a mechanism file becomes a :class:`Diagnostic`; the loader collects all
of a file's diagnostics and raises one :class:`MechanismFileError` holding them, sorted by line.
The CLI formats them as ``path:line:col: error: key.path: message. hint``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

#: characters never echoed raw: C0 controls and DEL, C1 controls (ESC and CSI start terminal
#: escape sequences: clear screen, window title, fake links), lone surrogates (undecodable bytes
#: of file names), the line/paragraph separators, bidirectional overrides ("Trojan source")
#: and Unicode non-characters
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
                        "\ufdd0-\ufdef\ufffe\uffff" + "".join(
                            f"{chr(p + 0xfffe)}{chr(p + 0xffff)}" for p in range(0x10000, 0x110000, 0x10000)) + "]")


#: the same in JSON text, where tab, line feed and carriage return only occur as layout
_INVISIBLE_IN_JSON = re.compile(_INVISIBLE.pattern.replace("\x00-\x1f", "\x00-\x08\x0b\x0c\x0e-\x1f"))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: object) -> str:
    """``text`` safe to echo on a terminal or in a one-line message: every control character
    (C0, DEL, C1), line separator, bidi override, lone surrogate and non-character becomes a
    visible escape (``\\x1b``, ``\\u2028``, ``\\U0010ffff``); everything else is unchanged.
    Every string that comes from a user (file names, names and keys in files, option values)
    goes through this before it is printed."""
    return _INVISIBLE.sub(_escape, str(text))


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code >= 0x10000:  # JSON escapes a character beyond the BMP as a UTF-16 surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def visible_json(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with the characters that
    :func:`visible` escapes written as ``\\uXXXX`` escapes: the same JSON value, safe on a
    terminal (json.dumps leaves C1 controls, separators and non-characters raw)."""
    return _INVISIBLE_IN_JSON.sub(_json_escape, text)


def format_key_path(path: Sequence[str | int]) -> str:
    """``("joints", "B", "child")`` -> ``joints.B.child``; list indices as ``[i]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "<document>"


def with_hint(message: str, hint: str) -> str:
    """``message. Hint`` (the hint capitalised); a message ending in ``?`` or ``!`` keeps its
    own punctuation (no ``?.``)."""
    if not hint:
        return message
    end = " " if message.endswith(("?", "!")) else ". "
    return message.rstrip(".") + end + hint[:1].upper() + hint[1:]


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
    code: str = ""  # the check's kind (linkcli.model.checks.Problem.code), "" for most

    @property
    def key(self) -> str:
        return format_key_path(self.key_path)

    def format(self) -> str:
        """One line: ``file:line:col: severity: key: message. Hint``; a problem of the whole
        file (line 0) reads ``file: severity: message. Hint``. Control characters and the like
        are shown as escapes (:func:`visible`)."""
        if self.line > 0:
            text = f"{self.file}:{self.line}:{self.col}: {self.severity}: {self.key}: {self.message}"
        else:
            text = f"{self.file}: {self.severity}: {self.message}"
        return visible(with_hint(text, self.hint))

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


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (the CLI's handler raises this): it unwinds exactly like Ctrl-C, so the
    same clean-up runs (temporary output files removed, partial results written where a
    command does so); the CLI then exits 143 (128 + SIGTERM)."""


@dataclass
class MechanismFileError(LinkcliError):
    """A mechanism file (or job file) is invalid: one or more diagnostics, sorted by line.
    ``omitted`` counts further problems that were found but not described (a file with
    thousands of errors is reported by its first :data:`MAX_DIAGNOSTICS`)."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    omitted: int = 0

    def __post_init__(self) -> None:
        self.diagnostics = sorted(self.diagnostics, key=lambda d: (d.line, d.col, d.key))
        super().__init__(self.__str__())

    def __str__(self) -> str:
        lines = [d.format() for d in self.diagnostics[:MAX_DIAGNOSTICS]]
        more = self.omitted + max(0, len(self.diagnostics) - MAX_DIAGNOSTICS)
        return "\n".join(lines + ([more_problems(more)] if more else []))


#: most problems described (and printed) per file; the rest are counted ("and N more")
MAX_DIAGNOSTICS = 50


def more_problems(n: int) -> str:
    """The line that stands for ``n`` problems left out of a report."""
    return f"... and {n} more problem{'s' * (n != 1)} (fix these first, then check again)"


class AnalysisInputError(LinkcliError):
    """Arguments of an analysis are inconsistent with the mechanism (e.g. unknown joint name in
    ``--set``). Raised before any numerics run; the message says how to fix it."""
