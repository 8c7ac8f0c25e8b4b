"""What runs on a worker (a local process, a Dask worker, or this process): one job on one
mechanism file (:func:`run_unit`), or a chunk of study variants (:func:`run_chunk`).

Tasks carry everything they need (the mechanism file's bytes, the job's options, the variants'
parameter values), so a worker needs no access to the coordinator's files and holds no state
that changes results: its only state is a cache of parsed documents keyed by (path, SHA-256).
Every failure is caught and becomes a status with a message: one bad job or variant never stops
the others. Statuses: ``passed``; ``failed`` (a case of the analysis failed, or a check);
``invalid`` (the mechanism file or variant is invalid: its diagnostics); ``error`` (the job
could not run: unknown names in its options, an unavailable analysis, a bug).
"""

from __future__ import annotations

import math
import re
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from ..errors import AnalysisInputError, MechanismFileError
from .analyses import AnalysisUnavailable, run_analysis
from .figures import CheckResult, FigureValue, default_figures, evaluate_checks, evaluate_figures

PASSED, FAILED, INVALID, ERROR = "passed", "failed", "invalid", "error"
#: a job or study the run stopped before it finished (Ctrl-C, SIGTERM); ``--resume`` runs it
INTERRUPTED = "interrupted"
STATUSES = (PASSED, FAILED, INVALID, ERROR, INTERRUPTED)


@dataclass(frozen=True)
class Source:
    """A mechanism file as shipped to workers: ``path`` as the user wrote it (for messages),
    its bytes and their SHA-256."""

    path: str
    data: bytes
    sha256: str


@dataclass(frozen=True)
class JobSpec:
    """What to do with one mechanism document. ``figures=None``: the analysis' default figures."""

    uid: str
    job: str
    analysis: str
    options: Any
    figures: tuple | None = None
    checks: tuple = ()
    strict: bool = False  # the job's `strict: true`: warnings of the file make it invalid


@dataclass(frozen=True)
class UnitTask:
    """One job on one mechanism file. ``output``: write the result table there, in the worker
    (:func:`write_unit_output`: atomically, a streamed table block by block, so it never crosses
    to the coordinator whole); given when the worker runs on the coordinator's machine (this
    process or a local process), whose ``out_dir`` holds ``output``. None: the table travels
    back with the result (a Dask worker, perhaps on another machine) and the coordinator writes it."""

    spec: JobSpec
    source: Source
    output: str | None = None
    out_dir: str | None = None


@dataclass(frozen=True)
class ChunkTask:
    """Variants ``start .. start + len(values) - 1`` of a study: ``values[k][p]`` goes to
    ``paths[p]``; ``reference``: nominal frame paths for path_deviation figures."""

    spec: JobSpec
    source: Source
    paths: tuple
    start: int
    values: tuple
    reference: dict = field(default_factory=dict)


@dataclass
class Evaluation:
    status: str
    message: str = ""
    figures: list = field(default_factory=list)  # FigureValue
    checks: list = field(default_factory=list)  # CheckResult
    table: Any = None
    n_failed: int = 0
    n_cases: int = 0
    warnings: list = field(default_factory=list)  # str
    diagnostics: list = field(default_factory=list)  # Diagnostic dicts
    details: str = ""  # traceback of an internal error


@dataclass
class UnitResult:
    """The outcome of one job on one mechanism file (or of a whole study on it)."""

    uid: str
    job: str
    file: str
    analysis: str
    status: str
    time_s: float
    message: str = ""
    figures: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    n_failed: int = 0
    n_cases: int = 0
    warnings: list = field(default_factory=list)
    diagnostics: list = field(default_factory=list)
    details: str = ""
    table: Any = None
    output: str | None = None
    study: dict | None = None
    lost: bool = False  # its worker died, it timed out or its output failed: not journalled; --resume reruns it

    @classmethod
    def from_evaluation(cls, spec: JobSpec, file: str, ev: Evaluation, time_s: float) -> UnitResult:
        return cls(spec.uid, spec.job, file, spec.analysis, ev.status, time_s, ev.message, ev.figures, ev.checks,
                   ev.n_failed, ev.n_cases, ev.warnings, ev.diagnostics, ev.details, ev.table)


@dataclass(frozen=True)
class VariantRow:
    """One study variant: its index, status, message, figure values and check outcomes (in the
    order of the study's figures and checks) and compute time; ``path``: how it was evaluated
    (``fast``: with the study's other variants, :mod:`linkcli.batch.variants`; ``per-variant``:
    validated, compiled and analysed on its own) and ``note``: why not the fast path."""

    index: int
    status: str
    message: str
    figures: tuple
    checks: tuple
    time_s: float
    path: str = ""
    note: str = ""


# -- parsed documents, cached per process ---------------------------------------------------------------
_DOCUMENTS: dict = {}
_CACHE_SIZE = 64


def document(source: Source):
    """(data, SourceMap) of a source, parsed once per process (MechanismFileError if invalid YAML)."""
    key = (source.path, source.sha256)
    hit = _DOCUMENTS.get(key)
    if hit is None:
        from ..io.yaml_source import load_yaml

        hit = load_yaml(source.data, source.path)
        if len(_DOCUMENTS) >= _CACHE_SIZE:
            _DOCUMENTS.clear()
        _DOCUMENTS[key] = hit
    return hit


# -- evaluation -----------------------------------------------------------------------------------------
_OPTION = re.compile(r"--(set|rate|acceleration|sweep|guess|target|output-frames|frame|mode)\b")


def _job_terms(message: str) -> str:
    """Analysis messages name command-line options (``--set``); a job names them ``options.set``."""
    return _OPTION.sub(lambda m: "options." + m.group(1).replace("-", "_"), message)


def _invalid(exc: MechanismFileError, prefix: str = "") -> Evaluation:
    diags = list(exc.diagnostics)
    first = diags[0].format() if diags else "invalid file"
    more = f" (+{len(diags) - 1} more)" if len(diags) > 1 else ""
    return Evaluation(INVALID, prefix + first + more, diagnostics=[d.to_dict() for d in diags])


def _internal(exc: BaseException) -> Evaluation:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return Evaluation(ERROR, f"internal error: {text} (a bug: please report it)",
                      details="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


def evaluate(spec: JobSpec, path: str, data: Any, smap: Any, sha256: str = "",
             reference: dict | None = None, keep_table: bool = True, nominal: bool = False,
             scratch_dir: str | None = None) -> Evaluation:
    """Validate ``data`` like a file (diagnostics point at ``smap``'s lines), compile, analyse,
    compute figures and checks. Never raises for bad input. ``reference``: nominal frame paths
    for path_deviation figures; ``nominal=True``: this is the nominal, its own reference;
    ``scratch_dir``: where a streamed analysis keeps its rows (a simulation: the table is then a
    :class:`~linkcli.batch.streamed.StreamedColumns`)."""
    from ..compile import compile_mechanism
    from ..io.loader import strict_errors, validate_document

    try:
        loaded = validate_document(data, smap, path, sha256)
    except MechanismFileError as exc:
        return _invalid(exc)
    try:
        file_warnings = _run_warnings(spec, loaded)
    except AnalysisInputError as exc:
        return Evaluation(ERROR, _job_terms(str(exc)))
    warnings = [d.format() for d in file_warnings]
    if spec.strict and file_warnings:
        return _invalid(MechanismFileError(strict_errors(file_warnings)), "strict: ")
    try:
        mech = compile_mechanism(loaded.model, file=path)
        in_study = nominal or reference is not None  # a study's nominal or one of its variants
        outcome = run_analysis(spec.analysis, mech, loaded, spec.options, many=in_study, scratch_dir=scratch_dir)
    except (AnalysisInputError, AnalysisUnavailable) as exc:
        return Evaluation(ERROR, _job_terms(str(exc)), warnings=warnings)
    except MechanismFileError as exc:
        return _invalid(exc)
    except Exception as exc:  # noqa: BLE001 - a bug in one job must not stop the others
        ev = _internal(exc)
        ev.warnings = warnings
        return ev
    figures_spec = spec.figures if spec.figures is not None else default_figures(spec.analysis, mech)
    if nominal:
        from .figures import reference_paths

        reference = reference_paths(figures_spec, outcome.table)
    figures = evaluate_figures(figures_spec, outcome.table, mech, reference)
    checks = evaluate_checks(spec.checks, outcome.table, mech, figures)
    status, message = verdict(outcome.n_failed, outcome.failure_summary, checks)
    return Evaluation(status, message, figures, checks, outcome.table if keep_table else None,
                      outcome.n_failed, outcome.n_cases, warnings + list(outcome.messages))


def _run_warnings(spec: JobSpec, loaded) -> list:
    """The file's warnings for this job: a simulate job's step warnings (springs, dampers) at
    the step the job runs (its own ``dt``, fitted to ``t_end``), not at the file's."""
    if spec.analysis != "simulate":
        return list(loaded.warnings)
    from ..analyses.simulate import run_diagnostics
    from .analyses import simulate_request

    return run_diagnostics(loaded, simulate_request(loaded, spec.options), "the job's dt (options.dt)")


def verdict(n_failed: int, failure_summary: str, checks: list) -> tuple[str, str]:
    """(status, message) of an analysis with ``n_failed`` failed cases and these checks."""
    failed_checks = [c for c in checks if not c.passed]
    status = FAILED if n_failed or failed_checks else PASSED
    parts = []
    if n_failed:
        parts.append(failure_summary)
    parts += [f"check {c.name}: {c.message}" for c in failed_checks]
    parts += [f"check {c.name} skipped: {c.message}" for c in checks if c.skipped]
    return status, "; ".join(parts)


def run_unit(task: UnitTask) -> UnitResult:
    """One job on one mechanism file: its table written here to ``task.output`` when given, else
    travelling back with the result (whole)."""
    t0 = time.perf_counter()
    try:
        data, smap = document(task.source)
        ev = evaluate(task.spec, task.source.path, data, smap, task.source.sha256, scratch_dir=task.out_dir)
    except MechanismFileError as exc:
        ev = _invalid(exc)
    except Exception as exc:  # noqa: BLE001
        ev = _internal(exc)
    res = UnitResult.from_evaluation(task.spec, task.source.path, ev, time.perf_counter() - t0)
    if task.output is not None:
        write_unit_output(res, task.output, task.out_dir or ".")
    else:
        from ..results import TableStream

        if isinstance(res.table, TableStream):  # its rows are in this process's scratch file
            res.table = res.table.materialize()
    return res


def write_unit_output(res: UnitResult, output: str, out_dir: str) -> None:
    """Write ``res.table`` to ``output`` (inside ``out_dir``) atomically (a streamed table block
    by block), set ``res.output`` and drop the table. A table that cannot be written makes the
    job an ``error`` saying why, ``lost`` (not journalled: ``--resume`` runs it again)."""
    from ..io.writers import OutputError, write_table
    from .plan import output_folder

    if res.table is None:
        return
    try:
        output_folder(output, out_dir)
        write_table(res.table, output)
        res.output = output
        res.table = None
    except (OutputError, OSError) as exc:
        res.status = ERROR
        res.message = f"cannot write the results: {exc}" + (f"; {res.message}" if res.message else "")
        res.table, res.lost = None, True


def run_chunk(task: ChunkTask) -> list[VariantRow]:
    """Variants of a study: those the fast path covers evaluated together
    (:func:`linkcli.batch.variants.fast_rows`), every other one validated like a file and
    analysed on its own; one row per variant."""
    from .paths import with_values

    try:
        data, smap = document(task.source)
    except Exception as exc:  # noqa: BLE001 - the coordinator parsed it already; be safe
        ev = _invalid(exc) if isinstance(exc, MechanismFileError) else _internal(exc)
        return [_row(task.start + k, ev, task.spec, 0.0) for k in range(len(task.values))]
    try:
        from .variants import fast_rows

        rows, _ = fast_rows(task)
    except Exception as exc:  # noqa: BLE001 - a bug in the fast path: today's path still gives the rows
        why_not = f"the fast path failed: {type(exc).__name__}: {exc} (a bug: please report it)"
        rows = [why_not] * len(task.values)
    for k, values in enumerate(task.values):
        if isinstance(rows[k], VariantRow):
            continue
        note = rows[k]
        t0 = time.perf_counter()
        try:
            variant = with_values(data, task.paths, values)
            ev = evaluate(task.spec, task.source.path, variant, smap, task.source.sha256,
                          reference=task.reference, keep_table=False)
        except Exception as exc:  # noqa: BLE001
            ev = _internal(exc)
        rows[k] = _row(task.start + k, ev, task.spec, time.perf_counter() - t0, note)
    return rows


def _row(index: int, ev: Evaluation, spec: JobSpec, time_s: float, note: str = "") -> VariantRow:
    n_fig = len(spec.figures or ())
    figures = tuple(f.value for f in ev.figures) if ev.figures else (math.nan,) * n_fig
    checks = tuple(c.passed for c in ev.checks) if ev.checks else (False,) * len(spec.checks)
    return VariantRow(index, ev.status, ev.message, figures, checks, time_s, "per-variant", note)


__all__ = ["Source", "JobSpec", "UnitTask", "ChunkTask", "Evaluation", "UnitResult", "VariantRow", "evaluate",
           "run_unit", "run_chunk", "run_task", "write_unit_output", "document", "STATUSES", "PASSED", "FAILED",
           "INVALID", "ERROR", "INTERRUPTED",
           "FigureValue", "CheckResult"]


def run_task(task: UnitTask | ChunkTask):
    """The one function executors run: a unit's UnitResult or a chunk's list of VariantRow."""
    return run_chunk(task) if isinstance(task, ChunkTask) else run_unit(task)
