"""Helpers shared by the commands: loading, messages on stderr, emitting result tables.

Everything heavy is imported inside the functions (``linkcli --help`` must not import numpy or
pydantic). A command is a thin chain::

    loaded, mech = load_and_compile(file)          # MechanismFileError -> exit 3 (app.py)
    print_diagnostics(loaded.warnings, quiet)      # warnings on stderr
    result = <core analysis>(mech, ...)            # AnalysisInputError -> exit 2
    table = ResultTable.for_mechanism(mech, loaded, n=...); table.add(...)
    emit_table(table, output=output, fmt=fmt, quiet=quiet)
    finish(n_failed, n_cases, quiet=quiet)         # exit 1 when some case failed
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from linkcli.core.mechanism import CompiledMechanism
    from linkcli.errors import Diagnostic
    from linkcli.io.loader import LoadedMechanism
    from linkcli.model.mechanism import Mechanism
    from linkcli.results import ResultTable, TableStream

    from .options import DataFormat


class ExitCode(IntEnum):
    """Exit codes of every command (documented in ``--help`` and README.md)."""

    OK = 0
    ANALYSIS_FAILED = 1  # an analysis failed for some case; the other cases are still written
    USAGE = 2  # bad arguments or options (also AnalysisInputError, unwritable output)
    INVALID_FILE = 3  # a mechanism file is invalid (diagnostics on stderr)
    INTERNAL = 70  # a bug in linkcli: please report it


EXIT_CODES_HELP = (
    "Exit codes: 0 ok; 1 an analysis failed for some case (the others are still written); "
    "2 usage error; 3 invalid mechanism file; 70 internal error (please report)."
)


def add_note(exc: BaseException, note: str) -> None:
    """Attach context to an exception (shown by the internal-error handler)."""
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10
        exc.__notes__ = [*getattr(exc, "__notes__", []), note]  # type: ignore[attr-defined]


def load_and_compile(path: str | Path) -> tuple[LoadedMechanism[Mechanism], CompiledMechanism]:
    """Load, validate and compile one mechanism file.

    Raises MechanismFileError (the CLI exits 3 and prints its diagnostics). A valid file that
    fails to compile is a bug: the exception propagates (exit 70) with a note naming the file.
    """
    from linkcli.compile import compile_mechanism
    from linkcli.io.loader import load_mechanism

    check_jit_mode()
    loaded = load_mechanism(path)
    try:
        mech = compile_mechanism(loaded.model, file=loaded.path)
    except Exception as exc:
        add_note(exc, f"while compiling {loaded.path} (a valid file must compile)")
        raise
    return loaded, mech


def check_jit_mode() -> None:
    """Raise AnalysisInputError (exit 2) for a bad ``LINKCLI_JIT``: every analysis's kernels
    follow it (solve's sweep kernel, forces, batch workers), not only simulate's plan, so a typo
    never runs silently as ``auto``. Called by commands, not at start-up (``--help`` imports no core)."""
    from linkcli.core.jit import requested_mode
    from linkcli.errors import AnalysisInputError

    try:
        requested_mode()
    except ValueError as exc:
        raise AnalysisInputError(str(exc)) from None


# -- messages ---------------------------------------------------------------------------------------
def announce_compile(plan: Any) -> None:
    """Say so on stderr when this run compiles its kernels (a :class:`linkcli.core.jit.Plan`,
    decided before they are imported): the one slow run after an install."""
    if plan.compile and plan.cold:
        echo_err(f"compiling kernels once, about {plan.compile_s:.0f} s of CPU; later runs start at once")


def echo_err(message: str = "") -> None:
    """Lines on stderr (progress, warnings, summaries); control characters and the like in
    them are shown as escapes (:func:`linkcli.errors.visible`: no terminal escape sequence from
    a file or an option ever reaches the terminal)."""
    from linkcli.errors import visible

    typer.echo("\n".join(visible(line) for line in str(message).split("\n")), err=True)


def echo_out(message: str = "") -> None:
    """One line on stdout, control characters shown as escapes (like :func:`echo_err`)."""
    from linkcli.errors import visible

    typer.echo(visible(message))


def json_text(data: Any, **kwargs: Any) -> str:
    """``json.dumps`` for output: non-ASCII kept readable, control characters and the like as
    ``\\uXXXX`` escapes (:func:`linkcli.errors.visible_json`)."""
    import json

    from linkcli.errors import visible_json

    return visible_json(json.dumps(data, ensure_ascii=False, allow_nan=False, **kwargs))


def print_diagnostics(diagnostics: Iterable[Diagnostic], quiet: bool = False, omitted: int = 0) -> None:
    """``file:line:col: severity: key: message. hint`` lines on stderr, at most
    :data:`~linkcli.errors.MAX_DIAGNOSTICS` of them, then ``... and N more problems`` (``omitted``
    counts problems found but not described). ``quiet`` drops warnings but never errors."""
    from linkcli.errors import MAX_DIAGNOSTICS, more_problems

    shown = [d for d in diagnostics if not (quiet and d.severity != "error")]
    for d in shown[:MAX_DIAGNOSTICS]:
        echo_err(d.format())
    more = omitted + max(0, len(shown) - MAX_DIAGNOSTICS)
    if more:
        echo_err(more_problems(more))


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout (NaN/inf -> null, numpy -> Python)."""
    from linkcli.results import json_safe  # numpy, but only for commands printing JSON

    typer.echo(json_text(json_safe(data), indent=2))


def print_plain_json(data: Any) -> None:
    """JSON on stdout for data that is already plain (no numpy import)."""
    typer.echo(json_text(data, indent=2))


#: width of rendered output when stdout is not a terminal and COLUMNS is unset (rich: 80)
PIPE_WIDTH = 120


def stdout_console() -> Console:
    """A rich console on the current stdout (created per call: tests swap sys.stdout). Not on a
    terminal, it is PIPE_WIDTH wide unless COLUMNS says otherwise."""
    import os

    from rich.console import Console

    con = Console(file=sys.stdout, soft_wrap=False, highlight=False, emoji=False)  # ":smile:" in a name stays text
    if not con.is_terminal and not os.environ.get("COLUMNS"):
        con.width = PIPE_WIDTH
    return con


def stderr_console() -> Console:
    from rich.console import Console

    return Console(file=sys.stderr, soft_wrap=False, highlight=False, emoji=False)


# -- tables -----------------------------------------------------------------------------------------
def check_output(output: Path | None, fmt: DataFormat | str) -> None:
    """Before the run: :func:`emit_table` can write ``output`` with ``fmt`` (the same choice of
    format; nothing to check for stdout). An OutputError (exit 2) names the path and the fix."""
    if output is None or is_stdout(output):
        return
    from linkcli.io.writers import check_output as check

    fmt_name = getattr(fmt, "value", fmt)
    check(output, None if fmt_name == "table" else fmt_name)


def emit_table(table: ResultTable | TableStream, *, output: Path | None, fmt: DataFormat | str, quiet: bool = False,
               max_rows: int = 40, title: str | None = None) -> None:
    """Send a result table where the user asked.

    * ``output`` given: written atomically; the format is ``fmt`` when it is csv/json, else the
      file extension decides (unknown -> OutputError, exit 2). A summary line goes to stderr.
      ``-o -`` writes the file format (``--format``, csv by default) to stdout.
    * no ``output``: ``table`` renders on stdout with rich (head and tail rows), ``csv``/``json``
      print the whole table on stdout and nothing else.

    ``table`` may be a :class:`~linkcli.results.TableStream` (a long solve or simulation):
    files, CSV and JSON on stdout are written block by block, the terminal table reads only
    the rows it shows.
    """
    from linkcli.io.writers import dump_table, write_table

    fmt_name = getattr(fmt, "value", fmt)
    if output is not None and is_stdout(output):
        output, fmt_name = None, "csv" if fmt_name == "table" else fmt_name
    if output is not None:
        written = write_table(table, output, None if fmt_name == "table" else fmt_name)
        if not quiet:
            echo_err(f"wrote {output} ({written}: {table.n} rows, {len(table.headers())} columns)")
        return
    if fmt_name == "table":
        from .render import render_table

        render_table(table, stdout_console(), max_rows=max_rows, title=title)
    else:
        dump_table(table, sys.stdout, fmt_name)
        sys.stdout.flush()


class interrupt_requests:
    """Context manager for long computations that can stop cleanly between chunks: while
    active, the first Ctrl-C (SIGINT) or SIGTERM only sets a flag; ``with interrupt_requests()
    as stop:`` gives ``stop()`` (True once a signal came) to pass to the computation, which ends
    early with what it has. ``signal`` then names the signal (its exit code 128 + number). A
    second signal behaves as without this (KeyboardInterrupt / Terminated). Outside the main
    thread (where handlers cannot be set) ``stop`` is None."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return None
        for sig in (signal.SIGINT, getattr(signal, "SIGTERM", None)):
            if sig is not None:
                self._previous[sig] = signal.signal(sig, self._handle)
        return lambda: self.signal is not None

    def _handle(self, signum: int, frame: Any) -> None:
        import signal

        if self.signal is None:
            self.signal = signum
            return
        previous = self._previous.get(signum)
        if callable(previous):
            previous(signum, frame)
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt
        else:
            from linkcli.errors import Terminated

            raise Terminated()

    def __exit__(self, *exc: Any) -> None:
        import signal

        for sig, previous in self._previous.items():
            signal.signal(sig, previous)

    def exit_if_interrupted(self) -> None:
        """After writing what was computed: exit 130 (SIGINT) or 143 (SIGTERM) with a note."""
        if self.signal is not None:
            import signal

            echo_err("interrupted" if self.signal == signal.SIGINT else "terminated")
            raise typer.Exit(128 + int(self.signal))


def is_stdout(output: Path | str | None) -> bool:
    """Whether ``-o`` names standard output (``-o -``)."""
    return output is not None and str(output) == "-"


def finish(n_failed: int, n_cases: int, *, quiet: bool = False, what: str = "cases",
           first_failure: str = "") -> None:
    """Exit 1 with a summary on stderr when some cases failed (their rows are still written,
    marked by their status); return normally when none did."""
    if n_failed <= 0:
        return
    detail = f"; first: {first_failure}" if first_failure else ""
    echo_err(f"{n_failed} of {n_cases} {what} failed{detail}")
    raise typer.Exit(int(ExitCode.ANALYSIS_FAILED))


__all__ = ["ExitCode", "EXIT_CODES_HELP", "add_note", "load_and_compile", "echo_err", "echo_out", "json_text",
           "print_diagnostics",
           "print_json", "print_plain_json", "stdout_console", "stderr_console", "check_output", "emit_table",
           "finish"]
