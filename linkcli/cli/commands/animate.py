"""``linkcli animate FILE -o motion.gif``: the mechanism moving over a sweep (the file's
``analysis.solve`` or ``--sweep``) or a simulation (``--simulate``), tracing its effector path.

GIF through Pillow, MP4 through ffmpeg (a clear error when it is missing). Points that cannot be
assembled are skipped (and make the exit code 1, as in ``solve``); ``--frames`` subsamples.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ..common import echo_err, finish, load_and_compile, print_diagnostics
from ..options import MechanismFile, QuietOption
from .draw import LabelsOption, ViewOption, parse_view
from .solve import SetOption, SweepOption, ZipOption

AnimationOption = Annotated[str, typer.Option(
    "--output", "-o", metavar="FILE", show_default=False, help="Animation file: .gif (Pillow) or .mp4 (ffmpeg).")]
SimulateFlag = Annotated[bool, typer.Option(
    "--simulate", help="Animate a simulation (the file's analysis.simulate, --t-end, --dt) instead of a sweep.")]
FpsOption = Annotated[float, typer.Option("--fps", min=0.1, max=120, help="Frames per second.")]
FramesOption = Annotated[int, typer.Option(
    "--frames", min=1, help="At most N frames, evenly subsampled from the sweep or the simulation.")]
TEndOption = Annotated[float | None, typer.Option(
    "--t-end", help="With --simulate: duration in seconds.", show_default=False)]
DpiOption = Annotated[float, typer.Option("--dpi", min=10, max=600, help="Resolution of the frames.")]
DtOption = Annotated[float | None, typer.Option("--dt", help="With --simulate: time step in seconds.",
                                                show_default=False)]


def animate(file: MechanismFile, output: AnimationOption, sweep: SweepOption = None, set_: SetOption = None,
            zip_: ZipOption = False, simulate: SimulateFlag = False, t_end: TEndOption = None, dt: DtOption = None,
            fps: FpsOption = 25.0, frames: FramesOption = 120, labels: LabelsOption = False,
            view: ViewOption = None, dpi: DpiOption = 80.0, quiet: QuietOption = False) -> None:
    """Animate the mechanism over a sweep or a simulation, with the traced effector path.
    Example: linkcli animate mechanisms/fourbar.yaml --sweep crank_pin=0:360:5 -o fourbar.gif"""
    from linkcli.errors import AnalysisInputError
    from linkcli.plot.animate import animate as write_animation
    from linkcli.plot.animate import check_animation_path
    from linkcli.plot.scene import q_from_table

    check_animation_path(output)
    view_angles = parse_view(view)
    if simulate and (sweep or zip_):
        raise AnalysisInputError("--simulate animates a simulation: leave out --sweep and --zip")
    if not simulate and (t_end is not None or dt is not None):
        raise AnalysisInputError("--t-end and --dt need --simulate")
    loaded, mech = load_and_compile(file)
    if not simulate:  # --simulate: the warnings of the step run (the spring-step check at --dt)
        print_diagnostics(loaded.warnings, quiet)
    if simulate:
        table, n_failed, failure = _simulation(file, loaded, mech, set_, t_end, dt, quiet)
        t = table["t [s]"]
        captions = [f"t = {v:.3f} s" for v in t]
    else:
        table, n_failed, failure = _sweep(file, loaded, mech, set_, sweep, zip_, quiet)
        captions = _input_captions(mech, table)
    q = q_from_table(mech, table)
    n = write_animation(mech, q, output, fps=fps, frames=frames, captions=captions, labels=labels,
                        view=view_angles, dpi=dpi)
    if not quiet:
        echo_err(f"wrote {output} ({n} frames at {fps:g} fps)")
    finish(n_failed, table.n, quiet=quiet, what="simulations" if simulate else "points", first_failure=failure)


def _sweep(file, loaded, mech, set_, sweep, zip_, quiet):
    from linkcli.analyses.solve import run_solve
    from linkcli.errors import AnalysisInputError

    from .solve import build_request

    req = build_request(loaded.model, set_=set_, sweep=sweep, zip_=zip_, rate=None, acceleration=None,
                        output_frames=None, mech=mech)
    if not req.sweeps:
        raise AnalysisInputError(f"{file} has no sweep under analysis.solve: give one, e.g. "
                                 f"--sweep {mech.q_names[int(mech.q_actuated[0])] if mech.n_actuated else 'JOINT'}"
                                 "=FROM:TO:STEP (or use --simulate)")
    outcome = run_solve(mech, req, loaded)
    if not quiet:
        for message in outcome.messages:
            echo_err(f"{file}: warning: {message}")
    return outcome.table, outcome.n_failed, outcome.failure


def _simulation(file, loaded, mech, set_, t_end, dt, quiet):
    from dataclasses import replace

    from linkcli.analyses.inputs import parse_assignment
    from linkcli.analyses.simulate import request_from_defaults, run_diagnostics, run_simulate
    from linkcli.errors import AnalysisInputError

    req = request_from_defaults(loaded.model.analysis.simulate)
    overrides = {k: v for k, v in (("t_end", t_end), ("dt", dt)) if v is not None}
    for key, value in overrides.items():
        if not (value > 0 and value < float("inf")):  # also refuses nan
            option = "--" + key.replace("_", "-")
            raise AnalysisInputError(f"{option} {value:g}: {option} must be a positive finite number")
    req = replace(req, **overrides, set={**req.set, **dict(parse_assignment(s, "--set", mech) for s in set_ or [])})
    print_diagnostics(run_diagnostics(loaded, req), quiet)
    outcome = run_simulate(mech, req, loaded)
    if not quiet:
        for message in outcome.messages:
            echo_err(f"{file}: warning: {message}")
    if outcome.table is None or outcome.table.n == 0:
        message = outcome.summary.get("message", "the simulation did not start")
        echo_err(f"{file}: error: {message}; no animation written")
        raise typer.Exit(1)
    return outcome.table, outcome.n_failed, outcome.failure


def _input_captions(mech, table) -> list[str]:
    """Per row: the actuated values that change over the sweep, in file units."""
    import numpy as np

    cols = []
    for i in mech.q_actuated:
        rot = mech.q_is_rotation[i]
        unit = mech.angle_unit if rot else mech.length_unit
        v = np.asarray(table[f"{mech.q_names[i]}.q [{unit}]"], float)
        if np.nanmax(v) > np.nanmin(v):
            cols.append((mech.q_names[i], unit, v))
    return [", ".join(f"{name} = {v[r]:.4g} {unit}" for name, unit, v in cols) for r in range(table.n)]


def register(app: typer.Typer) -> None:
    app.command("animate")(animate)
