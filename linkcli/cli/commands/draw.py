"""``linkcli draw FILE -o fourbar.png``: a picture of the mechanism at one configuration.

The configuration: the file's assembly estimate with ``--set`` values for actuated variables,
assembled in the estimate's assembly mode (as ``fk`` does). Exit 1 (no picture) when it cannot
be assembled there. Needs the ``plot`` extra (matplotlib); without it: a one-line hint, exit 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..common import ExitCode, echo_err, load_and_compile, print_diagnostics
from ..options import MechanismFile, QuietOption

SetOption = Annotated[list[str] | None, typer.Option(
    "--set", metavar="JOINT=VALUE", show_default=False,
    help="Actuated value in the file's units, or with a unit (crank_pin=30deg); repeatable.")]
PictureOption = Annotated[Path, typer.Option(
    "--output", "-o", metavar="FILE", dir_okay=False, show_default=False,
    help="Picture file: .png, .svg or .pdf (written atomically).")]
LabelsOption = Annotated[bool, typer.Option("--labels", help="Write link, joint and effector names.")]
ViewOption = Annotated[str | None, typer.Option(
    "--view", metavar="ELEV,AZIM", show_default=False,
    help="3-D view of spatial mechanisms: elevation and azimuth in degrees (default 25,-60).")]
DpiOption = Annotated[float, typer.Option("--dpi", min=10, max=1200, help="Resolution of PNG pictures.")]


def parse_view(text: str | None) -> tuple[float, float] | None:
    """``"30,-45"`` -> (30.0, -45.0); AnalysisInputError when malformed."""
    if text is None:
        return None
    from linkcli.errors import AnalysisInputError

    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise AnalysisInputError(f"--view {text!r}: write ELEV,AZIM in degrees, e.g. --view 30,-45") from None


def draw(file: MechanismFile, output: PictureOption, set_: SetOption = None, labels: LabelsOption = False,
         view: ViewOption = None, dpi: DpiOption = 100.0, quiet: QuietOption = False) -> None:
    """Draw the mechanism at one configuration: links, joints, sliders, ground; spatial
    mechanisms in 3-D. Example: linkcli draw mechanisms/fourbar.yaml --set crank_pin=30 -o fourbar.png"""
    from linkcli.analyses.inputs import actuated_values, format_inputs, parse_assignment
    from linkcli.core.loop_closure import Status
    from linkcli.plot.figures import check_figure_path, mechanism_figure, save_figure
    from linkcli.plot.scene import build_scene, configuration_at

    check_figure_path(output)
    view_angles = parse_view(view)
    loaded, mech = load_and_compile(file)
    print_diagnostics(loaded.warnings, quiet)
    values = dict(parse_assignment(s, "--set", mech) for s in set_ or [])
    a = actuated_values(mech, values, "--set", default=mech.q_init[mech.q_actuated])
    res = configuration_at(mech, a)
    at = format_inputs(mech, a, digits=4)
    if int(res.status) != Status.CONVERGED:
        loop = mech.joint_names[mech.loop_joint[int(res.worst_loop)]] if mech.n_loops else "?"
        echo_err(f"{file}: error: cannot assemble at {at}: loop closed by joint {loop} keeps a residual of "
                 f"{float(res.residual.max(initial=0)):.3g} (m or rad); no picture written")
        raise typer.Exit(int(ExitCode.ANALYSIS_FAILED))
    if view_angles is not None and mech.planar and not quiet:
        echo_err(f"{file}: note: --view applies to spatial mechanisms; this one is planar")
    scene = build_scene(mech, res.q)
    title = f"{mech.name}\nat {at}" if at else mech.name
    save_figure(mechanism_figure(scene, labels=labels, view=view_angles, title=title), output, dpi=dpi)
    if not quiet:
        echo_err(f"wrote {output}")


def register(app: typer.Typer) -> None:
    app.command("draw")(draw)
