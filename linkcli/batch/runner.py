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
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Protocol

from ..errors import MechanismFileError
from .figures import FigureValue, default_figures, reference_paths
from .plan import BatchPlan, UnitPlan
from .sampling import sample
from .worker import (ERROR, FAILED, INVALID, PASSED, STATUSES, ChunkTask, Evaluation, UnitResult, UnitTask,
                     VariantRow, evaluate, run_task)

#: variants per task when the study does not say: about 8 tasks per worker, within these bounds
CHUNK_MIN, CHUNK_MAX, TASKS_PER_WORKER = 1, 64, 8


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

    @property
    def counts(self) -> dict[str, int]:
        c = Counter(r.status for r in self.results)
        return {s: c.get(s, 0) for s in STATUSES} | {"total": len(self.results)}

    @property
    def ok(self) -> bool:
        return all(r.status == PASSED for r in self.results)


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


def _prepare_study(unit: UnitPlan) -> _Study | UnitResult:
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
        return UnitResult.from_evaluation(spec, unit.file, replace(nominal, message="nominal mechanism: " + nominal.message),
                                          time.perf_counter() - t0)
    values = sample(unit.study, unit.nominal)
    return _Study(unit, spec, nominal, values)


def _chunks(study: _Study, size: int) -> list[ChunkTask]:
    ref = reference_paths(study.spec.figures or (), study.nominal.table)
    paths = tuple(p.keys for p in study.unit.params)
    return [ChunkTask(study.spec, study.unit.source, paths, start, tuple(study.values[start:start + size]), ref)
            for start in range(0, len(study.values), size)]


def run_plan(plan: BatchPlan, executor, *, progress: Progress | None = None, chunk_size: int | None = None,
             on_result=None) -> BatchReport:
    """Run every unit of ``plan``; outputs go to ``plan.out_dir`` (created if needed).
    ``on_result(UnitResult)`` is called as each unit finishes."""
    from ..io.writers import OutputError

    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    try:
        os.makedirs(plan.out_dir, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the output folder '{plan.out_dir}': {exc.strerror or exc}") from None
    results: dict[str, UnitResult] = {}
    studies: dict[str, _Study] = {}
    tasks: list = []
    owners: list = []  # per task: ("unit", UnitPlan) or ("study", uid)

    def finish(res: UnitResult) -> None:
        results[res.uid] = res
        if on_result is not None:
            on_result(res)

    for unit in plan.units:
        if unit.done is not None:
            finish(unit.done)
        elif unit.study is None:
            tasks.append(UnitTask(unit.spec, unit.source))
            owners.append(("unit", unit))
    for unit in plan.units:
        if unit.done is None and unit.study is not None:
            prepared = _prepare_study(unit)
            if isinstance(prepared, UnitResult):
                finish(prepared)
                continue
            studies[unit.spec.uid] = prepared
            size = chunk_size or unit.study.chunk_size or auto_chunk_size(len(prepared.values), executor.workers)
            for task in _chunks(prepared, size):
                tasks.append(task)
                owners.append(("study", unit.spec.uid))
    remaining = {uid: sum(1 for kind, o in owners if kind == "study" and o == uid) for uid in studies}

    if progress is not None:
        progress.start(sum(1 if isinstance(t, UnitTask) else len(t.values) for t in tasks))
    try:
        for i, res, exc in executor.run(run_task, tasks):
            kind, owner = owners[i]
            task = tasks[i]
            if kind == "unit":
                if exc is not None:
                    res = UnitResult(owner.spec.uid, owner.spec.job, owner.file, owner.spec.analysis, ERROR, 0.0,
                                     f"the worker failed: {type(exc).__name__}: {exc}")
                _write_unit_output(res, owner.output)
                finish(res)
                if progress is not None:
                    progress.advance(1)
            else:
                st = studies[owner]
                if exc is not None:
                    msg = f"the worker failed: {type(exc).__name__}: {exc}"
                    res = [VariantRow(task.start + k, ERROR, msg, (), (), 0.0) for k in range(len(task.values))]
                    st.failures.append(msg)
                st.rows.extend(res)
                remaining[owner] -= 1
                if progress is not None:
                    progress.advance(len(task.values))
                if remaining[owner] == 0:
                    finish(_finish_study(st))
    finally:
        if progress is not None:
            progress.stop()
    for uid, st in studies.items():  # studies without variants
        if uid not in results:
            finish(_finish_study(st))
    ordered = [results[u.spec.uid] for u in plan.units if u.spec.uid in results]
    return BatchReport(ordered, plan.out_dir, plan.job_file, executor.describe(), time.perf_counter() - t0, started,
                       plan.description)


def _write_unit_output(res: UnitResult, output: str) -> None:
    from ..io.writers import OutputError, write_table

    if res.table is None:
        return
    try:
        os.makedirs(os.path.dirname(output) or ".", exist_ok=True)
        write_table(res.table, output)
        res.output = output
    except (OutputError, OSError) as exc:
        res.status = ERROR
        res.message = f"cannot write the results: {exc}" + (f"; {res.message}" if res.message else "")


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
        table.add("", p.text, "", np.array(col, dtype=float) if all(_is_number(v) for v in col)
                  else np.array([str(v) for v in col], dtype=str))
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
        "nominal": {"status": st.nominal.status, "message": st.nominal.message,
                    "figures": {f.name: f.value for f in st.nominal.figures},
                    "parameters": {p.text: v for p, v in zip(st.unit.params, st.unit.nominal)}},
        "random_numbers": "variant i: numpy default_rng([seed, i])" if study.method in ("random", "normal")
                          else "one design: numpy default_rng([seed, variants])" if study.method == "lhs" else "none",
    }


def _finish_study(st: _Study) -> UnitResult:
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
    res.study = {"variants": n, "counts": {s: counts.get(s, 0) for s in STATUSES}, "pass_fraction": fraction,
                 "required_pass_fraction": need, "method": unit.study.method, "seed": unit.study.seed,
                 "figure_stats": stats, "nominal": {f.name: f.value for f in st.nominal.figures},
                 "check_pass_counts": {c.label(): sum(1 for r in rows if k < len(r.checks) and r.checks[k])
                                       for k, c in enumerate(spec.checks)}}
    if st.failures:
        res.details = "\n".join(dict.fromkeys(st.failures))
    table = study_table(st)
    try:
        from .report import write_study_table

        os.makedirs(os.path.dirname(unit.output) or ".", exist_ok=True)
        write_study_table(table, unit.output)
        res.output = unit.output
    except Exception as exc:  # noqa: BLE001 - OutputError, or pyarrow missing
        res.status = ERROR
        res.message = f"cannot write the study table: {exc}" + (f"; {res.message}" if res.message else "")
    return res


__all__ = ["BatchReport", "run_plan", "auto_chunk_size", "study_table", "Progress"]
