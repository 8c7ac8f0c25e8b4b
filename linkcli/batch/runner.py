"""Run a plan on an executor: dispatch the tasks, write each job's outputs as its result
arrives, assemble study tables (rows in variant order), and return a :class:`BatchReport`.

A study is prepared here: the nominal mechanism is evaluated once (its frame paths are the
reference of ``path_deviation``), every variant's parameter values are drawn
(:mod:`linkcli.batch.sampling`), and the variants are cut into chunks, one task per chunk, so
that scheduling costs little next to the analyses.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Protocol

from ..errors import MechanismFileError
from .executors import TaskLost, TaskTimedOut, WorkerDied
from .figures import CheckResult, FigureValue, default_figures, reference_paths
from .journal import Journal, unit_key
from .paths import parameter_number, parameter_unit
from .plan import BatchPlan, UnitPlan, output_folder, with_skipped_checks
from .sampling import sample
from .worker import (
    ERROR,
    FAILED,
    INTERRUPTED,
    INVALID,
    PASSED,
    STATUSES,
    ChunkTask,
    Evaluation,
    UnitResult,
    UnitTask,
    VariantRow,
    evaluate,
    run_task,
    write_unit_output,
)

#: variants per task when the study does not say: about 8 tasks per worker, within these bounds
CHUNK_MIN, CHUNK_MAX, TASKS_PER_WORKER = 1, 64, 8
#: executors whose workers run on this machine: they write their jobs' tables to the output folder
LOCAL_EXECUTORS = ("inline", "processes")


class Progress(Protocol):
    def start(self, total: int) -> None: ...
    def advance(self, n: int) -> None: ...
    def stop(self) -> None: ...


@dataclass
class BatchReport:
    results: list[UnitResult]
    out_dir: str
    job_file: str | None = None
    executor: dict = field(default_factory=dict)
    wall_time_s: float = 0.0
    started: str = ""
    description: str = ""
    interrupted: str | None = None  # the signal that stopped the run (SIGINT, SIGTERM), None when complete
    reused: int = 0  # jobs taken from an interrupted run's journal (--resume)

    @property
    def counts(self) -> dict[str, int]:
        c = Counter(r.status for r in self.results)
        return {s: c.get(s, 0) for s in STATUSES} | {"total": len(self.results)}

    @property
    def ok(self) -> bool:
        return self.interrupted is None and all(r.status == PASSED for r in self.results)


# -- journal records (see journal.py) ---------------------------------------------------------------------
def result_record(r: UnitResult) -> dict:
    """Everything of a UnitResult but its table (already written to ``output``)."""
    return {"uid": r.uid, "job": r.job, "file": r.file, "analysis": r.analysis, "status": r.status,
            "time_s": r.time_s, "message": r.message,
            "figures": [[f.name, f.entity, f.quantity, f.unit, f.value, f.note] for f in r.figures],
            "checks": [[c.name, c.passed, c.value, c.message, c.skipped] for c in r.checks],
            "n_failed": r.n_failed, "n_cases": r.n_cases, "warnings": r.warnings, "diagnostics": r.diagnostics,
            "details": r.details, "output": r.output, "study": r.study}


def result_from_record(d: dict) -> UnitResult:
    return UnitResult(d["uid"], d["job"], d["file"], d["analysis"], d["status"], d["time_s"], d["message"],
                      [FigureValue(*f) for f in d["figures"]], [CheckResult(*c) for c in d["checks"]], d["n_failed"],
                      d["n_cases"], d["warnings"], d["diagnostics"], d["details"], None, d["output"], d["study"])


def row_record(r: VariantRow) -> list:
    return [r.index, r.status, r.message, list(r.figures), list(r.checks), r.time_s, r.path, r.note]


def row_from_record(d: list) -> VariantRow:
    return VariantRow(int(d[0]), d[1], d[2], tuple(d[3]), tuple(d[4]), d[5], *d[6:8])


def evaluation_summary(rows: Sequence[VariantRow]) -> dict:
    """How a study's variants were evaluated: ``fast`` (together, :mod:`linkcli.batch.variants`)
    and ``per_variant`` counts, and the reasons for the per-variant ones with their counts."""
    reasons = Counter(r.note or "(no reason recorded)" for r in rows if r.path != "fast")
    return {"fast": sum(1 for r in rows if r.path == "fast"), "per_variant": sum(reasons.values()),
            "per_variant_reasons": dict(reasons.most_common())}


def auto_chunk_size(n_variants: int, workers: int) -> int:
    return max(CHUNK_MIN, min(CHUNK_MAX, math.ceil(n_variants / (max(1, workers) * TASKS_PER_WORKER))))


@dataclass
class _Study:
    unit: UnitPlan
    spec: Any
    nominal: Evaluation
    values: list
    rows: list = field(default_factory=list)
    failures: list = field(default_factory=list)  # task-level errors
    out_dir: str = "."
    lost: bool = False  # some variants were lost to a dead worker or a timeout


def _prepare_study(unit: UnitPlan, out_dir: str) -> _Study | UnitResult:
    """Evaluate the nominal document and draw the variants; a UnitResult when it cannot run."""
    from ..compile import compile_mechanism
    from ..io.loader import validate_document

    t0 = time.perf_counter()
    src = unit.source
    spec = unit.spec
    if spec.figures is None:
        try:
            loaded = validate_document(unit.data, unit.smap, src.path, src.sha256)
            mech = compile_mechanism(loaded.model, file=src.path)
        except MechanismFileError:
            mech = None  # evaluate() reports it below
        except Exception:  # noqa: BLE001 - evaluate() reports it below
            mech = None
        spec = replace(spec, figures=tuple(default_figures(spec.analysis, mech)) if mech is not None else ())
    nominal = evaluate(spec, src.path, unit.data, unit.smap, src.sha256, nominal=True)
    if nominal.status in (INVALID, ERROR):
        return UnitResult.from_evaluation(spec, unit.file,
                                          replace(nominal, message="nominal mechanism: " + nominal.message),
                                          time.perf_counter() - t0)
    values = sample(unit.study, unit.nominal)
    return _Study(unit, spec, nominal, values, out_dir=out_dir)


def _chunks(study: _Study, size: int, indices: Sequence[int]) -> list[ChunkTask]:
    """Tasks over the variants ``indices`` (sorted): runs of consecutive indices cut into
    pieces of at most ``size``."""
    ref = reference_paths(study.spec.figures or (), study.nominal.table)
    paths = tuple(p.keys for p in study.unit.params)
    if ref:
        from .variants import nominal_reference

        try:
            ref = nominal_reference(ChunkTask(study.spec, study.unit.source, paths, 0, (), ref))
        except Exception:  # noqa: BLE001 - the workers report a failing fast path; keep the nominal's own paths
            pass
    tasks, run = [], []
    for i in list(indices) + [None]:
        if run and (i is None or i != run[-1] + 1 or len(run) == size):
            tasks.append(ChunkTask(study.spec, study.unit.source, paths, run[0],
                                   tuple(study.values[run[0]:run[-1] + 1]), ref))
            run = []
        if i is not None:
            run.append(i)
    return tasks


@dataclass
class _Work:
    """A task with its owner (a unit, or a study's uid), time limit and attempts so far."""

    task: Any
    unit: UnitPlan
    timeout: float | None = None
    attempts: int = 0

    @property
    def n(self) -> int:
        return len(self.task.values) if isinstance(self.task, ChunkTask) else 1


#: a task whose worker process dies is tried this often in all (a chunk of variants that kills
#: its worker is split into single variants first, so a crash is pinned on its own variant)
MAX_ATTEMPTS = 2


def _after_loss(work: _Work, exc: TaskLost) -> list[_Work] | None:
    """What to run again after ``work`` was lost to a dead worker or its time limit: single
    variants of a chunk, the task itself (a dead worker, once), or nothing (None: report it)."""
    task = work.task
    if isinstance(task, ChunkTask) and len(task.values) > 1:
        limit = work.unit.timeout
        return [_Work(replace(task, start=task.start + k, values=(v,)), work.unit, limit, 1)
                for k, v in enumerate(task.values)]
    if isinstance(exc, WorkerDied) and work.attempts + 1 < MAX_ATTEMPTS:
        return [replace(work, attempts=work.attempts + 1)]
    return None


def _lost_message(work: _Work, exc: TaskLost) -> str:
    if isinstance(exc, TaskTimedOut):
        return (f"{exc} (the job's time limit{' per variant' if isinstance(work.task, ChunkTask) else ''}: "
                "raise `timeout:` or --timeout)")
    return f"{exc}; tried {work.attempts + 1} times (the other jobs and variants are not affected)"


def interrupt_name(exc: BaseException) -> str:
    """``SIGTERM``, ``SIGINT``... of an interrupt (see :func:`linkcli.batch.interrupts`)."""
    return getattr(exc, "signal_name", "SIGINT")


def run_plan(plan: BatchPlan, executor, *, progress: Progress | None = None, chunk_size: int | None = None,
             on_result=None, resume: bool = False) -> BatchReport:
    """Run every unit of ``plan``; outputs go to ``plan.out_dir`` (created if needed).
    ``on_result(UnitResult)`` is called as each unit finishes. A KeyboardInterrupt (Ctrl-C, or
    SIGTERM through :func:`linkcli.batch.interrupts`) stops the run: finished jobs and variants
    are kept and written, the others are marked ``interrupted``, and the report says so.
    ``resume``: reuse what the journal of an interrupted run in ``plan.out_dir`` holds."""
    from ..io.writers import OutputError

    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    try:
        os.makedirs(plan.out_dir, exist_ok=True)
        journal = Journal(plan.out_dir, resume)
    except OSError as exc:
        raise OutputError(f"cannot create the output folder '{plan.out_dir}': {exc.strerror or exc}") from None
    results: dict[str, UnitResult] = {}
    studies: dict[str, _Study] = {}
    remaining: dict[str, int] = {}
    keys: dict[str, str] = {}
    work: list[_Work] = []
    reused = 0
    interrupted: str | None = None
    local = getattr(executor, "kind", "") in LOCAL_EXECUTORS

    def finish(res: UnitResult, unit: UnitPlan | None = None) -> None:
        if unit is not None:
            with_skipped_checks(res, unit)
        written = res.output is not None or res.table is None  # a table that could not be written: run again
        if unit is not None and res.status != INTERRUPTED and not res.lost and written:
            journal.add_unit(keys[unit.spec.uid], result_record(res))
        results[res.uid] = res
        if on_result is not None:
            on_result(res)

    try:
        for unit in plan.units:
            if unit.done is not None:
                finish(unit.done)
                continue
            keys[unit.spec.uid] = key = unit_key(unit)
            old = journal.units.get(key)
            if old is not None and (old.get("output") is None or os.path.isfile(old["output"])):
                reused += 1
                finish(result_from_record(old))
            elif unit.study is None:
                # a worker on this machine writes the job's table itself (streamed, never sent here whole)
                task = (UnitTask(unit.spec, unit.source, unit.output, plan.out_dir) if local
                        else UnitTask(unit.spec, unit.source))
                work.append(_Work(task, unit, unit.timeout))
        for unit in plan.units:
            if unit.done is not None or unit.study is None or unit.spec.uid in results:
                continue
            prepared = _prepare_study(unit, plan.out_dir)
            if isinstance(prepared, UnitResult):
                finish(prepared)
                continue
            uid = unit.spec.uid
            studies[uid] = prepared
            done = journal.rows.get(keys[uid], {})
            prepared.rows = [row_from_record(r) for i, r in sorted(done.items()) if i < len(prepared.values)]
            missing = [i for i in range(len(prepared.values)) if i not in done]
            remaining[uid] = len(missing)
            size = chunk_size or unit.study.chunk_size or auto_chunk_size(len(missing), executor.workers)
            for task in _chunks(prepared, size, missing):
                work.append(_Work(task, unit, unit.timeout * len(task.values) if unit.timeout else None))
        for uid, st in studies.items():  # studies with nothing (left) to run
            if remaining[uid] == 0:
                finish(_finish_study(st), st.unit)

        if progress is not None:
            progress.start(sum(w.n for w in work))
        while work:
            retry: list[_Work] = []
            timeouts = [w.timeout for w in work]
            for i, res, exc in executor.run(run_task, [w.task for w in work],
                                            timeouts=timeouts if any(timeouts) else None):
                w = work[i]
                if isinstance(exc, TaskLost):
                    again = _after_loss(w, exc)
                    if again:
                        retry += again
                        continue
                    msg = _lost_message(w, exc)
                elif exc is not None:
                    msg = f"the worker failed: {type(exc).__name__}: {exc}"
                if isinstance(w.task, UnitTask):
                    if exc is not None:
                        res = UnitResult(w.unit.spec.uid, w.unit.spec.job, w.unit.file, w.unit.spec.analysis, ERROR,
                                         0.0, msg, lost=isinstance(exc, TaskLost))
                        if w.task.output is not None:  # its worker may have died while writing
                            remove_partial_output(w.task.output)
                    write_unit_output(res, w.unit.output, plan.out_dir)  # (a table that came back whole)
                    finish(res, w.unit)
                else:
                    uid = w.unit.spec.uid
                    st = studies[uid]
                    if exc is not None:
                        res = [VariantRow(w.task.start + k, ERROR, msg, (), (), 0.0, "per-variant", "its task failed")
                               for k in range(w.n)]
                        st.failures.append(msg)
                        st.lost = st.lost or isinstance(exc, TaskLost)
                    else:
                        journal.add_rows(keys[uid], [row_record(r) for r in res])
                    st.rows.extend(res)
                    remaining[uid] -= len(res)
                    if remaining[uid] == 0:
                        finish(_finish_study(st), st.unit)
                if progress is not None:
                    progress.advance(w.n)
            work = retry
    except KeyboardInterrupt as exc:
        interrupted = interrupt_name(exc)
    except BaseException:
        journal.close()  # kept: --resume continues after whatever stopped this run
        raise
    finally:
        if progress is not None:
            progress.stop()
    if interrupted is not None:
        for unit in plan.units:
            uid = unit.spec.uid
            if uid in results:
                continue
            if uid in studies:
                finish(_finish_study(studies[uid], interrupted))
            else:
                if local and unit.output is not None:  # a worker stopped while writing it
                    remove_partial_output(unit.output)
                finish(UnitResult(uid, unit.spec.job, unit.file, unit.spec.analysis, INTERRUPTED, 0.0,
                                  f"interrupted ({interrupted}) before it finished; --resume runs it"))
    journal.close(remove=interrupted is None)
    ordered = [results[u.spec.uid] for u in plan.units if u.spec.uid in results]
    return BatchReport(ordered, plan.out_dir, plan.job_file, executor.describe(), time.perf_counter() - t0, started,
                       plan.description, interrupted, reused)


#: the temporary file :func:`linkcli.io.writers.atomic_path` writes next to an output
#: (``tempfile.mkstemp``: ``.<name>.`` + 8 random characters + the writer's suffix)
_PARTIAL = r"\.{name}\.[a-z0-9_]{{8}}(\.tmp|\.npz|\.parquet)"


def remove_partial_output(output: str) -> list[str]:
    """Remove what a worker killed while writing ``output`` left (atomic_path's temporary file
    next to it; a killed process cannot remove it itself); ``output`` itself is never touched.
    Returns the paths removed."""
    import re

    folder, name = os.path.split(os.path.abspath(output))
    pattern = re.compile(_PARTIAL.format(name=re.escape(name)))
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for entry in names:
        if pattern.fullmatch(entry):
            try:
                os.unlink(os.path.join(folder, entry))
                removed.append(os.path.join(folder, entry))
            except OSError:
                pass
    return removed


# -- studies ------------------------------------------------------------------------------------------
def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def study_table(st: _Study):
    """The study's ResultTable: one row per variant (sorted by index): ``variant``, one column
    per parameter, ``status``, one per figure, ``check <name>`` per check, ``message``."""
    import numpy as np

    from ..results import ResultTable

    rows = sorted(st.rows, key=lambda r: r.index)
    n = len(rows)
    unit, spec = st.unit, st.spec
    table = ResultTable(n, metadata=_study_metadata(st, rows))
    table.add("", "variant", "", np.array([r.index for r in rows], dtype=np.int64))
    for k, p in enumerate(unit.params):
        col = [st.values[r.index][k] for r in rows]
        # in the file's units: values with a unit ("25 mm", "0.5 lbf*in/deg") converted by pint to
        # the column's unit; text that is no quantity of the path's unit stays a text column
        numbers = [parameter_number(unit.data, p.keys, v) for v in col]
        if all(x is not None for x in numbers):
            table.add("", p.text, parameter_unit(unit.data, p.keys), np.array(numbers, dtype=float))
        else:
            table.add("", p.text, "", np.array([str(v) for v in col], dtype=str))
    table.add("", "status", "", np.array([r.status for r in rows], dtype=str))
    for k, fig in enumerate(st.nominal.figures):
        vals = [r.figures[k] if k < len(r.figures) else None for r in rows]
        if isinstance(fig.value, str):
            col = np.array([v if isinstance(v, str) else "" for v in vals], dtype=str)
        else:
            col = np.array([float(v) if _is_number(v) else math.nan for v in vals], dtype=float)
        table.add(fig.entity, fig.quantity, fig.unit, col)
    for k, check in enumerate(spec.checks):
        table.add("", f"check {check.label()}", "",
                  np.array([bool(r.checks[k]) if k < len(r.checks) else False for r in rows], dtype=bool))
    table.add("", "message", "", np.array([r.message for r in rows], dtype=str))
    return table


def _study_metadata(st: _Study, rows: list[VariantRow]) -> dict:
    from .. import __version__

    study = st.unit.study
    return {
        "format": "linkcli.study/1",
        "linkcli_version": __version__,
        "job": st.spec.job,
        "analysis": st.spec.analysis,
        "file": st.unit.file,
        "file_sha256": st.unit.source.sha256,
        "study": study.model_dump(mode="json", by_alias=True, exclude_none=True),
        "variants": len(rows),
        "counts": dict(Counter(r.status for r in rows)),
        "evaluation": evaluation_summary(rows),
        "nominal": {"status": st.nominal.status, "message": st.nominal.message,
                    "figures": {f.name: f.value for f in st.nominal.figures},
                    "parameters": {p.text: v for p, v in zip(st.unit.params, st.unit.nominal, strict=True)}},
        "parameter_units": {p.text: parameter_unit(st.unit.data, p.keys) for p in st.unit.params},
        "random_numbers": "variant i: numpy default_rng([seed, i])" if study.method in ("random", "normal")
                          else "one design: scipy.stats.qmc.LatinHypercube, numpy default_rng([seed, variants])"
                          if study.method == "lhs" else "none",
    }


def _finish_study(st: _Study, interrupted: str | None = None) -> UnitResult:
    """The study's result and table. ``interrupted``: the run stopped (that signal); the table
    holds the variants finished so far and the study is marked ``interrupted``."""
    rows = sorted(st.rows, key=lambda r: r.index)
    spec, unit = st.spec, st.unit
    n = len(rows)
    counts = Counter(r.status for r in rows)
    n_pass = counts.get(PASSED, 0)
    fraction = n_pass / n if n else 0.0
    need = unit.study.pass_fraction
    status = PASSED if n and fraction >= need - 1e-12 else FAILED
    first_bad = next((r for r in rows if r.status != PASSED), None)
    message = ""
    if status != PASSED or first_bad is not None:
        message = f"{n_pass} of {n} variants passed ({100 * fraction:.1f}%, need {100 * need:g}%)"
        if first_bad is not None:
            message += f"; first: variant {first_bad.index} {first_bad.status}: {first_bad.message}"
    if interrupted is not None:
        status = INTERRUPTED
        message = (f"interrupted ({interrupted}) after {n} of {len(st.values)} variants (the table holds those); "
                   "--resume continues" + (f"; {message}" if message else ""))
    figures = [FigureValue("variants", "", "variants", "", n), FigureValue("passed", "", "passed", "%", 100 * fraction)]
    stats = {}
    for k, fig in enumerate(st.nominal.figures):
        vals = [r.figures[k] for r in rows if k < len(r.figures)]
        if isinstance(fig.value, str):
            stats[fig.name] = dict(Counter(v for v in vals if isinstance(v, str)))
        else:
            import numpy as np

            v = np.array([x for x in vals if _is_number(x)], dtype=float)
            v = v[np.isfinite(v)]
            stats[fig.name] = ({"unit": fig.unit, "min": float(v.min()), "mean": float(v.mean()),
                                "std": float(v.std()), "max": float(v.max()), "n": int(len(v))} if len(v)
                               else {"unit": fig.unit, "n": 0})
    res = UnitResult(spec.uid, spec.job, unit.file, spec.analysis, status, sum(r.time_s for r in rows), message,
                     figures, [], n - n_pass, n, list(st.nominal.warnings))
    res.study = {"variants": n, "counts": {s: counts.get(s, 0) for s in STATUSES if s != INTERRUPTED},
                 "pass_fraction": fraction,
                 "required_pass_fraction": need, "method": unit.study.method, "seed": unit.study.seed,
                 "figure_stats": stats, "nominal": {f.name: f.value for f in st.nominal.figures},
                 "check_pass_counts": {c.label(): sum(1 for r in rows if k < len(r.checks) and r.checks[k])
                                       for k, c in enumerate(spec.checks)},
                 "evaluation": evaluation_summary(rows)}
    res.lost = st.lost
    if st.failures:
        res.details = "\n".join(dict.fromkeys(st.failures))
    table = study_table(st)
    try:
        from .report import write_study_table

        output_folder(unit.output, st.out_dir)
        write_study_table(table, unit.output)
        res.output = unit.output
    except Exception as exc:  # noqa: BLE001 - OutputError, or pyarrow missing
        res.status = ERROR
        res.lost = True  # not journalled: --resume writes it again
        res.message = f"cannot write the study table: {exc}" + (f"; {res.message}" if res.message else "")
    return res


__all__ = ["BatchReport", "run_plan", "auto_chunk_size", "study_table", "Progress"]
