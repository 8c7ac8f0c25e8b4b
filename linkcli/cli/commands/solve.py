"""``linkcli solve FILE``: position (velocity, acceleration) analysis at a point or along a
sweep; ``linkcli fk FILE --set ...``: the same at one point.

With no options ``solve`` runs the file's ``analysis.solve`` block. ``--set``/``--rate``/
``--acceleration`` merge over the file's values; any ``--set`` or ``--sweep`` replaces the
file's sweep. Rows that cannot be assembled are kept with their status; exit 1 if any.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..common import check_output, echo_err, emit_table, finish, load_and_compile, print_diagnostics
from ..options import DataFormat, DataFormatOption, MechanismFile, OutputOption, QuietOption

SetOption = Annotated[list[str] | None, typer.Option(
    "--set", metavar="JOINT=VALUE", show_default=False,
    help="Actuated value in the file's units, or with a unit (crank_pin=30deg); repeatable.")]
SweepOption = Annotated[list[str] | None, typer.Option(
    "--sweep", metavar="JOINT=FROM:TO:STEP", show_default=False,
    help="Sweep an actuated variable (FROM:TO:nNUM for NUM points); repeat for 2-DOF mechanisms.")]
ZipOption = Annotated[bool, typer.Option("--zip", help="Several sweeps advance together instead of as a grid.")]
RateOption = Annotated[list[str] | None, typer.Option(
    "--rate", metavar="JOINT=VALUE", show_default=False,
    help="Actuated rate (file units per s, or with a unit: 60rpm): adds velocities.")]
AccOption = Annotated[list[str] | None, typer.Option(
    "--acceleration", metavar="JOINT=VALUE", show_default=False,
    help="Actuated acceleration (file units per s^2): adds accelerations.")]
FramesOption = Annotated[str | None, typer.Option(
    "--output-frames", metavar="A,B,...", help="Only these frames' columns (link.frame names).", show_default=False)]
# --plot (linkcli.plot, needs the `plot` extra) -------------------------------------------------
PlotOption = Annotated[Path | None, typer.Option(
    "--plot", metavar="FILE", dir_okay=False, show_default=False,
    help="Also write a figure (.png, .svg, .pdf): the effector path on the mechanism, joint variables, "
         "transmission angle and velocity ratios against the first swept input.")]
PlotColumnsOption = Annotated[str | None, typer.Option(
    "--plot-columns", metavar="A,B,...", show_default=False,
    help="With --plot: a figure of these result columns (e.g. coupler.P.x,B.transmission) instead.")]


def _pairs(items: list[str] | None, option: str, mech=None) -> dict[str, float]:
    from linkcli.analyses.inputs import parse_assignment

    return dict(parse_assignment(t, option, mech) for t in items or [])


def build_request(model, *, set_: list[str] | None, sweep: list[str] | None, zip_: bool, rate: list[str] | None,
                  acceleration: list[str] | None, output_frames: str | None, use_file_sweep: bool = True, mech=None):
    """Merge command-line options over the file's ``analysis.solve`` defaults (``mech``, the
    compiled mechanism: values with units in --set/--rate/--acceleration)."""
    from dataclasses import replace

    from linkcli.analyses.inputs import check_not_swept, parse_sweep
    from linkcli.analyses.solve import request_from_defaults

    req = request_from_defaults(model.analysis.solve)
    sweeps = [parse_sweep(s) for s in sweep or []]
    set_values = _pairs(set_, "--set", mech)
    check_not_swept(set_values, sweeps)  # --set and --sweep of one variable: refused, not dropped
    if sweeps or set_ or not use_file_sweep:
        req = replace(req, sweeps=sweeps)
    frames = [f.strip() for f in output_frames.split(",") if f.strip()] if output_frames else req.output_frames
    return replace(req, set={**req.set, **set_values},
                   rates={**req.rates, **_pairs(rate, "--rate", mech)},
                   accelerations={**req.accelerations, **_pairs(acceleration, "--acceleration", mech)},
                   mode="zip" if zip_ else req.mode, output_frames=frames)


def _run(file, options: dict, output, fmt, quiet, use_file_sweep: bool = True, plot=None, plot_columns=None) -> None:
    from linkcli.analyses.solve import solve_stream

    columns = _check_plot(plot, plot_columns)  # --plot
    loaded, mech = load_and_compile(file)
    check_output(output, fmt)  # before the run: a long run never ends in an unwritable output
    print_diagnostics(loaded.warnings, quiet)
    req = build_request(loaded.model, use_file_sweep=use_file_sweep, mech=mech, **options)
    # the table is computed block by block as it is written (bounded memory); --plot reads the
    # blocks again and draws M4-decimated rows (linkcli.plot.decimate), never the whole table
    outcome = solve_stream(mech, req, loaded)
    if not quiet:
        for message in outcome.messages:
            echo_err(f"{file}: warning: {message}")
    emit_table(outcome.table, output=output, fmt=fmt, quiet=quiet, title=mech.name)
    if plot is not None:  # --plot
        from linkcli.plot.figures import solve_plot

        solve_plot(mech, outcome.table, plot, columns=columns, x_name=req.sweeps[0].name if req.sweeps else None)
        if not quiet:
            echo_err(f"wrote {plot}")
    finish(outcome.n_failed, outcome.n_cases, quiet=quiet, what="points", first_failure=outcome.failure)


def _check_plot(plot, plot_columns) -> list[str] | None:
    """--plot / --plot-columns: checked before anything is computed (format, matplotlib)."""
    from linkcli.errors import AnalysisInputError

    if plot is None:
        if plot_columns:
            raise AnalysisInputError("--plot-columns needs --plot FILE")
        return None
    from linkcli.plot.figures import check_figure_path

    check_figure_path(plot)
    return [c.strip() for c in plot_columns.split(",") if c.strip()] if plot_columns else None


def solve(file: MechanismFile, set_: SetOption = None, sweep: SweepOption = None, zip_: ZipOption = False,
          rate: RateOption = None, acceleration: AccOption = None, output_frames: FramesOption = None,
          output: OutputOption = None, fmt: DataFormatOption = DataFormat.table, quiet: QuietOption = False,
          plot: PlotOption = None, plot_columns: PlotColumnsOption = None) -> None:
    """Solve the configuration at a point or along a sweep (with velocities and accelerations
    when rates are given). Example: linkcli solve mechanisms/fourbar.yaml --sweep crank_pin=0:360:1 -o out.csv"""
    _run(file, dict(set_=set_, sweep=sweep, zip_=zip_, rate=rate, acceleration=acceleration,
                    output_frames=output_frames), output, fmt, quiet, plot=plot, plot_columns=plot_columns)


def fk(file: MechanismFile, set_: SetOption = None, rate: RateOption = None, acceleration: AccOption = None,
       output_frames: FramesOption = None, output: OutputOption = None, fmt: DataFormatOption = DataFormat.table,
       quiet: QuietOption = False) -> None:
    """Forward kinematics at one point (solve without a sweep).
    Example: linkcli fk mechanisms/fourbar.yaml --set crank_pin=30"""
    _run(file, dict(set_=set_, sweep=None, zip_=False, rate=rate, acceleration=acceleration,
                    output_frames=output_frames), output, fmt, quiet, use_file_sweep=False)


def register(app: typer.Typer) -> None:
    app.command("solve")(solve)
    app.command("fk")(fk)
