"""From a job file (or a list of mechanism files and options) to a plan: one unit per job and
mechanism file, each either a plain run or a study.

Job-file problems are :class:`~linkcli.errors.MechanismFileError` diagnostics (file:line:col,
the same machinery as mechanism files; the CLI exits 3). Problems that need a mechanism file
(a glob that matches nothing, a file that is missing or invalid, a parameter path that is not in
the file) belong to one unit only: it is planned as already finished with that status, and the
other units run.
"""

from __future__ import annotations

import glob
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..errors import Diagnostic, MechanismFileError
from ..model.jobs import Check, JobFile
from ..model.study import Study
from .paths import ParameterPath, PathProblem, check_settable, nominal_number
from .worker import ERROR, INVALID, JobSpec, Source, UnitResult

DEFAULT_OUT_DIR = "results"
_GLOB_CHARS = set("*?[")


@dataclass
class UnitPlan:
    """A job on one mechanism file. ``done`` is set when the unit cannot run (its result);
    ``study`` when it is a parameter study."""

    spec: JobSpec
    file: str
    output: str  # path of its result table (or study table)
    source: Source | None = None
    data: Any = None  # parsed document (studies)
    smap: Any = None
    study: Study | None = None
    params: list = field(default_factory=list)  # ParameterPath
    nominal: list = field(default_factory=list)  # file value of each parameter (or None)
    done: UnitResult | None = None


@dataclass
class BatchPlan:
    units: list[UnitPlan]
    out_dir: str
    job_file: str | None = None
    description: str = ""

    @property
    def n_variants(self) -> int:
        from .sampling import variant_count

        return sum(variant_count(u.study) for u in self.units if u.study is not None and u.done is None)


def load_job_file(path: str | os.PathLike):
    """Read and validate a job file -> (JobFile, SourceMap). MechanismFileError when invalid."""
    from ..io.loader import validate_document
    from ..io.yaml_source import read_yaml_file

    path = str(path)
    data, smap = read_yaml_file(path)
    loaded = validate_document(data, smap, path, model_cls=JobFile)
    return loaded.model, smap


def is_job_file(path: str | os.PathLike) -> bool:
    """True when the file parses to a mapping with a top-level ``jobs`` key (mechanism files
    cannot have one). Unreadable or invalid files are not job files."""
    from ..io.yaml_source import read_yaml_file

    try:
        data, _ = read_yaml_file(path)
    except MechanismFileError:
        return False
    return isinstance(data, dict) and "jobs" in data


def _display(base: str, pattern: str) -> str:
    return os.path.normpath(os.path.join(base, pattern)) if base else os.path.normpath(pattern)


def _expand(base: str, patterns: Sequence[str]) -> list[tuple[int, str, bool]]:
    """(index of the pattern, path, matched) for each file; (i, pattern, False) for a glob that
    matches nothing."""
    out = []
    for i, pattern in enumerate(patterns):
        full = _display(base, pattern)
        if _GLOB_CHARS & set(pattern):
            hits = sorted(p for p in glob.glob(full, recursive=True) if os.path.isfile(p))
            out += [(i, h, True) for h in hits] or [(i, full, False)]
        else:
            out.append((i, full, True))
    return out


def _unit_ids(job: str, files: list[str]) -> list[str]:
    if len(files) == 1:
        return [job]
    seen: dict[str, int] = {}
    ids = []
    for f in files:
        stem = Path(f).stem
        seen[stem] = seen.get(stem, 0) + 1
        ids.append(f"{job}/{stem}" + (f"-{seen[stem]}" if seen[stem] > 1 else ""))
    return ids


def _output_name(uid: str, name: str | None, stem: str, several: bool, fmt: str) -> str:
    if not name:
        return f"{uid}.{fmt}"
    if several:
        root, ext = os.path.splitext(name)
        return f"{root}-{stem}{ext}"
    return name


def _read_source(path: str) -> tuple[Source, Any, Any]:
    """(Source, data, SourceMap); MechanismFileError when missing or not valid YAML."""
    from ..io.yaml_source import MAX_BYTES, read_yaml_file

    data, smap = read_yaml_file(path)
    with open(path, "rb") as fh:
        raw = fh.read(MAX_BYTES + 1)
    return Source(path, raw, hashlib.sha256(raw).hexdigest()), data, smap


def _failed(spec: JobSpec, file: str, status: str, message: str, diagnostics: Sequence[Diagnostic] = ()) -> UnitResult:
    return UnitResult(spec.uid, spec.job, file, spec.analysis, status, 0.0, message,
                      diagnostics=[d.to_dict() for d in diagnostics])


def _job_diag(job_file: str, smap, key_path: tuple, message: str, hint: str = "") -> Diagnostic:
    line, col = smap.locate(key_path) if smap is not None else (0, 0)
    return Diagnostic(job_file, line, col, key_path, message, hint)


def plan_units(job_name: str, job: Any, *, base: str, out_dir: str, fmt: str = "csv", job_file: str | None = None,
               smap=None, variants: int | None = None) -> list[UnitPlan]:
    """Units of one job (a JobBase model). A mechanism file with its own ``study:`` block runs
    that study when the job gives none (``variants`` overrides its count)."""
    files = _expand(base, job.files)
    uids = _unit_ids(job_name, [f for _, f, _ in files])
    several = len(files) > 1
    units = []
    for (k, path, matched), uid in zip(files, uids):
        spec = JobSpec(uid, job_name, job.analysis, job.options,
                       tuple(job.figures) if job.figures else None, tuple(job.checks), job.strict)
        name = (job.study.output if job.study is not None and job.study.output else None) or job.output
        output = os.path.join(out_dir, _output_name(uid, name, Path(path).stem, several, fmt))
        unit = UnitPlan(spec, path, output, study=job.study)
        units.append(unit)
        if not matched:
            d = _job_diag(job_file or "<command line>", smap, ("jobs", job_name, "files", k),
                          f"no file matches '{job.files[k]}'", f"Patterns are relative to {base or 'the current folder'}.")
            unit.done = _failed(spec, path, ERROR, d.format(), [d])
            continue
        try:
            unit.source, data, unit_smap = _read_source(path)
        except MechanismFileError as exc:
            first = exc.diagnostics[0].format() if exc.diagnostics else "invalid file"
            unit.done = _failed(spec, path, INVALID, first, exc.diagnostics)
            continue
        if job.study is not None:
            unit.data, unit.smap = data, unit_smap
            _plan_study(unit, job.study, job_file or "<command line>", smap, ("jobs", job_name, "study"))
        elif isinstance(data, dict) and "study" in data:
            _plan_file_study(unit, data, unit_smap, variants)
    return units


def _plan_file_study(unit: UnitPlan, data: dict, smap, variants: int | None) -> None:
    """The mechanism file's own ``study:`` block (when the job gives none): validated with the
    file, then planned like a job's study; variants are the document without the block."""
    from ..io.loader import validate_document

    try:
        study = validate_document(data, smap, unit.file).model.study
    except MechanismFileError as exc:
        unit.done = _failed(unit.spec, unit.file, INVALID, exc.diagnostics[0].format(), exc.diagnostics)
        return
    if variants is not None and study.method in ("random", "lhs", "normal"):
        study = study.model_copy(update={"variants": int(variants)})
    if study.output:
        unit.output = os.path.join(os.path.dirname(unit.output), study.output)
    unit.study = study
    unit.data, unit.smap = {k: v for k, v in data.items() if k != "study"}, smap
    _plan_study(unit, study, unit.file, smap, ("study",))


def _plan_study(unit: UnitPlan, study: Study, diag_file: str, smap, where: tuple) -> None:
    """Check the parameter paths against the document (problems -> the unit fails); ``where``
    is the key path of the study block in ``diag_file`` (a job file or the mechanism file)."""
    diags = []
    for key, p in study.parameters.items():
        at = where + ("parameters", key)
        param = ParameterPath.parse(key)
        try:
            check_settable(unit.data, param.keys)
        except PathProblem as exc:
            diags.append(_job_diag(diag_file, smap, at, f"{exc.message} (in {unit.file})", exc.hint))
            continue
        nominal = nominal_number(unit.data, param.keys)
        if study.method == "normal" and p.mean is None and nominal is None:
            diags.append(_job_diag(diag_file, smap, at, f"{unit.file} has no number at {key} to vary about",
                                   "Give `mean:`."))
        unit.params.append(param)
        unit.nominal.append(nominal)
    if diags:
        unit.done = _failed(unit.spec, unit.file, ERROR, diags[0].format()
                            + (f" (+{len(diags) - 1} more)" if len(diags) > 1 else ""), diags)


def plan_job_file(path: str | os.PathLike, out_dir: str | None = None, variants: int | None = None) -> BatchPlan:
    """Plan every job of a job file. ``out_dir`` (e.g. from --out-dir) wins over the file's
    ``out_dir`` (relative to the job file), which wins over ``results``. ``variants`` replaces
    the number of variants of every random, lhs and normal study."""
    path = str(path)
    model, smap = load_job_file(path)
    if variants is not None:
        model = _with_variants(model, variants)
    base = os.path.dirname(path)
    if out_dir is None:
        out_dir = _display(base, model.out_dir) if model.out_dir else DEFAULT_OUT_DIR
    units = []
    for name, job in model.jobs.items():
        units += plan_units(name, job, base=base, out_dir=out_dir, job_file=path, smap=smap, variants=variants)
    _check_outputs(units, out_dir, path, smap)
    return BatchPlan(units, out_dir, path, model.description)


def _check_outputs(units: list[UnitPlan], out_dir: str, job_file: str, smap) -> None:
    """Two jobs writing the same file (or summary.json) is a job-file error."""
    seen = {os.path.normpath(os.path.join(out_dir, "summary.json")): "the batch summary"}
    diags = []
    for u in units:
        key = os.path.normpath(u.output)
        if key in seen:
            where = ("jobs", u.spec.job, "output")
            diags.append(_job_diag(job_file, smap, where, f"{u.spec.uid} would write {u.output}, like {seen[key]}",
                                   "Give each job its own `output:` name."))
        else:
            seen[key] = f"job {u.spec.uid}"
    if diags:
        raise MechanismFileError(diags)


def _with_variants(model: JobFile, n: int) -> JobFile:
    jobs = {}
    for name, job in model.jobs.items():
        if job.study is not None and job.study.method in ("random", "lhs", "normal"):
            job = job.model_copy(update={"study": job.study.model_copy(update={"variants": int(n)})})
        jobs[name] = job
    return model.model_copy(update={"jobs": jobs})


def plan_files(files: Sequence[str], analysis: str = "solve", checks: Sequence[Check] = (),
               out_dir: str | None = None, fmt: str = "csv", variants: int | None = None) -> BatchPlan:
    """The short form: each mechanism file is a job named after it, with the analysis' defaults."""
    from ..errors import AnalysisInputError
    from ..model.jobs import ForcesJob, JacobianJob, SimulateJob, SolveJob

    if analysis == "ik":
        raise AnalysisInputError("--analysis ik needs targets: write a job file with `options: {targets: ...}`")
    if analysis not in ("solve", "jacobian", "simulate", "forces"):
        raise AnalysisInputError(f"--analysis must be solve, jacobian, simulate or forces, not {analysis!r}")
    cls = {"solve": SolveJob, "jacobian": JacobianJob, "simulate": SimulateJob, "forces": ForcesJob}[analysis]
    out_dir = out_dir or DEFAULT_OUT_DIR
    units, seen = [], {}
    for f in files:
        stem = Path(f).stem or "job"
        seen[stem] = seen.get(stem, 0) + 1
        name = stem if seen[stem] == 1 else f"{stem}-{seen[stem]}"
        job = cls.model_construct(files=[str(f)], analysis=analysis, options=cls.model_fields["options"].get_default(
            call_default_factory=True), figures=[], checks=list(checks), output=None, study=None, description="")
        units += plan_units(name, job, base="", out_dir=out_dir, fmt=fmt, variants=variants)
    return BatchPlan(units, out_dir)


__all__ = ["BatchPlan", "UnitPlan", "load_job_file", "is_job_file", "plan_job_file", "plan_files", "DEFAULT_OUT_DIR"]
