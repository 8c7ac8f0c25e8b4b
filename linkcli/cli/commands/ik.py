"""``linkcli ik FILE --target X,Y[,ANGLE]``: inverse kinematics, loop closure included."""

from __future__ import annotations

from typing import Annotated

import typer

from ..common import check_output, emit_table, finish, load_and_compile, print_diagnostics
from ..options import DataFormat, DataFormatOption, MechanismFile, OutputOption, QuietOption

TargetOption = Annotated[list[str], typer.Option(
    "--target", "-t", metavar="X,Y[,ANGLE] | X,Y,Z[,R,P,Y]",
    help="Tool pose in the file's units (planar x,y[,angle]; spatial x,y,z[,roll,pitch,yaw]); repeat for a path.")]
ModeOption = Annotated[str | None, typer.Option(
    "--mode", help="full | position | xy (default: full when an orientation is given, else position).",
    show_default=False)]
GuessOption = Annotated[list[str] | None, typer.Option(
    "--guess", metavar="JOINT=VALUE", help="Starting actuated value (file units; repeatable).", show_default=False)]


def _numbers(text: str) -> list[float]:
    from linkcli.analyses.inputs import finite_number
    from linkcli.errors import AnalysisInputError

    try:
        return [finite_number(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise AnalysisInputError(f"--target {text!r}: write comma-separated finite numbers, e.g. 1.5,2.0,30") from None


def ik(file: MechanismFile, target: TargetOption, mode: ModeOption = None, guess: GuessOption = None,
       output: OutputOption = None, fmt: DataFormatOption = DataFormat.table, quiet: QuietOption = False) -> None:
    """Find the joint variables that put the tool frame at a target (least squares when it
    cannot; unreachable targets exit 1 with the closest pose).
    Example: linkcli ik mechanisms/planar_3r.yaml --target 1.2,0.8"""
    from linkcli.analyses.ik import IKRequest, run_ik
    from linkcli.analyses.inputs import parse_assignment
    from linkcli.errors import AnalysisInputError

    if mode is not None and mode not in ("full", "position", "xy"):
        raise AnalysisInputError(f"--mode must be full, position or xy, not {mode!r}")
    loaded, mech = load_and_compile(file)
    check_output(output, fmt)  # before the run: a long run never ends in an unwritable output
    print_diagnostics(loaded.warnings, quiet)
    guesses = dict(parse_assignment(g, "--guess", mech) for g in guess or [])
    req = IKRequest([_numbers(t) for t in target], mode, guesses)
    outcome = run_ik(mech, req, loaded)
    emit_table(outcome.table, output=output, fmt=fmt, quiet=quiet, title=f"{mech.name}: inverse kinematics")
    finish(outcome.n_failed, outcome.n_cases, quiet=quiet, what="targets", first_failure=outcome.failure)


def register(app: typer.Typer) -> None:
    app.command("ik")(ik)
