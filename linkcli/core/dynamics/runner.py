"""``simulate``: set up the bodies, constraints and loads of a compiled mechanism, run the
variational integrator and turn the saved states into a :class:`SimulationResult`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import forward
from ..mechanism import CompiledMechanism
from ..profiles import evaluate_profile
from . import integrator as it
from .bodies import inertial_properties, link_poses, link_velocities, regularise, state_from_joints
from .constraints import eval_row, independent_rows, matrix_rank, row_scaling
from .energy import energy_history
from .forces import element_history
from .kinematics import joint_geometry, joint_variables
from .layout import N_GEOMETRY, R_DRV, R_JOINT
from .model import DynModel, build_model
from .reactions import jacobians, minimum_norm_multipliers, reaction_history
from .result import SimulationResult
from .structs import as_kernel

ASSEMBLY_TOL = 1e-6  # |constraint| (m or rad, relative to the mechanism size) accepted in q0
MAX_RESELECT = 5  # re-selections of the independent constraint rows per run


@dataclass
class _Setup:
    """Everything fixed for one run."""

    mech: CompiledMechanism
    model: DynModel  # arrays (Python side)
    km: object  # the same arrays as a kernel record (structs.as_kernel)
    wk: object  # the integrator's work arrays as a kernel record
    h: float
    n_steps: int
    drv: np.ndarray  # (n_steps + 3, n_drivers) driver values at t = (i - 1) h
    rate: np.ndarray  # same, rates
    row_scale: np.ndarray
    col_scale: np.ndarray
    warnings: list
    redundant: bool  # some rows were dropped (now or at a re-selection)


def simulate(mech: CompiledMechanism, q0: np.ndarray, qd0: np.ndarray, *, t_end: float, dt: float,
             every: int = 1, tol: float = 1e-10, max_iter: int = 20,
             progress: Callable[[float], None] | None = None) -> SimulationResult:
    """Simulate the mechanism from the assembled joint variables ``q0`` (n_q,) (rad, m) with
    consistent joint rates ``qd0`` (n_q,) for ``t_end`` seconds with steps of about ``dt`` s
    (``t_end`` is divided into whole steps), saving every ``every``-th step and the last.

    Newton stops when constraints and momentum balance hold to ``tol`` (m or rad); a step that
    needs more than ``max_iter`` iterations ends the run with ``status != "ok"`` and what was
    computed so far. ``progress(t)`` is called about 100 times. Raises ``ValueError`` for
    invalid input (q0 not assembled, motion drivers contradicting q0 or each other).
    """
    q0, qd0 = _check_inputs(mech, q0, qd0, t_end, dt, every)
    setup, w, nrow = _prepare(mech, q0, qd0, t_end, dt, tol, max_iter)
    n = setup.n_steps
    save_nodes = np.unique(np.r_[np.arange(0, n + 1, every), n])
    save_row = np.full(n + 1, -1, dtype=np.int64)
    save_row[save_nodes] = np.arange(len(save_nodes))
    out = it.make_out(setup.model, len(save_nodes), mech.n_q)
    status, k_end, err, stats = _run(setup, w, nrow, tol, max_iter, save_row, out, progress)
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


def mechanism_size(mech: CompiledMechanism) -> float:
    """Characteristic length (m): the largest distance of a joint frame or CG from its link
    origin (1 m when all are zero)."""
    pts = np.concatenate([mech.T_parent_joint[:, :3, 3], mech.T_child_joint[:, :3, 3], mech.link_cg])
    size = float(np.abs(pts).max()) if pts.size else 0.0
    return size if size > 0 else 1.0


def _driver_tables(mech, h, n_steps):
    t = (np.arange(n_steps + 3) - 1.0) * h
    nd = len(mech.driver_names)
    drv, rate = np.zeros((len(t), nd)), np.zeros((len(t), nd))
    for d, prof in enumerate(mech.driver_profile):
        drv[:, d], rate[:, d], _ = evaluate_profile(prof, t)
    return drv, rate


def _prepare(mech, q0, qd0, t_end, dt, tol, max_iter):
    n_steps = max(1, int(math.ceil(t_end / dt - 1e-9)))
    h = t_end / n_steps
    drv, rate = _driver_tables(mech, h, n_steps)
    state = state_from_joints(mech, q0, qd0)
    mass, inertia = inertial_properties(mech)
    size = mechanism_size(mech)
    warnings: list[str] = []
    model = build_model(mech, mass, inertia)
    row_scale, col_scale = row_scaling(model, size)
    G0, g0 = _all_rows(model, state.pos, state.rot, drv[1])
    _check_assembly(mech, model, g0, drv[1], size)
    if _needs_regularisation(model, state.rot, G0):
        mass, inertia, notes = regularise(mass, inertia, mech.planar, mech.link_names[1:], size,
                                          np.ones(len(mass), dtype=bool))
        warnings += notes
        model = build_model(mech, mass, inertia)
    rows = _select_rows(model, G0, row_scale, col_scale, warnings, t=0.0)
    n_rows = model.ri.shape[0]
    w = it.make_work(model, np.r_[rows, np.zeros(n_rows - len(rows), np.int64)],
                     state.pos, state.rot, state.angle, state.vel, state.omega, q0)
    km, wk = as_kernel(model), as_kernel(w)
    joint_geometry(km, w.pos, w.rot, w.JW)
    joint_variables(km, w.pos, w.rot, w.JW, q0, w.q, w.S[0])
    _project_velocities(model, w, len(rows), rate[1], warnings)
    it.refresh(km, wk, len(rows), drv[1])
    redundant = len(rows) < n_rows
    setup = _Setup(mech, model, km, wk, h, n_steps, drv, rate, row_scale, col_scale, warnings, redundant)
    return setup, w, len(rows)


def _all_rows(model, pos, rot, drv_val) -> tuple[np.ndarray, np.ndarray]:
    """``(G (n_rows, n), g (n_rows,))`` of all constraint rows at one configuration."""
    km = as_kernel(model)
    G = np.zeros((1, model.ri.shape[0], model.m_scale.shape[0]))
    jacobians(km, pos[None], rot[None], drv_val[None], G)
    JW = np.zeros((model.ji.shape[0], N_GEOMETRY, 3))
    joint_geometry(km, pos, rot, JW)
    g = np.array([eval_row(km, i, rot, JW, drv_val)[0] for i in range(len(G[0]))])
    return G[0], g


def _check_assembly(mech, model, g, drv_val, size):
    if not len(g) or np.abs(g).max() <= ASSEMBLY_TOL * max(size, 1.0):
        return
    i = int(np.argmax(np.abs(g)))
    if model.ri[i, R_DRV] >= 0:
        d = model.ri[i, R_DRV]
        raise ValueError(f"q0 does not match motion driver '{mech.driver_names[d]}' at t = 0: the driven "
                         f"variable differs from the prescribed value {drv_val[d]:.6g} by {g[i]:.3g}")
    raise ValueError(f"q0 is not an assembled configuration: joint '{mech.joint_names[model.ri[i, R_JOINT]]}' "
                     f"is violated by {abs(g[i]):.3g} (m or rad); solve the loop closure first")


def _needs_regularisation(model, rot, G) -> bool:
    """True when the mass matrix is not positive definite on the motions the constraints allow."""
    M = _mass_matrix(model, rot)
    if G.shape[0]:
        _, s, Vt = np.linalg.svd(G)
        rank = int(np.sum(s > 1e-9 * max(s[0], 1e-300)))
        N = Vt[rank:].T
    else:
        N = np.eye(M.shape[0])
    if N.shape[1] == 0:
        return False
    ev = np.linalg.eigvalsh(N.T @ M @ N)
    return bool(ev.min() <= 1e-12 * max(ev.max(), np.abs(M).max(), 1e-300))


def _mass_matrix(model, rot) -> np.ndarray:
    n = model.m_scale.shape[0]
    M = np.zeros((n, n))
    for b, mb in enumerate(model.b_mass):
        if model.planar:
            M[3 * b:3 * b + 3, 3 * b:3 * b + 3] = np.diag([mb, mb, model.b_inertia[b, 2, 2]])
        else:
            M[6 * b:6 * b + 3, 6 * b:6 * b + 3] = mb * np.eye(3)
            M[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = rot[b] @ model.b_inertia[b] @ rot[b].T
    return M


def _select_rows(model, G, row_scale, col_scale, warnings, t: float) -> np.ndarray:
    """Independent rows (all motion-driver rows kept) with a warning when rows are dropped."""
    drivers = np.flatnonzero(model.ri[:, R_DRV] >= 0)
    rows, rank_drv = independent_rows(G, row_scale, col_scale, drivers)
    if rank_drv < len(drivers) or _drivers_dependent(G, drivers, row_scale, col_scale):
        raise ValueError("the motion drivers over-constrain the mechanism (a driven variable is fixed by the "
                         "joints or by other drivers); drive fewer joints")
    dropped = model.ri.shape[0] - len(rows)
    if dropped:
        joints = sorted({int(model.ri[i, R_JOINT]) for i in np.setdiff1d(np.arange(len(model.ri)), rows)})
        warnings.append(f"t = {t:.6g} s: {dropped} redundant constraint equation(s) dropped (joints {joints}); "
                        "the mechanism is statically indeterminate, reactions are the minimum-norm solution")
    return rows


def _drivers_dependent(G, drivers, row_scale, col_scale) -> bool:
    """True when the motion-driver rows are not independent of the joint rows."""
    if not len(drivers):
        return False
    Gs = G * row_scale[:, None] * col_scale[None, :]
    joints = np.setdiff1d(np.arange(len(G)), drivers)
    return matrix_rank(Gs) < matrix_rank(Gs[joints]) + len(drivers)


def _project_velocities(model, w, nrow, rate0, warnings):
    """Make the initial velocities satisfy ``G v = -dg/dt`` (M-orthogonal projection)."""
    n = model.m_scale.shape[0]
    rows = w.rows[:nrow]
    G = _all_rows(model, w.pos, w.rot, np.zeros(rate0.shape))[0][rows]
    M = _mass_matrix(model, w.rot)
    v = _velocity_vector(model, w)
    target = np.array([rate0[d] if d >= 0 else 0.0 for d in model.ri[rows, R_DRV]])
    K = np.block([[M, G.T], [G, np.zeros((nrow, nrow))]])
    sol = np.linalg.lstsq(K, np.r_[M @ v, target], rcond=None)[0]
    change = np.abs(sol[:n] - v).max() if n else 0.0
    if change > 1e-9 * max(1.0, np.abs(v).max()):
        warnings.append(f"qd0 was not consistent with the constraints or the drivers' rates; projected "
                        f"(largest change {change:.3g} m/s or rad/s)")
        nd = 3 if model.planar else 6
        for b in range(len(model.b_mass)):
            vb = sol[nd * b:nd * b + nd]
            if model.planar:
                w.vel[b] = (vb[0], vb[1], 0.0)
                w.omg[b] = (0.0, 0.0, vb[2])
            else:
                w.vel[b], w.omg[b] = vb[:3], vb[3:]


def _velocity_vector(model, w) -> np.ndarray:
    if model.planar:
        return np.column_stack([w.vel[:, 0], w.vel[:, 1], w.omg[:, 2]]).ravel()
    return np.column_stack([w.vel, w.omg]).ravel()


# --- run ----------------------------------------------------------------------------------------------
def _run(setup, w, nrow, tol, max_iter, save_row, out, progress):
    h, n = setup.h, setup.n_steps
    mu_prev = _backward_multipliers(setup, w, nrow, tol, max_iter)
    acc, stats = np.zeros(3), np.zeros(2)
    chunk = max(1, (n + 1) // 100) if progress is not None else n + 1
    k, reselect = 0, 0
    while k <= n:
        k1 = min(k + chunk, n + 1)
        status, k_done, err = it.run_steps(setup.km, setup.wk, nrow, k, k1, n, h, setup.drv, setup.rate, tol, max_iter,
                                           save_row, out, acc, mu_prev, stats)
        if status == it.OK:
            if progress is not None and min(k1, n) > min(k, n):
                progress(min(k1, n) * h)
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
    G = _all_rows(model, w.pos, w.rot, setup.drv[k + 1])[0]
    old = w.rows[:nrow].copy()
    try:
        rows = _select_rows(model, G, setup.row_scale, setup.col_scale, [], t=k * setup.h)
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
    force, moment = reaction_history(model, o.pos, o.rot, drv, lam)
    axial, tors = element_history(model, o.pos, o.rot, o.vel, o.omg, o.q, o.qd)
    kin, pot = energy_history(model, o.pos, o.rot, o.vel, o.omg, o.q)
    T = link_poses(mech, o.pos, o.rot)
    return SimulationResult(
        t=nodes * setup.h, status=it.STATUS_NAMES[status], message=message, q=o.q, qd=o.qd,
        link_pose=T, link_velocity=link_velocities(mech, o.rot, o.vel, o.omg),
        effector_pose=forward.effector_pose(mech, T),
        axial_length=axial[..., 0], axial_rate=axial[..., 1], axial_force=axial[..., 2],
        torsional_angle=tors[..., 0], torsional_rate=tors[..., 1], torsional_torque=tors[..., 2],
        reaction_force=force, reaction_moment=moment, driver_force=_driver_force(mech, model, lam, drv),
        kinetic=kin, potential=pot, total=kin + pot,
        work_dampers=o.work[:, 0], work_drivers=o.work[:, 1], work_loads=o.work[:, 2],
        constraint_residual=o.res, warnings=tuple(setup.warnings), dt=setup.h, newton_iterations=int(stats[0]))


def _driver_force(mech, model, lam, drv) -> np.ndarray:
    """(n_s, n_drivers): minus the motion rows' multipliers, the applied torque otherwise."""
    out = drv.copy()
    for i in np.flatnonzero(model.ri[:, R_DRV] >= 0):
        out[:, model.ri[i, R_DRV]] = -lam[:, i]
    return out
