"""The journal of a batch run: one JSON line per finished job and per finished chunk of study
variants, appended as results arrive, in ``<out_dir>/.batch-journal.jsonl``.

It is what ``linkcli batch --resume`` continues from after an interruption (Ctrl-C, SIGTERM,
even ``kill -9`` or a power cut after the line reached the disk): a job or variant found in the
journal under the same *key* is not run again. The key is the SHA-256 of everything the result
depends on (linkcli version, job id, analysis, options, figures, checks, the mechanism file's
SHA-256, output path, study block), so an edited job or mechanism file runs afresh. Results
are stored with full float precision (JSON floats are Python's round-trip repr; NaN and
infinities as NaN/Infinity), so a resumed study writes the same table, byte for byte, as an
uninterrupted run. Tasks lost to a dead worker or a timeout are not journalled: a resume
runs them again. The journal is removed when a run ends without interruption.

A line is written with one ``write`` on a file opened for appending; a line cut short by a
kill is ignored when reading.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

JOURNAL_NAME = ".batch-journal.jsonl"
JOURNAL_FORMAT = "linkcli.batch-journal/1"


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if hasattr(value, "item"):  # numpy scalar
        return value.item()
    return value


def unit_key(unit) -> str:
    """SHA-256 of what a unit's result depends on (see the module docstring)."""
    from .. import __version__

    spec = unit.spec
    doc = {"linkcli": __version__, "uid": spec.uid, "analysis": spec.analysis, "options": _plain(spec.options),
           "figures": _plain(spec.figures), "checks": _plain(spec.checks), "file": unit.file,
           "sha256": unit.source.sha256 if unit.source is not None else None, "output": unit.output,
           "study": _plain(unit.study)}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=repr).encode()).hexdigest()


def _dumps(record: dict) -> str:
    return json.dumps(record, default=_plain, ensure_ascii=True, allow_nan=True, separators=(",", ":"))


class Journal:
    """Append-only record of finished work in ``out_dir``. ``resume=True`` loads what an
    earlier run recorded; otherwise an earlier journal is discarded."""

    def __init__(self, out_dir: str, resume: bool = False) -> None:
        self.path = os.path.join(out_dir, JOURNAL_NAME)
        self.units: dict[str, dict] = {}
        self.rows: dict[str, dict[int, list]] = {}
        self.found = False
        if resume:
            self._load()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | (0 if resume else os.O_TRUNC), 0o644)
        if not resume or not self.found:
            self._write({"t": "journal", "format": JOURNAL_FORMAT})

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                lines = fh.read().split(b"\n")
        except OSError:
            return
        for raw in lines:
            try:
                rec = json.loads(raw)
            except ValueError:  # a line cut short by a kill, or an empty one
                continue
            if not isinstance(rec, dict):
                continue
            kind = rec.get("t")
            if kind == "journal" and rec.get("format") == JOURNAL_FORMAT:
                self.found = True
            elif kind == "unit" and self.found:
                self.units[rec["key"]] = rec["result"]
            elif kind == "rows" and self.found:
                bucket = self.rows.setdefault(rec["key"], {})
                for row in rec["rows"]:
                    bucket[int(row[0])] = row

    def _write(self, record: dict) -> None:
        os.write(self._fd, (_dumps(record) + "\n").encode("ascii"))

    def add_unit(self, key: str, result: dict) -> None:
        self._write({"t": "unit", "key": key, "result": result})

    def add_rows(self, key: str, rows: list) -> None:
        self._write({"t": "rows", "key": key, "rows": rows})

    def close(self, remove: bool = False) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if remove:
            try:
                os.unlink(self.path)
            except OSError:
                pass


__all__ = ["Journal", "unit_key", "JOURNAL_NAME"]
