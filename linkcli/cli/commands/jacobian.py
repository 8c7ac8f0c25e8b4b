"""``linkcli jacobian FILE --set ...``: actuated rates -> effector twist, with metrics."""

from __future__ import annotations

from typing import Annotated

import typer

from ..common import check_output, echo_err, emit_table, finish, load_and_compile, print_diagnostics
from ..options import DataFormat, DataFormatOption, MechanismFile, OutputOption, QuietOption

SetOption = Annotated[list[str] | None, typer.Option(
    "--set", metavar="JOINT=VALUE", show_default=False,
    help="Actuated value in the file's units, or with a unit (crank_pin=30deg); repeatable.")]
FrameOption = Annotated[str, typer.Option(
    "--frame", help="Express the twist in the base (world) frame or the effector (tool) frame.")]


def jacobian(file: MechanismFile, set_: SetOption = None, frame: FrameOption = "base", output: OutputOption = None,
             fmt: DataFormatOption = DataFormat.table, quiet: QuietOption = False) -> None:
    """The Jacobian from actuated rates to the tool twist (rows vx, vy[, vz], [wx, wy,] wz), its
    singular values, condition number and manipulability (JSON metadata, stderr summary).
    Example: linkcli jacobian mechanisms/fourbar.yaml --set crank_pin=30 --frame effector"""
    from linkcli.analyses.inputs import parse_assignment
    from linkcli.analyses.jacobian import run_jacobian

    loaded, mech = load_and_compile(file)
    check_output(output, fmt)  # before the run: a long run never ends in an unwritable output
    print_diagnostics(loaded.warnings, quiet)
    outcome = run_jacobian(mech, dict(parse_assignment(s, "--set", mech) for s in set_ or []), frame, loaded)
    table = outcome.table
    if not quiet:
        for message in outcome.messages:
            echo_err(f"{file}: warning: {message}")
    emit_table(table, output=output, fmt=fmt, quiet=quiet, title=f"{mech.name}: Jacobian ({frame} frame)")
    meta = table.metadata
    if not quiet and meta.get("condition") is not None:
        singular = f" (singular: rank {meta['rank']} of {len(meta['singular_values'])})" if meta.get("singular") else ""
        echo_err(f"condition number {float(meta['condition']):.6g}{singular}, manipulability "
                 f"{float(meta['manipulability']):.6g} (dimensionless: lengths per characteristic length "
                 f"{float(meta['characteristic_length_m']):.4g} m), mobility {meta['mobility']['mobility']}")
    finish(outcome.n_failed, outcome.n_cases, quiet=quiet, what="configurations", first_failure=outcome.failure)


def register(app: typer.Typer) -> None:
    app.command("jacobian")(jacobian)
