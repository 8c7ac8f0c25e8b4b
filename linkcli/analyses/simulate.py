"""Dynamics simulation -> ResultTable (one row per saved step) and a summary; long runs as a
TableStream with bounded memory (:func:`simulate_stream`).

Initial conditions: motion-driven variables start at their driver's value and rate at t = 0;
other actuated variables at ``set`` (file units; default: the assembly estimate) and
``rates`` (default 0). The mechanism is assembled there (kinematics) and the initial actuated
rates give consistent rates of every joint.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..core import transforms as tf
from ..core.dynamics.accuracy import (
    BALANCE_RTOL,
    REGULARISED_SHARE,
    ROUNDOFF,
    EnergyBalanceCheck,
    closure_tolerance,
    reference_energy,
    whole_steps,
)
from ..core.loop_closure import Status
from ..core.mechanism import DRIVE_MOTION, CompiledMechanism
from ..core.profiles import evaluate_profile
from ..core.sweep import configuration_at
from ..core.velocity import closest_consistent_rates, joint_rates
from ..errors import AnalysisInputError
from ..model.base import choices_hint
from ..results import ResultTable, TableSpool, Units
from .inputs import actuated_values, fallback_note, unreached_message
from .outcome import AnalysisOutcome, Event, warnings

ASSEMBLY_TOL = 1e-10  # loop closure of the start (relative to the mechanism size, see assemble)


@dataclass(frozen=True)
class SimulateRequest:
    """Inputs of a simulation in the file's units (times in s)."""

    t_end: float = 1.0
    dt: float = 1e-3
    every: int = 1
    set: dict[str, float] = field(default_factory=dict)
    rates: dict[str, float] = field(default_factory=dict)
    tol: float = 1e-10  # relative Newton tolerance of a step (see core.dynamics.simulate)


def request_from_defaults(defaults) -> SimulateRequest:
    if defaults is None:
        return SimulateRequest()
    return SimulateRequest(defaults.t_end, defaults.dt, defaults.every, dict(defaults.set), dict(defaults.rates),
                           defaults.tol)


def initial_state(mech: CompiledMechanism, req: SimulateRequest) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Actuated values and rates (SI, (n_act,) each) at t = 0, and notes for the user. Rates of
    variables that are not actuated are handled by :func:`initial_rates`."""
    a0 = actuated_values(mech, req.set, "--set", default=mech.q_init[mech.q_actuated])
    actuated = {mech.q_names[i] for i in mech.q_actuated}
    ad0 = actuated_values(mech, {k: v for k, v in req.rates.items() if k in actuated}, "--rate")
    notes = []
    for name, qi, kind, prof in zip(mech.driver_names, mech.driver_q, mech.driver_kind, mech.driver_profile,
                                    strict=True):
        if kind != DRIVE_MOTION:
            continue
        k = int(np.flatnonzero(mech.q_actuated == qi)[0])
        value, rate, _ = evaluate_profile(prof, 0.0)
        if mech.q_names[qi] in req.set or mech.q_names[qi] in req.rates:
            notes.append(f"driver {name} prescribes {mech.q_names[qi]}: its value and rate at t = 0 are used")
        a0[k], ad0[k] = float(value), float(rate)
    return a0, ad0, notes


def run_simulate(mech: CompiledMechanism, req: SimulateRequest, loaded=None,
                 progress: Callable[[float], None] | None = None,
                 stop: Callable[[], bool] | None = None, many: bool = False) -> AnalysisOutcome:
    """Assemble, simulate and tabulate, whole in memory: ``table`` a ResultTable and ``result``
    the SimulationResult (SI arrays). A run that cannot start (no assembly, invalid initial
    state) or that stops early is not ok; what was computed is still in the table. Long runs:
    :func:`simulate_stream` (the same table, bounded memory)."""
    return _simulate(mech, req, loaded, progress, stop, many, None, None)


#: rows per chunk of a streamed simulation: a chunk's saved states, outputs (link poses,
#: reactions ...) and table block take ~2.5 KB per row for a four-bar (~40 MB)
BLOCK_ROWS = 16_384


def simulate_stream(mech: CompiledMechanism, req: SimulateRequest, loaded=None,
                    progress: Callable[[float], None] | None = None, stop: Callable[[], bool] | None = None,
                    many: bool = False, *, block_rows: int = BLOCK_ROWS,
                    scratch_dir: str | None = None) -> AnalysisOutcome:
    """:func:`run_simulate` with ``table`` a :class:`~linkcli.results.TableStream` and bounded
    memory: the run hands its saved rows over ``block_rows`` at a time
    (:func:`linkcli.core.dynamics.simulate_chunks`), each chunk is tabulated at once and its
    block kept in a scratch file (:class:`~linkcli.results.TableSpool`, in ``scratch_dir``),
    and the writers read the blocks back; the summary and metadata (known only at the end of
    the run) are complete before the first block is written. The blocks joined are the table of
    :func:`run_simulate`, bit for bit. ``result`` is the
    :class:`~linkcli.core.dynamics.SimulationRun` (status, counts; no arrays)."""
    if int(block_rows) < 1:
        raise ValueError(f"block_rows must be >= 1, got {block_rows}")
    return _simulate(mech, req, loaded, progress, stop, many, int(block_rows), scratch_dir)


def _simulate(mech, req, loaded, progress, stop, many, block_rows, scratch_dir) -> AnalysisOutcome:
    """:func:`run_simulate` (``block_rows`` None) and :func:`simulate_stream`."""
    from ..core import jit
    from ..model.sizes import simulation_size_problem

    problem = simulation_size_problem(req.t_end, req.dt, req.every)  # refused before anything runs
    if problem:
        raise AnalysisInputError(problem)
    plan = plan_kernels(mech, req, many=many)  # compiled or interpreted kernels: before they are imported
    a0, ad0, messages = initial_state(mech, req)
    messages += step_notes(req)
    massless = [n for n, has in zip(mech.link_names[1:], mech.link_has_mass[1:], strict=True) if not has]
    if massless:
        messages.append(f"links without mass properties: {', '.join(massless)} (treated as massless)")
    # the start in the assembly mode of the file's estimate, followed there by continuation
    # (plain Newton from the estimate at distant inputs may land in the other mode or wound)
    # closed to the run's tolerance, not below round-off (a --tol under ~1e-14 cannot close a loop further)
    start = configuration_at(mech, a0, tol=min(ASSEMBLY_TOL, max(req.tol, ROUNDOFF)))
    if start.status != Status.CONVERGED:
        msg = f"cannot start at the initial values: {unreached_message(mech, start, a0)}"
        return _not_started("no_assembly", msg, messages)
    if fallback_note(mech, start):
        messages.append(fallback_note(mech, start))
    try:
        qd0, note = initial_rates(mech, start.q, ad0, req.rates)
    except AnalysisInputError as exc:
        msg = f"cannot start the simulation: {exc}"
        return _not_started("invalid_start", msg, messages)
    if note:
        messages.append(note)
    from ..core.loop_closure import mechanism_size

    tab = _Tabulator(mech, reference_energy(float(mech.link_mass[1:].sum()), mechanism_size(mech), req.t_end),
                     closure_m=(req.tol, mechanism_size(mech)))
    spool = None if block_rows is None else _scratch(TableSpool, scratch_dir)
    wall, cpu = time.perf_counter(), time.process_time()
    from ..core.dynamics import simulate, simulate_chunks

    def tabulate(chunk) -> None:  # a chunk of rows -> a block in the spool (its CPU time kept apart)
        cpu0 = time.process_time()
        _scratch(spool.append, tab.block(chunk))
        tab.cpu += time.process_time() - cpu0

    try:
        if spool is None:
            res = simulate(mech, start.q, qd0, t_end=req.t_end, dt=req.dt, every=req.every, tol=req.tol,
                           progress=progress, stop=stop)  # stop: Ctrl-C between chunks (issue 15)
        else:
            res = simulate_chunks(mech, start.q, qd0, t_end=req.t_end, dt=req.dt, every=req.every, tol=req.tol,
                                  progress=progress, stop=stop, on_rows=tabulate, chunk_rows=block_rows)
    except ValueError as exc:
        msg = f"cannot start the simulation: {exc}"
        return _not_started("invalid_start", msg, messages)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu - tab.cpu
    whole = tab.block(res) if spool is None else None
    if tab.n:  # what this machine learns about interpreted and compile costs (core.jit)
        jit.record_run("simulate", plan, _work_units(mech, round(tab.t_last / res.dt), tab.n), cpu)
    messages += list(res.warnings)
    status, message = res.status, res.message
    if res.ok and tab.open_from is not None:  # the integrator checks this; a row open all the same is flagged
        status, message = "inaccurate", tab.open_message()
    elif res.ok and not tab.balance.ok:  # every row kept; the run says from when they are not accurate
        status, message = "inaccurate", tab.balance_message(res.dt)
    elif res.ok and tab.balance.regularised_from is not None:  # a freedom without inertia rings
        status, message = "inaccurate", tab.regularised_message(res.massless_springs)
    elif res.ok and getattr(loaded, "model", None) is not None:  # a damper ringing: the balance closes, forces wrong
        from ..model.checks import damper_step_problems

        ringing = damper_step_problems(loaded.model, res.dt, "this run")
        if ringing:
            status, message = "inaccurate", "; ".join(f"{p.message}. {p.hint}" for p in ringing)
    failed = status != "ok"
    if failed:
        messages.append(message)
    summary = tab.summary(res, wall, status, message)
    metadata = ResultTable.for_mechanism(mech, loaded, analysis="simulate",
                                         solver={"dt": res.dt, "every": req.every, "tol": req.tol,
                                                 "integrator": "variational (RATTLE-type, maximal coordinates)"}
                                         ).metadata
    # the table holds no wall time: identical runs give byte-identical files (issue 15)
    metadata["summary"] = {k: v for k, v in summary.items() if k != "wall_time_s"}
    metadata["events"] = messages
    if whole is not None:
        whole.metadata = metadata
        table = whole
    else:
        table = spool.stream(metadata, Units.of(mech))
    events = warnings(messages[:-1] if failed else messages)
    if failed:
        events.append(Event("stopped" if not res.ok else "inaccurate", message, None, {"status": status}))
    return AnalysisOutcome.of(table, 1, int(failed), events, summary, res, what="simulations")


def step_notes(req: SimulateRequest) -> list[str]:
    """A note when ``t_end`` is not a whole number of steps ``dt``: the run takes the smallest
    number of equal steps no longer than ``dt`` (and ends at ``t_end``)."""
    n_steps, h = whole_steps(req.t_end, req.dt)
    if abs(h - req.dt) <= 1e-9 * req.dt:
        return []
    return [f"t_end = {req.t_end:g} s is not a whole number of steps dt = {req.dt:g} s: the run takes {n_steps} "
            f"steps of {h:.6g} s (dt shortened by {100 * (1 - h / req.dt):.3g} %) to end at t_end; choose a dt "
            "that divides t_end to keep it"]


def run_diagnostics(loaded, req: SimulateRequest, requested: str = "the dt requested (--dt)") -> list:
    """The file's warnings (Diagnostics) for a run of ``req``: its spring- and damper-step
    warnings (:data:`linkcli.model.checks.STEP_CODES`, made at the file's ``analysis.simulate.dt``)
    replaced by those at the step this run takes (``--dt`` and the fit to ``t_end`` included).
    ``requested`` names a ``dt`` other than the file's in the messages (a batch job's options).
    Every caller that runs a simulation (CLI, batch worker, Python API) uses these."""
    from ..io.loader import diagnostics
    from ..model.checks import STEP_CODES, damper_step_problems, spring_step_problems
    from ..model.sizes import simulation_size_problem

    problem = simulation_size_problem(req.t_end, req.dt, req.every)  # refused before anything runs
    if problem:
        raise AnalysisInputError(problem)
    _, h = whole_steps(req.t_end, req.dt)
    sim = loaded.model.analysis.simulate
    source = ("analysis.simulate.dt" if sim is not None and sim.dt == req.dt
              else "the default dt" if sim is None and req.dt == SimulateRequest.dt else requested)
    where = source if abs(h - req.dt) <= 1e-9 * req.dt else f"{source} = {req.dt:g} s fitted to t_end"
    step = spring_step_problems(loaded.model, h, where) + damper_step_problems(loaded.model, h, where)
    return [d for d in loaded.warnings if d.code not in STEP_CODES] + diagnostics(loaded.path, loaded.source, step)


def _scratch(action, *args):
    """``action(*args)`` on the scratch file of a streamed run; an OS error (disk full ...)
    becomes an OutputError saying what to do."""
    try:
        return action(*args)
    except OSError as exc:
        from ..io.writers import OutputError

        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        raise OutputError(f"cannot keep the simulation's rows in a scratch file: {exc.strerror or exc}{where}; "
                          "check that the output's directory exists and is writable, free disk space there (for "
                          "stdout: in the temporary directory, TMPDIR) or save fewer rows (--every)") from None


def _work_units(mech: CompiledMechanism, n_steps: int, n_samples: int) -> float:
    from ..core import jit

    return jit.work_units(n_steps, n_samples, mech.n_links - 1)  # every link but the base is a body


def plan_kernels(mech: CompiledMechanism, req: SimulateRequest, many: bool = False):
    """Decide whether this process runs the dynamics kernels compiled or interpreted
    (:func:`linkcli.core.jit.plan_kernels`, the measured "ski rental" rule), from the model's size
    and the number of steps; idempotent. Call it before anything imports the kernels; the returned
    plan's ``compile and cold`` means this run compiles them (about ``compile_s`` s of CPU).
    ``many``: this process makes many runs (a batch worker), so it compiles on a cold cache."""
    from ..model.sizes import simulation_size_problem
    from .kernels import plan

    problem = simulation_size_problem(req.t_end, req.dt, req.every)  # also bounds the projection
    if problem:
        raise AnalysisInputError(problem)
    n_steps, _ = whole_steps(req.t_end, req.dt)
    return plan("simulate", _work_units(mech, n_steps, n_steps // req.every + 1), many=many)


def _not_started(status: str, msg: str, messages: list[str]) -> AnalysisOutcome:
    """A simulation that could not start: one failed run, no table."""
    return AnalysisOutcome.of(None, 1, 1, [*warnings(messages), Event("stopped", msg, None, {"status": status})],
                              {"status": status, "message": msg})


RATE_RTOL = 1e-9  # relative mismatch of a requested initial rate reported as a projection


def initial_rates(mech: CompiledMechanism, q: np.ndarray, ad0: np.ndarray, rates: dict[str, float]
                  ) -> tuple[np.ndarray, str]:
    """Joint rates (n_q,) SI at the assembled ``q``, consistent with the loop closures and the
    motion drivers' rates, as close as possible (least squares) to the requested rates:
    ``rates`` (file units per s) for any variables by name; ``ad0`` (n_act,) SI the actuated
    rates (given ones, 0 for the others, motion drivers' rates) used as before when only
    actuated variables are named. Returns the rates and a note when the request had to be
    projected (it was not consistent with the constraints), else "". When a variable that is not
    actuated is named, the other actuated ones are free (they follow); motions fixed by nothing
    requested get the minimum-norm rates (zero for an untouched free joint)."""
    actuated = {mech.q_names[i] for i in mech.q_actuated}
    if all(name in actuated for name in rates):  # the actuated variables parametrise the motion
        return joint_rates(mech, q, ad0), ""
    index = {name: i for i, name in enumerate(mech.q_names)}
    for name in rates:
        if name not in index:
            raise AnalysisInputError(f"--rate: '{name}' is not a joint variable. "
                                     + choices_hint("variables", name, list(index)))
    driven = {int(mech.driver_q[d]) for d in range(len(mech.driver_names)) if mech.driver_kind[d] == DRIVE_MOTION}
    prescribed = {int(i): float(ad0[k]) for k, i in enumerate(mech.q_actuated) if int(i) in driven}
    requested = {index[name]: v * (mech.angle_scale if mech.q_is_rotation[index[name]] else mech.length_scale)
                 for name, v in rates.items() if index[name] not in driven}  # unlisted actuated ones are free
    qd = closest_consistent_rates(mech, q, prescribed, requested)
    T = np.array(list(requested), dtype=int)
    target = np.array(list(requested.values()), dtype=float)
    miss = np.abs(qd[T] - target)
    if miss.max(initial=0.0) <= RATE_RTOL * max(1.0, np.abs(target).max(initial=0.0)):
        return qd, ""
    k = int(np.argmax(miss))
    i = T[k]
    unit = mech.angle_unit if mech.q_is_rotation[i] else mech.length_unit
    s_file = mech.angle_scale if mech.q_is_rotation[i] else mech.length_scale
    return qd, (f"the initial rates are not consistent with the joints and drivers: projected onto the allowed "
                f"motions (least squares); {mech.q_names[i]} starts at {qd[i] / s_file:.6g} {unit}/s instead of "
                f"{target[k] / s_file:.6g}")


class _Tabulator:
    """Table blocks of a simulation's rows, chunk after chunk in row order, and the run's
    figures gathered on the way (rows, last time, largest residual, energy balance error, peak
    driver loads). What spans chunks is carried over: the unwrapping of planar angles
    (:class:`~linkcli.core.transforms.Unwrap`, bit-identical to ``np.unwrap`` of the whole) and
    the energy at t = 0 of the balance error; so the blocks joined are the table of the whole
    run, bit for bit. ``cpu``: CPU time spent tabulating (s), for the caller to keep apart."""

    def __init__(self, mech: CompiledMechanism, reference_J: float = 0.0,
                 closure_m: tuple[float, float] | None = None) -> None:
        """``reference_J``: the mechanism's energy unit for the balance's round-off floor
        (:func:`~linkcli.core.dynamics.accuracy.reference_energy`); ``closure_m``: (tol, mechanism
        size m) of the run's closure tolerance (:func:`~linkcli.core.dynamics.accuracy.closure_tolerance`):
        ``open_from`` is the first saved time (s) whose constraint residual exceeds it (None: none)."""
        from ..core.transforms import Unwrap

        self.mech, self.units = mech, Units.of(mech)
        self.unwrap = {name: Unwrap() for name in [*mech.link_names[1:], "effector"]} if mech.planar else {}
        self.total_0: float | None = None  # J, the first row's total energy
        self.n, self.t_last, self.cpu = 0, 0.0, 0.0
        self.max_residual = self.max_balance_error = 0.0
        self.peak_load = np.zeros(len(mech.driver_names))
        self.balance = EnergyBalanceCheck(reference_J=reference_J)
        self.closure_m, self.open_from, self.open_by = closure_m, None, 0.0

    def block(self, res) -> ResultTable:
        """The table rows of the SimulationResult ``res`` (the next rows of the run), columns:
        time, joint variables and rates, body poses, effector pose, element states, joint
        reactions (on the child, world frame), driver loads, energies, constraint residual."""
        mech = self.mech
        n = len(res.t)
        if n and self.total_0 is None:
            self.total_0 = res.total[0]
        balance = res.total - self.total_0 - (res.work_drivers + res.work_dampers + res.work_loads) if n else res.total
        self.n += n
        if n:
            self.t_last = float(res.t[-1])
        # np.max, not max(): a NaN anywhere stays NaN as in one reduction over the whole run
        self.max_residual = float(np.max([self.max_residual, res.constraint_residual.max(initial=0.0)]))
        if n and self.closure_m is not None and self.open_from is None:
            extent = np.abs(res.link_pose[:, :, :3, 3]).max(axis=(1, 2))  # m, round-off scale of positions
            limit = closure_tolerance(*self.closure_m, extent)
            bad = ~(res.constraint_residual <= limit)
            if bad.any():
                i = int(np.argmax(bad))
                self.open_from, self.open_by = float(res.t[i]), float(res.constraint_residual[i])
        self.max_balance_error = float(np.max([self.max_balance_error, np.abs(balance).max(initial=0.0)]))
        self.balance.update(res.t, res.kinetic, res.potential, res.total,
                            (res.work_dampers, res.work_drivers, res.work_loads), balance,
                            getattr(res, "kinetic_regularising", None))
        self.peak_load = np.max([self.peak_load, np.abs(res.driver_force).max(axis=0, initial=0.0)], axis=0)
        table = ResultTable(n, units=self.units)
        table.add("", "t", "s", res.t)
        table.add_q(mech.q_names, res.q, mech.q_is_rotation)
        table.add_q(mech.q_names, res.qd, mech.q_is_rotation, "qd", "s")
        for i in range(1, mech.n_links):
            self._add_pose(table, mech.link_names[i], res.link_pose[:, i])
        self._add_pose(table, "effector", res.effector_pose)
        for k, name in enumerate(mech.axial_names):
            table.add_length(name, "length", res.axial_length[:, k])
            table.add_length(name, "rate", res.axial_rate[:, k], per="s")
            table.add(name, "force", "N", res.axial_force[:, k])
        for k, name in enumerate(mech.torsional_names):
            table.add_angle(name, "angle", res.torsional_angle[:, k])
            table.add_angle(name, "rate", res.torsional_rate[:, k], per="s")
            table.add(name, "torque", "N m", res.torsional_torque[:, k])
        force_axes = ("x", "y") if mech.planar else ("x", "y", "z")
        moment_axes = ("z",) if mech.planar else ("x", "y", "z")
        for j, name in enumerate(mech.joint_names):
            for a in force_axes:
                table.add(name, f"F{a}", "N", res.reaction_force[:, j, "xyz".index(a)])
            for a in moment_axes:
                table.add(name, f"M{a}", "N m", res.reaction_moment[:, j, "xyz".index(a)])
        for k, name in enumerate(mech.driver_names):
            rot = mech.q_is_rotation[mech.driver_q[k]]
            table.add(name, "torque" if rot else "force", "N m" if rot else "N", res.driver_force[:, k])
        for quantity in ("kinetic", "potential", "total", "work_dampers", "work_drivers", "work_loads"):
            table.add("energy", quantity, "J", getattr(res, quantity))
        table.add("energy", "balance_error", "J", balance)
        table.add_length("", "constraint_residual", res.constraint_residual)  # m (angular rows times the size)
        return table

    def _add_pose(self, table: ResultTable, name: str, T: np.ndarray) -> None:
        p = T[:, :3, 3]
        if self.mech.planar:
            table.add_length(name, "x", p[:, 0])
            table.add_length(name, "y", p[:, 1])
            table.add_angle(name, "angle", self.unwrap[name](tf.planar_pose(T)[:, 2]))  # continuous in time
            return
        for k, axis in enumerate("xyz"):
            table.add_length(name, axis, p[:, k])
        quat = tf.matrix_to_quaternion(T[:, :3, :3])
        for k, c in enumerate(("qw", "qx", "qy", "qz")):
            table.add(name, c, "", quat[:, k])

    def open_message(self) -> str:
        """Why rows are not valid: the joints open beyond the run's closure tolerance."""
        tol, size = self.closure_m
        return (f"the joints are open by {self.open_by:.3g} m at t = {self.open_from:.6g} s, more than the run's "
                f"closure tolerance {tol * size:.3g} m (tol times the mechanism size): the rows from there on are not "
                "a motion of the mechanism; every row is kept")

    def balance_message(self, dt: float) -> str:
        """Why the energy balance is not trusted (see :mod:`linkcli.core.dynamics.accuracy`):
        a motion driver whose rate jumps between the last good row and the first bad one
        (two steps ``dt``, s, of margin) is named as the cause (an impulsive start or stop, which no step fixes);
        otherwise the step."""
        from ..core.dynamics.accuracy import motion_rate_jumps

        b = self.balance
        assert b.bad_from is not None  # called for a bad balance only
        head = (f"energy balance error {self.max_balance_error:.3g} J, {100 * b.worst:.3g} % of the run's energy "
                f"scale {b.scale:.3g} J (more than {100 * BALANCE_RTOL:g} % from t = {b.bad_from:.6g} s on)")
        after = -np.inf if b.good_until is None else b.good_until - 2 * dt
        at = [(name, t, jump) for name, t, jump in motion_rate_jumps(self.mech, self.t_last)
              if after < t <= b.bad_from + 2 * dt]
        if at:
            name, t, jump = max(at, key=lambda a: a[2])
            k = self.mech.driver_q[self.mech.driver_names.index(name)]
            rot = self.mech.q_is_rotation[k]
            scale, unit = (self.mech.angle_scale, self.mech.angle_unit) if rot else \
                (self.mech.length_scale, self.mech.length_unit)
            fix = (f"end the run at t = {t:.6g} s or before, or make the driver's rate continuous there (a cycloidal "
                   "ramp, a table that comes to rest)" if t > 0 else
                   "start the driver at rest (a cycloidal ramp) or start the run with the driver's rate")
            return (f"{head}: motion driver '{name}' changes its prescribed rate by {jump / scale:.4g} {unit}/s at "
                    f"t = {t:.6g} s (its profile starts, bends or ends there with a rate): the joint is started or "
                    "stopped within one step, an impulse the energy balance, driver load and reactions of that step "
                    "do not hold; the rows before are accurate; every row is kept. A smaller dt does not fix it: "
                    f"{fix}")
        return (f"{head}: the motion is not accurate from there (an unstable or too coarse time step: a spring too "
                "stiff or a motion too fast for dt); every row is kept; try a smaller dt")

    def regularised_message(self, springs: tuple[str, ...]) -> str:
        """Why a run whose freedoms without inertia move fast is not physical (see
        :data:`~linkcli.core.dynamics.accuracy.REGULARISED_SHARE`); ``springs`` the springs on them."""
        b = self.balance
        on = (f"{', '.join(springs)} act{'s' * (len(springs) == 1)} on a freedom without mass or inertia of its own "
              f"and ring{'s' * (len(springs) == 1)} on the regularising inertia the integrator gives it"
              if springs else "a link without mass or inertia of its own moves fast on the regularising mass the "
              "integrator gives it (see the warnings)")
        return (f"the kinetic energy of the regularising masses reaches {b.regularised_peak:.3g} J, up to "
                f"{100 * b.regularised_worst:.3g} % of the energy the run has moved by then (more than "
                f"{100 * REGULARISED_SHARE:g} % from t = {b.regularised_from:.6g} s on): {on}; that motion (the "
                "spring's deflection, rate and force, the link's turning) is set by the arbitrary regularisation, "
                "not by physics; every row is kept, a "
                "smaller dt does not fix it: give the link its mass properties (inertia in kg m^2 about its cg)")

    def summary(self, res, wall: float, status: str | None = None, message: str | None = None) -> dict:
        """The run's summary (``res`` a SimulationResult or SimulationRun, for dt and counts;
        ``status`` and ``message`` the run's, by default ``res``'s; ``wall`` its wall time, s).
        ``energy_balance_relative``: the largest balance error relative to the run's energy
        scale ``energy_scale_J``; ``energy_balance_bad_from_s``: the first saved time (s) it
        exceeds :data:`~linkcli.core.dynamics.accuracy.BALANCE_RTOL` (None: never)."""
        mech = self.mech
        n_steps = int(round(self.t_last / res.dt)) if self.n else 0
        return {"status": res.status if status is None else status,
                "message": res.message if message is None else message, "steps": n_steps, "dt": res.dt,
                "t_end": self.t_last if self.n else 0.0, "wall_time_s": wall,
                "max_constraint_residual_m": self.max_residual,  # m (SI, like every summary key)
                "max_energy_balance_error_J": self.max_balance_error,
                "energy_scale_J": self.balance.scale,
                "energy_balance_relative": self.balance.worst,
                "energy_balance_bad_from_s": self.balance.bad_from,
                "refined_steps": int(getattr(res, "refined_steps", 0)),
                "peak_driver_load": {name: float(self.peak_load[k]) for k, name in enumerate(mech.driver_names)},
                # N m for a rotation driver, N for a sliding one
                "peak_driver_load_unit": {name: "N m" if mech.q_is_rotation[mech.driver_q[k]] else "N"
                                          for k, name in enumerate(mech.driver_names)}}
