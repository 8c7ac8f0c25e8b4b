"""Preparation of a simulation: the model arrays, the initial body state from the joint
state, checks of the start (assembled, consistent with the motion drivers), regularisation of
massless links where needed, the independent constraint rows and consistent velocities."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..loop_closure import mechanism_size
from ..mechanism import CompiledMechanism
from ..profiles import evaluate_profile
from . import integrator as it
from .accuracy import closure_tolerance, whole_steps
from .bodies import inertial_properties, regularise, state_from_joints
from .constraints import eval_row, independent_rows, matrix_rank, row_scaling
from .kinematics import joint_geometry, joint_variables
from .layout import N_GEOMETRY, R_DRIVER, R_JOINT
from .model import DynModel, build_model
from .reactions import jacobians
from .structs import as_kernel

ASSEMBLY_TOL = 1e-6  # |constraint| (m or rad, relative to the mechanism size) accepted in q0


@dataclass
class Setup:
    """Everything fixed for one run."""

    mech: CompiledMechanism
    model: DynModel  # arrays (Python side)
    km: object  # the same arrays as a kernel record (structs.as_kernel)
    wk: object  # the integrator's work arrays as a kernel record
    h: float
    n_steps: int
    drv: np.ndarray  # (n_steps + 3, n_drivers) driver values at t = (i - 1) h
    rate: np.ndarray  # same, rates
    drv_acc: np.ndarray  # same, prescribed accelerations
    row_scale: np.ndarray
    col_scale: np.ndarray
    warnings: list
    redundant: bool  # some rows were dropped (now or at a re-selection)
    spring_modes: tuple = ()  # modes.SpringMode of every spring at t = 0 (set by the runner)
    tol: float = 1e-10  # the run's relative Newton tolerance (closure tolerance: tol times the model length)
    reselection_times: list = field(default_factory=list)  # s, times the independent rows were picked again


def _driver_tables(mech, h, n_steps):
    t = (np.arange(n_steps + 3) - 1.0) * h
    nd = len(mech.driver_names)
    drv, rate, acc = np.zeros((len(t), nd)), np.zeros((len(t), nd)), np.zeros((len(t), nd))
    for d, prof in enumerate(mech.driver_profile):
        drv[:, d], rate[:, d], acc[:, d] = evaluate_profile(prof, t)
    return drv, rate, acc


def prepare(mech: CompiledMechanism, q0: np.ndarray, qd0: np.ndarray, t_end: float, dt: float,
            tol: float | None = None):
    """``(Setup, Work, number of active rows)`` for a run from joint state ``q0``, ``qd0`` (SI)
    over ``t_end`` s in whole steps of about ``dt`` s, the work arrays holding the initial state
    and its forces, constraint Jacobian and damper data. Raises ValueError for a start that is
    not assembled (to ``tol`` times the mechanism size, the run's closure tolerance, when
    given), contradicts a motion driver, or for over-constraining drivers."""
    n_steps, h = whole_steps(t_end, dt)
    drv, rate, drv_acc = _driver_tables(mech, h, n_steps)
    state = state_from_joints(mech, q0, qd0)
    mass, inertia = inertial_properties(mech)
    size = mechanism_size(mech)
    warnings: list[str] = []
    model = build_model(mech, mass, inertia)
    row_scale, col_scale = row_scaling(model, size)
    G0, g0 = all_rows(model, state.pos, state.rot, drv[1])
    _check_assembly(mech, model, g0, drv[1], size)
    if tol is not None:
        _check_closure(mech, model, g0, row_scale, state.pos, size, tol)
    if _needs_regularisation(model, state.rot, G0):
        mass, inertia, notes = regularise(mass, inertia, mech.planar, mech.link_names[1:], size)
        warnings += notes
        model = build_model(mech, mass, inertia)
    rows = select_rows(model, G0, row_scale, col_scale, warnings, t=0.0, joint_names=mech.joint_names)
    n_rows = model.row_index.shape[0]
    w = it.make_work(model, np.r_[rows, np.setdiff1d(np.arange(n_rows), rows)],  # the dropped rows last
                     state.pos, state.rot, state.angle, state.vel, state.omega, q0)
    it.order_unknowns(model, w, len(rows))
    km, wk = as_kernel(model), as_kernel(w)
    joint_geometry(km, w.pos, w.rot, w.JW)
    joint_variables(km, w.pos, w.rot, w.JW, q0, w.q, w.S[0])
    _project_velocities(model, w, len(rows), rate[1], warnings)
    it.refresh(km, wk, len(rows), drv[1])
    redundant = len(rows) < n_rows
    setup = Setup(mech, model, km, wk, h, n_steps, drv, rate, drv_acc, row_scale, col_scale, warnings, redundant)
    return setup, w, len(rows)


def all_rows(model, pos, rot, drv_val) -> tuple[np.ndarray, np.ndarray]:
    """``(G (n_rows, n), g (n_rows,))`` of all constraint rows at one configuration."""
    km = as_kernel(model)
    G = np.zeros((1, model.row_index.shape[0], model.coordinate_scale.shape[0]))
    jacobians(km, pos[None], rot[None], drv_val[None], G)
    JW = np.zeros((model.joint_index.shape[0], N_GEOMETRY, 3))
    joint_geometry(km, pos, rot, JW)
    g = np.array([eval_row(km, i, rot, JW, drv_val)[0] for i in range(len(G[0]))])
    return G[0], g


def _check_assembly(mech, model, g, drv_val, size):
    if not len(g) or np.abs(g).max() <= ASSEMBLY_TOL * max(size, 1.0):
        return
    i = int(np.argmax(np.abs(g)))
    if model.row_index[i, R_DRIVER] >= 0:
        d = model.row_index[i, R_DRIVER]
        raise ValueError(f"q0 does not match motion driver '{mech.driver_names[d]}' at t = 0: the driven "
                         f"variable differs from the prescribed value {drv_val[d]:.6g} by {g[i]:.3g}")
    raise ValueError(f"q0 is not an assembled configuration: joint '{mech.joint_names[model.row_index[i, R_JOINT]]}' "
                     f"is violated by {abs(g[i]):.3g} (m or rad); solve the loop closure first")


def _check_closure(mech, model, g, row_scale, pos, size, tol) -> None:
    """Every row of the start within the run's closure tolerance ``tol`` times the size (m;
    the floor of :func:`.integrator.dropped_rows_closure`), or ValueError: the run's first row
    would be open by more than the steps are allowed to be."""
    gap = np.abs(g) * row_scale
    floor = closure_tolerance(tol, size, float(np.abs(pos).max(initial=0.0)))
    if not len(gap) or gap.max() <= floor:
        return
    i = int(np.argmax(gap))
    raise ValueError(f"q0 is not assembled to the run's closure tolerance {tol * size:.3g} m (tol {tol:g} times the "
                     f"mechanism size): joint '{mech.joint_names[model.row_index[i, R_JOINT]]}' is open by "
                     f"{gap[i]:.3g} m; solve the loop closure more precisely, or loosen tol")


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


def mass_matrix(planar: bool, mass: np.ndarray, inertia: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """The block-diagonal mass matrix of the bodies (planar: (m, m, Izz) per body; spatial: m I3
    and the world inertia R I R^T per body), kg and kg m^2, for the masses ``mass`` (n_b,) and
    body-frame inertias ``inertia`` (n_b, 3, 3) at body rotations ``rot`` (n_b, 3, 3)."""
    nd = 3 if planar else 6
    M = np.zeros((nd * len(mass),) * 2)
    for b, mb in enumerate(mass):
        if planar:
            M[3 * b:3 * b + 3, 3 * b:3 * b + 3] = np.diag([mb, mb, inertia[b, 2, 2]])
        else:
            M[6 * b:6 * b + 3, 6 * b:6 * b + 3] = mb * np.eye(3)
            M[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = rot[b] @ inertia[b] @ rot[b].T
    return M


def _mass_matrix(model, rot) -> np.ndarray:
    return mass_matrix(bool(model.planar), model.body_mass, model.body_inertia, rot)


def select_rows(model, G, row_scale, col_scale, warnings, t: float, joint_names=None) -> np.ndarray:
    """Independent rows (all motion-driver rows kept) with a warning naming the joints whose
    rows are dropped (``joint_names``; indices when not given)."""
    drivers = np.flatnonzero(model.row_index[:, R_DRIVER] >= 0)
    rows, rank_drv = independent_rows(G, row_scale, col_scale, drivers)
    if rank_drv < len(drivers) or _drivers_dependent(G, drivers, row_scale, col_scale):
        raise ValueError("the motion drivers over-constrain the mechanism (a driven variable is fixed by the "
                         "joints or by other drivers); drive fewer joints")
    dropped = model.row_index.shape[0] - len(rows)
    if dropped:
        joints = sorted({int(model.row_index[i, R_JOINT]) for i in np.setdiff1d(np.arange(len(model.row_index)), rows)})
        names = ", ".join(f"'{joint_names[j]}'" if joint_names is not None else str(j) for j in joints)
        warnings.append(f"t = {t:.6g} s: {dropped} redundant constraint equation(s) dropped (joints {names}); "
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
    n = model.coordinate_scale.shape[0]
    rows = w.rows[:nrow]
    G = all_rows(model, w.pos, w.rot, np.zeros(rate0.shape))[0][rows]
    M = _mass_matrix(model, w.rot)
    v = _velocity_vector(model, w)
    target = np.array([rate0[d] if d >= 0 else 0.0 for d in model.row_index[rows, R_DRIVER]])
    K = np.block([[M, G.T], [G, np.zeros((nrow, nrow))]])
    sol = np.linalg.lstsq(K, np.r_[M @ v, target], rcond=None)[0]
    change = np.abs(sol[:n] - v).max() if n else 0.0
    if change > 1e-9 * max(1.0, np.abs(v).max()):
        warnings.append(f"qd0 was not consistent with the constraints or the drivers' rates; projected "
                        f"(largest change {change:.3g} m/s or rad/s)")
        nd = 3 if model.planar else 6
        for b in range(len(model.body_mass)):
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
