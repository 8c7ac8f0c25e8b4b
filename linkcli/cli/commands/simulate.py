"""``linkcli simulate FILE``: constrained multibody dynamics (variational integrator).

Defaults come from the file's ``analysis.simulate``; options override them. A progress bar on
stderr for long runs (not when stderr is not a terminal, or with --quiet), then a summary:
steps, wall time, largest constraint residual, energy balance error, peak driver loads.
A run that stops early (diverged step, cannot assemble) exits 1; what was computed is written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..common import (
    announce_compile,
    check_output,
    echo_err,
    emit_table,
    finish,
    interrupt_requests,
    load_and_compile,
    print_diagnostics,
)
from ..options import DataFormat, DataFormatOption, MechanismFile, OutputOption, QuietOption

DtOption = Annotated[float | None, typer.Option("--dt", help="Time step [s].", show_default=False)]
TEndOption = Annotated[float | None, typer.Option("--t-end", help="Duration [s].", show_default=False)]
EveryOption = Annotated[int | None, typer.Option("--every", help="Save every N-th step.", show_default=False)]
TolOption = Annotated[float | None, typer.Option(
    "--tol", help="Relative Newton tolerance of a step (default 1e-10).", show_default=False)]
SetOption = Annotated[list[str] | None, typer.Option(
    "--set", metavar="JOINT=VALUE", show_default=False,
    help="Initial actuated value (file units, or with a unit: crank_pin=30deg).")]
RateOption = Annotated[list[str] | None, typer.Option(
    "--rate", metavar="JOINT=VALUE", show_default=False,
    help="Initial rate of any joint variable (file units per s); projected onto the constraints.")]
PlotOption = Annotated[Path | None, typer.Option(  # --plot (linkcli.plot, `plot` extra)
    "--plot", metavar="FILE", dir_okay=False, show_default=False,
    help="Also write a figure (.png, .svg, .pdf): joint variables, driver loads, reactions, energy vs time.")]


def simulate(file: MechanismFile, dt: DtOption = None, t_end: TEndOption = None, every: EveryOption = None,
             tol: TolOption = None, set_: SetOption = None, rate: RateOption = None, output: OutputOption = None,
             fmt: DataFormatOption = DataFormat.table, quiet: QuietOption = False, plot: PlotOption = None) -> None:
    """Simulate the mechanism's motion under gravity, springs, dampers, loads and drivers.
    Example: linkcli simulate mechanisms/fourbar.yaml --dt 1e-3 --t-end 2 -o run.csv"""
    from dataclasses import replace

    from linkcli.analyses.inputs import parse_assignment
    from linkcli.analyses.simulate import request_from_defaults, run_diagnostics, simulate_stream
    from linkcli.errors import AnalysisInputError

    if plot is not None:  # --plot: format and matplotlib checked before the run
        from linkcli.plot.figures import check_figure_path

        check_figure_path(plot)
    loaded, mech = load_and_compile(file)
    check_output(output, fmt)  # before the run: a long run never ends in an unwritable output
    req = request_from_defaults(loaded.model.analysis.simulate)
    overrides: dict[str, Any] = {k: v for k, v in (("dt", dt), ("t_end", t_end), ("every", every),
                                                   ("tol", tol)) if v is not None}
    for key, value in overrides.items():
        if not (value > 0 and value < float("inf")):  # also refuses nan
            option = "--" + key.replace("_", "-")
            raise AnalysisInputError(f"{option} {value:g}: {option} must be a positive finite number"
                                     + (" (an integer >= 1)" if key == "every" else ""))
    if tol is not None and not tol <= 1e-3:
        raise AnalysisInputError(f"--tol {tol:g}: a relative tolerance above 1e-3 would accept inaccurate steps; "
                                 "use 1e-12 .. 1e-6 (default 1e-10)")
    req = replace(req, **overrides,
                  set={**req.set, **dict(parse_assignment(s, "--set", mech) for s in set_ or [])},
                  rates={**req.rates, **dict(parse_assignment(r, "--rate", mech) for r in rate or [])})
    # the file's warnings, the spring-step ones at the step this run takes (--dt, fitted to t_end)
    print_diagnostics(run_diagnostics(loaded, req), quiet)
    _plan_and_announce(req, mech, quiet)  # the compile decision (also with -q): before any kernel import
    interrupted = interrupt_requests()  # Ctrl-C / SIGTERM: stop between chunks, keep the rows so far
    # rows are tabulated chunk by chunk into a scratch file next to the output (bounded memory)
    scratch = _scratch_dir(output)
    with _progress(req.t_end, quiet) as progress, interrupted as stop:
        outcome = simulate_stream(mech, req, loaded, progress, stop=stop, scratch_dir=scratch)
    if not quiet:
        for message in outcome.messages:
            echo_err(f"{file}: warning: {message}")
    if outcome.table is not None:
        emit_table(outcome.table, output=output, fmt=fmt, quiet=quiet, title=f"{mech.name}: simulation")
        if plot is not None:  # --plot
            from linkcli.plot.figures import simulation_figure

            simulation_figure(outcome.table, plot)  # read back block by block, M4-decimated: bounded memory
            if not quiet:
                echo_err(f"wrote {plot}")
    if not quiet:
        _print_summary(outcome.summary)
    interrupted.exit_if_interrupted()  # after the rows computed so far are written (exit 130/143)
    finish(outcome.n_failed, outcome.n_cases, quiet=quiet, what="simulations", first_failure=outcome.failure)


def _scratch_dir(output: Path | None) -> str | None:
    """The output's directory for the scratch file of the streamed rows (the disk the output
    goes to anyway); None (the system's temporary directory) for stdout, a device or a pipe."""
    from linkcli.io.writers import is_special_file

    from ..common import is_stdout

    if output is None or is_stdout(output) or is_special_file(str(output)):
        return None
    return str(Path(output).resolve().parent)


def _plan_and_announce(req, mech, quiet: bool) -> None:
    """Plan the kernels (the analysis plans again, idempotent) and say so when this run compiles
    them (decided before they are imported)."""
    from linkcli.analyses.simulate import plan_kernels

    plan = plan_kernels(mech, req)
    if not quiet:
        announce_compile(plan)


class _progress:
    """A rich progress bar over simulated time on stderr, or a no-op callback."""

    def __init__(self, t_end: float, quiet: bool) -> None:
        self.t_end, self.enabled, self.bar = t_end, not quiet and sys.stderr.isatty(), None

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        self.bar = Progress(TextColumn("simulating"), BarColumn(), TextColumn("t = {task.completed:.3f} s"),
                            TimeRemainingColumn(), transient=True)
        self.bar.start()
        task = self.bar.add_task("sim", total=self.t_end)
        return lambda t: self.bar.update(task, completed=t)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def _print_summary(s: dict) -> None:
    if "steps" in s:
        echo_err(summary_line(s))


def summary_line(s: dict) -> str:
    """The one-line run summary of a simulation's ``summary`` dict (stderr)."""
    units = s.get("peak_driver_load_unit", {})
    peak = ", ".join(f"{k} {v:.6g} {units.get(k, '')}".rstrip() for k, v in s["peak_driver_load"].items())
    refined = f" ({s['refined_steps']} refined into substeps)" if s.get("refined_steps") else ""
    return (f"{s['status']}: {s['steps']} steps{refined} of {s['dt']:.3g} s to t = {s['t_end']:.6g} s in "
            f"{s['wall_time_s']:.3g} s; max constraint residual {s['max_constraint_residual_m']:.3g} m; "
            f"energy balance error {s['max_energy_balance_error_J']:.3g} J; "
            + (f"peak driver load {peak}" if peak else "no drivers"))


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
