"""Inverse kinematics for one or more targets -> ResultTable (one row per target).

Targets are given in the file's units: planar ``x, y[, angle]``, spatial ``x, y, z[, roll,
pitch, yaw]``. Consecutive targets start from the previous solution (a path stays on its
branch). Every answer is verified by forward kinematics and reported with its residual.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core import transforms as tf
from ..core.inverse import IKStatus, solve_ik
from ..core.loop_closure import loop_gaps
from ..core.mechanism import CompiledMechanism
from ..core.sweep import configuration_at
from ..errors import AnalysisInputError
from ..results import ResultTable
from .inputs import actuated_values
from .outcome import AnalysisOutcome, Event


@dataclass(frozen=True)
class IKRequest:
    targets: list[list[float]]  # file units
    mode: str | None = None  # full | position | xy; None: full when an orientation is given
    guess: dict[str, float] = field(default_factory=dict)  # starting actuated values
    tol: float = 1e-9


def target_pose(mech: CompiledMechanism, values: list[float]) -> tuple[np.ndarray, bool]:
    """(T_world_target (4, 4) SI, orientation given?) from file-unit numbers."""
    ls, as_ = mech.length_scale, mech.angle_scale
    if mech.planar:
        if len(values) not in (2, 3):
            raise AnalysisInputError(f"--target {values}: a planar target is X,Y or X,Y,ANGLE")
        angle = values[2] * as_ if len(values) == 3 else 0.0
        return tf.planar_transform(values[0] * ls, values[1] * ls, angle), len(values) == 3
    if len(values) not in (3, 6):
        raise AnalysisInputError(f"--target {values}: a spatial target is X,Y,Z or X,Y,Z,ROLL,PITCH,YAW")
    R = tf.rpy_to_matrix(np.asarray(values[3:]) * as_) if len(values) == 6 else np.eye(3)
    return tf.make_transform(R, np.asarray(values[:3]) * ls), len(values) == 6


def check_target_mode(mech: CompiledMechanism, values: list[float], mode: str | None) -> None:
    """Refuse a target and a ``--mode`` that contradict each other (AnalysisInputError, exit 2):
    ``full`` without an orientation (it would be solved for angle 0 unasked), or an orientation
    with ``position``/``xy`` (it would be ignored)."""
    oriented = len(values) == (3 if mech.planar else 6)
    given = ",".join(f"{v:g}" for v in values)
    position = values[:2] if mech.planar else values[:3]
    if mode == "full" and not oriented and len(values) == len(position):
        example = ",".join(f"{v:g}" for v in position) + (",0" if mech.planar else ",0,0,0")
        what = "ANGLE" if mech.planar else "ROLL,PITCH,YAW"
        raise AnalysisInputError(
            f"--target {given} --mode full: full mode fits the tool's orientation too, and this target gives "
            f"none; add the orientation ({what} in {mech.angle_unit}, e.g. --target {example}) or use --mode "
            "position")
    if mode in ("position", "xy") and oriented:
        rest = ",".join(f"{v:g}" for v in values[len(position):])
        raise AnalysisInputError(
            f"--target {given} --mode {mode}: {mode} mode fits the tool's position only, so the orientation "
            f"{rest} {mech.angle_unit} would be ignored; drop it (--target {','.join(f'{v:g}' for v in position)}) "
            "or use --mode full")


def check_guess_limits(mech: CompiledMechanism, guess: dict[str, float], a0: np.ndarray) -> None:
    """Refuse a ``--guess`` outside its joint's ``limits`` (AnalysisInputError, exit 2): the solver
    keeps every joint within its limits, so it could not start there. ``a0`` (n_act,) SI."""
    for k, i in enumerate(mech.q_actuated):
        name = mech.q_names[i]
        lo, hi = mech.q_lower[i], mech.q_upper[i]
        if name not in guess or lo <= a0[k] <= hi:
            continue
        rot = bool(mech.q_is_rotation[i])
        scale, unit = (mech.angle_scale, mech.angle_unit) if rot else (mech.length_scale, mech.length_unit)
        lo_f, hi_f = lo / scale, hi / scale
        nearest = lo_f if a0[k] < lo else hi_f
        raise AnalysisInputError(
            f"--guess {name}={guess[name]:g}: outside the joint's limits [{lo_f:g}, {hi_f:g}] {unit}; ik keeps "
            f"every joint within its limits, so start inside them (e.g. --guess {name}={nearest:g})")


def run_ik(mech: CompiledMechanism, req: IKRequest, loaded=None) -> AnalysisOutcome:
    """Solve every target in turn: one case per target, failed when not reached (``unreachable``
    and ``no_assembly`` events say why)."""
    if not req.targets:
        raise AnalysisInputError("give at least one --target")
    for values in req.targets:  # every target checked before any is solved
        check_target_mode(mech, values, req.mode)
    a0 = actuated_values(mech, req.guess, "--guess", default=mech.q_init[mech.q_actuated])
    check_guess_limits(mech, req.guess, a0)
    start = configuration_at(mech, a0)  # the start in the assembly mode of the file's estimate
    q = start.q if start.status == 0 else mech.q_init.copy()
    rows = []
    for values in req.targets:
        T, oriented = target_pose(mech, values)
        mode = req.mode or ("full" if oriented else "position")
        res = solve_ik(mech, T, q, mode=mode, tol=req.tol)
        rows.append((values, mode, res))
        if res.status == IKStatus.CONVERGED:
            q = res.q
    table = ResultTable.for_mechanism(mech, loaded, n=len(rows), analysis="ik", solver={"tol": req.tol})
    width = 3 if mech.planar else 6
    names = ("x", "y", "angle") if mech.planar else ("x", "y", "z", "roll", "pitch", "yaw")
    targets = np.full((len(rows), width), np.nan)
    for i, (values, _, _) in enumerate(rows):
        targets[i, : len(values)] = values
    for k, name in enumerate(names):
        unit = mech.length_unit if k < (2 if mech.planar else 3) else mech.angle_unit
        table.add("target", name, unit, targets[:, k])
    table.add("", "mode", "", [m for _, m, _ in rows])
    # a row whose loops do not close has no pose to show: its joint and reached columns are empty
    posed = np.array([r.status != IKStatus.NO_ASSEMBLY for _, _, r in rows])
    table.add_q(mech.q_names, np.where(posed[:, None], np.array([r.q for _, _, r in rows]), np.nan),
                mech.q_is_rotation)
    T_reached = np.where(posed[:, None, None], np.array([r.T_reached for _, _, r in rows]), np.nan)
    p = T_reached[:, :3, 3]
    for k, axis in enumerate("xy" if mech.planar else "xyz"):
        table.add_length("reached", axis, p[:, k])
    if mech.planar:
        table.add_angle("reached", "angle", tf.planar_pose(T_reached)[:, 2])
    else:
        rpy = tf.matrix_to_rpy(T_reached[:, :3, :3])
        for k, name in enumerate(("roll", "pitch", "yaw")):
            table.add_angle("reached", name, rpy[:, k])
    pos_err = np.array([np.linalg.norm(r.task_residual[np.asarray(_position_rows(mech, m))]) if ok else np.nan
                        for (_, m, r), ok in zip(rows, posed, strict=True)])
    table.add_length("", "position_error", pos_err)
    # full mode fits the orientation too: its error is the rotation angle between the target's and
    # the reached tool frame (|log(R_target^T R_reached)|, file angle unit; empty on rows that fit
    # the position only); a column only when some target asks for an orientation
    full = np.array([m == "full" for _, m, _ in rows]) & posed
    orient_err = np.full(len(rows), np.nan)
    if full.any():
        R_target = np.array([target_pose(mech, v)[0][:3, :3] for v, _, _ in rows])
        R_error = np.swapaxes(R_target[full], -1, -2) @ T_reached[full, :3, :3]
        orient_err[full] = np.linalg.norm(tf.log_so3(R_error), axis=-1)
        table.add_angle("", "orientation_error", orient_err)
    # one length (file unit): each loop's largest misfit, angular ones times the mechanism size
    gaps = loop_gaps(mech, np.array([r.q for _, _, r in rows]))
    table.add_length("", "loop_residual", gaps.max(axis=-1, initial=0.0))
    table.add("", "iterations", "", np.array([r.iterations for _, _, r in rows]))
    table.add("", "status", "", [r.status.name.lower() for _, _, r in rows])
    failed = sum(r.status != IKStatus.CONVERGED for _, _, r in rows)
    events: list[Event] = []
    for k, ((values, mode, r), err, turn) in enumerate(zip(rows, pos_err, orient_err, strict=True)):
        target = f"target {k + 1} ({', '.join(f'{v:g}' for v in values)})"
        if r.status == IKStatus.UNREACHABLE:
            turned = (f" and turned {turn / mech.angle_scale:.9g} {mech.angle_unit} from it (orientation_error)"
                      if np.isfinite(turn) else "")
            events.append(Event("unreachable", f"{target} is unreachable in {mode} mode: the closest pose reached is "
                                f"{err / mech.length_scale:.9g} {mech.length_unit} away (position_error){turned}", k,
                                {"position_error_m": float(err)}
                                | ({"orientation_error_rad": float(turn)} if np.isfinite(turn) else {})))
        elif r.status == IKStatus.NO_ASSEMBLY:
            events.append(Event("no_assembly", f"{target}: no pose closes the loops", k))
    table.metadata["events"] = [e.message for e in events]
    return AnalysisOutcome.of(table, len(rows), failed, events, what="targets")


def _position_rows(mech: CompiledMechanism, mode: str) -> list[int]:
    """Indices of the position components within a task residual of ``mode``."""
    if mode == "xy" or mech.planar:
        return [0, 1]
    return [0, 1, 2]
