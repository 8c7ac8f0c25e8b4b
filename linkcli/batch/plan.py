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
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

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
    timeout: float | None = None  # seconds per run on a worker (a study: per variant); None: no limit
    #: checks that do not apply to this mechanism (short form): (position in the job's checks,
    #: CheckResult marked skipped); they were taken out of ``spec.checks``
    skipped_checks: list = field(default_factory=list)
    #: where ``output``'s name is written: (file, key path), e.g. (job file, ("jobs", "a",
    #: "output")); None for the default name ``<job id>.<format>`` in the output folder
    output_from: tuple[str, tuple] | None = None


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
               smap=None, variants: int | None = None, timeout: float | None = None) -> list[UnitPlan]:
    """Units of one job (a JobBase model). A mechanism file with its own ``study:`` block runs
    that study when the job gives none (``variants`` overrides its count). ``timeout``: the
    default time limit for a job without its own ``timeout:``."""
    limit = getattr(job, "timeout", None) or timeout
    files = _expand(base, job.files)
    uids = _unit_ids(job_name, [f for _, f, _ in files])
    several = len(files) > 1
    units = []
    for (k, path, matched), uid in zip(files, uids, strict=True):
        spec = JobSpec(uid, job_name, job.analysis, job.options,
                       tuple(job.figures) if job.figures else None, tuple(job.checks), job.strict)
        study_output = job.study.output if job.study is not None and job.study.output else None
        name = study_output or job.output
        output = os.path.join(out_dir, _output_name(uid, name, Path(path).stem, several, fmt))
        unit = UnitPlan(spec, path, output, study=job.study, timeout=limit)
        if name and job_file is not None:
            unit.output_from = (job_file, ("jobs", job_name, *(("study", "output") if study_output else ("output",))))
        units.append(unit)
        if not matched:
            d = _job_diag(job_file or "<command line>", smap, ("jobs", job_name, "files", k),
                          f"no file matches '{job.files[k]}'",
                          f"Patterns are relative to {base or 'the current folder'}.")
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
        problem = output_name_problem(study.output)
        if problem:
            d = _job_diag(unit.file, smap, ("study", "output"), f"'{study.output}' {problem}", OUTPUT_NAME_HINT)
            unit.done = _failed(unit.spec, unit.file, ERROR, d.format(), [d])
            return
        unit.output = os.path.join(os.path.dirname(unit.output), study.output)
        unit.output_from = (unit.file, ("study", "output"))
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


OUTPUT_NAME_HINT = ("Outputs stay inside the output folder: give a name relative to it, such as `fourbar.csv` or "
                    "`studies/fourbar.csv`, and choose the folder with `out_dir:` or --out-dir.")


def output_name_problem(name: str) -> str:
    """Why ``name`` (an ``output:`` of a job file) could leave the output folder, or ''."""
    parts = re.split(r"[\\/]+", name)
    if os.path.isabs(name) or name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name):
        return "is an absolute path"
    if ".." in parts:
        return "goes up out of the output folder ('..')"
    if not name.strip() or all(p in ("", ".") for p in parts):
        return "names no file"
    return ""


def _check_output_names(model: JobFile, path: str, smap) -> None:
    diags = []
    for name, job in model.jobs.items():
        for where, value in ((("output",), getattr(job, "output", None)),
                             (("study", "output"), job.study.output if getattr(job, "study", None) else None)):
            problem = output_name_problem(value) if value else ""
            if problem:
                diags.append(_job_diag(path, smap, ("jobs", name) + where, f"'{value}' {problem}", OUTPUT_NAME_HINT))
    if diags:
        raise MechanismFileError(diags)


def output_folder(output: str, out_dir: str) -> None:
    """Create the folder of ``output`` (inside ``out_dir``), refusing any path that leaves
    ``out_dir`` through a symbolic link (a link in the folder, or ``output`` itself). OutputError."""
    from ..io.writers import OutputError

    root = os.path.realpath(out_dir)
    real = os.path.realpath(output)
    if os.path.commonpath([root, real]) != root:
        link = next((p for p in _ancestors(output, out_dir) if os.path.islink(p)), output)
        raise OutputError(f"refusing to write '{output}': '{link}' is a symbolic link that leads out of the output "
                          f"folder '{out_dir}' (to '{os.path.realpath(link)}'); remove the link or choose another "
                          "--out-dir")
    os.makedirs(os.path.dirname(output) or ".", exist_ok=True)


def _ancestors(path: str, top: str) -> list[str]:
    """``top/a``, ``top/a/b``, ... down to ``path``."""
    rel = os.path.relpath(path, top)
    parts = [] if rel == "." else rel.split(os.sep)
    return [os.path.join(top, *parts[:k]) for k in range(1, len(parts) + 1)]


def plan_job_file(path: str | os.PathLike, out_dir: str | None = None, variants: int | None = None,
                  timeout: float | None = None) -> BatchPlan:
    """Plan every job of a job file. ``out_dir`` (e.g. from --out-dir) wins over the file's
    ``out_dir`` (relative to the job file), which wins over ``results``. ``variants`` replaces
    the number of variants of every random, lhs and normal study; ``timeout`` (seconds) is
    the time limit of jobs without their own ``timeout:``."""
    path = str(path)
    model, smap = load_job_file(path)
    _check_output_names(model, path, smap)
    if variants is not None:
        model = _with_variants(model, variants)
    base = os.path.dirname(path)
    out_dir_from_file = out_dir is None and bool(model.out_dir)
    if out_dir is None:
        out_dir = _display(base, model.out_dir) if model.out_dir else DEFAULT_OUT_DIR
    units = []
    for name, job in model.jobs.items():
        units += plan_units(name, job, base=base, out_dir=out_dir, job_file=path, smap=smap, variants=variants,
                            timeout=timeout)
    _check_outputs(units, out_dir, path, smap)
    check_writable(units, out_dir, path, smap, out_dir_key=("out_dir",) if out_dir_from_file else None)
    _check_columns_exist(units, path, smap)
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


OUTPUT_FORMAT_HINT = ("Name the file .csv or .json (text), or .npz or .parquet (binary, for large studies); the "
                      "extension chooses the format.")


def check_writable(units: list[UnitPlan], out_dir: str, job_file: str | None = None, smap=None,
                   out_dir_key: tuple | None = None) -> None:
    """Before any work: every output the plan will write (each unit's result or study table,
    summary.json in ``out_dir``) has a known format and a folder that exists or can be created
    (:func:`linkcli.io.writers.check_output` with ``make_dirs``), so a long study never ends
    in a table that cannot be written. A problem with a name written in a file (a job's
    ``output:``, a study's ``output:``, the job file's ``out_dir:`` given as ``out_dir_key``)
    is a :class:`MechanismFileError` at its line (the CLI exits 3); one with a name only the
    command line chose (``--out-dir``, the default ``results``) an OutputError (exit 2). Units
    that cannot run (``done``) write nothing and are not checked."""
    from ..io.writers import OutputError, check_output, format_for

    diags: list[Diagnostic] = []
    usage: list[str] = []

    def refuse(where: tuple[str, tuple] | None, what: str, message: str, hint: str = "", unit_smap=None) -> None:
        if where is None:
            usage.append(f"{what}: {message}")
        else:  # a name in the job file, or in a mechanism file's own study block (its source map)
            diags.append(_job_diag(where[0], smap if where[0] == job_file else unit_smap, where[1],
                                   f"{what}: {message}", hint))

    folder_from = (job_file, out_dir_key) if job_file is not None and out_dir_key is not None else None
    try:
        check_output(os.path.join(out_dir, "summary.json"), "json", make_dirs=True)
    except OutputError as exc:
        refuse(folder_from, "the output folder", str(exc))
        units = []  # every output is in that folder: one message says it
    for u in units:
        if u.done is not None:
            continue
        what = f"job {u.spec.uid} (its {'study' if u.study is not None else 'result'} table)"
        try:
            format_for(u.output)
        except OutputError:
            ext = os.path.splitext(u.output)[1]
            refuse(u.output_from, what, f"cannot tell the format of '{u.output}' "
                   f"({f'{ext!r}' if ext else 'no extension'})", OUTPUT_FORMAT_HINT, u.smap)
            continue
        try:
            check_output(u.output, make_dirs=True)
        except OutputError as exc:
            where = u.output_from or folder_from
            refuse(where, what, str(exc), unit_smap=u.smap if u.output_from else None)
    if diags:
        raise MechanismFileError(diags)
    if usage:
        raise OutputError("; ".join(dict.fromkeys(usage)))


class _Headers:
    """Column headers standing in for a table (figures.match_columns needs ``headers()``)."""

    def __init__(self, headers) -> None:
        self._headers = list(headers)

    def headers(self) -> list[str]:
        return self._headers


def _probe(unit: UnitPlan) -> list[str] | None:
    """The result columns of ``unit``'s analysis (one case run on this process), or None when
    that cannot be told before the run (the file is invalid, the options are wrong ...: the run
    reports those)."""
    from ..compile import compile_mechanism
    from ..io.loader import validate_document
    from .analyses import probe_columns
    from .worker import document

    try:
        data, smap = (unit.data, unit.smap) if unit.data is not None else document(unit.source)
        loaded = validate_document(data, smap, unit.file, unit.source.sha256)
        mech = compile_mechanism(loaded.model, file=unit.file)
        return probe_columns(unit.spec.analysis, mech, loaded, unit.spec.options)
    except Exception:  # noqa: BLE001 - reported when the job runs
        return None


def _absent_column_checks(units: list[UnitPlan]):
    """(unit, position, check, headers) for every column check whose column the unit's results
    cannot have (in any unit: ``B.transmission [deg]`` also matches a file in rad)."""
    from .figures import match_columns_in_unit

    out = []
    for unit in units:
        if unit.done is not None or not any(c.column is not None for c in unit.spec.checks):
            continue
        headers = _probe(unit)
        if headers is None:
            continue
        for k, check in enumerate(unit.spec.checks):
            if check.column is not None and not match_columns_in_unit(_Headers(headers), check.column)[0]:
                out.append((unit, k, check, headers))
    return out


def _check_columns_exist(units: list[UnitPlan], job_file: str, smap) -> None:
    """A check on a column that the job's results cannot have is a job-file error at its line."""
    from ..model.base import closest

    by_check: dict[tuple, list] = {}
    for unit, k, check, headers in _absent_column_checks(units):
        by_check.setdefault((unit.spec.job, k), []).append((unit, check, headers))
    diags = []
    for (job, k), hits in by_check.items():
        unit, check, headers = hits[0]
        files = ", ".join(Path(u.file).name for u, _, _ in hits[:3]) + (f" and {len(hits) - 3} more"
                                                                           if len(hits) > 3 else "")
        close = closest(check.column, headers)
        hint = (f"Did you mean '{close}'?" if close else
                f"Its columns include {', '.join(headers[:8])}{' ...' if len(headers) > 8 else ''}.")
        diags.append(_job_diag(job_file, smap, ("jobs", job, "checks", k, "column"),
                               f"no column '{check.column}' in the results of {unit.spec.analysis} on {files}", hint))
    if diags:
        raise MechanismFileError(diags)


def _skip_absent_columns(units: list[UnitPlan], checks: Sequence[Check], texts: Sequence[str]) -> None:
    """Short form: take column checks that cannot apply out of each unit (reported skipped);
    AnalysisInputError when one applies to no file at all."""
    from ..errors import AnalysisInputError
    from ..model.base import closest
    from .figures import CheckResult

    absent = _absent_column_checks(units)
    probed = {id(u) for u in units if u.done is None and any(c.column is not None for c in u.spec.checks)}
    for k, check in enumerate(checks):
        missing = [(u, h) for u, kk, _, h in absent if kk == k]
        if missing and len(missing) == len(probed):
            shown = texts[k] if k < len(texts) else check.label()
            close = closest(check.column, sorted({c for _, h in missing for c in h}))
            raise AnalysisInputError(f"--check {shown!r}: no file's results have a column '{check.column}'"
                                     + (f". Did you mean '{close}'?" if close else ""))
    for unit in units:
        drop = {k: c for u, k, c, _ in absent if u is unit}
        if not drop:
            continue
        unit.skipped_checks = [(k, CheckResult(c.label(), True, None, f"no column '{c.column}' in the results of "
                                               f"{unit.spec.analysis} on this mechanism", True))
                               for k, c in drop.items()]
        unit.spec = replace(unit.spec, checks=tuple(c for k, c in enumerate(unit.spec.checks) if k not in drop))


def with_skipped_checks(res: UnitResult, unit: UnitPlan) -> UnitResult:
    """``res`` with the unit's skipped checks back in their places."""
    if unit.skipped_checks:
        checks = list(res.checks)
        for k, c in sorted(unit.skipped_checks, key=lambda kc: kc[0]):
            checks.insert(min(k, len(checks)), c)
        res.checks = checks
        notes = "; ".join(f"check {c.name} skipped: {c.message}" for _, c in unit.skipped_checks)
        res.message = f"{res.message}; {notes}" if res.message else notes
    return res


def _with_variants(model: JobFile, n: int) -> JobFile:
    jobs = {}
    for name, job in model.jobs.items():
        if job.study is not None and job.study.method in ("random", "lhs", "normal"):
            job = job.model_copy(update={"study": job.study.model_copy(update={"variants": int(n)})})
        jobs[name] = job
    return model.model_copy(update={"jobs": jobs})


def plan_files(files: Sequence[str], analysis: str = "solve", checks: Sequence[Check] = (),
               out_dir: str | None = None, fmt: str = "csv", variants: int | None = None,
               timeout: float | None = None, check_texts: Sequence[str] = ()) -> BatchPlan:
    """The short form: each mechanism file is a job named after it, with the analysis' defaults.
    A column check that does not apply to a file (its results have no such column: no four-bar
    loop for ``B.transmission [deg]``) is skipped for that file, and is a usage error when it
    applies to none (``check_texts``: the checks as typed, for that message)."""
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
            call_default_factory=True), figures=[], checks=list(checks), output=None, study=None, description="",
            timeout=None)
        units += plan_units(name, job, base="", out_dir=out_dir, fmt=fmt, variants=variants, timeout=timeout)
    check_writable(units, out_dir)
    _skip_absent_columns(units, checks, check_texts)
    return BatchPlan(units, out_dir)


__all__ = ["with_skipped_checks", "output_folder", "output_name_problem", "BatchPlan", "UnitPlan", "load_job_file",
           "is_job_file", "plan_job_file", "plan_files", "DEFAULT_OUT_DIR"]
