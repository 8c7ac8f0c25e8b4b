"""Forces along a motion (inverse dynamics, kinetostatics) and static equilibria -> ResultTable.

Inputs in the file's units as a user types them; speeds may carry a unit (``60rpm``,
``2 rad/s``, ``0.5 m/s``: parsed by pint). The motion is the kinematic sweep of ``solve``;
each actuated input turns at its speed (``--speed``, else the file's ``analysis.forces.speed``,
else the speed of a ``constant_speed`` motion driver of that joint, else 0) with its
acceleration (default 0). ``static`` drops velocities and accelerations (kinetostatics).

Columns: joint variables and rates, then per actuated input ``J.torque [N m]`` (``J.force
[N]`` for a prismatic one), per joint its reaction on the child (world ``Fx, Fy[, Fz]``,
``Mz`` or ``Mx, My, Mz``; joint frame ``F1, F2[, F3]``, ``M3`` or ``M1..M3``; magnitude ``F``),
spring/damper forces, d'Alembert inertia loads per link, the shaking force and moment on the
ground, the power balance, the mechanical advantage (static, with loads), status.

Kernels: inverse dynamics runs the dynamics' numba kernels (kernel set ``forces`` of
:data:`linkcli.core.jit.KERNEL_SETS`), compiled or interpreted as :func:`plan_kernels` decides
(the measured "ski rental" rule of simulate); the equilibrium runs none. The kernels' modules
(:mod:`linkcli.core.kinetostatics` and the dynamics package it imports) are imported only after
that decision, inside the functions below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..core.limits import OK as OK_TEXT
from ..core.limits import SINGULAR as SINGULAR_TEXT
from ..core.limits import row_status
from ..core.loop_closure import Status
from ..core.mechanism import DRIVE_MOTION, CompiledMechanism
from ..core.sweep import solve_sweep
from ..core.velocity import joint_accelerations, joint_rates
from ..errors import AnalysisInputError, with_hint
from ..model.base import choices_hint
from ..results import ResultTable
from .inputs import InputGrid, Sweep, actuated_index, actuated_scale, format_inputs, input_grid
from .outcome import AnalysisOutcome, Event, warnings
from .solve import sweep_events

if TYPE_CHECKING:
    from ..core import kinetostatics as ks
    from ..core.jit import Plan
    from ..core.sweep import SweepResult


@dataclass(frozen=True)
class ForcesRequest:
    """Inputs of a forces analysis in the file's units. ``speeds``/``accelerations``: numbers
    (file units per s, per s^2) or strings with a unit (``"60 rpm"``). ``loads``: frame name ->
    force (N, world components) added for this analysis."""

    set: dict[str, float] = field(default_factory=dict)
    sweeps: list[Sweep] = field(default_factory=list)
    mode: str = "grid"
    speeds: dict[str, float | str] = field(default_factory=dict)
    accelerations: dict[str, float | str] = field(default_factory=dict)
    static: bool = False
    loads: dict[str, list[float | str]] = field(default_factory=dict)
    gravity: bool = True
    tol: float = 1e-10


def request_from_defaults(model) -> ForcesRequest:
    """A request from the file's ``analysis.forces`` block; its sweep defaults to the
    ``analysis.solve`` sweep (the same motion as solve)."""
    fd, sd = model.analysis.forces, model.analysis.solve
    base = sd if sd is not None else None
    sweeps = [Sweep(name, r.from_, r.to, r.step, r.num) for name, r in (base.sweep.items() if base else ())]
    req = ForcesRequest(dict(base.set) if base else {}, sweeps, base.mode if base else "grid")
    if fd is None:
        return req
    if fd.sweep or fd.set:
        sweeps = [Sweep(name, r.from_, r.to, r.step, r.num) for name, r in fd.sweep.items()]
        req = ForcesRequest(dict(fd.set), sweeps, fd.mode)
    return ForcesRequest(req.set, req.sweeps, fd.mode if fd.sweep else req.mode, dict(fd.speed),
                         dict(fd.accelerations), fd.static, {k: list(v) for k, v in fd.loads.items()}, fd.gravity)


# -- quantities with units ----------------------------------------------------------------------------
def parse_rate(text: float | str, is_rotation: bool, file_scale: float, order: int, where: str,
               units: dict[str, str] | None = None) -> float:
    """A rate (``order`` 1: per s) or acceleration (2: per s^2) in SI. A plain number (or a
    numeric string) is in the file's unit per s^order (``file_scale`` SI per file unit); a string
    may carry a unit (``60rpm``, ``2 rad/s``, ``100 deg/s^2``, ``0.5 m/s``): converted to the
    file's units (``units`` {"length", "angle"}) by :func:`linkcli.model.units.convert` (pint,
    imported only then), then to SI. A number converted from a string in the file remembers its
    kind (``Given``): a length for a rotation (or the reverse) is an error."""
    from ..model.units import JOINT_ACCEL, JOINT_RATE, Given, UnitProblem, convert

    want = "angle" if is_rotation else "length"
    kind = ""
    if isinstance(text, str):
        try:
            value = float(text)
        except ValueError:
            try:
                value = convert(text, JOINT_RATE if order == 1 else JOINT_ACCEL, units or {})
            except UnitProblem as exc:
                raise AnalysisInputError(with_hint(f"{where}: {exc}", exc.hint)) from None
            kind = value.kind
    else:
        value, kind = float(text), getattr(text, "kind", "") if isinstance(text, Given) else ""
    if kind and kind != want:
        what = ("an angular" if is_rotation else "a linear") + (" speed" if order == 1 else " acceleration")
        example = ("60rpm, 2 rad/s or 360 deg/s" if order == 1 else "10 rad/s^2") if is_rotation else \
            ("0.5 m/s or 20 mm/s" if order == 1 else "2 m/s^2")
        raise AnalysisInputError(f"{where}: {text!r} is a {kind} rate, the joint needs {what}; write e.g. {example}")
    if not np.isfinite(value):
        raise AnalysisInputError(f"{where}: {text!r} is not a finite number")
    return float(value) * file_scale


def input_rates(mech: CompiledMechanism, values: dict, order: int, option: str) -> np.ndarray:
    """(n_act,) SI rates (order 1) or accelerations (order 2) from ``{name: value}``."""
    out = np.zeros(mech.n_actuated)
    scale = actuated_scale(mech)
    for name, v in values.items():
        k = actuated_index(mech, name, option)
        rot = bool(mech.q_is_rotation[mech.q_actuated[k]])
        out[k] = parse_rate(v, rot, float(scale[k]), order, f"{option} {name}",
                            {"length": mech.length_unit, "angle": mech.angle_unit})
    return out


def default_speeds(mech: CompiledMechanism) -> dict[int, float]:
    """Actuated index -> SI speed of a ``constant_speed`` motion driver on it (the file's motor)."""
    out = {}
    for qi, kind, prof in zip(mech.driver_q, mech.driver_kind, mech.driver_profile, strict=True):
        if kind == DRIVE_MOTION and prof.kind == "constant_speed":
            out[int(np.flatnonzero(mech.q_actuated == qi)[0])] = float(prof.params["speed"])
    return out


def extra_loads(mech: CompiledMechanism, loads: dict[str, list[float]], option: str) -> list[ks.ExtraLoad]:
    """Loads at named frames (``coupler.P``: force N, world components [fx, fy(, fz)])."""
    from ..core import kinetostatics as ks

    out = []
    dim = 2 if mech.planar else 3
    named = [n for n in mech.frame_names if "." in n]
    for name, force in loads.items():
        if name not in mech.frame_names:
            raise AnalysisInputError(f"{option}: unknown frame '{name}'. " + choices_hint("frames", name, named))
        if mech.frame_link[mech.frame_names.index(name)] == 0:
            raise AnalysisInputError(f"{option} {name}: a load on the base link '{mech.link_names[0]}' does nothing; "
                                     "put it on a moving link's frame. " + choices_hint(
                                         "frames", name,
                                         [n for n in named if not n.startswith(mech.link_names[0] + ".")]))
        if len(force) != dim:
            raise AnalysisInputError(f"{option} {name}: a force needs {dim} components (N, world frame), "
                                     f"got {len(force)}")
        f3 = np.zeros(3)
        f3[:dim] = [_force(v, f"{option} {name}") for v in force]
        out.append(ks.ExtraLoad(mech.frame_names.index(name), f3, np.zeros(3)))
    return out


def _force(value: float | str, where: str) -> float:
    """A force component in N: a number, or a string with a unit (``2 kN``, pint)."""
    from ..model.units import FORCE, UnitProblem, convert

    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            try:
                value = convert(value, FORCE, {})
            except UnitProblem as exc:
                raise AnalysisInputError(with_hint(f"{where}: {exc}", exc.hint)) from None
    if not np.isfinite(value):
        raise AnalysisInputError(f"{where}: a force component must be finite, got {value!r}")
    return float(value)


# -- the analysis ------------------------------------------------------------------------------------
NO_INPUTS = {"forces": "forces needs actuated joints (the inputs that move the mechanism); mark them "
                       "`actuated: true`",
             "equilibrium": "--equilibrium needs the free inputs marked `actuated: true` (the variables that place "
                            "the mechanism)"}


def _require_inputs(mech: CompiledMechanism, analysis: str) -> None:
    if mech.n_actuated == 0:
        raise AnalysisInputError(NO_INPUTS[analysis])


def _path(mech: CompiledMechanism, req: ForcesRequest, analysis: str) -> InputGrid:
    """The inputs' path (n, n_act) SI, the same in file units as requested, and its output
    order (:func:`linkcli.analyses.inputs.input_grid`)."""
    _require_inputs(mech, analysis)
    return input_grid(mech, req.set, req.sweeps, req.mode)


def forces_work_units(mech: CompiledMechanism, n_points: int) -> float:
    """Size of inverse dynamics at ``n_points`` points for the compile decision (kernel set
    ``forces``: points x bodies)."""
    from ..core.jit import KERNEL_SETS

    return KERNEL_SETS["forces"].work_units(n_points, mech.n_links - 1)  # every link but the base is a body


def plan_kernels(mech: CompiledMechanism, req: ForcesRequest, *, equilibrium: bool = False,
                 many: bool = False) -> Plan:
    """Decide whether this process runs the kernels compiled or interpreted (before they are
    imported; idempotent): inverse dynamics projects its kernels' cost over the sweep's points
    (:func:`forces_work_units`), the equilibrium runs none (:func:`linkcli.analyses.kernels.plan`).
    ``many``: a batch worker. The returned plan's ``compile and cold`` means this run compiles."""
    if equilibrium and mech.n_actuated == 0:  # a free mechanism: freed in run_equilibrium, after this plan
        return _plan(mech, 0, True, many)
    return _planned_path(mech, req, equilibrium=equilibrium, many=many)[2]


def _freed_for_equilibrium(mech: CompiledMechanism) -> tuple[CompiledMechanism, str]:
    """A mechanism with nothing actuated (a free pendulum) with its free freedoms made the
    equilibrium's inputs (:func:`linkcli.core.kinetostatics.freed_mechanism` at the file's
    assembly estimate), and the warning that says so. A structure (no freedom) or an estimate
    whose loops do not close is an AnalysisInputError."""
    from ..core import kinetostatics as ks
    from ..core.sweep import configuration_at

    start = configuration_at(mech, np.zeros(0))
    if start.status != Status.CONVERGED:
        raise AnalysisInputError(f"{mech.name}: nothing is actuated and the loops do not close at the file's "
                                 "assembly estimate; correct the `assembly` estimate, or mark the inputs "
                                 "`actuated: true`")
    free = ks.freed_mechanism(mech, start.q)
    if free.n_actuated == 0:
        raise AnalysisInputError(NO_INPUTS["equilibrium"] + "; this mechanism has no free freedom (a structure)")
    names = ", ".join(free.q_names[k] for k in free.q_actuated)
    return free, (f"nothing is actuated: the rest position is sought over the free {names} (every freedom of a "
                  f"free mechanism); --set and --sweep may name {'it' if free.n_actuated == 1 else 'them'}")


def _plan(mech: CompiledMechanism, n_points: int, equilibrium: bool, many: bool) -> Plan:
    from .kernels import plan

    return plan(None) if equilibrium else plan("forces", forces_work_units(mech, n_points), many=many)


@dataclass(frozen=True)
class _SweptMotion:
    """What both analyses start from: the path (n, n_act) SI and its output order, the compile
    plan, the added loads, the kinematic sweep and where it assembled, the gravity override."""

    path: np.ndarray
    order: np.ndarray
    plan: Plan
    loads: list
    res: SweepResult
    ok: np.ndarray
    gravity: np.ndarray | None


def _planned_path(mech: CompiledMechanism, req: ForcesRequest, *, equilibrium: bool, many: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, Plan, np.ndarray]:
    """Check the inputs and plan the kernels: the first step of both analyses, before anything
    imports a kernel module (importing one in a process whose mode is not fixed would fix it to
    compiled and import numba). Returns the path (SI), its output order, the plan and the path
    in file units as requested (:class:`~linkcli.analyses.inputs.InputGrid`)."""
    inputs = _path(mech, req, "equilibrium" if equilibrium else "forces")
    return inputs.path, inputs.order, _plan(mech, len(inputs.path), equilibrium, many), inputs.file


def _swept_motion(mech: CompiledMechanism, req: ForcesRequest, path: np.ndarray, order: np.ndarray,
                  plan: Plan, many: bool = False) -> _SweptMotion:
    """Read the added loads and solve the kinematic sweep along ``path`` (after
    :func:`_planned_path`; the sweep kernel set plans itself: core.sweep, ``many``: a batch
    worker's many sweeps)."""
    loads = extra_loads(mech, req.loads, "--load")
    res = solve_sweep(mech, path, mech.q_init, tol=req.tol, method="many" if many else "auto")
    return _SweptMotion(path, order, plan, loads, res, res.status == Status.CONVERGED,
                        None if req.gravity else np.zeros(3))


def run_forces(mech: CompiledMechanism, req: ForcesRequest, loaded=None, many: bool = False) -> AnalysisOutcome:
    """Solve the sweep, its rates and accelerations, then the forces at every point. ``many``:
    this process runs many analyses (a batch worker: see :func:`plan_kernels`)."""
    path, order, plan, file_inputs = _planned_path(mech, req, equilibrium=False, many=many)  # first: before kernels
    from ..core import jit
    from ..core import kinetostatics as ks

    speed = np.zeros(mech.n_actuated)  # the options are checked before the sweep runs
    acc = np.zeros(mech.n_actuated)
    if not req.static:
        for k, v in default_speeds(mech).items():
            speed[k] = v
        given = input_rates(mech, req.speeds, 1, "--speed")
        for name in req.speeds:
            speed[actuated_index(mech, name, "--speed")] = given[actuated_index(mech, name, "--speed")]
        acc = input_rates(mech, req.accelerations, 2, "--acceleration")
    motion = _swept_motion(mech, req, path, order, plan, many)
    path, order, loads, res, ok, gravity = (motion.path, motion.order, motion.loads, motion.res, motion.ok,
                                            motion.gravity)
    n = len(path)
    q = np.where(ok[:, None], res.q, mech.q_init)  # finite stand-ins where the kinematics failed
    qd = np.zeros_like(q)
    qdd = np.zeros_like(q)
    if not req.static and (np.any(speed) or np.any(acc)):
        qd = joint_rates(mech, q, np.broadcast_to(speed, (n, mech.n_actuated)))
        qdd = joint_accelerations(mech, q, qd, np.broadcast_to(acc, (n, mech.n_actuated)))
    try:
        fr = ks.inverse_dynamics(mech, q, qd, qdd, ok, res.condition, extra_loads=loads, gravity=gravity)
    except ValueError as exc:
        raise AnalysisInputError(str(exc)) from None
    if fr.kernel_points:  # what this machine learns about interpreted and compile costs (core.jit)
        jit.record_run("forces", motion.plan, forces_work_units(mech, fr.kernel_points), fr.kernel_cpu_s)
    # kinematic failures named as solve names them; toggles and unbalanced idle freedoms of
    # assembled points are `singular`
    status_text = row_status(mech, path, res.status, res.other_branch).astype(object)
    status_text[(status_text == OK_TEXT) & (fr.status != ks.OK)] = SINGULAR_TEXT
    status_text = status_text.astype(str)
    events = sweep_events(mech, res, path, status_text) + warnings(fr.warnings)
    singular = np.flatnonzero(fr.status == ks.SINGULAR)
    for i in singular[:5]:
        events.append(Event("singular", f"singular configuration (toggle or dead centre) at "
                            f"{format_inputs(mech, path[i])}: no finite "
                            "input torque balances the loads there; the point has status singular", int(i)))
    messages = [e.message for e in events]
    table = _table(mech, loaded, req, file_inputs, order, res, q, qd, qdd, fr, loads, speed, acc, status_text)
    summary = summarise(mech, path, fr, req)
    table.metadata["summary"] = summary
    table.metadata["events"] = messages
    table.metadata["status_counts"] = {k: int(v) for k, v in zip(*np.unique(status_text, return_counts=True),
                                                                 strict=True)}
    n_failed = int(np.sum(status_text != OK_TEXT))
    return AnalysisOutcome.of(table, n, n_failed, events, summary, fr, what="points")


def _in_file_units(mech: CompiledMechanism, values: np.ndarray, per: str) -> dict:
    """``{input: {"value": v, "unit": "deg/s"}}`` from SI rates (n_act,): the file's length or
    angle unit per ``per`` (s or s^2), as the q columns."""
    scale = actuated_scale(mech)
    out = {}
    for k, i in enumerate(mech.q_actuated):
        unit = mech.angle_unit if mech.q_is_rotation[i] else mech.length_unit
        out[mech.q_names[i]] = {"value": float(values[k] / scale[k]), "unit": f"{unit}/{per}"}
    return out


def _table(mech, loaded, req, inputs, o, res, q, qd, qdd, fr: ks.ForcesResult, loads, speed, acc,
           status_text) -> ResultTable:
    """The forces table; ``inputs`` (n, n_act) the actuated inputs in file units as requested
    (solve order, like ``q``; ``o`` the output order)."""
    from ..core import kinetostatics as ks

    table = ResultTable.for_mechanism(
        mech, loaded, n=len(inputs), analysis="forces",
        solver={"tol": req.tol, "method": "kinematic sweep, then Newton-Euler of the bodies (dynamics model), "
                                          "one linear solve per point", "static": req.static,
                "gravity": req.gravity},
        input_speed=_in_file_units(mech, speed, "s"), input_acceleration=_in_file_units(mech, acc, "s^2"))
    good = fr.status == ks.OK
    nan = lambda a: np.where(good.reshape((-1,) + (1,) * (a.ndim - 1)), a, np.nan)[o]  # noqa: E731
    # the inputs as requested, in file units (a failed row still says which input failed)
    table.add_q(mech.q_names, nan(q), mech.q_is_rotation,
                file_values={int(i): inputs[o, k] for k, i in enumerate(mech.q_actuated)})
    if not req.static:
        table.add_q(mech.q_names, nan(qd), mech.q_is_rotation, "qd", "s")
        table.add_q(mech.q_names, nan(qdd), mech.q_is_rotation, "qdd", "s^2")
    for k, i in enumerate(mech.q_actuated):
        rot = mech.q_is_rotation[i]
        table.add(mech.q_names[i], "torque" if rot else "force", "N m" if rot else "N", fr.driver_force[o, k])
    planar = mech.planar
    f_axes, m_axes = ((0, 1), (2,)) if planar else ((0, 1, 2), (0, 1, 2))
    for j, name in enumerate(mech.joint_names):
        for a in f_axes:
            table.add(name, f"F{'xyz'[a]}", "N", fr.reaction_force[o, j, a])
        for a in m_axes:
            table.add(name, f"M{'xyz'[a]}", "N m", fr.reaction_moment[o, j, a])
        for a in f_axes:
            table.add(name, f"F{a + 1}", "N", fr.reaction_force_local[o, j, a])
        for a in m_axes:
            table.add(name, f"M{a + 1}", "N m", fr.reaction_moment_local[o, j, a])
        table.add(name, "F", "N", np.linalg.norm(fr.reaction_force[o, j], axis=-1))
    for k, name in enumerate(mech.axial_names):
        table.add_length(name, "length", fr.axial[o, k, 0])
        table.add(name, "force", "N", fr.axial[o, k, 2])
    for k, name in enumerate(mech.torsional_names):
        table.add(name, "torque", "N m", fr.torsional[o, k, 2])
    if not req.static:
        for b, name in enumerate(mech.link_names[1:]):
            for a in f_axes:
                table.add(name, f"inertia_F{'xyz'[a]}", "N", fr.inertia_force[o, b, a])
            for a in m_axes:
                table.add(name, f"inertia_M{'xyz'[a]}", "N m", fr.inertia_moment[o, b, a])
    for a in f_axes:
        table.add("shaking", f"F{'xyz'[a]}", "N", fr.shaking_force[o, a])
    table.add("shaking", "F", "N", np.linalg.norm(fr.shaking_force[o], axis=-1))
    for a in m_axes:
        table.add("shaking", f"M{'xyz'[a]}", "N m", fr.shaking_moment[o, a])
    if not req.static:
        table.add("power", "input", "W", fr.power_input[o])
        table.add("power", "kinetic_rate", "W", fr.kinetic_rate[o])
        table.add("power", "applied", "W", fr.power_applied[o])
        table.add("power", "balance_error", "W", (fr.power_input + fr.power_applied - fr.kinetic_rate)[o])
    if req.static and loads and mech.n_actuated == 1:
        rot = mech.q_is_rotation[mech.q_actuated[0]]
        # |load| / the input torque that holds the added loads alone (virtual work), not the
        # total driver torque (which also holds gravity, springs and the file's loads)
        load = np.linalg.norm(np.sum([ld.force for ld in loads], axis=0))
        tau_load = np.full(len(q), np.nan)
        good = fr.status == ks.OK
        if good.any():
            tau_load[good] = ks.load_holding(mech, q[good], loads)[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            ma = load / np.abs(tau_load)
        # a dead centre: the holding torque vanishes to round-off (1.1e15 instead of inf). The
        # same threshold as every singular test: an advantage times the input's lever (the
        # mechanism size for a crank, 1 for a slide) above SINGULAR_CONDITION is infinite
        from ..core.loop_closure import SINGULAR_CONDITION, mechanism_size

        lever = mechanism_size(mech) if rot else 1.0
        ma[np.isfinite(tau_load) & (ma * lever > SINGULAR_CONDITION)] = np.inf
        table.add("", "mechanical_advantage", "N/(N m)" if rot else "", ma[o])
    table.add("", "status", "", status_text[o])
    table.add("", "condition", "", res.condition[o])
    table.add("", "balance_residual", "N", fr.balance_residual[o])
    return table


def _stats(values: np.ndarray) -> tuple[float, float, int]:
    """(peak |value|, RMS, index of the peak) over the finite values (NaN, NaN, -1 if none)."""
    v = np.abs(values)
    fin = np.isfinite(v)
    if not fin.any():
        return float("nan"), float("nan"), -1
    i = int(np.nanargmax(np.where(fin, v, -np.inf)))
    return float(v[i]), float(np.sqrt(np.mean(v[fin] ** 2))), i


def summarise(mech: CompiledMechanism, path: np.ndarray, fr: ks.ForcesResult, req: ForcesRequest) -> dict:
    """Peak and RMS input torque/force (RMS over the sweep points: over the input angle for a
    uniform sweep), largest joint force and where, shaking force and moment peaks and RMS."""
    from ..core import kinetostatics as ks

    where = lambda i: format_inputs(mech, path[i]) if i >= 0 else ""  # noqa: E731
    inputs = {}
    for k, qi in enumerate(mech.q_actuated):
        peak, rms, i = _stats(fr.driver_force[:, k])
        rot = bool(mech.q_is_rotation[qi])
        inputs[mech.q_names[qi]] = {"unit": "N m" if rot else "N", "peak": peak, "rms": rms, "at": where(i)}
    mag = np.linalg.norm(fr.reaction_force, axis=-1)  # (n, n_j)
    pin = {"joint": "", "force_N": float("nan"), "at": ""}
    if np.isfinite(mag).any():
        i, j = np.unravel_index(int(np.nanargmax(np.where(np.isfinite(mag), mag, -np.inf))), mag.shape)
        pin = {"joint": mech.joint_names[j], "force_N": float(mag[i, j]), "at": where(int(i))}
    f_peak, f_rms, fi = _stats(np.linalg.norm(fr.shaking_force, axis=-1))
    m_peak, m_rms, mi = _stats(np.linalg.norm(fr.shaking_moment, axis=-1))
    return {"points": int(len(path)), "ok": int(np.sum(fr.status == ks.OK)),
            "singular": int(np.sum(fr.status == ks.SINGULAR)), "static": req.static, "inputs": inputs,
            "largest_joint_force": pin,
            "shaking_force_N": {"peak": f_peak, "rms": f_rms, "at": where(fi)},
            "shaking_moment_Nm": {"peak": m_peak, "rms": m_rms, "at": where(mi)}}


def summary_lines(summary: dict) -> list[str]:
    """The summary as a few human lines (for stderr)."""
    if "equilibria" in summary:
        return [f"rest position at {e['at']}: {e['stability']}" if e.get("converged", True)
                else f"no rest position: the search stopped at {e['at']}" for e in summary["equilibria"]]
    lines = []
    for name, s in summary["inputs"].items():
        lines.append(f"{name}: peak {s['peak']:.6g} {s['unit']} (at {s['at']}), RMS {s['rms']:.6g} {s['unit']}")
    p = summary["largest_joint_force"]
    if p["joint"]:
        lines.append(f"largest joint force {p['force_N']:.6g} N in joint {p['joint']} (at {p['at']})")
    f, m = summary["shaking_force_N"], summary["shaking_moment_Nm"]
    lines.append(f"shaking force peak {f['peak']:.6g} N, RMS {f['rms']:.6g} N; shaking moment peak "
                 f"{m['peak']:.6g} N m, RMS {m['rms']:.6g} N m")
    return lines


def _holding_text(mech: CompiledMechanism, holding: np.ndarray) -> str:
    """The holding torques/forces of the inputs, SI with units, for a message."""
    return ", ".join(f"{mech.q_names[i]} {h:.4g} {'N m' if mech.q_is_rotation[i] else 'N'}"
                     for i, h in zip(mech.q_actuated, holding, strict=True))


def run_equilibrium(mech: CompiledMechanism, req: ForcesRequest, loaded=None) -> AnalysisOutcome:
    """Rest positions with the inputs free: one row per equilibrium found along the sweep (one
    input: every sign change of the holding torque), or near the start point (no sweep, or
    several inputs). Columns: joint variables, holding torque left (the residual), reduced
    stiffness (N m/rad or N/m), stability, status."""
    messages: list[str] = []  # notes of the search
    if mech.n_actuated == 0:  # README: free freedoms are searched too, with a warning
        _plan(mech, 0, True, False)  # first: the plan (no kernel) before freeing imports the kernels' modules
        mech, note = _freed_for_equilibrium(mech)
        messages.append(note)
    path, order, plan, _ = _planned_path(mech, req, equilibrium=True)  # first: before any kernel import
    from ..core import kinetostatics as ks

    motion = _swept_motion(mech, req, path, order, plan)
    path, loads, res, ok, gravity = motion.path, motion.loads, motion.res, motion.ok, motion.gravity
    if res.other_branch is not None:
        # rows off the estimate's assembly mode (solve's failed other_branch rows) start no search:
        # they gave rest positions of the other mode, status ok, depending on where the sweep began
        ok = ok & ~res.other_branch
    sweep_evs = sweep_events(mech, res, path)
    if ok.any():
        # every free coordinate must be at rest, not only the actuated ones: idle freedoms (a
        # free hinge) join the search as inputs
        free = ks.freed_mechanism(mech, res.q[int(np.flatnonzero(ok)[0])])
        if free.n_actuated > mech.n_actuated:
            added = [mech.q_names[k] for k in free.q_actuated if k not in set(mech.q_actuated.tolist())]
            messages.append(f"{', '.join(added)} not actuated but free: the rest position is sought over "
                            f"{', '.join(free.q_names[k] for k in free.q_actuated)}")
            mech = free
            path = res.q[:, mech.q_actuated]
    # (the options were checked above: a ValueError from the search would be a bug, exit 70, never
    # reported as a bad option; a search that finds no rest position says so in its row)
    eqs = ks.find_equilibria(mech, path, res.q, ok, extra_loads=loads, gravity=gravity, tol=req.tol)
    if len(eqs) == 1 and eqs[0].stability == "neutral everywhere":
        messages.append("the holding torque vanishes along the whole sweep: the mechanism is balanced (neutral "
                        "equilibrium everywhere); the first point is reported")
    if not ok.any():
        messages.append("no rest position searched: no point of the sweep is assembled in the mode of the file's "
                        "assembly estimate (sweep where that mode reaches, or start nearer with --set)")
    elif not eqs:
        messages.append("no rest position found: the holding torque keeps its sign along the sweep "
                        "(sweep a wider range, or start nearer with --set)")
    n = len(eqs)
    table = ResultTable.for_mechanism(mech, loaded, n=n, analysis="equilibrium",
                                      solver={"tol": req.tol, "method": "Newton on the holding torque with the "
                                              "analytic reduced stiffness", "gravity": req.gravity})
    q = np.array([e.q for e in eqs]).reshape(n, mech.n_q)
    table.add_q(mech.q_names, q, mech.q_is_rotation)
    for k, i in enumerate(mech.q_actuated):
        rot = mech.q_is_rotation[i]
        table.add(mech.q_names[i], "holding_torque" if rot else "holding_force", "N m" if rot else "N",
                  np.array([e.holding[k] for e in eqs]))
        table.add(mech.q_names[i], "stiffness", "N m/rad" if rot else "N/m",
                  np.array([e.stiffness[k, k] for e in eqs]))
    if mech.n_actuated > 1:
        table.add("stiffness", "min_eigenvalue", "", np.array([np.linalg.eigvalsh(e.stiffness)[0] for e in eqs]))
    table.add("", "stability", "", np.array([e.stability for e in eqs], dtype=str).reshape(n))
    table.add("", "status", "", np.array(["ok" if e.converged else "max_iter" for e in eqs], dtype=str).reshape(n))
    failed = sum(not e.converged for e in eqs)
    events = sweep_evs + warnings(messages)
    for k, e in enumerate(eqs):
        if not e.converged:
            why = e.reason or "Newton did not meet the tolerance"
            events.append(Event("not_converged", f"no rest position found: {why}; stopped at "
                                f"{format_inputs(mech, e.a)} with holding torque "
                                f"{_holding_text(mech, e.holding)} (start nearer with --set)", k))
    messages = [e.message for e in events]
    summary = {"equilibria": [{"at": format_inputs(mech, e.a), "stability": e.stability,
                               "stiffness": e.stiffness.tolist(), "converged": e.converged} for e in eqs]}
    table.metadata["summary"] = summary
    table.metadata["events"] = messages
    return AnalysisOutcome.of(table, n, failed, events, summary, eqs, what="rest positions")
