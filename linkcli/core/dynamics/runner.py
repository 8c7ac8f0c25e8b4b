"""``simulate``: run the variational integrator from the prepared state (see :mod:`.setup`),
in chunks (progress, re-selection of the independent constraints when their rank changes),
and turn the saved states into a :class:`SimulationResult`."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import forward
from ..mechanism import CompiledMechanism
from ..profiles import evaluate_profile
from . import integrator as it
from .bodies import inertial_properties
from .layout import R_DRIVER, R_JOINT
from .modes import massless_freedoms, spring_modes
from .node_multipliers import node_multipliers
from .outputs import sample_outputs
from .result import SimulationResult
from .setup import all_rows, prepare, select_rows


def simulate(mech: CompiledMechanism, q0: np.ndarray, qd0: np.ndarray, *, t_end: float, dt: float,
             every: int = 1, tol: float = 1e-10, max_iter: int = 20,
             progress: Callable[[float], None] | None = None,
             stop: Callable[[], bool] | None = None) -> SimulationResult:
    """Simulate the mechanism from the assembled joint variables ``q0`` (n_q,) (rad, m) with
    consistent joint rates ``qd0`` (n_q,) for ``t_end`` seconds with steps of about ``dt`` s
    (``t_end`` is divided into whole steps), saving every ``every``-th step and the last.

    ``tol`` (dimensionless) is the relative Newton tolerance of a step: momentum residuals
    relative to the step's force impulses (so reactions are accurate to about ``tol`` of the
    forces), constraint residuals relative to the step's displacement; the rows dropped as
    dependent must stay within ``tol`` times the mechanism size (the run's closure tolerance,
    m; :func:`it.dropped_rows_closure`). A step that opens them (the solved subset lost rank
    or conditioning where all rows have not, or the rows are inconsistent), meets a singular
    matrix, or flips (below) with rows dropped is first retried with the independent rows
    picked again at its start (:func:`_reselect`, once per node). A step whose Newton
    iteration fails (more than ``max_iter`` iterations, singular matrix), that turns a body
    implausibly far or that flips the orientation of the constraint Jacobian (another assembly
    branch, or a singular position passed: see :func:`_refine`) is retried as 2, 4, ... 64
    substeps (the saved grid is unchanged; ``refined_steps`` counts them); if that fails too
    the run ends with ``status != "ok"``, every good row so far and a message saying where and
    why. ``progress(t)`` is called about
    100 times. Raises ``ValueError`` for invalid input (q0 not assembled, motion drivers
    contradicting q0 or each other). ``stop()`` is asked after every compiled chunk of steps (about
    :data:`CHUNK_SECONDS` of work each): when it returns True the run ends with ``status ==
    "interrupted"`` and every saved row computed so far.
    """
    held = []  # the saved states, in one piece (the recorder's buffer holds every row)
    setup, status, message, stats = _simulate(mech, q0, qd0, t_end, dt, every, tol, max_iter, progress, stop, None,
                                              lambda setup, out, nodes, stats: held.append((out, nodes)))
    (out, nodes), = held
    return _result(setup, out, nodes, status, message, stats)


def simulate_chunks(mech: CompiledMechanism, q0: np.ndarray, qd0: np.ndarray, *, t_end: float, dt: float,
                    on_rows: Callable[[SimulationResult], None], chunk_rows: int = 16_384, every: int = 1,
                    tol: float = 1e-10, max_iter: int = 20, progress: Callable[[float], None] | None = None,
                    stop: Callable[[], bool] | None = None) -> SimulationRun:
    """:func:`simulate` with bounded memory: the saved rows are handed to ``on_rows`` as they
    are completed, in row order, as SimulationResults of at most ``chunk_rows`` consecutive rows
    (only these rows' states are held, ~0.5 KB per row for a four-bar, plus their outputs); the
    rows of all chunks joined are those of :func:`simulate`, bit for bit. A chunk holds good
    rows only (its ``status`` is "ok"): a row is handed over once the run has gone past it, or,
    when the run stops early, up to the last good row (as :func:`simulate` keeps). The run's
    status, message, warnings and counts are in the returned :class:`SimulationRun`. Caveat: a
    chunk's ``energy_balance_error`` property is relative to the chunk's first row; the run's
    is ``total - total_0 - work`` with ``total_0`` the first chunk's ``total[0]``."""
    if int(chunk_rows) < 1:
        raise ValueError(f"chunk_rows must be >= 1, got {chunk_rows}")
    rows = [0]

    def emit(setup, out, nodes, stats) -> None:
        rows[0] += len(nodes)
        on_rows(_result(setup, it.Out(*(a.copy() for a in out)), nodes, it.OK, "", stats))  # the buffer is reused

    setup, status, message, stats = _simulate(mech, q0, qd0, t_end, dt, every, tol, max_iter, progress, stop,
                                              int(chunk_rows), emit)
    return SimulationRun(status=_status_name(status), message=message, n_rows=rows[0], dt=setup.h,
                         warnings=tuple(setup.warnings), newton_iterations=int(stats[0]),
                         refined_steps=int(stats[1]), massless_springs=_massless_springs(setup))


@dataclass(frozen=True)
class SimulationRun:
    """What :func:`simulate_chunks` returns (its rows went to ``on_rows``): status and message
    as in :class:`SimulationResult`, ``n_rows`` rows handed over, ``dt`` (s) the step used,
    warnings, the largest Newton iteration count of a step, the refined steps and the springs
    on freedoms without inertia (as :class:`SimulationResult`)."""

    status: str
    message: str
    n_rows: int
    dt: float
    warnings: tuple[str, ...]
    newton_iterations: int
    refined_steps: int
    massless_springs: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _simulate(mech, q0, qd0, t_end, dt, every, tol, max_iter, progress, stop, chunk_rows, on_chunk):
    """The run of :func:`simulate` and :func:`simulate_chunks`: the saved states go through a
    :class:`_Recorder` of ``chunk_rows`` rows (None: all) to ``on_chunk(setup, out, nodes,
    stats)``. Returns ``(setup, status, message, stats)``."""
    q0, qd0 = _check_inputs(mech, q0, qd0, t_end, dt, every)
    if not (0 < tol <= 1e-3):
        raise ValueError(f"tol must be in (0, 1e-3], got {tol}")
    setup, w, nrow = prepare(mech, q0, qd0, t_end, dt, tol)
    setup.tol = tol
    _spring_warnings(setup, w)
    n = setup.n_steps
    save_nodes = np.unique(np.r_[np.arange(0, n + 1, every), n])
    stats = np.zeros(2)
    record = _Recorder(setup, save_nodes, len(save_nodes) if chunk_rows is None else chunk_rows,
                       lambda out, nodes: on_chunk(setup, out, nodes, stats))
    status, k_end, message = _run(setup, w, nrow, tol, max_iter, record, _Chunks(n, progress, stop), stats)
    n_valid = int(np.sum(save_nodes <= k_end)) if status != it.OK else len(save_nodes)
    record.finish(n_valid)
    return setup, status, message, stats


class _Recorder:
    """Where :func:`it.run_steps` saves the states of the saved nodes ``nodes`` (row r: node
    ``nodes[r]``): a buffer of ``rows`` rows (``out``) and ``save_row``, the buffer row of each
    node of the current call (-1: not saved). Rows are complete once the run has passed their
    node; when the buffer is full, the complete rows go to ``flush(out, nodes)`` (views of the
    buffer, valid during the call) and the buffer starts again. The chunk sizes never change
    the rows (each is one node's state)."""

    def __init__(self, setup, nodes: np.ndarray, rows: int, flush) -> None:
        self.nodes, self.flush = nodes, flush
        self.cap = max(1, min(int(rows), len(nodes)))
        self.out = it.make_out(setup.model, self.cap, setup.mech.n_q)
        self.save_row = np.full(setup.n_steps + 1, -1, dtype=np.int64)
        self.base = 0  # row held in the buffer's first row

    def limit(self, k: int, k1: int) -> int:
        """Prepare a call of run_steps over nodes ``k .. k1 - 1`` (the rows of the nodes before
        ``k`` are complete): flush a full buffer, return ``k1`` reduced so that the call's rows
        fit in the buffer (> k), with ``save_row`` set for these nodes."""
        r = int(np.searchsorted(self.nodes, k))  # the call's first row
        if r - self.base >= self.cap:
            self._emit(r)
        if self.base + self.cap < len(self.nodes):
            k1 = min(k1, int(self.nodes[self.base + self.cap]))  # the first row that does not fit
        r1 = int(np.searchsorted(self.nodes, k1))
        self.save_row[k:k1] = -1
        self.save_row[self.nodes[r:r1]] = np.arange(r - self.base, r1 - self.base)
        return k1

    def finish(self, n_valid: int) -> None:
        """The run ended with rows ``0 .. n_valid - 1`` good: flush those still held."""
        if n_valid > self.base or self.base == 0:
            self._emit(n_valid)

    def _emit(self, r: int) -> None:
        """Hand over rows ``base .. r - 1`` and empty the buffer."""
        m = r - self.base
        self.flush(it.Out(*(a[:m] for a in self.out)), self.nodes[self.base:r])
        self.base = r


# --- setup ------------------------------------------------------------------------------------------
def _check_inputs(mech, q0, qd0, t_end, dt, every):
    q0 = np.asarray(q0, dtype=float).reshape(-1)
    qd0 = np.asarray(qd0, dtype=float).reshape(-1)
    if q0.shape != (mech.n_q,) or qd0.shape != (mech.n_q,):
        raise ValueError(f"q0 and qd0 need {mech.n_q} values (one per joint variable), got {q0.size} and {qd0.size}")
    if not (np.all(np.isfinite(q0)) and np.all(np.isfinite(qd0))):
        raise ValueError("q0 and qd0 must be finite")
    if not (t_end > 0 and dt > 0 and math.isfinite(t_end) and math.isfinite(dt)):
        raise ValueError(f"t_end and dt must be positive, got t_end={t_end}, dt={dt}")
    if int(every) < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    if mech.n_links < 2:
        raise ValueError("the mechanism has no moving link")
    return q0, qd0


# --- run ----------------------------------------------------------------------------------------------
MAX_SUBSTEPS = 64  # finest refinement of a failing step (in powers of two)


def _run(setup, w, nrow, tol, max_iter, record: _Recorder, chunks: _Chunks, stats):
    """The time loop: compiled chunks of steps (saved states into ``record``); a failing step
    is re-selected (rank change of the constraints) or refined into substeps. Returns
    ``(status, node reached, message)``; ``stats`` (out) = (largest Newton iterations, refined
    steps)."""
    h, n = setup.h, setup.n_steps
    _warm_start(setup, w, nrow, tol, max_iter)
    acc = np.zeros(3)
    k, reselected_at = 0, -1
    n_rows = setup.model.row_index.shape[0]
    while k <= n:
        k1 = record.limit(k, min(k + chunks.size(), n + 1))
        status, k_done, err = it.run_steps(setup.km, setup.wk, nrow, k, k1, n, h, setup.drv, setup.rate, tol, max_iter,
                                           record.save_row, record.out, acc, stats)
        if status == it.OK:
            if chunks.done(k, k1, h) and k1 <= n:  # stop requested: nodes up to k1 - 1 are saved
                message = f"interrupted at t = {(k1 - 1) * h:.6g} s; the rows up to there are kept"
                return INTERRUPTED, k1 - 1, message
            k = k1
            continue
        # a singular step, dropped rows opening, or a flip with rows dropped: the solved subset of the
        # rows may have lost rank where all rows have not; pick them again at node k (once per node)
        if reselected_at != k_done and (status in (it.SINGULAR, it.OPEN) or (status == it.BRANCH and nrow < n_rows)):
            reselected_at = k_done
            new_nrow = _reselect(setup, w, nrow, k_done)
            if new_nrow is not None:
                nrow, k = new_nrow, k_done
                continue
        refined = _refine(setup, w, nrow, k_done, tol, max_iter, acc, stats)
        if refined is None:
            stats[1] += 1
            k = k_done + 1
            continue
        status, t_fail, err, detail = refined
        message = _failure_message(setup, w, nrow, status, k_done * h, t_fail, err, max_iter, detail)
        return status, k_done, message
    return it.OK, n, ""


_STATE_FIELDS = ("pos", "rot", "ang", "vel", "omg", "q", "JW", "Qf", "G", "s", "D", "nu", "acc")


#: Largest difference between the end states of a step computed with m and 2m substeps, relative
#: to the step's displacement (positions) and to the largest body speed (velocities), for a
#: passage through a flip of the constraint Jacobian's orientation to count as continuous.
#: Both are second-order solutions of the same motion: they differ by about (w h / m)^2 / 12
#: of these scales, below 0.02 since every substep turns a body by at most
#: MAX_STEP_ROTATION = 0.5 rad. A jump to another assembly branch changes the velocity
#: direction of the bodies that switch (the branches' tangents differ) by order 1.
PASSAGE_CONSISTENCY = 0.1


def _refine(setup, w, nrow, k, tol, max_iter, acc, stats):
    """Retry step k (t_k -> t_k + h) as 2, 4, ... ``MAX_SUBSTEPS`` substeps. Returns None on
    success (state at node k + 1, work added to ``acc``), else ``(status, time, error,
    detail)`` of the finest attempt's failing substep with the state of node k restored.

    Branch check: a substep may flip the orientation of the constraint Jacobian (see
    :mod:`.integrator`). Substeps without a flip are accepted as any step. A level whose
    substeps flip is followed by the two finest levels (``MAX_SUBSTEPS / 2`` and
    ``MAX_SUBSTEPS``): the flip is a continuous passage through a singular position only if
    both flip and end in the same state (positions and velocities within
    :data:`PASSAGE_CONSISTENCY`). A jump to another branch near an avoided crossing (two
    branches closer than a coarse substep's motion, e.g. a four-bar near a change point) is
    made the same way by coarse levels, so they are not compared; the finest substeps follow
    the motion's own branch (no flip, accepted as ordinary steps) whenever the crossing is
    wider than ``h / MAX_SUBSTEPS`` of motion."""
    saved = {f: getattr(w, f).copy() for f in _STATE_FIELDS}
    t_k = k * setup.h
    m = 2
    failure = (it.DIVERGED, t_k, 0.0, "")
    passage = None  # end state of the last level whose substeps flipped the orientation
    while m <= MAX_SUBSTEPS:
        t = t_k + setup.h * np.arange(m + 1) / m
        drv, rate = _drivers_at(setup, t)
        trial_acc = acc.copy()
        flips, t_flip = 0, t_k
        for j in range(m):
            status, iters, err, orientation = it.advance(setup.km, setup.wk, nrow, setup.h / m, drv[j], drv[j + 1],
                                                         rate[j + 1], tol, max_iter, trial_acc, True)
            if status != it.OK:
                failure = (status, float(t[j]), err, _open_row(setup, w, drv[j + 1]) if status == it.OPEN else "")
                break
            stats[0] = max(stats[0], iters)
            if orientation < 0:
                flips, t_flip = flips + 1, float(t[j])
        else:
            end = {f: getattr(w, f).copy() for f in ("pos", "ang", "rot", "vel", "omg")}
            differs = None if passage is None else _passage_difference(setup, saved, passage, end)
            if flips == 0 or (m == MAX_SUBSTEPS and differs is not None and differs[0] <= PASSAGE_CONSISTENCY):
                acc[:] = trial_acc
                return None
            passage = end if 2 * m >= MAX_SUBSTEPS else None  # compare the two finest levels only
            failure = (it.BRANCH, t_flip, 0.0 if differs is None else differs[0],
                       "" if differs is None else setup.mech.link_names[differs[1] + 1])
            for f, a in saved.items():
                getattr(w, f)[...] = a
            m = max(2 * m, MAX_SUBSTEPS // 2)
            continue
        for f, a in saved.items():
            getattr(w, f)[...] = a
        m *= 2
    it.refresh(setup.km, setup.wk, nrow, setup.drv[k + 1])
    return failure


def _passage_difference(setup, start, a, b) -> tuple[float, int]:
    """``(difference, body)``: the largest difference between the end states ``a`` and ``b`` of
    one step computed at two substep sizes, relative to the step's displacement from ``start``
    (positions, rotations times the model length) or to the largest body speed (velocities),
    and the body where it is largest."""
    L = setup.model.mechanism_size
    if setup.mech.planar:
        pose = lambda s: np.c_[s["pos"][:, :2], L * s["ang"]]  # noqa: E731
    else:  # rotation differences by the rotation vector of R_b R_a^T (small angles)
        pose = lambda s: np.c_[s["pos"], L * np.einsum("bij,bkj->bik", s["rot"], start["rot"])[:, [2, 0, 1], [1, 2, 0]]]  # noqa: E731
    speed = lambda s: np.c_[s["vel"], L * s["omg"]]  # noqa: E731
    tiny = 1e-12 * max(L, float(np.abs(start["pos"]).max(initial=0.0)))
    disp = np.abs(pose(b) - pose(start)).max(initial=0.0)
    vmax = max(np.abs(speed(start)).max(initial=0.0), np.abs(speed(b)).max(initial=0.0))
    d_pose = np.abs(pose(a) - pose(b)).max(axis=1) / (disp + tiny)
    d_speed = np.abs(speed(a) - speed(b)).max(axis=1) / (vmax + tiny / max(setup.h, 1e-300))
    worst = np.maximum(d_pose, d_speed)
    body = int(np.argmax(worst))
    return float(worst[body]), body


def _open_row(setup, w, drv1) -> str:
    """Where the trial state of a step that opened the dropped rows (:func:`it.dropped_rows_closure`)
    is open most: "joint 'name' open by x m" (angular rows times the mechanism size)."""
    model = setup.model
    g = np.abs(all_rows(model, w.pos1, w.rot1, drv1)[1]) * setup.row_scale
    i = int(np.argmax(g))
    return f"joint '{setup.mech.joint_names[model.row_index[i, R_JOINT]]}' open by {g[i]:.3g} m"


def _drivers_at(setup, t):
    nd = len(setup.mech.driver_names)
    drv, rate = np.zeros((len(t), nd)), np.zeros((len(t), nd))
    for d, prof in enumerate(setup.mech.driver_profile):
        drv[:, d], rate[:, d], _ = evaluate_profile(prof, t)
    return drv, rate


def _warm_start(setup, w, nrow, tol, max_iter) -> None:
    """Impulse guess of the first step: the impulses of a step from t = 0 back to -h (RATTLE is
    symmetric, so they are minus those of the first step to first order); zeros if it fails."""
    status, _, _, _ = it.position_step(setup.km, setup.wk, nrow, -setup.h, setup.drv[0], tol, max_iter)
    if status == it.OK:
        w.nu[:nrow] *= -1.0
    else:
        w.nu[:] = 0.0


def _reselect(setup, w, nrow, k):
    """After a singular step at node k: pick the independent rows again at the current
    configuration. Returns the new row count, or None when nothing changed."""
    model = setup.model
    G = all_rows(model, w.pos, w.rot, setup.drv[k + 1])[0]
    old = w.rows[:nrow].copy()
    try:
        rows = select_rows(model, G, setup.row_scale, setup.col_scale, [], t=k * setup.h,
                           joint_names=setup.mech.joint_names)
    except ValueError:
        return None
    if len(rows) == nrow and np.array_equal(rows, old):
        return None
    w.rows[:] = np.r_[rows, np.setdiff1d(np.arange(model.row_index.shape[0]), rows)]  # the dropped rows last
    w.nu[:] = 0.0
    w.G[:] = 0.0  # constraint_rows writes only the blocks of each row's bodies
    w.G1[:] = 0.0
    it.order_unknowns(model, w, len(rows))
    it.refresh(setup.km, setup.wk, len(rows), setup.drv[k + 1])
    setup.redundant = setup.redundant or len(rows) < model.row_index.shape[0]
    _note_reselection(setup, k * setup.h, nrow, len(rows))
    return len(rows)


_RESELECTED = "independent constraint equations re-selected"


def _note_reselection(setup, t: float, old: int, new: int) -> None:
    """One warning for all re-selections of a run: the count, the first times (s) and the rows."""
    previous = next((i for i, m in enumerate(setup.warnings) if _RESELECTED in m), None)
    times = [t] if previous is None else setup.reselection_times + [t]
    setup.reselection_times = times
    shown = ", ".join(f"{x:.6g}" for x in times[:5]) + (", ..." if len(times) > 5 else "")
    why = (f"the subset solved for lost rank or conditioning; {new} equations, as before" if new == old else
           f"the rank changed: {new} equations, was {old}")
    note = f"{_RESELECTED} {len(times)} time(s), at t = {shown} s ({why})"
    if previous is None:
        setup.warnings.append(note)
    else:
        setup.warnings[previous] = note


def _failure_message(setup, w, nrow, status, t_node, t_fail, err, max_iter, detail="") -> str:
    """Where and why a step failed: the time, the body with the largest momentum residual, the
    residual (times the tolerance), and links without mass that make the system ill posed."""
    mech = setup.mech
    where = f"step from t = {t_node:.6g} s failed, also as {MAX_SUBSTEPS} substeps (at t = {t_fail:.6g} s)"
    nd = 3 if mech.planar else 6
    r = np.abs(np.asarray(w.r)).reshape(-1, nd)
    r[:, 2 if mech.planar else slice(3, 6)] /= setup.model.mechanism_size
    body = int(np.argmax(r.max(axis=1))) if r.size and np.isfinite(r).all() else -1
    link = f"; largest momentum residual on link '{mech.link_names[body + 1]}'" if body >= 0 and r.max() > 0 else ""
    massless, now = _freedoms_now(setup, w, t_node)
    # the modes at t = 0 too: a diverged state may have overflowed (a spring's length inf)
    modes = {s.name: max(s, now.get(s.name, s), key=lambda m: m.omega) for s in setup.spring_modes} | \
        {n: s for n, s in now.items() if n not in {m.name for m in setup.spring_modes}}
    stiff = [s for s in modes.values() if s.omega * setup.h > VERLET_STABILITY]
    hint = "".join(f"; {_spring_step(s, setup.h)}" for s in stiff)
    hint += (f"; links with a free direction without mass or inertia: {', '.join(massless)} -- a massless link "
             "must be held by its joints in every direction it can move, or give it mass properties"
             ) if massless else ""
    if status == it.SINGULAR:
        return (f"{where}: singular step matrix{link}; the mechanism reached a singular configuration (dead "
                f"centre, lost assembly) or the constrained system is not well posed{hint}")
    if status == it.NOT_FINITE:
        return f"{where}: the state became infinite or NaN{link}{hint}; try a smaller dt"
    if status == it.BRANCH:
        on_link = f" on link '{detail}'" if detail else ""
        return (f"{where}: the orientation of the constraint Jacobian flips in the substep at t = {t_fail:.6g} s "
                f"(a jump to another assembly branch, or a singular position passed) and the substeps do not show one "
                f"continuous passage: two substep sizes end {err:.3g} times the step's motion apart{on_link} (at most "
                f"{PASSAGE_CONSISTENCY} accepted); the rows up to t = {t_node:.6g} s are kept; try a smaller dt")
    if status == it.OPEN:
        where_open = f": {detail}" if detail else ""
        closure = setup.tol * setup.model.mechanism_size
        return (f"{where}: the joints do not stay closed{where_open}, more than the run's closure tolerance "
                f"{closure:.3g} m (tol times the mechanism size) although the equations solved for are (redundant "
                f"constraints that are not consistent: the geometry is not exactly that of a movable overconstrained "
                f"linkage, or the subset solved for lost rank within a step: the subset is picked again only at a "
                f"step's start, so try a smaller dt first); the rows up to t = {t_node:.6g} s are kept")
    if status == it.IMPLAUSIBLE:
        return (f"{where}: a body turned more than {it.MAX_STEP_ROTATION} rad in one substep (a jump to another "
                f"solution branch or a motion too fast for the step){link}; try a smaller dt")
    return (f"{where}: Newton did not converge in {max_iter} iterations (residual {err:.3g} times the "
            f"tolerance){link}{hint}; a singular configuration or a motion too fast for the step: try a smaller dt")


#: Stoermer-Verlet (the integrator's explicit treatment of springs) is linearly stable for a mode
#: of angular frequency omega when omega h < 2 (Hairer, Lubich, Wanner, Geometric Numerical
#: Integration, I.5.2); the same limit as :data:`linkcli.model.checks.VERLET_STABILITY`
VERLET_STABILITY = 2.0


def _spring_step(s, h: float) -> str:
    unit = "kg" if s.kind == "linear" else "kg m^2"
    what = "the regularising inertia (the link has none of its own)" if s.regularised else "the masses it moves"
    return (f"spring '{s.name}' is too stiff for the step: omega*dt = {s.omega * h:.3g} > {VERLET_STABILITY:g} "
            f"(omega = sqrt(k/m) = {s.omega:.4g} rad/s with m = {s.inertia:.4g} {unit} along it, {what}; links "
            f"{', '.join(s.links)}): use dt < {VERLET_STABILITY / s.omega:.3g} s")


def _freedoms_now(setup, w, t_node: float) -> tuple[tuple[str, ...], dict]:
    """At the state ``w`` of the node at ``t_node`` (s): the links with a free direction without
    mass and the springs' modes by name (:mod:`.modes`); nothing when the state has overflowed."""
    with np.errstate(all="ignore"):
        try:
            drv = setup.drv[min(int(round(t_node / setup.h)) + 1, len(setup.drv) - 1)]
            G = all_rows(setup.model, w.pos, w.rot, drv)[0]
            if not (np.isfinite(G).all() and np.isfinite(w.pos).all() and np.isfinite(w.rot).all()):
                return (), {}
            modes = spring_modes(setup.mech, setup.model, G, w.pos, w.rot)
            return massless_freedoms(setup.mech, setup.model, G, w.rot), {s.name: s for s in modes
                                                                            if np.isfinite(s.omega)}
        except np.linalg.LinAlgError:
            return (), {}


def _massless_springs(setup) -> tuple[str, ...]:
    """``"spring 'name' (links a, b)"`` of each spring on a freedom without inertia at t = 0."""
    return tuple(f"spring '{s.name}' (links {', '.join(s.links)})" for s in setup.spring_modes if s.regularised)


def _spring_warnings(setup, w) -> None:
    """At t = 0: the springs' modes into ``setup.spring_modes``, a warning for each spring acting
    on a freedom without inertia of its own (see :mod:`.modes`), and for each such spring too
    stiff for the step (the file's check cannot see the regularising inertia)."""
    G = all_rows(setup.model, w.pos, w.rot, setup.drv[1])[0]
    setup.spring_modes = tuple(spring_modes(setup.mech, setup.model, G, w.pos, w.rot))
    for s in setup.spring_modes:
        if not s.regularised:
            continue
        unit = "kg" if s.kind == "linear" else "kg m^2"
        links = ", ".join(s.links)
        setup.warnings.append(
            f"spring '{s.name}' acts on a freedom of link(s) {links} without mass or inertia of its own: its mode has "
            f"only the regularising {'mass' if s.kind == 'linear' else 'inertia'} {s.inertia:.3g} {unit} (omega = "
            f"{s.omega:.4g} rad/s, {s.omega / (2 * math.pi):.4g} Hz), so unless the spring stays at rest its "
            "deflection, rate and force and that motion are the regularisation's, not physical; give the link its "
            "mass properties (inertia in kg m^2 about its cg)")
        if s.omega * setup.h > VERLET_STABILITY:
            setup.warnings.append(_spring_step(s, setup.h))


# --- chunks and interruption (Ctrl-C answers within a second, rows so far are kept) ---------------
INTERRUPTED = -1  #: status code of a run ended by ``stop()`` (name "interrupted")
CHUNK_SECONDS = 0.1  #: wall time aimed at per compiled chunk: the delay before a stop is seen


class _Chunks:
    """Steps per compiled call: about CHUNK_SECONDS of work (measured on the previous chunk;
    the first has 16 steps), at most 1 % of the run when ``progress`` is shown. The chunk
    sizes never change the results (the state carries over exactly from chunk to chunk)."""

    def __init__(self, n: int, progress, stop) -> None:
        self.n, self.progress, self.stop = n, progress, stop
        self.cap = max(1, (n + 1) // 100) if progress is not None else n + 1
        self.steps, self.started = 16, time.perf_counter()

    def size(self) -> int:
        return max(1, min(self.steps, self.cap))

    def done(self, k: int, k1: int, h: float) -> bool:
        """After the good chunk of nodes k..k1-1: report progress, size the next chunk; True
        when ``stop()`` asks to end the run."""
        now = time.perf_counter()
        per_step = (now - self.started) / max(k1 - k, 1)
        self.steps = int(min(max(CHUNK_SECONDS / max(per_step, 1e-9), 1), 4 * (k1 - k)))  # grow at most 4x
        self.started = now
        if self.progress is not None and min(k1, self.n) > min(k, self.n):
            self.progress(min(k1, self.n) * h)
        return bool(self.stop is not None and self.stop())


def _status_name(status: int) -> str:
    return "interrupted" if status == INTERRUPTED else it.STATUS_NAMES[status]


# --- results ------------------------------------------------------------------------------------------
def _result(setup, o, nodes, status, message, stats) -> SimulationResult:
    """The SimulationResult of the saved states ``o`` (an it.Out) of the nodes ``nodes``."""
    mech, model = setup.mech, setup.model
    drv = setup.drv[nodes + 1]
    lam = node_multipliers(model, o.pos, o.rot, o.vel, o.omg, o.q, drv, setup.drv_acc[nodes + 1], setup.row_scale,
                           setup.col_scale, setup.redundant)
    s = sample_outputs(model, mech.link_cg[1:], o.pos, o.rot, o.vel, o.omg, o.q, drv, lam)
    return SimulationResult(
        t=nodes * setup.h, status=_status_name(status), message=message, q=o.q, qd=s.qd,
        link_pose=s.link_pose, link_velocity=s.link_velocity, effector_pose=forward.effector_pose(mech, s.link_pose),
        axial_length=s.axial[..., 0], axial_rate=s.axial[..., 1], axial_force=s.axial[..., 2],
        torsional_angle=s.torsional[..., 0], torsional_rate=s.torsional[..., 1], torsional_torque=s.torsional[..., 2],
        reaction_force=s.force, reaction_moment=s.moment, driver_force=_driver_force(model, lam, drv),
        kinetic=s.kinetic, potential=s.potential, total=s.kinetic + s.potential,
        work_dampers=o.work[:, 0], work_drivers=o.work[:, 1], work_loads=o.work[:, 2],
        constraint_residual=s.residual, warnings=tuple(setup.warnings), dt=setup.h,
        newton_iterations=int(stats[0]), refined_steps=int(stats[1]),
        kinetic_regularising=_regularising_kinetic(setup, o), massless_springs=_massless_springs(setup))


def _regularising_kinetic(setup, o) -> np.ndarray:
    """(n_s,) J: the kinetic energy of the masses and inertias the regularisation added to the
    file's (``model - inertial_properties(mech)``), at the saved states ``o``."""
    mass, inertia = inertial_properties(setup.mech)
    dm, dI = setup.model.body_mass - mass, setup.model.body_inertia - inertia
    if not (np.any(dm) or np.any(dI)):
        return np.zeros(len(o.pos))
    w_body = np.einsum("sbji,sbj->sbi", o.rot, o.omg)  # angular velocity in body axes
    return 0.5 * (np.einsum("b,sbi,sbi->s", dm, o.vel, o.vel) + np.einsum("sbi,bij,sbj->s", w_body, dI, w_body))


def _driver_force(model, lam, drv) -> np.ndarray:
    """(n_s, n_drivers): minus the motion rows' multipliers, the applied torque otherwise."""
    out = drv.copy()
    for i in np.flatnonzero(model.row_index[:, R_DRIVER] >= 0):
        out[:, model.row_index[i, R_DRIVER]] = -lam[:, i]
    return out
