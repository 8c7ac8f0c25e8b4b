"""``linkcli batch JOBS.yaml`` / ``linkcli batch FILES... --analysis solve``: many jobs, each
with its own outputs, checks and status; parameter studies; local processes or Dask.

The work is done by :mod:`linkcli.batch`; this command parses options, plans, runs, and writes
the reports. Exit 0 when every job passed, 1 when any failed (failed, invalid or error), 2 for
usage errors, 3 when the job file itself is invalid.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from ..common import ExitCode, check_jit_mode, echo_err, stderr_console
from ..options import QuietOption

LOG_WIDTH = 160  #: summary width on stderr when it is not a terminal (and COLUMNS is unset)

FilesArgument = Annotated[list[Path], typer.Argument(
    metavar="JOBS.yaml | FILE...", show_default=False,
    help="A job file, or mechanism files (shell globs welcome) for the short form.")]
AnalysisOption = Annotated[str | None, typer.Option(
    "--analysis", "-a", metavar="solve|jacobian|simulate|forces", show_default=False,
    help="Short form: the analysis run on every FILE (default solve), with the file's own defaults.")]
OutDirOption = Annotated[Path | None, typer.Option(
    "--out-dir", "-d", metavar="DIR", file_okay=False, show_default=False,
    help="Output folder (default: the job file's out_dir, else ./results): one table per job, summary.json.")]
JobsOption = Annotated[int | None, typer.Option(
    "--jobs", "-j", min=1, metavar="N", show_default=False,
    help="Local worker processes (default: one per CPU; 1 runs everything in this process).")]
SchedulerOption = Annotated[str | None, typer.Option(
    "--scheduler", metavar="tcp://HOST:PORT | local", show_default=False,
    help="Run on a Dask cluster (needs the dask extra); 'local' starts an embedded LocalCluster of --jobs "
         "processes.")]
JunitOption = Annotated[Path | None, typer.Option(
    "--junit", metavar="FILE", dir_okay=False, show_default=False,
    help="Also write a JUnit XML report (one test case per job and file).")]
CheckOption = Annotated[list[str] | None, typer.Option(
    "--check", metavar="'COLUMN>=V' | 'COLUMN<=V' | SHORTCUT=V", show_default=False,
    help="Short form: an acceptance check on every FILE (repeatable): a result column (its full header, unit "
         "included) with >= or <= a value, or min_transmission_angle=DEG, max_loop_residual=R, max_driver_torque=T.")]
FormatOption = Annotated[str, typer.Option(
    "--format", "-f", metavar="csv|json", help="Short form: format of each job's result table.")]
VariantsOption = Annotated[int | None, typer.Option(
    "--variants", min=1, metavar="N", show_default=False,
    help="Run N variants in every random, lhs or normal study instead of the job file's number.")]
ResumeOption = Annotated[bool, typer.Option(
    "--resume", help="Continue the interrupted run in the output folder: jobs and study variants it finished are "
                     "kept (same results as one uninterrupted run), the rest run now.")]
TimeoutOption = Annotated[float | None, typer.Option(
    "--timeout", metavar="SECONDS", show_default=False,
    help="Time limit of each job on one file (a study: of each variant) without its own `timeout:`; past it "
         "that job fails with status error and the others go on.")]
ChunkOption = Annotated[int | None, typer.Option(
    "--chunk-size", min=1, metavar="N", show_default=False,
    help="Study variants per task (default: the study's chunk_size, else about 8 tasks per worker, at most 64).")]


def parse_check(text: str):
    """``COLUMN>=V``, ``COLUMN<=V`` or ``SHORTCUT=V`` -> a Check model (no evaluation of text)."""
    from pydantic import ValidationError

    from linkcli.errors import AnalysisInputError
    from linkcli.model.jobs import CHECK_SHORTCUTS, Check

    usage = (f"--check {text!r}: write 'COLUMN>=VALUE', 'COLUMN<=VALUE' or SHORTCUT=VALUE with a shortcut among "
             f"{', '.join(CHECK_SHORTCUTS)}")
    bounds = [(op, key) for op, key in ((">=", "min"), ("<=", "max")) if op in text]
    if bounds:
        op, key = bounds[0]
        column, _, value = text.rpartition(op)
    else:
        column, sep, value = text.partition("=")
        key = column.strip()
        if not sep or key not in CHECK_SHORTCUTS:
            raise AnalysisInputError(usage)
        column = None
    try:
        number = float(value)
        return Check(**({key: number} if column is None else {"column": column.strip(), key: number}))
    except (ValueError, ValidationError):
        raise AnalysisInputError(usage) from None


def _plan(files: list[Path], analysis, out_dir, checks, fmt, variants, timeout):
    from linkcli.batch.plan import is_job_file, plan_files, plan_job_file
    from linkcli.errors import AnalysisInputError
    from linkcli.io.yaml_source import read_yaml_file

    names = [str(f) for f in files]
    if timeout is not None and not (timeout > 0 and timeout < float("inf")):
        raise AnalysisInputError(f"--timeout must be a positive number of seconds, not {timeout:g}")
    job_files = [n for n in names if is_job_file(n)]
    if job_files or (analysis is None and len(names) == 1 and not _parses(read_yaml_file, names[0])):
        if len(names) > 1:
            raise AnalysisInputError(f"give one job file, or mechanism files: {job_files[0]} is a job file")
        short = [o for o, v in (("--analysis", analysis), ("--check", checks), ("--format", fmt != "csv")) if v]
        if short:
            raise AnalysisInputError(f"{short[0]} is for mechanism files; a job file names its analyses, checks "
                                     "and outputs")
        return plan_job_file(names[0], out_dir, variants, timeout)
    if fmt not in ("csv", "json"):
        raise AnalysisInputError(f"--format must be csv or json, not {fmt!r}")
    return plan_files(names, analysis or "solve", [parse_check(c) for c in checks or []], out_dir, fmt, variants,
                      timeout, checks or [])


def _parses(read, name: str) -> bool:
    from linkcli.errors import MechanismFileError

    try:
        read(name)
    except MechanismFileError:
        return False
    return True


def batch(files: FilesArgument, analysis: AnalysisOption = None, out_dir: OutDirOption = None,
          jobs: JobsOption = None, scheduler: SchedulerOption = None, junit: JunitOption = None,
          check: CheckOption = None, fmt: FormatOption = "csv", variants: VariantsOption = None,
          chunk_size: ChunkOption = None, resume: ResumeOption = False, timeout: TimeoutOption = None,
          quiet: QuietOption = False) -> None:
    """Run many jobs (a job file, or FILES with --analysis) in parallel; each writes its own results,
    one failing job never stops the others. Writes summary.json (and --junit FILE) and prints a
    summary table on stderr. Ctrl-C or SIGTERM stops the run cleanly: finished jobs are written, the
    rest marked interrupted; --resume continues it. Exit 0 all passed, 1 some failed, 3 invalid job
    file, 130/143 interrupted (SIGINT/SIGTERM).
    Example: linkcli batch mechanisms/jobs/ci_jobs.yaml --junit report.xml"""
    check_jit_mode()  # before any job: every worker would otherwise run it as ``auto``
    from linkcli.batch import run_batch
    from linkcli.batch.interrupts import Interrupted, OutDirLock, interrupts
    from linkcli.batch.journal import JOURNAL_NAME
    from linkcli.batch.plan import output_folder
    from linkcli.batch.report import ProgressBar, render_summary, stderr_is_terminal, write_junit, write_summary

    console = stderr_console()
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console.width = LOG_WIDTH  # CI logs: one line per job where possible

    def report_one(res) -> None:
        if not quiet:
            console.print(f"{res.status} {res.uid} ({res.time_s:.2f} s)" + (f": {res.message}" if res.message else ""),
                          markup=False, highlight=False, soft_wrap=True)

    with interrupts() as signals:
        try:
            from linkcli.io.writers import check_destination, is_special_file

            if junit is not None and not is_special_file(str(junit)):  # before any work, like every output
                check_destination(junit, make_dirs=True, example="report.xml")  # (its folder is created)
            plan = _plan(files, analysis, None if out_dir is None else str(out_dir), check, fmt, variants, timeout)
            bar = ProgressBar(console, enabled=not quiet and stderr_is_terminal(), description="variants" if any(
                u.study is not None for u in plan.units) else "jobs")
            with OutDirLock(plan.out_dir):
                if resume and not quiet and not os.path.exists(os.path.join(plan.out_dir, JOURNAL_NAME)):
                    echo_err(f"nothing to resume in {plan.out_dir} (no interrupted run): running every job")
                report = run_batch(plan, jobs=jobs, scheduler=scheduler, progress=bar, chunk_size=chunk_size,
                                   on_result=report_one, resume=resume)
                summary = os.path.join(plan.out_dir, "summary.json")
                output_folder(summary, plan.out_dir)
                write_summary(report, summary)
                if junit is not None:
                    os.makedirs(os.path.dirname(os.path.abspath(junit)), exist_ok=True)
                    write_junit(report, str(junit))
        except Interrupted as exc:  # before or after the run itself (planning, writing the summary)
            echo_err(f"interrupted ({exc.signal_name})")
            _stop(128 + exc.signum, signals)
    if not quiet:
        render_summary(report, console)
        echo_err(f"wrote {summary}" + (f" and {junit}" if junit is not None else ""))
        if report.interrupted:
            echo_err(f"interrupted ({report.interrupted}): run the same command with --resume to continue")
    if report.interrupted:
        _stop(128 + int(signals["signum"] or 2), signals)
    if not report.ok:
        raise typer.Exit(int(ExitCode.ANALYSIS_FAILED))


def _stop(code: int, signals: dict) -> None:
    """Exit with ``code`` after an interrupt. In the ``linkcli`` process itself (its SIGTERM
    handler is the one ``linkcli.cli.app.main`` installs) the process ends at once, without the
    interpreter's slow clean-up of compiled code; called from Python (tests, the API) it is an
    ordinary typer.Exit."""
    import signal

    from linkcli.batch.interrupts import exit_now
    from linkcli.cli import app as cli_app

    if signals["previous"].get(signal.SIGTERM) is getattr(cli_app, "_raise_terminated", None):
        exit_now(code)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("batch", short_help="Run job files or many mechanism files in parallel (checks, studies, Dask); "
                                    "summary.json and JUnit.")(batch)
