"""Position (and velocity/acceleration) analysis at one point or along a sweep -> ResultTable.

Columns (file units): every joint variable ``J.q``; with rates ``J.qd`` and with accelerations
``J.qdd``; the effector pose; every named frame's position (``coupler.P.x``), velocity and
acceleration when rates are given; the transmission angle of each four-bar loop; status,
per-loop residual and the condition number of the passive partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core import transforms as tf
from ..core.forward import effector_pose, frame_positions, link_poses
from ..core.limits import (
    NO_CONFIGURATION,
    OK,
    OUTSIDE_LIMITS,
    Limit,
    limit_violations,
    locate_limits,
    proven_unreachable,
    row_status,
)
from ..core.loop_closure import Status
from ..core.mechanism import CompiledMechanism
from ..core.planar_metrics import fourbar_loops, grashof_class, input_angle, input_range, transmission_angle
from ..core.sweep import SweepResult, solve_sweep
from ..core.velocity import frame_motion, joint_accelerations, joint_rates
from ..errors import AnalysisInputError
from ..model.base import choices_hint
from ..results import ResultTable
from .inputs import Sweep, actuated_scale, actuated_values, format_inputs, sweep_path
from .outcome import AnalysisOutcome, Event

#: limits are located to this many file units of the input (the promise is 1e-9; 10x margin)
LIMIT_WIDTH = 1e-10


@dataclass(frozen=True)
class SolveRequest:
    """Inputs of a solve, in the mechanism file's units (as a user types them)."""

    set: dict[str, float] = field(default_factory=dict)
    sweeps: list[Sweep] = field(default_factory=list)
    mode: str = "grid"
    rates: dict[str, float] = field(default_factory=dict)
    accelerations: dict[str, float] = field(default_factory=dict)
    output_frames: list[str] | None = None
    tol: float = 1e-10
    #: solve_sweep's ``method``: "many" when this process solves many sweeps (a study worker)
    sweep_method: str = "auto"


def request_from_defaults(defaults) -> SolveRequest:
    """A request from the file's ``analysis.solve`` block (None -> single point at assembly)."""
    if defaults is None:
        return SolveRequest()
    sweeps = [Sweep(name, r.from_, r.to, r.step, r.num) for name, r in defaults.sweep.items()]
    return SolveRequest(dict(defaults.set), sweeps, defaults.mode, dict(defaults.rates),
                        dict(defaults.accelerations), defaults.output_frames)


def run_solve(mech: CompiledMechanism, req: SolveRequest, loaded=None) -> AnalysisOutcome:
    """Solve along the request's path and build the result table (rows in output order)."""
    base = actuated_values(mech, req.set, "--set", default=mech.q_init[mech.q_actuated])
    path, order = sweep_path(mech, base, req.sweeps, req.mode)
    frames = _output_frames(mech, req.output_frames)
    res = solve_sweep(mech, path, mech.q_init, tol=req.tol, method=req.sweep_method)
    ok = res.status == Status.CONVERGED
    q = np.where(ok[:, None], res.q, np.nan)  # poses of failed rows stay NaN (nothing shown as good)
    q_columns = q.copy()
    q_columns[:, mech.q_actuated] = path  # ... but a failed row still says which input failed
    table = ResultTable.for_mechanism(mech, loaded, n=len(path), analysis="solve",
                                      solver={"tol": req.tol, "method": "continuation + Newton (analytic Jacobian)"})
    o = order
    table.add_q(mech.q_names, q_columns[o], mech.q_is_rotation)
    qd = qdd = None
    if req.rates or req.accelerations:
        qd_act = actuated_values(mech, req.rates, "--rate")
        qd = joint_rates(mech, res.q, np.broadcast_to(qd_act, (len(path), mech.n_actuated)))
        table.add_q(mech.q_names, np.where(ok[:, None], qd, np.nan)[o], mech.q_is_rotation, "qd", "s")
        if req.accelerations:
            qdd_act = actuated_values(mech, req.accelerations, "--acceleration")
            qdd = joint_accelerations(mech, res.q, qd, np.broadcast_to(qdd_act, (len(path), mech.n_actuated)))
            table.add_q(mech.q_names, np.where(ok[:, None], qdd, np.nan)[o], mech.q_is_rotation, "qdd", "s^2")
    T_eff, p_frames = _poses(mech, q)
    _add_effector(table, mech, T_eff, o)
    _add_frames(table, mech, frames, p_frames[o], res.q[o], qd, qdd, ok[o], o)
    del T_eff, p_frames
    limits = locate_limits(mech, path, res.q, res.status,
                           [e.index for e in res.events if e.kind == "singular_crossing"],
                           width=LIMIT_WIDTH * actuated_scale(mech), tol=req.tol)
    inv = np.argsort(o)  # solve index -> output row
    table.metadata["limits"] = [_limit_record(mech, lim, inv) for lim in limits]
    named: set[str] = set()
    for loop in fourbar_loops(mech):
        mu = np.where(ok, _by_chunks(lambda qc, loop=loop: transmission_angle(mech, loop, qc), res.q), np.nan)
        # rings sharing their coupler-output joint (loops sharing a pin, e.g. a coupling rod
        # over three wheels) are told apart by both coupler joints: pin2-pin3.transmission
        entity = mech.joint_names[loop.joints[2]]
        if entity in named:
            entity = f"{mech.joint_names[loop.joints[1]]}-{entity}"
        named.add(entity)
        table.add_angle(entity, "transmission", mu[o])
        table.metadata.setdefault("fourbar_loops", []).append(_fourbar_record(mech, loop, limits))
    status_text = row_status(mech, path, res.status)
    outside = limit_violations(mech, path, res.q, ok, req.tol)
    status_text[(status_text == OK) & outside.any(axis=1)] = OUTSIDE_LIMITS  # values kept: the user sees where
    table.add("", "status", "", status_text[o])
    for li, j in enumerate(mech.loop_joint):
        table.add(f"loop_{mech.joint_names[j]}", "residual", "", res.residual[o, li])
    table.add("", "condition", "", res.condition[o])
    outside_events = [Event("outside_limits", m) for m in limit_warnings(mech, path, res.q, outside)]
    events = (outside_events + sweep_events(mech, res, path, status_text, limits)
              + [Event("limit", m) for m in limit_messages(mech, limits)])
    table.metadata["events"] = [e.message for e in events]
    table.metadata["status_counts"] = {k: int(v) for k, v in zip(*np.unique(status_text, return_counts=True),
                                                                 strict=True)}
    # the first failure a user should read: a point that cannot assemble, else a joint outside its limits
    failure = next((e.message for e in events if e.kind == "no_assembly"),
                   next((e.message for e in outside_events), None))
    # no `result`: the table holds every row, and a large sweep should not keep its SweepResult alive too
    return AnalysisOutcome.of(table, len(path), int((status_text != OK).sum()), events, failure=failure,
                              what="points")


#: rows per block of the pose computations: link poses are (rows, n_links, 4, 4) arrays
#: (~0.8 KB per row for a four-bar), so long sweeps compute them block by block
_POSE_ROWS = 32_768


def _by_chunks(f, q: np.ndarray) -> np.ndarray:
    """``f(q)`` evaluated on blocks of _POSE_ROWS rows of q (n, n_q), results stacked."""
    if len(q) <= _POSE_ROWS:
        return f(q)
    return np.concatenate([f(q[s:s + _POSE_ROWS]) for s in range(0, len(q), _POSE_ROWS)])


def _poses(mech: CompiledMechanism, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T_world_tool (n, 4, 4), frame origins (n, n_frames, 3) m) at q (n, n_q), through link
    poses computed block by block (bounded memory for long sweeps)."""
    n = len(q)
    T_eff = np.empty((n, 4, 4))
    p_frames = np.empty((n, mech.n_frames, 3))
    for s in range(0, n, _POSE_ROWS):
        T = link_poses(mech, q[s:s + _POSE_ROWS])
        T_eff[s:s + _POSE_ROWS] = effector_pose(mech, T)
        p_frames[s:s + _POSE_ROWS] = frame_positions(mech, T)
    return T_eff, p_frames


def _output_frames(mech: CompiledMechanism, names: list[str] | None) -> list[int]:
    named = [i for i, n in enumerate(mech.frame_names) if "." in n]
    if names is None:
        return named
    out = []
    for n in names:
        if n not in mech.frame_names:
            raise AnalysisInputError(f"--output-frames: unknown frame '{n}'. "
                                     + choices_hint("frames", n, [mech.frame_names[i] for i in named]))
        out.append(mech.frame_names.index(n))
    return out


def _add_effector(table: ResultTable, mech: CompiledMechanism, T_path: np.ndarray, o: np.ndarray) -> None:
    """Effector pose columns; ``T_path`` in solve order (consecutive points are neighbours,
    so the planar angle is unwrapped along it: continuous past +-180 deg), rows in order ``o``."""
    T = T_path[o]
    p = T[:, :3, 3]
    if mech.planar:
        table.add_length("effector", "x", p[:, 0])
        table.add_length("effector", "y", p[:, 1])
        angle = tf.planar_pose(T_path)[:, 2]
        finite = np.isfinite(angle)
        angle[finite] = np.unwrap(angle[finite])
        table.add_angle("effector", "angle", angle[o])
        return
    for k, axis in enumerate("xyz"):
        table.add_length("effector", axis, p[:, k])
    quat = tf.matrix_to_quaternion(T[:, :3, :3])
    for k, c in enumerate(("qw", "qx", "qy", "qz")):
        table.add("effector", c, "", quat[:, k])
    rpy = tf.matrix_to_rpy(T[:, :3, :3])
    for k, c in enumerate(("roll", "pitch", "yaw")):
        table.add_angle("effector", c, rpy[:, k])


def _add_frames(table, mech, frames, p_frames, q, qd, qdd, ok, o) -> None:
    axes = "xy" if mech.planar else "xyz"
    v = a = None
    if qd is not None:
        v, _, a = frame_motion(mech, q, qd[o], None if qdd is None else qdd[o])
    for f in frames:
        name = mech.frame_names[f]
        for k, axis in enumerate(axes):
            table.add_length(name, axis, p_frames[:, f, k])
        if v is not None:
            for k, axis in enumerate(axes):
                table.add_length(name, f"v{axis}", np.where(ok, v[:, f, k], np.nan), per="s")
        if a is not None:
            for k, axis in enumerate(axes):
                table.add_length(name, f"a{axis}", np.where(ok, a[:, f, k], np.nan), per="s^2")


def sweep_messages(mech: CompiledMechanism, res: SweepResult, path: np.ndarray,
                   status_text: np.ndarray | None = None, limits: list[Limit] | None = None) -> list[str]:
    """The messages of :func:`sweep_events`."""
    return [e.message for e in sweep_events(mech, res, path, status_text, limits)]


def sweep_events(mech: CompiledMechanism, res: SweepResult, path: np.ndarray,
                 status_text: np.ndarray | None = None, limits: list[Limit] | None = None) -> list[Event]:
    """Typed events of a sweep (kind = the core event's kind; ``index`` the point in solve
    order), messages with inputs in file units (``status_text``: the rows' statuses from
    :func:`linkcli.core.limits.row_status`, computed when None)."""
    out: list[Event] = []

    def add(e, message: str) -> None:
        out.append(Event(e.kind, message, int(e.index), {"detail": float(e.detail), "loop": int(e.loop)}))

    if status_text is None:
        status_text = row_status(mech, path, res.status)
    for e in res.events:
        at = format_inputs(mech, path[e.index])
        if e.kind == "no_assembly" and status_text[e.index] == NO_CONFIGURATION:
            _, loop_idx, excess = proven_unreachable(mech, path[e.index][None])
            loop = mech.joint_names[mech.loop_joint[loop_idx[0]]]
            add(e, f"cannot assemble at {at}: no configuration exists (status no_configuration): the loop "
                       f"closed by joint {loop} cannot reach, its longest side is {excess[0] / mech.length_scale:.3g} "
                       f"{mech.length_unit} longer than the sum of the others")
        elif e.kind == "no_assembly":
            loop = mech.joint_names[mech.loop_joint[e.loop]] if mech.n_loops else "?"
            add(e, f"cannot assemble at {at}: the solver found no configuration (status not_converged): loop "
                       f"closed by joint {loop} keeps a residual of {e.detail:.3g} (m or rad); none is proven not "
                       "to exist (a limit position of the input may lie before this point)")
        elif e.kind == "singular_crossing":
            nxt = format_inputs(mech, path[min(e.index + 1, len(path) - 1)])
            where = next((f", at {format_inputs(mech, lim.at, digits=12)} (located to "
                          f"{_located_to(mech, lim):.1g} of the input by bisection)"
                          for lim in limits or [] if lim.kind == "singular_crossing" and lim.index == e.index), "")
            add(e, f"passes a singular configuration (dead centre or branch point) between {at} and {nxt}{where}: "
                       "the branch after it may differ from the one before")
        elif e.kind == "singular_point":
            add(e, f"singular configuration (dead centre or branch point) at {at}: condition number "
                       f"{e.detail:.3g}; the branch after it may differ from the one before")
        elif e.kind == "reassembled":
            add(e, f"the branch could not be followed to {at}; reassembled there from the last good "
                       "configuration, possibly in another assembly mode: check the branch")
        elif e.kind == "branch_jump":
            add(e, f"branch could not be followed at {at}: the solver landed on another assembly branch")
    return out


def _inputs_dict(mech: CompiledMechanism, a: np.ndarray) -> dict[str, float]:
    """{actuated variable: value in file units} of actuated values a (n_act,) SI."""
    scale = actuated_scale(mech)
    return {mech.q_names[i]: float(a[k] / scale[k]) for k, i in enumerate(mech.q_actuated)}


def _limit_record(mech: CompiledMechanism, lim: Limit, inv: np.ndarray) -> dict:
    """Metadata of a located limit: kind, the two output rows (0-based data rows) it lies
    between, the input values (file units) and the bracket width (file units)."""
    rec = {"kind": lim.kind, "rows": sorted([int(inv[lim.index]), int(inv[lim.index + 1])]),
           "inputs": _inputs_dict(mech, lim.at), "located_to": _located_to(mech, lim),
           "method": "bisection along the segment between the two rows, following the solved branch"}
    if lim.loop >= 0:
        rec["loop"] = mech.joint_names[mech.loop_joint[lim.loop]]
    return rec


def _located_to(mech: CompiledMechanism, lim: Limit) -> float:
    """Width of the final bisection bracket (file units, largest over the actuated variables)."""
    return float(np.max(np.abs(lim.beyond - lim.at) / actuated_scale(mech)))


def limit_messages(mech: CompiledMechanism, limits: list[Limit]) -> list[str]:
    """One line per located end of motion, inputs in file units (crossings are told with their
    sweep event by :func:`sweep_messages`)."""
    out = []
    for lim in limits:
        at = format_inputs(mech, lim.at, digits=12)
        to = f"(located to {_located_to(mech, lim):.1g} of the input by bisection)"
        if lim.kind == "end_of_range":
            loop = mech.joint_names[mech.loop_joint[lim.loop]]
            out.append(f"limit of motion (end_of_range) at {at} {to}: beyond it the loop closed by joint {loop} "
                       "cannot reach")
        elif lim.kind == "solver_limit":
            out.append(f"limit of the solved branch (solver_limit) at {at} {to}: beyond it no configuration was "
                       "found, none is proven not to exist")
    return out


def _fourbar_record(mech: CompiledMechanism, loop, limits: list[Limit]) -> dict:
    """Metadata of a four-bar loop: joints, lengths (file units), Grashof class, the analytic
    input range (angle of the input link from the ground line, file units; None when the input
    turns fully) and, for each located end of range, the analytic limit it was checked against."""
    rec = {"joints": [mech.joint_names[j] for j in loop.joints],
           "lengths": [v / mech.length_scale for v in loop.lengths],
           "grashof": grashof_class(*loop.lengths)}
    rng = input_range(loop)
    rec["input_range"] = None if rng is None else [v / mech.angle_scale for v in rng]
    if rng is None:
        return rec
    checks = []
    for lim in limits:
        if lim.kind != "end_of_range":
            continue
        theta = float(input_angle(mech, loop, lim.q))  # geometric input angle at the located limit
        diff = [abs((theta - r + np.pi) % (2 * np.pi) - np.pi) for r in rng]
        k = int(np.argmin(diff))
        checks.append({"inputs": _inputs_dict(mech, lim.at), "input_angle": theta / mech.angle_scale,
                       "analytic": rng[k] / mech.angle_scale, "difference": diff[k] / mech.angle_scale})
    if checks:
        rec["limit_checks"] = checks
    return rec


def limit_warnings(mech: CompiledMechanism, path: np.ndarray, q: np.ndarray, outside: np.ndarray) -> list[str]:
    """Joint values outside their ``limits`` (``outside`` (n, n_q) from
    :func:`linkcli.core.limits.limit_violations`): an input the user gave (``path`` (n, n_act)
    SI) or a passive joint the solution puts there (``q`` (n, n_q) SI). One line per joint
    naming it, its limits and the first offending value (file units)."""
    out = []
    scale = np.where(mech.q_is_rotation, mech.angle_scale, mech.length_scale)
    unit = [mech.angle_unit if r else mech.length_unit for r in mech.q_is_rotation]
    full = np.array(q, dtype=float)
    full[:, mech.q_actuated] = path
    for i in range(mech.n_q):
        lo, hi = mech.q_lower[i], mech.q_upper[i]
        bad = np.flatnonzero(outside[:, i])
        if len(bad) == 0:
            continue
        v = full[:, i]
        what = "is given" if i in mech.q_actuated else "is solved to"
        count = f" ({len(bad)} of {len(v)} points: status {OUTSIDE_LIMITS})" if len(v) > 1 else ""
        out.append(f"joint variable {mech.q_names[i]} {what} {v[bad[0]] / scale[i]:.6g} {unit[i]}, outside its limits "
                   f"[{lo / scale[i]:.6g}, {hi / scale[i]:.6g}] {unit[i]}{count}")
    return out
