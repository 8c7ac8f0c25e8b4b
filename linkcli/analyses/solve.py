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
from ..core.loop_closure import STATUS_TEXT, Status
from ..core.mechanism import CompiledMechanism
from ..core.planar_metrics import fourbar_loops, grashof_class, transmission_angle
from ..core.sweep import SweepResult, solve_sweep
from ..core.velocity import frame_motion, joint_accelerations, joint_rates
from ..errors import AnalysisInputError
from ..model.base import choices_hint
from ..results import ResultTable
from .inputs import Sweep, actuated_values, format_inputs, sweep_path


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


@dataclass(frozen=True)
class SolveOutcome:
    table: ResultTable
    n_failed: int
    messages: list[str]  # events and warnings for the user, with input values in file units


def request_from_defaults(defaults) -> SolveRequest:
    """A request from the file's ``analysis.solve`` block (None -> single point at assembly)."""
    if defaults is None:
        return SolveRequest()
    sweeps = [Sweep(name, r.from_, r.to, r.step, r.num) for name, r in defaults.sweep.items()]
    return SolveRequest(dict(defaults.set), sweeps, defaults.mode, dict(defaults.rates),
                        dict(defaults.accelerations), defaults.output_frames)


def run_solve(mech: CompiledMechanism, req: SolveRequest, loaded=None) -> SolveOutcome:
    """Solve along the request's path and build the result table (rows in output order)."""
    base = actuated_values(mech, req.set, "--set", default=mech.q_init[mech.q_actuated])
    path, order = sweep_path(mech, base, req.sweeps, req.mode)
    frames = _output_frames(mech, req.output_frames)
    res = solve_sweep(mech, path, mech.q_init, tol=req.tol, method=req.sweep_method)
    ok = res.status == Status.CONVERGED
    q = np.where(ok[:, None], res.q, np.nan)
    table = ResultTable.for_mechanism(mech, loaded, n=len(path), analysis="solve",
                                      solver={"tol": req.tol, "method": "continuation + Newton (analytic Jacobian)"})
    o = order
    table.add_q(mech.q_names, q[o], mech.q_is_rotation)
    qd = qdd = None
    if req.rates or req.accelerations:
        qd_act = actuated_values(mech, req.rates, "--rate")
        qd = joint_rates(mech, res.q, np.broadcast_to(qd_act, (len(path), mech.n_actuated)))
        table.add_q(mech.q_names, np.where(ok[:, None], qd, np.nan)[o], mech.q_is_rotation, "qd", "s")
        if req.accelerations:
            qdd_act = actuated_values(mech, req.accelerations, "--acceleration")
            qdd = joint_accelerations(mech, res.q, qd, np.broadcast_to(qdd_act, (len(path), mech.n_actuated)))
            table.add_q(mech.q_names, np.where(ok[:, None], qdd, np.nan)[o], mech.q_is_rotation, "qdd", "s^2")
    T_links = link_poses(mech, q)
    _add_effector(table, mech, effector_pose(mech, T_links), o)
    _add_frames(table, mech, frames, frame_positions(mech, T_links)[o], res.q[o], qd, qdd, ok[o], o)
    for loop in fourbar_loops(mech):
        mu = np.where(ok, transmission_angle(mech, loop, res.q), np.nan)
        table.add_angle(mech.joint_names[loop.joints[2]], "transmission", mu[o])
        table.metadata.setdefault("fourbar_loops", []).append(
            {"joints": [mech.joint_names[j] for j in loop.joints], "lengths": [v / mech.length_scale for v in loop.lengths],
             "grashof": grashof_class(*loop.lengths)})
    table.add("", "status", "", np.array([STATUS_TEXT[Status(s)] for s in res.status])[o])
    for l, j in enumerate(mech.loop_joint):
        table.add(f"loop_{mech.joint_names[j]}", "residual", "", res.residual[o, l])
    table.add("", "condition", "", res.condition[o])
    messages = sweep_messages(mech, res, path)
    table.metadata["events"] = messages
    return SolveOutcome(table, int((~ok).sum()), messages)


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


def sweep_messages(mech: CompiledMechanism, res: SweepResult, path: np.ndarray) -> list[str]:
    """Human messages for sweep events, with inputs in file units."""
    out = []
    for e in res.events:
        at = format_inputs(mech, path[e.index])
        if e.kind == "no_assembly":
            loop = mech.joint_names[mech.loop_joint[e.loop]] if mech.n_loops else "?"
            out.append(f"cannot assemble at {at}: loop closed by joint {loop} keeps a residual of {e.detail:.3g} "
                       "(m or rad); the links cannot reach (a limit position of the input lies before this point)")
        elif e.kind == "singular_crossing":
            nxt = format_inputs(mech, path[min(e.index + 1, len(path) - 1)])
            out.append(f"passes a singular configuration (dead centre or branch point) between {at} and {nxt}: "
                       "the branch after it may differ from the one before")
        elif e.kind == "singular_point":
            out.append(f"singular configuration (dead centre or branch point) at {at}: condition number "
                       f"{e.detail:.3g}; the branch after it may differ from the one before")
        elif e.kind == "reassembled":
            out.append(f"the branch could not be followed to {at}; reassembled there from the last good "
                       "configuration, possibly in another assembly mode: check the branch")
        elif e.kind == "branch_jump":
            out.append(f"branch could not be followed at {at}: the solver landed on another assembly branch")
    return out
