"""Position (and velocity/acceleration) analysis at one point or along a sweep -> ResultTable.

Columns (file units): every joint variable ``J.q``; with rates ``J.qd`` and with accelerations
``J.qdd``; the effector pose; every named frame's position (``coupler.P.x``), velocity and
acceleration when rates are given; the transmission angle of each four-bar loop; status,
per-loop residual and the condition number of the passive partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..core import transforms as tf
from ..core.forward import (
    effector_pose,
    frame_positions,
    link_poses,
    planar_effector_pose,
    planar_frame_positions,
    planar_link_poses,
    planar_steps,
)
from ..core.limits import (
    NO_CONFIGURATION,
    OK,
    OTHER_BRANCH,
    OUTSIDE_LIMITS,
    ROW_STATUS,
    Limit,
    limit_violations,
    locate_limits,
    proven_unreachable,
    row_status,
)
from ..core.loop_closure import Status, loop_gaps
from ..core.mechanism import CompiledMechanism
from ..core.planar_metrics import (
    fourbar_loops,
    grashof_class,
    input_angle,
    input_range,
    transmission_angle,
    transmission_angle_planar,
)
from ..core.sweep import SweepResult, solve_sweep
from ..core.transforms import Unwrap
from ..core.velocity import frame_motion, joint_accelerations, joint_rates
from ..errors import AnalysisInputError
from ..model.base import choices_hint
from ..results import ResultTable, TableStream, Units
from .inputs import Sweep, actuated_scale, actuated_values, format_inputs, input_grid
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
    """Solve along the request's path and build the result table (rows in output order), whole
    in memory: :func:`solve_stream` with its blocks joined (one implementation)."""
    outcome = solve_stream(mech, req, loaded)
    return replace(outcome, table=outcome.table.materialize())


#: rows per block of a streamed solve (and of the pose computations): link poses are (rows,
#: n_links, 4, 4) arrays (~0.8 KB per row for a four-bar) and a block of the four-bar's table ~0.3
#: KB per row, so a block holds ~35 MB at most whatever the sweep's length
BLOCK_ROWS = 32_768


def solve_stream(mech: CompiledMechanism, req: SolveRequest, loaded=None, *,
                 block_rows: int = BLOCK_ROWS) -> AnalysisOutcome:
    """:func:`run_solve` with ``table`` a :class:`~linkcli.results.TableStream`: the sweep is
    solved whole (its arrays, ~90 bytes per point for a four-bar, are kept), every figure that
    needs the whole run (events, limits, status counts, the first failure) is computed before
    any row, and the table's columns are computed ``block_rows`` rows at a time while a writer
    consumes them (:func:`linkcli.io.writers.write_table`), so a long sweep never holds its
    whole table. The blocks joined are the table :func:`run_solve` returns, bit for bit."""
    if block_rows < 2:
        raise ValueError(f"block_rows must be >= 2, got {block_rows}")
    inputs = input_grid(mech, req.set, req.sweeps, req.mode)  # SI for the solver, file units for the columns
    path, order = inputs.path, inputs.order
    frames = _output_frames(mech, req.output_frames)
    res = solve_sweep(mech, path, mech.q_init, tol=req.tol, method=req.sweep_method)
    n = len(path)
    ok = res.status == Status.CONVERGED
    qd_act = actuated_values(mech, req.rates, "--rate") if (req.rates or req.accelerations) else None
    qdd_act = actuated_values(mech, req.accelerations, "--acceleration") if req.accelerations else None
    identity = bool(np.array_equal(order, np.arange(n)))
    metadata = ResultTable.for_mechanism(mech, loaded, n=n, analysis="solve",
                                         solver={"tol": req.tol,
                                                 "method": "continuation + Newton (analytic Jacobian)"}).metadata
    limits = locate_limits(mech, path, res.q, res.status,
                           [e.index for e in res.events if e.kind == "singular_crossing"],
                           width=LIMIT_WIDTH * actuated_scale(mech), tol=req.tol)
    inv = np.empty(n, dtype=np.int64)  # solve index -> output row
    inv[order] = np.arange(n)
    metadata["limits"] = [_limit_record(mech, lim, inv) for lim in limits]
    del inv
    loops = []  # (loop, column entity) of each four-bar loop's transmission angle
    named: set[str] = set()
    for loop in fourbar_loops(mech):
        # rings sharing their coupler-output joint (loops sharing a pin, e.g. a coupling rod
        # over three wheels) are told apart by both coupler joints: pin2-pin3.transmission
        entity = mech.joint_names[loop.joints[2]]
        if entity in named:
            entity = f"{mech.joint_names[loop.joints[1]]}-{entity}"
        named.add(entity)
        loops.append((loop, entity))
        metadata.setdefault("fourbar_loops", []).append(_fourbar_record(mech, loop, limits))
    # whole-run figures, block by block in solve order (nothing per row is kept)
    counts: dict[str, int] = {}
    outside_rows = _OutsideRows(mech)
    angle = None  # the effector's unwrapped planar angle (solve order), when rows are permuted
    unwrap = Unwrap()
    if mech.planar and not identity:
        angle = np.empty(n)
    bounds = _block_bounds(n, block_rows)
    # each row's status (an index into _STATUS_LABELS, solve order, 1 byte per row): the blocks
    # of the table reuse it instead of computing the statuses a second time
    status_code = np.empty(n, dtype=np.uint8)
    for s, e in bounds:
        b = slice(s, e)
        other = None if res.other_branch is None else res.other_branch[b]
        status_text = _status_block(mech, req, path[b], res.q[b], res.status[b], ok[b], outside_rows, other)
        codes, seen = status_code[b], 0
        for i, label in enumerate(_STATUS_LABELS.tolist()):  # one comparison per status (no sort)
            rows = status_text == label
            count = int(np.count_nonzero(rows))
            if count:
                codes[rows] = i
                counts[label] = counts.get(label, 0) + count
                seen += count
        if seen != e - s:
            raise RuntimeError(f"solve: a row status outside {list(ROW_STATUS)}")  # a new status not added there
        if angle is not None:
            T_eff, _, _ = _poses(mech, np.where(ok[b, None], res.q[b], np.nan))
            angle[b] = unwrap(_planar_angle(T_eff))
    n_failed = n - counts.get(OK, 0)
    at_events = np.array(sorted({e.index for e in res.events}), dtype=np.int64)
    other_at = None if res.other_branch is None else res.other_branch[at_events]
    event_status = dict(zip(at_events.tolist(), row_status(mech, path[at_events], res.status[at_events], other_at),
                            strict=True))
    outside_events = [Event("outside_limits", m) for m in outside_rows.messages()]
    events = (outside_events + sweep_events(mech, res, path, event_status, limits)
              + [Event("limit", m) for m in limit_messages(mech, limits)])
    metadata["events"] = [e.message for e in events]
    metadata["status_counts"] = {k: counts[k] for k in sorted(counts)}
    # the first failure a user should read: a point that cannot assemble, else a joint outside its limits
    failure = next((e.message for e in events if e.kind == "no_assembly"),
                   next((e.message for e in outside_events),
                        next((e.message for e in events if e.kind == "reassembled" and e.is_failure), None)))
    units = Units.of(mech)
    # the blocks (run by the writer, after this function returns) read only the configurations,
    # condition numbers and file-unit inputs (solve order): the rest of the sweep (solver
    # statuses, residuals, worst loops: int64 and float64 per point; the SI path; an identity row
    # order) is let go with this frame, ~38 MB of a four-bar's 10^6 points that a block reading
    # ``res`` or ``inputs`` kept through every block (benchmarks/README.md)
    q_all, condition, file_inputs = res.q, res.condition, inputs.file
    row_order = None if identity else order

    def blocks():
        unwrap_rows = Unwrap() if mech.planar and row_order is None else None
        for s, e in bounds:
            idx = slice(s, e) if row_order is None else row_order[s:e]
            ang = None
            if mech.planar:
                ang = angle[idx] if angle is not None else unwrap_rows
            yield _block_table(mech, req, units, file_inputs[idx], q_all[idx], condition[idx], ok[idx], frames, loops,
                               qd_act, qdd_act, ang, _STATUS_LABELS[status_code[idx]])

    table = TableStream(n, blocks, metadata=metadata, units=units)
    return AnalysisOutcome.of(table, n, n_failed, events, failure=failure, what="points")


def _block_bounds(n: int, block_rows: int) -> list[tuple[int, int]]:
    """(start, stop) of consecutive blocks of ``block_rows`` rows (>= 2) covering n rows; a last
    block of one row joins the block before it. One row is never a block of a longer run: the
    link poses of a single configuration go through a matrix-vector product (BLAS gemv) whose
    rounding differs in the last bit from the matrix products of several rows, so the streamed
    table would not be the whole table bit for bit (tests/test_solve_stream.py)."""
    if n <= 0:
        return []
    starts = list(range(0, n, block_rows))
    if len(starts) > 1 and n - starts[-1] == 1:
        starts.pop()
    return [(s, e) for s, e in zip(starts, starts[1:] + [n], strict=True)]


def _status_block(mech, req, path, q, status, ok, outside_rows=None, other_branch=None) -> np.ndarray:
    """Row statuses of a block (solver status, ``other_branch`` for rows not in the estimate's
    assembly mode, ``outside_limits`` for solved rows with a joint beyond its limits);
    ``outside_rows`` (an :class:`_OutsideRows`) is told about the block."""
    status_text = row_status(mech, path, status, other_branch)
    outside = limit_violations(mech, path, q, ok, req.tol)
    status_text[(status_text == OK) & outside.any(axis=1)] = OUTSIDE_LIMITS  # values kept: the user sees where
    if outside_rows is not None:
        outside_rows.add(path, q, outside)
    return status_text


#: the status column's values (limits.row_status's string dtype), indexed by solve_stream's codes
_STATUS_LABELS = np.array(list(ROW_STATUS), dtype=f"<U{max(map(len, ROW_STATUS))}")


def _block_table(mech, req, units, inputs, q_solved, condition, ok, frames, loops, qd_act, qdd_act, angle,
                 status_text) -> ResultTable:
    """The table's rows (in output order) of configurations ``q_solved`` (n, n_q) SI as solved
    (failed rows too) with their ``condition`` numbers (n,); ``angle``: the effector's unwrapped
    angle of these rows, or an :class:`~linkcli.core.transforms.Unwrap` that unwraps it along
    consecutive blocks (rows in solve order); ``status_text``: the rows' statuses (:func:`_status_block` of these rows);
    ``inputs`` (n, n_act): the rows' actuated inputs in file units, as requested."""
    n = len(inputs)
    table = ResultTable(n, units=units)
    q = np.where(ok[:, None], q_solved, np.nan)  # poses of failed rows stay NaN (nothing shown as good)
    # the inputs as requested, in file units (a failed row still says which input failed)
    table.add_q(mech.q_names, q, mech.q_is_rotation,
                file_values={int(i): inputs[:, k] for k, i in enumerate(mech.q_actuated)})
    qd = qdd = None
    if qd_act is not None:
        qd = joint_rates(mech, q_solved, np.broadcast_to(qd_act, (n, mech.n_actuated)))
        table.add_q(mech.q_names, np.where(ok[:, None], qd, np.nan), mech.q_is_rotation, "qd", "s")
        if qdd_act is not None:
            qdd = joint_accelerations(mech, q_solved, qd, np.broadcast_to(qdd_act, (n, mech.n_actuated)))
            table.add_q(mech.q_names, np.where(ok[:, None], qdd, np.nan), mech.q_is_rotation, "qdd", "s^2")
    T_eff, p_frames, P = _poses(mech, q)
    _add_effector(table, mech, T_eff, angle)
    _add_frames(table, mech, frames, p_frames, q_solved, qd, qdd, ok)
    del T_eff, p_frames
    for loop, entity in loops:  # planar poses: those of the rows' own configurations (NaN where failed)
        mu = transmission_angle_planar(mech, loop, P) if P is not None else transmission_angle(mech, loop, q_solved)
        table.add_angle(entity, "transmission", np.where(ok, mu, np.nan))
    del P
    table.add("", "status", "", status_text)
    gaps = _loop_gaps(mech, q_solved)  # m: one length per loop (angular misfits times the size)
    for li, j in enumerate(mech.loop_joint):
        table.add_length(f"loop_{mech.joint_names[j]}", "residual", gaps[:, li])
    table.add("", "condition", "", condition)
    return table


#: rows per call of ``loop_gaps`` in a block: its 4x4 tree pass holds ~2.2 KB per row of a
#: four-bar at once (link poses, joint motions, twists, loop frames), 72 MB for a block of 32,768
#: rows, more than the rest of the block; 4,096 rows hold ~9 MB (benchmarks/README.md)
GAP_ROWS = 4096


def _loop_gaps(mech: CompiledMechanism, q: np.ndarray) -> np.ndarray:
    """``loop_gaps`` of configurations q (n, n_q) SI, :data:`GAP_ROWS` rows at a time: the same
    floats (each row's gap is computed from that row alone; pieces of one row are avoided as
    :func:`_block_bounds` says), with a bounded work set."""
    if len(q) <= GAP_ROWS:
        return loop_gaps(mech, q)
    out = np.empty((len(q), mech.n_loops))
    for s, e in _block_bounds(len(q), GAP_ROWS):
        out[s:e] = loop_gaps(mech, q[s:e])
    return out


def _poses(mech: CompiledMechanism, q: np.ndarray):
    """(effector pose, frame positions (rows, n_frames, 2 | 3) m, planar link poses or None) of
    configurations q (rows, n_q) SI. Planar mechanisms: the elementwise SE(2) pass
    (:func:`~linkcli.core.forward.planar_link_poses`), effector (rows, 4) = (x, y, c, s) and the
    link poses (rows, n_links, 4); others (and a tool frame out of the plane): the 4x4 pass,
    effector T_world_tool (rows, 4, 4)."""
    if planar_steps(mech) is not None:
        P = planar_link_poses(mech, q)
        eff = planar_effector_pose(mech, P)
        if eff is not None:
            return eff, planar_frame_positions(mech, P), P
    T = link_poses(mech, q)
    return effector_pose(mech, T), frame_positions(mech, T), None


def _planar_angle(T: np.ndarray) -> np.ndarray:
    """Angle (rows,) rad about z of effector poses from :func:`_poses`: atan2(s, c)."""
    if T.ndim == 2:  # (x, y, c, s)
        return np.arctan2(T[:, 3], T[:, 2])
    return tf.planar_pose(T)[:, 2]


class _OutsideRows:
    """Joint values outside their ``limits``, gathered block by block (in solve order) for
    :func:`limit_warnings`'s lines: per joint variable the rows outside and the first one's value."""

    def __init__(self, mech: CompiledMechanism) -> None:
        self.mech = mech
        self.count = np.zeros(mech.n_q, dtype=np.int64)
        self.first = np.full(mech.n_q, np.nan)  # value of the first offending row, SI
        self.rows = 0

    def add(self, path: np.ndarray, q: np.ndarray, outside: np.ndarray) -> None:
        self.rows += len(q)
        if not outside.any():
            return
        full = np.array(q, dtype=float)
        full[:, self.mech.q_actuated] = path
        for i in np.flatnonzero(outside.any(axis=0)):
            bad = np.flatnonzero(outside[:, i])
            if self.count[i] == 0:
                self.first[i] = full[bad[0], i]
            self.count[i] += len(bad)

    def messages(self) -> list[str]:
        mech, out = self.mech, []
        scale = np.where(mech.q_is_rotation, mech.angle_scale, mech.length_scale)
        unit = [mech.angle_unit if r else mech.length_unit for r in mech.q_is_rotation]
        for i in np.flatnonzero(self.count):
            lo, hi = mech.q_lower[i], mech.q_upper[i]
            what = "is given" if i in mech.q_actuated else "is solved to"
            count = f" ({self.count[i]} of {self.rows} points: status {OUTSIDE_LIMITS})" if self.rows > 1 else ""
            out.append(f"joint variable {mech.q_names[i]} {what} {self.first[i] / scale[i]:.6g} {unit[i]}, outside "
                       f"its limits [{lo / scale[i]:.6g}, {hi / scale[i]:.6g}] {unit[i]}{count}")
        return out


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


def _add_effector(table: ResultTable, mech: CompiledMechanism, T: np.ndarray, angle) -> None:
    """Effector pose columns of T_world_tool (rows, 4, 4), or (rows, 4) (x, y, c, s) from
    :func:`_poses`; planar: ``angle`` the unwrapped angle of these rows (continuous past +-180
    deg along the solve order), or an :class:`~linkcli.core.transforms.Unwrap` to unwrap them with
    (rows in solve order)."""
    p = T if T.ndim == 2 else T[:, :3, 3]
    if mech.planar:
        table.add_length("effector", "x", p[:, 0])
        table.add_length("effector", "y", p[:, 1])
        if isinstance(angle, Unwrap):
            angle = angle(_planar_angle(T))
        table.add_angle("effector", "angle", angle)
        return
    for k, axis in enumerate("xyz"):
        table.add_length("effector", axis, p[:, k])
    quat = tf.matrix_to_quaternion(T[:, :3, :3])
    for k, c in enumerate(("qw", "qx", "qy", "qz")):
        table.add("effector", c, "", quat[:, k])
    rpy = tf.matrix_to_rpy(T[:, :3, :3])
    for k, c in enumerate(("roll", "pitch", "yaw")):
        table.add_angle("effector", c, rpy[:, k])


def _add_frames(table, mech, frames, p_frames, q, qd, qdd, ok) -> None:
    """Position (velocity, acceleration) columns of the output frames; all arrays of the same rows."""
    axes = "xy" if mech.planar else "xyz"
    v = a = None
    if qd is not None:
        v, _, a = frame_motion(mech, q, qd, qdd)
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
                 status_text=None, limits: list[Limit] | None = None) -> list[Event]:
    """Typed events of a sweep (kind = the core event's kind; ``index`` the point in solve
    order), messages with inputs in file units (``status_text``: the rows' statuses from
    :func:`linkcli.core.limits.row_status`, an array over the rows or a mapping holding at
    least the events' rows; computed when None)."""
    out: list[Event] = []

    def add(e, message: str) -> None:
        data = {"detail": float(e.detail), "loop": int(e.loop)}
        if e.kind == "reassembled":  # its rows are status other_branch (a failure) or stay ok
            data["other_branch"] = bool(res.other_branch is not None and res.other_branch[e.index])
        out.append(Event(e.kind, message, int(e.index), data))

    if status_text is None:
        status_text = row_status(mech, path, res.status, res.other_branch)
    restarts = [e.index for e in res.events if e.kind == "reassembled"] + [len(path)]
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
            add(e, _reassembled_message(mech, res, path, e.index, restarts))
        elif e.kind == "branch_jump":
            add(e, f"branch could not be followed at {at}: the solver landed on another assembly branch")
    return out


def _reassembled_message(mech: CompiledMechanism, res: SweepResult, path: np.ndarray, i: int,
                         restarts: list[int]) -> str:
    """The message of a ``reassembled`` event at point i (solve order): where the branch was
    lost, and whether the run of rows it starts (to the next restart) is in the assembly mode of
    the file's estimate (rows ``ok``) or not (rows ``other_branch``)."""
    at = format_inputs(mech, path[i])
    ok = res.status == Status.CONVERGED
    before = np.flatnonzero(ok[:i])
    if len(before):
        lost = (f"the branch was lost after {format_inputs(mech, path[before[-1]])} and the configuration at {at} "
                "was found again by assembly (not by continuation)")
    else:
        lost = (f"the branch of the file's assembly estimate does not reach {at} here; the configuration there was "
                "found by assembly (not by continuation)")
    end = next(r for r in restarts if r > i)
    other = res.other_branch
    if other is not None and other[i]:
        last = format_inputs(mech, path[i + int(np.flatnonzero(other[i:end])[-1])])
        return (f"{lost}: it is not in the assembly mode of the file's estimate (following that mode to this input "
                f"gives another configuration, or does not reach it); the rows from {at} to {last} have status "
                f"{OTHER_BRANCH}")
    if res.branch_resolved is not None and res.branch_resolved[i]:
        found = (f"the branch was lost after {format_inputs(mech, path[before[-1]])}; at {at}" if len(before) else
                 f"at {at}, the first row solved,")
        return (f"{found} a reassembly landed in another assembly mode than the file's estimate's, so the rows from "
                f"{at} on were solved again by continuation from the configuration the estimate's mode has there "
                "(followed from the estimate's own inputs); they keep status ok")
    if not res.branch_checked:
        return (f"{lost}; the file's assembly estimate does not assemble at its own inputs, so it defines no "
                "assembly mode to check these rows against: check the branch")
    return (f"{lost}: it is the configuration the file's estimate's assembly mode has there (checked by "
            "continuation from the estimate); the rows keep status ok")


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
    rec: dict[str, Any] = {"joints": [mech.joint_names[j] for j in loop.joints],
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
        diff = np.abs(tf.wrap_to_pi(theta - np.asarray(rng, dtype=float)))
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
    rows = _OutsideRows(mech)
    rows.add(path, q, outside)
    return rows.messages()
