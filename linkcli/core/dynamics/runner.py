"""``simulate``: run the variational integrator from the prepared state (see :mod:`.setup`),
in chunks (progress, re-selection of the independent constraints when their rank changes),
and turn the saved states into a :class:`SimulationResult`."""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from .. import forward
from ..mechanism import CompiledMechanism
from . import integrator as it
from .layout import R_DRV
from .outputs import sample_outputs
from .reactions import minimum_norm_multipliers
from .result import SimulationResult
from .setup import all_rows, prepare, select_rows

MAX_RESELECT = 5  # re-selections of the independent constraint rows per run


def simulate(mech: CompiledMechanism, q0: np.ndarray, qd0: np.ndarray, *, t_end: float, dt: float,
             every: int = 1, tol: float = 1e-10, max_iter: int = 20,
             progress: Callable[[float], None] | None = None,
             stop: Callable[[], bool] | None = None) -> SimulationResult:
    """Simulate the mechanism from the assembled joint variables ``q0`` (n_q,) (rad, m) with
    consistent joint rates ``qd0`` (n_q,) for ``t_end`` seconds with steps of about ``dt`` s
    (``t_end`` is divided into whole steps), saving every ``every``-th step and the last.

    Newton stops when constraints and momentum balance hold to ``tol`` (m or rad); a step that
    needs more than ``max_iter`` iterations ends the run with ``status != "ok"`` and what was
    computed so far. ``progress(t)`` is called about 100 times. ``stop()`` is asked after every
    compiled chunk of steps (about :data:`CHUNK_SECONDS` of work each): when it returns True the
    run ends with ``status == "interrupted"`` and every saved row computed so far. Raises ``ValueError`` for
    invalid input (q0 not assembled, motion drivers contradicting q0 or each other).
    """
    q0, qd0 = _check_inputs(mech, q0, qd0, t_end, dt, every)
    setup, w, nrow = prepare(mech, q0, qd0, t_end, dt)
    n = setup.n_steps
    save_nodes = np.unique(np.r_[np.arange(0, n + 1, every), n])
    save_row = np.full(n + 1, -1, dtype=np.int64)
    save_row[save_nodes] = np.arange(len(save_nodes))
    out = it.make_out(setup.model, len(save_nodes), mech.n_q)
    status, k_end, err, stats = _run(setup, w, nrow, tol, max_iter, save_row, out, _Chunks(n, progress, stop))
    n_valid = int(np.sum(save_nodes <= k_end)) if status != it.OK else len(save_nodes)
    message = "" if status == it.OK else _failure_message(status, k_end * setup.h, err, max_iter)
    return _result(setup, out, save_nodes[:n_valid], n_valid, status, message, stats)


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
def _run(setup, w, nrow, tol, max_iter, save_row, out, chunks: "_Chunks"):
    h, n = setup.h, setup.n_steps
    mu_prev = _backward_multipliers(setup, w, nrow, tol, max_iter)
    acc, stats = np.zeros(3), np.zeros(1)
    k, reselect = 0, 0
    while k <= n:
        k1 = min(k + chunks.size(), n + 1)
        status, k_done, err = it.run_steps(setup.km, setup.wk, nrow, k, k1, n, h, setup.drv, setup.rate, tol, max_iter,
                                           save_row, out, acc, mu_prev, stats)
        if status == it.OK:
            if chunks.done(k, k1, h) and k1 <= n:  # stop requested: nodes up to k1 - 1 are saved
                return INTERRUPTED, k1 - 1, 0.0, stats
            k = k1
            continue
        if status == it.SINGULAR and reselect < MAX_RESELECT:
            new_nrow = _reselect(setup, w, nrow, k_done, mu_prev)
            if new_nrow is not None:
                nrow, k, reselect = new_nrow, k_done, reselect + 1
                continue
        row = save_row[k_done]
        if row >= 0:  # the node was saved before the failing step: first-order multipliers
            out.lam[row, w.rows[:nrow]] = mu_prev[:nrow]
        return status, k_done, err, stats
    return it.OK, n, 0.0, stats


# --- chunks and interruption (issue 15: Ctrl-C answers within a second, rows so far are kept) ---
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


def _backward_multipliers(setup, w, nrow, tol, max_iter) -> np.ndarray:
    """``mu_{-1}``: the start multipliers of a step from t = 0 back to -h (RATTLE is symmetric,
    so they equal the end multipliers of the step -h -> 0); zeros if that step fails."""
    mu = np.zeros(setup.model.ri.shape[0])
    status, _, _ = it.position_step(setup.km, setup.wk, nrow, -setup.h, setup.drv[0], tol, max_iter)
    if status == it.OK:
        mu[:nrow] = 2.0 * w.nu[:nrow] / -setup.h
        w.nu[:nrow] *= -1.0  # warm start of the first forward step
    else:
        w.nu[:] = 0.0
        setup.warnings.append("the reactions at t = 0 are first-order estimates (the backward start step failed)")
    return mu


def _reselect(setup, w, nrow, k, mu_prev):
    """After a singular step at node k: pick the independent rows again at the current
    configuration. Returns the new row count, or None when nothing changed."""
    model = setup.model
    G = all_rows(model, w.pos, w.rot, setup.drv[k + 1])[0]
    old = w.rows[:nrow].copy()
    try:
        rows = select_rows(model, G, setup.row_scale, setup.col_scale, [], t=k * setup.h)
    except ValueError:
        return None
    if len(rows) == nrow and np.array_equal(rows, old):
        return None
    old_mu = dict(zip(old.tolist(), mu_prev[:nrow].tolist()))
    w.rows[:len(rows)] = rows
    mu_prev[:] = 0.0
    mu_prev[:len(rows)] = [old_mu.get(int(r), 0.0) for r in rows]
    w.nu[:] = 0.0
    it.refresh(setup.km, setup.wk, len(rows), setup.drv[k + 1])
    setup.redundant = setup.redundant or len(rows) < model.ri.shape[0]
    setup.warnings.append(f"t = {k * setup.h:.6g} s: the constraint rank changed; {len(rows)} independent "
                          f"constraint equations re-selected (was {nrow})")
    return len(rows)


def _failure_message(status, t, err, max_iter) -> str:
    if status == INTERRUPTED:
        return f"interrupted at t = {t:.6g} s; the rows up to there are kept"
    if status == it.SINGULAR:
        return (f"step at t = {t:.6g} s: singular step matrix (residual {err:.3g}); the mechanism reached a "
                "singular configuration (dead centre, lost assembly or an unconstrained massless link)")
    if status == it.NOT_FINITE:
        return f"step at t = {t:.6g} s: the state became infinite or NaN; try a smaller dt"
    return (f"step at t = {t:.6g} s: Newton did not converge in {max_iter} iterations (residual {err:.3g}); "
            "likely a singular configuration or a step too large for the motion: try a smaller dt")


# --- results ------------------------------------------------------------------------------------------
def _result(setup, out, nodes, n_valid, status, message, stats) -> SimulationResult:
    mech, model = setup.mech, setup.model
    o = it.Out(*(a[:n_valid] for a in out))
    drv = setup.drv[nodes + 1]
    lam = o.lam
    if setup.redundant:
        lam = minimum_norm_multipliers(model, o.pos, o.rot, drv, lam, setup.row_scale, setup.col_scale)
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
        newton_iterations=int(stats[0]))


def _driver_force(model, lam, drv) -> np.ndarray:
    """(n_s, n_drivers): minus the motion rows' multipliers, the applied torque otherwise."""
    out = drv.copy()
    for i in np.flatnonzero(model.ri[:, R_DRV] >= 0):
        out[:, model.ri[i, R_DRV]] = -lam[:, i]
    return out
