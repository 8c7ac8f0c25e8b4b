"""What a batch run leaves behind: ``summary.json``, an optional JUnit XML report, the summary
table on stderr, the progress bar, and study tables (CSV, JSON or Parquet).

summary.json (``"format": "linkcli.batch-summary/1"``)::

    {"format", "linkcli_version", "job_file", "out_dir", "started", "wall_time_s",
     "executor": {"kind": "processes", "workers": 2},
     "counts": {"passed", "failed", "invalid", "error", "interrupted", "total"},
     "ok": true,
     "interrupted": null | "SIGINT" | "SIGTERM",   # the signal that stopped the run
     "resumed_jobs": 0,                             # jobs taken over from an interrupted run (--resume)
     "jobs": [{"id", "job", "file", "analysis", "status", "time_s", "message", "output",
               "cases", "failed_cases", "figures": {name: {"value", "unit"}},
               "checks": [{"name", "status": "passed|failed|skipped", "passed", "value", "message"}],
               "diagnostics": [...], "warnings": [...], "study": {...} (studies only)}]}

``time_s`` is the time spent computing the job on its worker (a study: summed over its
variants, so it can exceed the wall time); ``wall_time_s`` is the whole run's.

JUnit: one ``<testsuite>`` per job (its units are the test cases, ``classname`` the job name);
``failed`` units are ``<failure>``s, ``invalid``, ``error`` and ``interrupted`` units
``<error>``s (type ``interrupted`` for the last), so CI systems show each job's checks as a test
result. Characters that XML 1.0 forbids (control characters from names or messages) are
written as visible escapes (``\x1b``), so a CI server never rejects the report.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
from typing import Any

from .. import __version__
from .worker import ERROR, FAILED, INTERRUPTED, INVALID, PASSED, UnitResult

SUMMARY_FORMAT = "linkcli.batch-summary/1"


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "item"):  # numpy scalar
        return _plain(value.item())
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def unit_dict(r: UnitResult) -> dict:
    out = {
        "id": r.uid, "job": r.job, "file": r.file, "analysis": r.analysis, "status": r.status,
        "time_s": round(r.time_s, 6), "message": r.message, "output": r.output,
        "cases": r.n_cases, "failed_cases": r.n_failed,
        "figures": {f.name: {"value": _plain(f.value), "unit": f.unit} | ({"note": f.note} if f.note else {})
                    for f in r.figures},
        "checks": [c.to_dict() for c in r.checks],
        "diagnostics": r.diagnostics,
        "warnings": r.warnings,
    }
    if r.study is not None:
        out["study"] = _plain(r.study)
    if r.details:
        out["details"] = r.details
    return out


def summary_dict(report) -> dict:
    return {
        "format": SUMMARY_FORMAT,
        "linkcli_version": __version__,
        "job_file": report.job_file,
        "description": report.description,
        "out_dir": report.out_dir,
        "started": report.started,
        "wall_time_s": round(report.wall_time_s, 6),
        "executor": report.executor,
        "counts": report.counts,
        "ok": report.ok,
        "interrupted": report.interrupted,
        "resumed_jobs": report.reused,
        "jobs": [unit_dict(r) for r in report.results],
    }


def write_summary(report, path: str) -> None:
    from ..io.writers import atomic_write_text

    atomic_write_text(path, json.dumps(summary_dict(report), indent=2, allow_nan=False, ensure_ascii=False) + "\n")


# -- JUnit ----------------------------------------------------------------------------------------------
def _failure_text(r: UnitResult) -> str:
    lines = [r.message] if r.message else []
    lines += [f"check {c.name}: {'FAILED' if c.status == 'failed' else c.status}"
              + (f" ({c.message})" if c.message else "") for c in r.checks]
    lines += [_diag_line(d) for d in r.diagnostics]
    if r.details:
        lines.append(r.details)
    return "\n".join(lines)


def _diag_line(d: dict) -> str:
    text = f"{d['file']}:{d['line']}:{d['col']}: {d['severity']}: {d['key']}: {d['message']}"
    return text.rstrip(".") + ". " + d["hint"] if d.get("hint") else text


_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: Any) -> str:
    """``text`` with every character XML 1.0 forbids replaced by a visible escape (``\x1b``,
    ``\ufffe``); the rest (tab, newlines, all other Unicode) is kept."""
    return _XML_ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                            else f"\\u{ord(m.group()):04x}", str(text))


def junit_xml(report, suite_name: str = "linkcli batch") -> str:
    root = ET.Element("testsuites", name=xml_text(suite_name))
    by_job: dict[str, list[UnitResult]] = {}
    for r in report.results:
        by_job.setdefault(r.job, []).append(r)
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for job, units in by_job.items():
        failures = sum(u.status == FAILED for u in units)
        errors = sum(u.status in (INVALID, ERROR, INTERRUPTED) for u in units)
        suite = ET.SubElement(root, "testsuite", name=xml_text(job), tests=str(len(units)), failures=str(failures),
                              errors=str(errors), skipped="0", time=f"{sum(u.time_s for u in units):.3f}")
        for u in units:
            case = ET.SubElement(suite, "testcase", classname=xml_text(job), name=xml_text(u.uid),
                                 file=xml_text(u.file), time=f"{u.time_s:.3f}")
            if u.status == FAILED:
                el = ET.SubElement(case, "failure", message=xml_text(u.message or "failed"), type="failed")
                el.text = xml_text(_failure_text(u))
            elif u.status in (INVALID, ERROR, INTERRUPTED):
                kind = {INVALID: "invalid_file", ERROR: "error", INTERRUPTED: "interrupted"}[u.status]
                el = ET.SubElement(case, "error", message=xml_text(u.message or u.status), type=kind)
                el.text = xml_text(_failure_text(u))
            out = [f.text() for f in u.figures] + [f"check {c.name}: {c.status}" + (f" ({c.message})" if c.skipped
                                                                                  and c.message else "")
                                                   for c in u.checks if c.passed]
            if out:
                ET.SubElement(case, "system-out").text = xml_text("\n".join(out))
        totals["tests"] += len(units)
        totals["failures"] += failures
        totals["errors"] += errors
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("time", f"{report.wall_time_s:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report, path: str) -> None:
    from ..io.writers import atomic_write_text

    atomic_write_text(path, junit_xml(report))


# -- study tables -----------------------------------------------------------------------------------------
def write_study_table(table, path: str) -> str:
    """Write a study table by extension: .csv / .json (linkcli writers) or .parquet (pyarrow,
    table metadata as JSON under the schema key ``linkcli``). Atomic. Returns the format."""
    from ..io.writers import OutputError, write_table

    ext = os.path.splitext(path)[1].lower()
    if ext != ".parquet":
        return write_table(table, path)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise OutputError(f"cannot write '{path}': Parquet needs pyarrow: pip install 'linkcli[parquet]' "
                          "(or name the study output .csv or .json)") from None
    from ..results import json_safe

    arrays = {c.header: pa.array(c.values.tolist() if c.kind == "str" else c.values) for c in table.columns}
    meta = {b"linkcli": json.dumps(json_safe(table.metadata), allow_nan=False).encode()}
    pa_table = pa.table(arrays).replace_schema_metadata(meta)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        pq.write_table(pa_table, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return "parquet"


# -- terminal -------------------------------------------------------------------------------------------
STYLE = {PASSED: "green", FAILED: "red", INVALID: "magenta", ERROR: "red bold", INTERRUPTED: "yellow"}


def figures_text(r: UnitResult, limit: int = 4) -> str:
    parts = [f.text() for f in r.figures[:limit]]
    if r.study:
        for name, s in list(r.study.get("figure_stats", {}).items())[:2]:
            if "max" in s:
                parts.append(f"{name}: {s['min']:.4g}..{s['max']:.4g}" + (f" {s['unit']}" if s.get("unit") else ""))
    return ", ".join(parts)


def render_summary(report, console) -> None:
    """The summary table (job, status, time, key figures, message) and a totals line."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="batch summary", title_justify="left", show_lines=False, expand=False)
    table.add_column("job", overflow="fold")
    table.add_column("status")
    table.add_column("time [s]", justify="right")
    table.add_column("key figures", overflow="fold", max_width=60)
    table.add_column("message", overflow="fold")
    for r in report.results:
        table.add_row(escape(r.uid), f"[{STYLE.get(r.status, '')}]{r.status}[/]", f"{r.time_s:.2f}",
                      escape(figures_text(r)), escape(r.message))
    console.print(table)
    c = report.counts
    console.print(f"{c['total']} jobs: {c[PASSED]} passed, {c[FAILED]} failed, {c[INVALID]} invalid, "
                  f"{c[ERROR]} errors" + (f", {c[INTERRUPTED]} interrupted" if c[INTERRUPTED] else "")
                  + (f" ({report.reused} from the interrupted run)" if report.reused else "")
                  + f" in {report.wall_time_s:.1f} s ({report.executor.get('kind')}, "
                  f"{report.executor.get('workers')} worker{'s' * (report.executor.get('workers') != 1)})",
                  highlight=False)


class ProgressBar:
    """A rich progress bar over tasks/variants on stderr; nothing when ``enabled`` is False."""

    def __init__(self, console, enabled: bool, description: str = "batch") -> None:
        self.console, self.enabled, self.description = console, enabled, description
        self._progress = None
        self._task = None

    def start(self, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), TimeRemainingColumn(), console=self.console, transient=True)
        self._progress.start()
        self._task = self._progress.add_task(self.description, total=total)

    def advance(self, n: int) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, n)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


__all__ = ["xml_text", "summary_dict", "write_summary", "junit_xml", "write_junit", "write_study_table",
           "render_summary",
           "ProgressBar", "SUMMARY_FORMAT", "unit_dict", "figures_text"]
