"""``linkcli forces FILE``: driving torques, joint forces, spring forces and shaking forces along
the same sweeps as ``solve`` (inverse dynamics at a given input speed; ``--static``:
kinetostatics), or ``--equilibrium``: where a mechanism with free inputs rests.

With no options it runs the file's ``analysis.forces`` block (its sweep defaults to
``analysis.solve``'s). Points that cannot be assembled or sit on a toggle position are kept with
their status; exit 1 if any.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..common import announce_compile, check_output, echo_err, emit_table, finish, load_and_compile, print_diagnostics
from ..options import DataFormat, DataFormatOption, MechanismFile, OutputOption, QuietOption
from .solve import SetOption, SweepOption, ZipOption

SpeedOption = Annotated[list[str] | None, typer.Option(
    "--speed", metavar="JOINT=SPEED", show_default=False,
    help="Input speed: file units per s, or with a unit: crank_pin=60rpm, 2rad/s, 0.5m/s (repeatable). "
         "Default: the file's analysis.forces.speed, else its constant_speed motor, else 0.")]
AccOption = Annotated[list[str] | None, typer.Option(
    "--acceleration", metavar="JOINT=ACC", show_default=False,
    help="Input acceleration: file units per s^2, or with a unit (10rad/s^2). Default 0.")]
StaticOption = Annotated[bool, typer.Option(
    "--static", help="Kinetostatics: no velocities or accelerations (gravity, springs and loads only).")]
LoadOption = Annotated[list[str] | None, typer.Option(
    "--load", metavar="FRAME=FX,FY[,FZ]", show_default=False,
    help="Add a force in N (world components; or with a unit: 0,-0.1kN) at a frame, e.g. coupler.P=0,-100 "
         "(repeatable).")]
GravityOption = Annotated[bool | None, typer.Option(
    "--gravity/--no-gravity", show_default=False, help="Include the file's gravity (default: as the file says).")]
EquilibriumOption = Annotated[bool, typer.Option(
    "--equilibrium", help="Find where the mechanism rests with its inputs free (along the sweep, or near "
                          "--set), and whether each rest position is stable.")]
PlotOption = Annotated[Path | None, typer.Option(
    "--plot", metavar="FILE", dir_okay=False, show_default=False,
    help="Also write a figure (.png, .svg, .pdf): input torque against the input, polar joint-force "
         "diagrams and the shaking-force locus.")]


def parse_load(text: str) -> tuple[str, list[str]]:
    """``FRAME=FX,FY[,FZ]`` -> (frame, components as written: N, or with a unit such as 2kN)."""
    from linkcli.errors import AnalysisInputError

    name, sep, value = text.partition("=")
    parts = [v.strip() for v in value.split(",")]
    if not sep or not name.strip() or not all(parts):
        raise AnalysisInputError(f"--load {text!r}: write FRAME=FX,FY (N, world frame), e.g. coupler.P=0,-100")
    return name.strip(), parts


def _text_pairs(items: list[str] | None, option: str) -> dict[str, str]:
    from linkcli.errors import AnalysisInputError

    out = {}
    for t in items or []:
        name, sep, value = t.partition("=")
        if not sep or not value.strip():
            raise AnalysisInputError(f"{option} {t!r}: write JOINT=VALUE, e.g. crank_pin=60rpm")
        out[name.strip()] = value.strip()
    return out


def build_request(model, *, set_, sweep, zip_, speed, acceleration, static, load, gravity, mech=None):
    """Merge the command-line options over the file's ``analysis.forces`` (and ``solve``) defaults
    (``mech``, the compiled mechanism: values with units in --set)."""
    from dataclasses import replace

    from linkcli.analyses.forces import request_from_defaults
    from linkcli.analyses.inputs import check_not_swept, parse_assignment, parse_sweep

    req = request_from_defaults(model)
    sweeps = [parse_sweep(s) for s in sweep or []]
    set_values = dict(parse_assignment(s, "--set", mech) for s in set_ or [])
    check_not_swept(set_values, sweeps)  # --set and --sweep of one variable: refused, not dropped
    if sweeps or set_:
        req = replace(req, sweeps=sweeps)
    return replace(req, set={**req.set, **set_values},
                   speeds={**req.speeds, **_text_pairs(speed, "--speed")},
                   accelerations={**req.accelerations, **_text_pairs(acceleration, "--acceleration")},
                   static=static or req.static, loads={**req.loads, **dict(parse_load(t) for t in load or [])},
                   gravity=req.gravity if gravity is None else gravity, mode="zip" if zip_ else req.mode)


def forces(file: MechanismFile, set_: SetOption = None, sweep: SweepOption = None, zip_: ZipOption = False,
           speed: SpeedOption = None, acceleration: AccOption = None, static: StaticOption = False,
           load: LoadOption = None, gravity: GravityOption = None, equilibrium: EquilibriumOption = False,
           output: OutputOption = None, fmt: DataFormatOption = DataFormat.table, quiet: QuietOption = False,
           plot: PlotOption = None) -> None:
    """Input torques, joint forces and shaking forces along a sweep (inverse dynamics), or with
    --static the torques that hold loads, or with --equilibrium the rest positions.
    Example: linkcli forces mechanisms/fourbar.yaml --speed crank_pin=60rpm -o forces.csv"""
    if plot is not None:  # --plot: format and matplotlib checked before the run
        from linkcli.errors import AnalysisInputError
        from linkcli.plot.figures import check_figure_path

        if equilibrium:
            raise AnalysisInputError("--plot draws forces along a sweep; it is not available with --equilibrium")
        check_figure_path(plot)
    loaded, mech = load_and_compile(file)
    check_output(output, fmt)  # before the run: a long run never ends in an unwritable output
    print_diagnostics(loaded.warnings, quiet)
    req = build_request(loaded.model, set_=set_, sweep=sweep, zip_=zip_, speed=speed, acceleration=acceleration,
                        static=static, load=load, gravity=gravity, mech=mech)
    from linkcli.analyses.forces import plan_kernels

    plan = plan_kernels(mech, req, equilibrium=equilibrium)  # the compile decision (also with -q): the first step
    if not quiet:
        announce_compile(plan)
    if equilibrium:
        from linkcli.analyses.forces import run_equilibrium

        outcome = run_equilibrium(mech, req, loaded)
    else:
        from linkcli.analyses.forces import run_forces

        outcome = run_forces(mech, req, loaded)
    if not quiet:
        for message in outcome.messages:
            echo_err(f"{file}: warning: {message}")
    emit_table(outcome.table, output=output, fmt=fmt, quiet=quiet, title=f"{mech.name}: forces")
    if plot is not None:
        from linkcli.plot.forces import forces_figure

        forces_figure(mech, outcome.table, plot)
        if not quiet:
            echo_err(f"wrote {plot}")
    if not quiet:
        from linkcli.analyses.forces import summary_lines

        for line in summary_lines(outcome.summary):
            echo_err(line)
    finish(outcome.n_failed, outcome.n_cases, quiet=quiet, what="points", first_failure=outcome.failure)


def register(app: typer.Typer) -> None:
    app.command("forces")(forces)
