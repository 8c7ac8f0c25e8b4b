"""Forces along a motion: inverse dynamics, kinetostatics, shaking forces, static equilibrium.

One algorithm, the dynamics model's (:mod:`linkcli.core.dynamics`): every moving link is a body
in maximal coordinates, every joint and every actuated input is a constraint row, and the
Newton-Euler equations of all bodies at one instant read

    M a + gyro = Q(x, v) - G(x)^T lambda

with ``Q`` the applied generalized force (gravity, springs, dampers, constant loads) and ``G``
the Jacobian of all constraint rows, both evaluated by
:func:`linkcli.core.dynamics.node_multipliers.rows_and_forces` (the evaluation behind
``simulate``'s reactions), and ``lambda`` the multipliers. Along
a kinematic sweep the motion (positions, velocities, accelerations) is known, so ``lambda`` is
the solution of one linear system per point, ``G^T lambda = Q - M a - gyro``, solved for all
points at once. Each actuated input is a motion-driver row (the driving torque/force is minus
its multiplier, as in ``simulate``); joint reactions come from the multipliers through
:func:`linkcli.core.dynamics.outputs.sample_outputs`, the same code that reports ``simulate``'s
reactions, so they mean exactly the same thing: the wrench the joint's own constraint exerts ON
ITS CHILD, world frame, moment about the child's joint-frame origin (the parent gets the
opposite); a driver's torque/force is not part of it (``driver_force`` only, see
:mod:`linkcli.core.dynamics.reactions`).

Statically indeterminate mechanisms (more independent-looking rows than body coordinates, e.g.
a spatial model of a planar loop) get the minimum-norm multipliers of the scaled system (angular
rows times the mechanism size, as ``simulate``), with a warning.

Kinetostatics (``static``) is the same with zero velocities and accelerations. The static
equilibrium of a mechanism whose inputs are free (nothing holds them) is where the holding
torque vanishes; its reduced stiffness ``K = d tau / d theta`` (N m/rad or N/m) is computed
analytically from second-order kinematic coefficients (:func:`reduced_stiffness`); ``K > 0``
(positive definite for several inputs) is stable.

Numerics only (no I/O); SI units, world frame throughout.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, replace

import numpy as np

from .dynamics.bodies import inertial_properties
from .dynamics.constraints import matrix_rank, row_scaling
from .dynamics.layout import N_GEOMETRY, R_DRIVER
from .dynamics.model import build_model
from .dynamics.node_multipliers import rows_and_forces
from .dynamics.outputs import sample_outputs
from .dynamics.structs import as_kernel
from .forward import tree_kinematics
from .jit import maybe_njit
from .loop_closure import SINGULAR_CONDITION, mechanism_size  # size (m); one threshold
from .mechanism import DRIVE_MOTION, CompiledMechanism, Profile
from .velocity import (
    joint_accelerations,
    joint_rates,
    link_accelerations,
    point_acceleration,
    point_velocity,
)

OK, NO_ASSEMBLY, SINGULAR = 0, 1, 2
STATUS_NAMES = ("ok", "no_assembly", "singular")

@dataclass(frozen=True)
class ExtraLoad:
    """A constant load added for this analysis: ``force`` (3,) N world at frame ``frame``
    (index), and ``torque`` (3,) N m world on that frame's link."""

    frame: int
    force: np.ndarray
    torque: np.ndarray


def driven_mechanism(mech: CompiledMechanism, extra_loads: list[ExtraLoad] = (),
                     gravity: np.ndarray | None = None) -> CompiledMechanism:
    """``mech`` with a motion driver on every actuated variable (named after it) instead of the
    file's drivers, the ``extra_loads`` appended to its loads and optionally another gravity.

    Raises ValueError when an actuated variable belongs to a joint with several variables (the
    dynamics' driver rows act on one-variable joints)."""
    act = np.asarray(mech.q_actuated, dtype=np.int64)
    multi = [mech.q_names[k] for k in act if mech.joint_q_count[mech.q_joint[k]] != 1]
    if multi:
        raise ValueError(f"forces needs actuated revolute or prismatic joints; {', '.join(multi)} belong(s) to "
                         "joints with several variables")
    changes: dict = {"driver_names": tuple(mech.q_names[k] for k in act), "driver_q": act.copy(),
                         "driver_kind": np.full(len(act), DRIVE_MOTION, dtype=np.int64),
                         "driver_profile": tuple(Profile("constant", {"value": 0.0}) for _ in act)}
    if extra_loads:
        f = np.array([ld.frame for ld in extra_loads], dtype=np.int64)
        changes.update(
            load_names=mech.load_names + tuple(f"load_{mech.frame_names[i]}" for i in f),
            load_link=np.r_[mech.load_link, mech.frame_link[f]].astype(np.int64),
            load_point=np.r_[mech.load_point.reshape(-1, 3), mech.T_link_frame[f, :3, 3]],
            load_force=np.r_[mech.load_force.reshape(-1, 3), [ld.force for ld in extra_loads]],
            load_torque=np.r_[mech.load_torque.reshape(-1, 3), [ld.torque for ld in extra_loads]])
    if gravity is not None:
        changes["gravity"] = np.asarray(gravity, dtype=float)
    return replace(mech, **changes)


@dataclass(frozen=True)
class BodyMotion:
    """Body states over ``n`` points (see dynamics.bodies): pos, vel, acc (n, n_b, 3) CG in
    world, m, m/s, m/s^2; rot (n, n_b, 3, 3); omg, alpha (n, n_b, 3) rad/s, rad/s^2 world."""

    pos: np.ndarray
    rot: np.ndarray
    vel: np.ndarray
    acc: np.ndarray
    omg: np.ndarray
    alpha: np.ndarray


def body_motion(mech: CompiledMechanism, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> BodyMotion:
    """Body (CG) motion of every moving link from joint positions, rates and accelerations
    (n, n_q) (kinematics of :mod:`linkcli.core.velocity`, all points at once)."""
    kin = tree_kinematics(mech, q, jacobian=True)
    V, A, _ = link_accelerations(mech, kin, qd, qdd)
    rot = np.ascontiguousarray(kin.T_world_link[:, 1:, :3, :3])
    pos = kin.T_world_link[:, 1:, :3, 3] + np.einsum("nbij,bj->nbi", rot, mech.link_cg[1:])
    Vb, Ab = V[:, 1:], A[:, 1:]
    vel, acc = point_velocity(Vb, pos), point_acceleration(Vb, Ab, pos)
    omg, alpha = Vb[..., 3:].copy(), Ab[..., 3:].copy()
    if mech.planar:  # exactly in the plane, like dynamics.bodies.state_from_joints
        for a in (pos, vel, acc):
            a[..., 2] = 0.0
        for a in (omg, alpha):
            a[..., :2] = 0.0
    c = np.ascontiguousarray
    return BodyMotion(c(pos), rot, c(vel), c(acc), c(omg), c(alpha))


def _generalized(planar: bool, lin: np.ndarray, ang: np.ndarray) -> np.ndarray:
    """(n, n_b, 3) linear and angular parts -> (n, nd * n_b) in the dynamics' layout."""
    if planar:
        return np.concatenate([lin[..., :2], ang[..., 2:3]], axis=-1).reshape(len(lin), -1)
    return np.concatenate([lin, ang], axis=-1).reshape(len(lin), -1)


def _inertia_terms(model, bm: BodyMotion) -> tuple[np.ndarray, np.ndarray]:
    """``(force (n, n_b, 3), moment (n, n_b, 3))``: ``m a`` and ``I_w alpha + w x I_w w`` (about
    the CG, world) of every body: the rate of change of its momentum. Planar bodies turn about
    z only: ``Izz alpha_z`` (no gyroscopic term)."""
    force = model.body_mass[None, :, None] * bm.acc
    if model.planar:
        moment = np.zeros_like(bm.alpha)
        moment[..., 2] = model.body_inertia[None, :, 2, 2] * bm.alpha[..., 2]
        return force, moment
    I_w = bm.rot @ model.body_inertia[None] @ np.swapaxes(bm.rot, -1, -2)
    Iw = (I_w @ bm.omg[..., None])[..., 0]
    moment = (I_w @ bm.alpha[..., None])[..., 0] + np.cross(bm.omg, Iw)
    return force, moment


@maybe_njit
def _rows_and_loads(m, pos, rot, q, v, drv, G, Q):
    """Per point ``p``: Jacobian ``G[p]`` (n_rows, n) of all constraint rows and applied force
    ``Q[p]`` (n,): gravity, springs, constant loads and dampers at the generalized velocity
    ``v[p]`` (dynamics.node_multipliers.rows_and_forces, the same evaluation as simulate's
    reactions)."""
    n_rows, n_e, n = m.row_index.shape[0], m.damper_index.shape[0], Q.shape[1]
    rows = np.arange(n_rows)
    g = np.zeros(n_rows)
    JW = np.zeros((m.joint_index.shape[0], N_GEOMETRY, 3))
    s, D = np.zeros(n_e), np.zeros((n_e, n))
    for p in range(pos.shape[0]):
        rows_and_forces(m, pos[p], rot[p], q[p], v[p], drv[p], JW, g, G[p], Q[p], s, D, rows)


@dataclass(frozen=True, eq=False)
class ForcesResult:
    """Forces at ``n`` points of a motion (SI, world frame unless said otherwise); rows of
    points whose ``status`` is not OK hold NaN.

    status (n,) int: OK, NO_ASSEMBLY (kinematics failed there), SINGULAR (toggle/dead centre:
        no finite input torque balances the loads; kinematic condition > SINGULAR_CONDITION).
    driver_force (n, n_act): torque (N m) or force (N) each actuated joint applies to its child
        along its variable (what the motor must deliver; = ``simulate``'s driver torque).
    reaction_force (n, n_j, 3) N, reaction_moment (n, n_j, 3) N m: wrench of each joint on its
        child from the joint's own constraint (the driving torque/force is ``driver_force``
        only: a revolute's moment about its axis is 0), moment about the child's joint-frame
        origin; ``*_local``: the same in the child's joint-frame axes.
    axial (n, n_axial, 3): length m, rate m/s, force N (tension positive);
    torsional (n, n_tors, 3): angle rad, rate rad/s, torque N m on the child.
    inertia_force (n, n_b, 3) N, inertia_moment (n, n_b, 3) N m: d'Alembert loads ``-m a`` and
        ``-(I alpha + w x I w)`` about each body's CG.
    shaking_force (n, 3) N, shaking_moment (n, 3) N m: resultant wrench the moving links exert
        on the ground (through joints, motors and elements attached to it), moment about the
        world origin: external loads on the moving links (gravity included) minus the rate of
        change of their momentum.
    power_input (n,) W: sum of driver_force times input rate; kinetic_rate (n,) W: dT/dt;
        power_applied (n,) W: power of gravity, springs, dampers and loads. Their balance
        ``power_input + power_applied - kinetic_rate`` is zero up to round-off.
    kinetic, potential (n,) J; residual (n,): largest |constraint row| (m or rad) at the point.
    balance_residual (n,) N: largest |G^T lambda - (Q - M a)| of the solve, moment components
        divided by the mechanism size (m, :func:`linkcli.core.loop_closure.mechanism_size`).
    warnings: statically indeterminate (minimum-norm reactions) and the like.
    kernel_cpu_s, kernel_points: CPU seconds spent in the kernels (numba-compiled or interpreted: constraint
        rows and applied forces, then the per-point outputs), a first call's compile or cache
        load included, and the number of points they ran at; what the analysis records for its
        compile decision (:mod:`.jit`).
    """

    status: np.ndarray
    driver_force: np.ndarray
    reaction_force: np.ndarray
    reaction_moment: np.ndarray
    reaction_force_local: np.ndarray
    reaction_moment_local: np.ndarray
    axial: np.ndarray
    torsional: np.ndarray
    inertia_force: np.ndarray
    inertia_moment: np.ndarray
    shaking_force: np.ndarray
    shaking_moment: np.ndarray
    power_input: np.ndarray
    kinetic_rate: np.ndarray
    power_applied: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    residual: np.ndarray
    balance_residual: np.ndarray
    warnings: tuple[str, ...]
    kernel_cpu_s: float = 0.0
    kernel_points: int = 0


def inverse_dynamics(mech: CompiledMechanism, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                     ok: np.ndarray | None = None, condition: np.ndarray | None = None, *,
                     extra_loads: list[ExtraLoad] = (), gravity: np.ndarray | None = None) -> ForcesResult:
    """Driving forces, joint reactions, element forces and shaking wrench at ``n`` points of a
    motion given by joint positions ``q``, rates ``qd`` and accelerations ``qdd`` (n, n_q) SI
    (assembled and consistent: from :mod:`linkcli.core.sweep` and :mod:`linkcli.core.velocity`).

    ``ok`` (n,) marks the points whose kinematics succeeded (others: NO_ASSEMBLY); ``condition``
    (n,) the kinematic condition number (above SINGULAR_CONDITION: SINGULAR). Zero ``qd`` and
    ``qdd`` give kinetostatics. Raises ValueError when the actuated inputs do not determine the
    motion of every loaded link (free degrees of freedom: see :func:`find_equilibria`).
    """
    q, qd, qdd = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, qd, qdd))
    n = len(q)
    ok = np.ones(n, bool) if ok is None else np.asarray(ok, bool).copy()
    status = np.where(ok, OK, NO_ASSEMBLY)
    if condition is not None:
        sing = ok & ~(np.asarray(condition) <= SINGULAR_CONDITION)
        status[sing] = SINGULAR
        ok &= ~sing
    if mech.n_links < 2:
        raise ValueError("the mechanism has no moving link")
    dm = driven_mechanism(mech, extra_loads, gravity)
    mass, inertia = inertial_properties(dm)
    model = build_model(dm, mass, inertia)
    nb, nj, n_act = len(mass), mech.n_joints, mech.n_actuated
    idx = np.flatnonzero(ok)
    warnings: list[str] = []
    out = _empty(n, nb, nj, n_act, len(mech.axial_names), len(mech.torsional_names), status, ())
    if not len(idx):
        return out
    qs, qds, qdds = q[idx], qd[idx], qdd[idx]
    bm = body_motion(dm, qs, qds, qdds)
    v_gen = _generalized(dm.planar, bm.vel, bm.omg)
    f_in, m_in = _inertia_terms(model, bm)
    Ma = _generalized(dm.planar, f_in, m_in)
    drv = np.ascontiguousarray(qs[:, dm.driver_q])
    n_rows, n_gen = model.row_index.shape[0], v_gen.shape[1]
    G, Q = np.zeros((len(idx), n_rows, n_gen)), np.zeros((len(idx), n_gen))
    clock = time.process_time()
    _rows_and_loads(as_kernel(model), bm.pos, bm.rot, np.ascontiguousarray(qs), v_gen, drv, G, Q)
    kernel_s = time.process_time() - clock
    lam, redundant, idle = _multipliers(model, G, Q - Ma, mechanism_size(dm))
    unbalanced = np.zeros(len(idx), bool)
    if idle:
        f = Q - Ma
        err = np.abs(np.einsum("nri,nr->ni", G, lam) - f).max(axis=1)
        unbalanced = ~(err <= BALANCE_RTOL * np.maximum(np.abs(f).max(axis=1), np.abs(f).max(initial=0.0)))
        if unbalanced.all():
            raise ValueError(f"the actuated inputs do not determine the motion of every link ({idle} free degree(s) "
                             "of freedom) and the loads move them: inverse dynamics needs every loaded degree of "
                             "freedom actuated; for a mechanism with free inputs use the static equilibrium")
        warnings.append(f"{idle} idle degree(s) of freedom the inputs do not drive (e.g. a link spinning about its "
                        "own axis): they carry no load" + (f"; at {int(unbalanced.sum())} point(s) the loads move "
                                                            "them (status singular)" if unbalanced.any() else ""))
    if redundant:
        warnings.append(f"{redundant} redundant constraint equation(s): the mechanism is statically indeterminate, "
                        "reactions are the minimum-norm solution")
    clock = time.process_time()
    s = sample_outputs(model, dm.link_cg[1:], bm.pos, bm.rot, bm.vel, bm.omg, qs, drv, lam)
    kernel_s += time.process_time() - clock
    drv_rows = np.flatnonzero(model.row_index[:, R_DRIVER] >= 0)
    driver_force = np.zeros((len(idx), n_act))
    driver_force[:, model.row_index[drv_rows, R_DRIVER]] = -lam[:, drv_rows]
    bad = ~np.all(np.isfinite(lam), axis=1) | unbalanced
    F_sh, M_sh = _shaking(dm, model, bm, f_in, m_in)
    f_local, m_local = _to_joint_frames(dm, s.link_pose, s.force, s.moment)
    fill = {
        "driver_force": driver_force, "reaction_force": s.force, "reaction_moment": s.moment,
        "reaction_force_local": f_local, "reaction_moment_local": m_local,
        "axial": s.axial, "torsional": s.torsional, "inertia_force": -f_in, "inertia_moment": -m_in,
        "shaking_force": F_sh, "shaking_moment": M_sh,
        "power_input": np.einsum("nk,nk->n", driver_force, qds[:, dm.driver_q]),
        "kinetic_rate": np.einsum("ni,ni->n", v_gen, Ma), "power_applied": np.einsum("ni,ni->n", v_gen, Q),
        "kinetic": s.kinetic, "potential": s.potential, "residual": s.residual,
        # moments (N m) divided by the mechanism size: every component a force (N)
        "balance_residual": np.abs((np.einsum("nri,nr->ni", G, lam) - (Q - Ma))
                                   * row_scaling(model, mechanism_size(dm))[1]).max(axis=1, initial=0.0)}
    for name, value in fill.items():
        arr = getattr(out, name)
        arr[idx] = np.where(bad.reshape((-1,) + (1,) * (value.ndim - 1)), np.nan, value)
    status[idx[bad]] = SINGULAR
    return replace(out, warnings=tuple(warnings), kernel_cpu_s=kernel_s, kernel_points=len(idx))


def _empty(n, nb, nj, n_act, n_ax, n_to, status, warnings) -> ForcesResult:
    def f(*shape: int) -> np.ndarray:
        return np.full((n,) + shape, np.nan)

    return ForcesResult(status, f(n_act), f(nj, 3), f(nj, 3), f(nj, 3), f(nj, 3), f(n_ax, 3), f(n_to, 3),
                        f(nb, 3), f(nb, 3), f(3), f(3), f(), f(), f(), f(), f(), f(), f(), warnings)


def _multipliers(model, G: np.ndarray, rhs: np.ndarray, size: float) -> tuple[np.ndarray, int, int]:
    """``lambda`` (n, n_rows) with ``G^T lambda = rhs`` at every point, the number of redundant
    rows and the number of idle freedoms. Scaled like simulate's reactions (angular rows times
    ``size`` m, rotational columns divided by it): square systems are solved by LU, redundant ones
    (more rows than body coordinates, full column rank) for the minimum-norm scaled multipliers
    ``Gs (Gs^T Gs)^-1 rhs_s``. When the rows leave freedoms the inputs do not drive (idle motions
    such as a coupler spinning about its own axis), the least-squares minimum-norm multipliers
    (pseudo-inverse); the caller checks that the loads on those freedoms balance. Singular
    points get NaN."""
    row_scale, col_scale = row_scaling(model, size)
    Gs = G * row_scale[:, None] * col_scale[None, :]
    b = rhs * col_scale
    n_rows, n_gen = G.shape[1], G.shape[2]
    # the structural rank: the largest over a few points spread along the path (a point that
    # happens to sit near a singular position must not decide it)
    probe = np.unique(np.linspace(0, len(Gs) - 1, min(len(Gs), 5)).astype(int)) if len(Gs) else []
    rank = max((matrix_rank(Gs[p]) for p in probe), default=min(n_rows, n_gen))
    if rank < n_gen:
        GsT = np.swapaxes(Gs, 1, 2)
        lam_s = np.einsum("nri,ni->nr", np.linalg.pinv(GsT, rcond=1e-9), b)
        return lam_s * row_scale, n_rows - rank, n_gen - rank
    A = np.swapaxes(Gs, 1, 2) if n_rows == n_gen else np.einsum("nri,nrj->nij", Gs, Gs)
    x = _solve_batch(A, b)
    lam_s = x if n_rows == n_gen else np.einsum("nri,ni->nr", Gs, x)
    return lam_s * row_scale, n_rows - n_gen, 0


#: relative force-balance residual above which a point with idle freedoms is not balanced
BALANCE_RTOL = 1e-8


def _solve_batch(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``A x = b`` for every point by LU (one batched LAPACK call); exactly singular points NaN."""
    try:
        return np.linalg.solve(A, b[..., None])[..., 0]
    except np.linalg.LinAlgError:  # some point exactly singular: solve one by one, NaN there
        out = np.full(b.shape, np.nan)
        for p in range(len(A)):
            try:
                out[p] = np.linalg.solve(A[p], b[p])
            except np.linalg.LinAlgError:
                pass
        return out


def _shaking(dm, model, bm: BodyMotion, f_in, m_in) -> tuple[np.ndarray, np.ndarray]:
    """Wrench on the ground (force N, moment N m about the world origin): external loads on the
    moving links (gravity, constant loads) minus the rate of change of their momentum."""
    weight = model.body_mass[None, :, None] * dm.gravity[None, None, :]
    F = (weight - f_in).sum(axis=1)
    M = (np.cross(bm.pos, weight - f_in) - m_in).sum(axis=1)
    moving = np.flatnonzero(dm.load_link > 0)
    if len(moving):
        lb = dm.load_link[moving] - 1
        R = bm.rot[:, lb]
        p = bm.pos[:, lb] + np.einsum("nlij,lj->nli", R, dm.load_point[moving] - dm.link_cg[dm.load_link[moving]])
        F = F + dm.load_force[moving].sum(axis=0)
        M = M + np.cross(p, dm.load_force[moving][None]).sum(axis=1) + dm.load_torque[moving].sum(axis=0)
    if dm.planar:
        F[:, 2] = 0.0
        M[:, :2] = 0.0
    return F, M


def _to_joint_frames(dm, link_pose: np.ndarray, force: np.ndarray, moment: np.ndarray):
    """World reactions (n, n_j, 3) in each joint's child-side joint-frame axes. Planar: one
    rotation angle per joint frame (cos/sin arithmetic instead of 3x3 products)."""
    if dm.planar:
        R_link = link_pose[:, dm.joint_child][..., :2, 0]  # (cos, sin) of the child link
        Rj = dm.T_child_joint[:, :2, 0]  # (cos, sin) of the joint frame on it
        c = R_link[..., 0] * Rj[None, :, 0] - R_link[..., 1] * Rj[None, :, 1]
        s = R_link[..., 1] * Rj[None, :, 0] + R_link[..., 0] * Rj[None, :, 1]
        out = []
        for v in (force, moment):
            w = v.copy()
            w[..., 0] = c * v[..., 0] + s * v[..., 1]
            w[..., 1] = -s * v[..., 0] + c * v[..., 1]
            out.append(w)
        return out[0], out[1]
    R = link_pose[:, dm.joint_child, :3, :3] @ dm.T_child_joint[None, :, :3, :3]
    RT = np.swapaxes(R, -1, -2)
    return (RT @ force[..., None])[..., 0], (RT @ moment[..., None])[..., 0]


# --- static equilibrium ---------------------------------------------------------------------------
@dataclass(frozen=True)
class StiffnessTerms:
    """Reduced quantities at ``n`` static configurations (``m`` inputs): ``holding`` (n, m) the
    torque/force each input must apply to hold the configuration (N m or N; zero at an
    equilibrium), ``stiffness`` (n, m, m) ``d holding / d input`` (N m/rad, N/m ...)."""

    holding: np.ndarray
    stiffness: np.ndarray


def reduced_stiffness(mech: CompiledMechanism, q: np.ndarray, *, extra_loads: list[ExtraLoad] = (),
                      gravity: np.ndarray | None = None) -> StiffnessTerms:
    """Holding torque ``tau = -Q_in`` and stiffness ``K = d tau / d theta`` of the inputs at
    assembled configurations ``q`` (n, n_q) under gravity, springs and constant loads (dampers
    do nothing at rest).

    ``Q_in,i = sum_loads F . dp/dtheta_i`` (virtual work), so ``K_ij = -dQ_in,i/dtheta_j`` needs
    the second-order kinematic coefficients ``d2p / dtheta_i dtheta_j``: the accelerations at
    unit input rates with zero input acceleration, polarised (``(a(e_i + e_j) - a(e_i) -
    a(e_j)) / 2``). Analytic throughout; the symmetric part of ``K`` is returned (exact for
    gravity, springs and point forces, which derive from a potential).
    """
    dm = driven_mechanism(mech, extra_loads, gravity)
    q = np.atleast_2d(np.asarray(q, dtype=float))
    n, m_in = len(q), mech.n_actuated
    E = np.eye(m_in)
    unit = [_derivatives(dm, q, E[i]) for i in range(m_in)]
    tau = np.zeros((n, m_in))
    K = np.zeros((n, m_in, m_in))
    for i in range(m_in):
        qd_i, P_i, second_i = unit[i]
        tau[:, i] = -_virtual_power(dm, q, P_i, qd_i)
        for j in range(i, m_in):
            qd_j, P_j, second_j = unit[j]
            if i == j:
                second = second_i
            else:  # polarisation: d2/dtheta_i dtheta_j = (D2(e_i + e_j) - D2(e_i) - D2(e_j)) / 2
                both = _derivatives(dm, q, E[i] + E[j])[2]
                second = {key: 0.5 * (both[key] - second_i[key] - second_j[key]) for key in both}
            K[:, i, j] = K[:, j, i] = -_power_derivative(dm, q, P_i, P_j, second, qd_i, qd_j)
    return StiffnessTerms(tau, K)


def load_holding(mech: CompiledMechanism, q: np.ndarray, extra_loads: list[ExtraLoad]) -> np.ndarray:
    """Torque (N m) or force (N) (n, n_act) each input must apply to hold ONLY the
    ``extra_loads`` at configurations ``q`` (n, n_q) SI: ``-sum F . dp/dtheta_i - T . dw/dtheta_i``
    (virtual work; gravity, springs and the file's loads excluded): the denominator of the
    mechanical advantage."""
    q = np.atleast_2d(np.asarray(q, dtype=float))
    dm = driven_mechanism(mech, extra_loads)
    n, m_in = len(q), mech.n_actuated
    first = len(mech.load_names)  # the extra loads follow the file's in driven_mechanism
    F, T = dm.load_force[first:], dm.load_torque[first:]
    out = np.zeros((n, m_in))
    E = np.eye(m_in)
    for i in range(m_in):
        qd = joint_rates(dm, q, np.broadcast_to(E[i], (n, m_in)))
        P = _load_points(dm, q, qd, np.zeros_like(qd))
        out[:, i] = -(np.einsum("li,nli->n", F, P["load"]["vel"][:, first:])
                      + np.einsum("li,nli->n", T, P["load"]["w"][:, first:]))
    return out


def _derivatives(dm, q, w):
    """``(qd, P, second)`` for the input direction ``w`` (n_act,): joint rates ``qd`` (n, n_q) of
    a unit rate along ``w``, the load points' positions and velocities ``P`` (:func:`_load_points`)
    and the second derivatives along ``w`` (accelerations at zero input acceleration): points
    ``cg, load, ax_a, ax_b``, angular ``alpha`` of loaded links, joint variables ``q``."""
    n, m_in = len(q), len(w)
    qd = joint_rates(dm, q, np.broadcast_to(w, (n, m_in)))
    qdd = joint_accelerations(dm, q, qd, np.zeros((n, m_in)))
    P = _load_points(dm, q, qd, qdd)
    second = {key: P[key]["acc"] for key in ("cg", "load", "ax_a", "ax_b")}
    second["alpha"] = P["load"]["alpha"]
    second["q"] = qdd
    return qd, P, second


def _load_points(dm, q, qd, qdd) -> dict:
    """Velocity, acceleration (and position) of every point a static load acts on, for the
    joint rates ``qd`` and accelerations ``qdd``: body CGs (gravity), load points, both ends of
    every axial element; angular velocity/acceleration of loaded links."""
    kin = tree_kinematics(dm, q, jacobian=True)
    V, A, _ = link_accelerations(dm, kin, qd, qdd)
    T = kin.T_world_link

    def pts(links, local):
        Tl = T[:, links]
        p = np.einsum("nlij,lj->nli", Tl[..., :3, :3], local) + Tl[..., :3, 3]
        return {"pos": p, "vel": point_velocity(V[:, links], p), "acc": point_acceleration(V[:, links], A[:, links], p)}

    la, lb = dm.frame_link[dm.axial_frame_a], dm.frame_link[dm.axial_frame_b]
    out = {"cg": pts(np.arange(1, dm.n_links), dm.link_cg[1:]),
           "load": pts(dm.load_link, dm.load_point),
           "ax_a": pts(la, dm.T_link_frame[dm.axial_frame_a, :3, 3]),
           "ax_b": pts(lb, dm.T_link_frame[dm.axial_frame_b, :3, 3])}
    out["load"]["w"] = V[:, dm.load_link, 3:]
    out["load"]["alpha"] = A[:, dm.load_link, 3:]
    return out


def _virtual_power(dm, q, P, qd) -> np.ndarray:
    """Generalized applied force on one input ``Q = sum F . dp/dtheta`` (n,) for the point
    velocities ``P`` of a unit input rate (gravity, constant loads, springs)."""
    mass = inertial_properties(dm)[0]  # the dynamics model's body masses
    Qv = np.einsum("b,nbi,i->n", mass, P["cg"]["vel"], dm.gravity)
    live = dm.load_link > 0
    if live.any():
        Qv += np.einsum("li,nli->n", dm.load_force * live[:, None], P["load"]["vel"])
        Qv += np.einsum("li,nli->n", dm.load_torque * live[:, None], P["load"]["w"])
    if len(dm.axial_names):
        L, _u, Ld = _axial(P)
        Qv -= np.einsum("e,ne,ne->n", dm.axial_stiffness, L - dm.axial_free_length, Ld)
    if len(dm.torsional_names):
        k = dm.joint_q_start[dm.torsional_joint]
        Qv -= np.einsum("e,ne,ne->n", dm.torsional_stiffness, q[:, k] - dm.torsional_free_angle, qd[:, k])
    return Qv


def _axial(P):
    """``(L, u, dL)`` (n, n_axial): length, unit vector from end a to b, rate along ``P``."""
    d = P["ax_b"]["pos"] - P["ax_a"]["pos"]
    L = np.linalg.norm(d, axis=-1)
    u = d / np.where(L > 0, L, 1.0)[..., None]
    dv = P["ax_b"]["vel"] - P["ax_a"]["vel"]
    return L, u, np.einsum("nei,nei->ne", u, dv)


def _power_derivative(dm, q, Pi, Pj, acc, qdi, qdj) -> np.ndarray:
    """``d Q_i / d theta_j`` (n,): ``acc`` holds the second derivatives ``d2/dtheta_i dtheta_j``
    of the load points, loaded links' rotations and joint variables (see :func:`_derivatives`)."""
    mass = inertial_properties(dm)[0]  # the dynamics model's body masses
    dQ = np.einsum("b,nbi,i->n", mass, acc["cg"], dm.gravity)
    live = dm.load_link > 0
    if live.any():
        dQ += np.einsum("li,nli->n", dm.load_force * live[:, None], acc["load"])
        dQ += np.einsum("li,nli->n", dm.load_torque * live[:, None], acc["alpha"])
    if len(dm.axial_names):
        L, u, Li = _axial(Pi)
        _, _, Lj = _axial(Pj)
        dvi = Pi["ax_b"]["vel"] - Pi["ax_a"]["vel"]
        dvj = Pj["ax_b"]["vel"] - Pj["ax_a"]["vel"]
        da = acc["ax_b"] - acc["ax_a"]
        # d2L = u . d2d + (dd_i . dd_j - (u . dd_i)(u . dd_j)) / L
        Lij = np.einsum("nei,nei->ne", u, da) + (np.einsum("nei,nei->ne", dvi, dvj) - Li * Lj) / L
        k = dm.axial_stiffness
        dQ -= np.einsum("e,ne->n", k, Li * Lj + (L - dm.axial_free_length) * Lij)
    if len(dm.torsional_names):
        s = dm.joint_q_start[dm.torsional_joint]
        k = dm.torsional_stiffness
        dQ -= np.einsum("e,ne->n", k, qdi[:, s] * qdj[:, s] + (q[:, s] - dm.torsional_free_angle) * acc["q"][:, s])
    return dQ


__all__ = [
    "NO_ASSEMBLY",
    "OK",
    "SINGULAR",
    "STATUS_NAMES",
    "ExtraLoad",
    "ForcesResult",
    "StiffnessTerms",
    "body_motion",
    "driven_mechanism",
    "freed_mechanism",
    "inverse_dynamics",
    "load_holding",
    "reduced_stiffness",
]


@dataclass(frozen=True)
class Equilibrium:
    """A rest position of a mechanism with free inputs: inputs ``a`` (n_act,) and joint
    variables ``q`` (n_q,) SI, the torque/force still needed to hold it (``holding``, N m or N:
    the Newton residual), the reduced ``stiffness`` (n_act, n_act) and ``stability``: ``stable``
    (positive definite), ``unstable`` (a negative eigenvalue) or ``neutral`` (zero within
    round-off); ``converged`` False when Newton stopped without meeting the tolerance, and then
    ``reason`` says why (where: ``a``)."""

    a: np.ndarray
    q: np.ndarray
    holding: np.ndarray
    stiffness: np.ndarray
    stability: str
    converged: bool
    iterations: int
    reason: str = ""


def freed_mechanism(mech: CompiledMechanism, q: np.ndarray) -> CompiledMechanism:
    """``mech`` with every freedom its actuated inputs leave undetermined at configuration ``q``
    (n_q,) SI added as an input: a free hinge of an open chain (a pendulum on an arm), the second
    freedom of a two-freedom loop. A rest position must balance the loads on ALL free coordinates,
    not only on the actuated ones. The added variables are the first passive ones (in ``q``
    order) whose removal from the passive set keeps its rank (the rank decision of
    :func:`linkcli.core.mobility.mobility_report`). Only variables of one-variable joints
    (revolute, prismatic) are added: an idle freedom inside a spherical/universal joint (an RSSR
    coupler spinning about its own axis) stays idle, as in :func:`inverse_dynamics`. Returns
    ``mech`` itself when nothing is added."""
    from .mobility import mobility_report

    def idle(m):  # no loops: every passive variable is free
        return m.n_q - m.n_actuated if m.n_constraints == 0 else mobility_report(m, q).passive_rank_deficit

    deficit = idle(mech)
    if deficit <= 0:
        return mech
    act = [int(k) for k in mech.q_actuated]
    for k in range(mech.n_q):
        if deficit == 0:
            break
        if k in act or mech.joint_q_count[mech.q_joint[k]] != 1:
            continue
        trial = replace(mech, q_actuated=np.array(sorted(act + [k]), dtype=np.int64))
        d = idle(trial)
        if d < deficit:
            act, deficit = sorted(act + [k]), d
    joint_act = np.asarray(mech.joint_actuated, bool).copy()
    joint_act[np.asarray(mech.q_joint)[act]] = True
    return replace(mech, q_actuated=np.array(act, dtype=np.int64), joint_actuated=joint_act)


#: relative size of the holding torque (to the torques seen along the search) accepted at rest
EQUILIBRIUM_RTOL = 1e-10
#: holding torques below this fraction of the loads' own torque scale everywhere: balanced
BALANCED_RTOL = 1e-9
#: an eigenvalue of the (step-limit scaled) stiffness below this fraction of the largest one, or
#: of the scaled holding torque, makes it singular for a Newton step (about sqrt of the double
#: precision: a Newton step along it would be set by round-off)
STEP_RANK_RTOL = 1e-8


def load_torque_scale(mech: CompiledMechanism, extra_loads=(), gravity=None) -> float:
    """A magnitude (N m) of the torques the loads could exert on the mechanism: weights, spring
    forces at their free length plus the mechanism size, and constant loads, times the mechanism
    size (m); the yardstick for "the holding torque is zero everywhere"."""
    L = mechanism_size(mech)
    g = np.linalg.norm(mech.gravity if gravity is None else gravity)
    scale = float(np.sum(mech.link_mass) * g * L)
    scale += float(np.sum(mech.axial_stiffness * (np.abs(mech.axial_free_length) + L)) * L)
    scale += float(np.sum(mech.torsional_stiffness) * np.pi)
    scale += float(np.sum(np.linalg.norm(mech.load_force, axis=-1)) * L + np.sum(np.linalg.norm(mech.load_torque,
                                                                                                axis=-1)))
    scale += sum(float(np.linalg.norm(ld.force)) * L + float(np.linalg.norm(ld.torque)) for ld in extra_loads)
    return scale


def classify(K: np.ndarray, scale: float) -> str:
    """Stability from the symmetric reduced stiffness ``K`` (m, m): eigenvalues relative to
    ``scale`` (a stiffness magnitude of the problem) decide; within 1e-9 of zero is neutral."""
    ev = np.linalg.eigvalsh(0.5 * (K + K.T))
    tiny = 1e-9 * max(scale, np.abs(ev).max(initial=0.0), 1e-300)
    if np.all(ev > tiny):
        return "stable"
    if np.any(ev < -tiny):
        return "unstable"
    return "neutral"


def find_equilibria(mech: CompiledMechanism, a_path: np.ndarray, q_path: np.ndarray, ok: np.ndarray, *,
                    extra_loads: list[ExtraLoad] = (), gravity: np.ndarray | None = None, tol: float = 1e-10,
                    max_iter: int = 50) -> list[Equilibrium]:
    """Rest positions with every input free, under gravity, springs and constant loads.

    ``a_path`` (n, n_act) SI inputs of a path with assembled configurations ``q_path`` (n, n_q)
    where ``ok``. One input: every sign change of the holding torque between neighbouring points
    is refined by safeguarded Newton (the bracket is kept); a single point is a Newton start.
    Several inputs: Newton from the first assembled point (steps limited to 0.2 rad or 0.1 of the
    mechanism size, halved until the holding torque decreases), else from a few more points of
    the path; where the stiffness is singular (two horizontal rods of a double pendulum: K = 0)
    or no Newton step helps, the run goes down the potential energy instead, to a stable rest
    position (see ``free_step`` inside; never a NaN step). A run that finds no rest position
    is returned with ``converged`` False and its ``reason``. Newton uses the analytic reduced
    stiffness; each iterate is the configuration the branch of the previous one has at its
    inputs, followed there by continuation
    (:func:`linkcli.core.sweep.configuration_at` from the previous iterate, straight only), so
    rest positions keep the path's assembly mode and the turns its passive angles have by
    continuous motion (the whole-turn rule of sweep.py: plain Newton from the previous iterate at
    a bisection midpoint half a bracket away landed in the other mode or whole turns away, and a
    spring read there gave a rest position that is none). A Newton run that stalls (its bracket
    collapsed, or its steps below rounding) is converged only when the holding torque is within
    the tolerance or the Newton correction ``K^-1 tau`` is below ``sqrt(tol)`` times
    ``1 rad + |a|`` (a rotation) or ``size + |a|`` (a slide, m) with the holding torque below
    ``sqrt(tol)`` of the path's, at a regular configuration: a sign change across a reassembly,
    a jump of the load, or a singular configuration (where the holding torque passes through
    infinity) is no rest position.
    """
    from .sweep import configuration_at

    a_path, q_path = np.atleast_2d(a_path), np.atleast_2d(q_path)
    idx = np.flatnonzero(ok)
    if not len(idx):
        return []
    st = reduced_stiffness(mech, q_path[idx], extra_loads=extra_loads, gravity=gravity)
    tau, K = st.holding, st.stiffness
    scale_tau = max(float(np.abs(tau).max(initial=0.0)), 1e-300)
    scale_k = float(np.abs(K).max(initial=0.0))
    rot = np.asarray(mech.q_is_rotation[mech.q_actuated], bool)
    unit_move = np.where(rot, 1.0, mechanism_size(mech))  # 1 rad, or the mechanism size (m)
    balanced = BALANCED_RTOL * load_torque_scale(mech, extra_loads, gravity)
    if scale_tau <= balanced and np.abs(K * np.multiply.outer(unit_move, unit_move)).max(initial=0.0) <= balanced:
        # the holding torque and the stiffness vanish along the whole path (a balanced mechanism,
        # e.g. a zero-free-length spring compensating gravity): neutral equilibrium everywhere.
        # (A path of one point at a rest position has tau = 0 but not K = 0: Newton returns it,
        # classified by its stiffness.)
        i = idx[0]
        return [Equilibrium(a_path[i].copy(), q_path[i].copy(), tau[0], K[0], "neutral everywhere", True, 0)]
    max_step = np.where(rot, 0.2, 0.1 * mechanism_size(mech))

    last_condition = [1.0]  # the kinematic condition of the latest iterate

    def assemble(a, guess):  # (guess: a configuration at its own inputs, on the path's branch)
        if not np.all(np.isfinite(a)):  # never reached: the steps below are finite by construction
            last_failure[0] = "a non-finite Newton step"
            return guess, False
        try:
            point = configuration_at(mech, a, guess, tol=tol)
        except ValueError as exc:  # (configuration_at's own input check)
            last_failure[0] = f"the configuration could not be assembled ({exc})"
            return guess, False
        last_condition[0] = point.condition
        good = point.status == 0 and point.route in ("estimate", "continuation")
        if not good:
            last_failure[0] = "the mechanism does not assemble on the start's branch at the next Newton iterate"
        return point.q, good

    last_failure = [""]  # why the latest Newton run stopped without a rest position

    def settled(a, t, k):
        """A stalled Newton run is at a rest position (see the docstring)."""
        if np.abs(t).max() <= EQUILIBRIUM_RTOL * scale_tau:
            return True
        try:
            correction = np.abs(np.linalg.solve(k, t))
        except np.linalg.LinAlgError:
            return False
        # sqrt(tol) of the input's own scale: 1 rad + |a| for a rotation (a in rad), the mechanism
        # size + |a| for a sliding input (a in m): the same pure number of the mechanism at every scale
        resolution = np.sqrt(tol) * (unit_move + np.abs(a))
        # and the holding torque small beside the path's (or at the round-off of the loads): near
        # a dead centre the correction vanishes (|K^-1 tau| ~ 2 x the distance to it, K ~ tau^3)
        # while the kinematic condition grows only as distance^-1/2 (3.7e3 at a correction of 2e-6
        # rad in fb_rock_spr, far below SINGULAR_CONDITION), and the holding torque is the largest on the path
        small_torque = bool(np.all(np.abs(t) <= np.sqrt(tol) * scale_tau)
                            or np.all(np.abs(t) * unit_move <= balanced))
        return bool(np.all(correction <= resolution) and small_torque and last_condition[0] <= SINGULAR_CONDITION)

    def evaluate(q):
        s = reduced_stiffness(mech, q[None], extra_loads=extra_loads, gravity=gravity)
        return s.holding[0], s.stiffness[0]

    def scaled_eigen(t, k):
        """The holding torque and the eigen-decomposition of the stiffness in the step-limit
        metric (inputs scaled by ``max_step``, so that rotations and lengths compare), and the
        floor below which an eigenvalue counts as zero: ``STEP_RANK_RTOL`` of the largest one or of
        the scaled holding torque (a Newton step along it would be ``1 / STEP_RANK_RTOL`` step limits
        or more, set by round-off). None when something is not finite."""
        ts, ks_ = t * max_step, k * np.outer(max_step, max_step)
        if not (np.all(np.isfinite(ts)) and np.all(np.isfinite(ks_))):
            return None
        lam, vec = np.linalg.eigh(0.5 * (ks_ + ks_.T))
        floor = STEP_RANK_RTOL * max(float(np.abs(lam).max(initial=0.0)), float(np.abs(ts).max()), 1e-300)
        return ts, lam, vec, floor

    def newton_direction(t, k):
        """The Newton step ``-K^-1 t``, or None when ``K`` is singular (an eigenvalue below the
        floor of :func:`scaled_eigen`; at two horizontal rods of a double pendulum gravity's
        torque is stationary in both angles: ``K = 0``)."""
        e = scaled_eigen(t, k)
        if e is None or not np.all(np.abs(e[1]) > e[3]):
            return None
        ts, lam, vec, _ = e
        return -max_step * (vec @ ((vec.T @ ts) / lam))

    def descent_direction(t, k):
        """A direction down the potential energy (``tau = dV/dtheta``): the Newton step with the
        stiffness's eigenvalues replaced by their magnitudes, floored (:func:`scaled_eigen`), so
        ``t . step < 0`` always: Newton itself where ``K`` is positive definite (quadratic
        convergence to a potential minimum), away from maxima and saddles where it is not, and
        (nearly) against the holding torque along the directions where ``K`` is singular."""
        ts, lam, vec, floor = scaled_eigen(t, k)
        return -max_step * (vec @ ((vec.T @ ts) / np.maximum(np.abs(lam), floor)))

    def to_step_limit(direction):
        return direction * min(1.0, float(np.min(max_step / np.maximum(np.abs(direction), 1e-300))))

    def line_search(a, q, t, k, step, accept):
        """Halve ``step`` (at most 30 times: 1e-9 of the step limit) until the iterate assembles
        on the branch and ``accept(t_new, step)`` holds; None when it never does."""
        for _ in range(30):
            q_new, good = assemble(a + step, q)
            if good:
                t_new, k_new = evaluate(q_new)
                if np.all(np.isfinite(t_new)) and np.all(np.isfinite(k_new)) and accept(t_new, step):
                    return a + step, q_new, t_new, k_new
            step = 0.5 * step
        return None

    descending = [False]  # the run has left Newton for the potential's descent

    def free_step(a, q, t, k):
        """One step with no bracket (several inputs, or one input from a single point).

        Newton first, while the stiffness is regular: the step scaled down to the step limit
        (keeps the Newton direction), then halved until the work-weighted holding torque
        ``|t * max_step|`` decreases (the Newton direction is a descent direction of it:
        saddles, i.e. unstable rest positions, near the start are found too). When the
        stiffness is singular (gravity's torque stationary in the inputs), or no Newton step
        decreases the holding torque (a minimum of it that is not zero), the run goes down the
        potential energy from then on (:func:`descent_direction`, scaled to the step limit),
        each step halved until the potential decreases (Armijo: ``dV <= 1e-4 tau . step``;
        ``dV`` by the trapezoidal rule ``(tau + tau_new) / 2 . step``, exact for a quadratic
        potential: constant loads have no energy of their own in the model), so it ends at a
        potential minimum, a stable rest position, where one is in reach. Returns the new
        iterate or None (``last_failure`` says why)."""
        if not descending[0]:
            direction = newton_direction(t, k)
            if direction is not None:
                merit = np.linalg.norm(t * max_step)
                new = line_search(a, q, t, k, to_step_limit(direction),
                                  lambda t_new, s: np.linalg.norm(t_new * max_step) < merit)
                if new is not None:
                    return new
            descending[0] = True
        new = line_search(a, q, t, k, to_step_limit(descent_direction(t, k)),
                          lambda t_new, s: 0.5 * float((t + t_new) @ s) <= 1e-4 * float(t @ s))
        if new is None and not last_failure[0]:
            last_failure[0] = ("no step down the potential energy decreases it (round-off near a rest position "
                               "that is not within the tolerance, or a limit of motion)")
        return new

    def newton(a, q, t, k, lo=None, hi=None, t_lo=None):
        last_failure[0] = ""
        descending[0] = False
        it = 0
        for it in range(1, max_iter + 1):
            if np.abs(t).max() <= EQUILIBRIUM_RTOL * scale_tau:
                return a, q, t, k, True, it - 1
            last_failure[0] = ""
            if lo is None:
                new = free_step(a, q, t, k)
                if new is None:
                    return a, q, t, k, False, it
                a_new, q_new, t_new, k_new = new
            else:  # one input in a bracket of a sign change
                direction = newton_direction(t, k)
                a_new = a + np.clip(direction, -max_step, max_step) if direction is not None else a
                if direction is None or not min(lo[0], hi[0]) < a_new[0] < max(lo[0], hi[0]):
                    a_new = 0.5 * (lo + hi)  # stay in the bracket: bisect when Newton leaves it
                q_new, good = assemble(a_new, q)
                if not good:
                    return a, q, t, k, False, it
                t_new, k_new = evaluate(q_new)
                if np.sign(t_new[0]) == np.sign(t_lo[0]):
                    lo, t_lo = a_new, t_new
                else:
                    hi = a_new
            if np.abs(a_new - a).max() <= 1e-14 * (1.0 + np.abs(a).max()):
                done = settled(a_new, t_new, k_new)
                if not done and not last_failure[0]:
                    last_failure[0] = ("the Newton steps fell below rounding with the holding torque not zero (a sign "
                                       "change across a singular configuration or a reassembly)")
                return a_new, q_new, t_new, k_new, done, it
            a, q, t, k = a_new, q_new, t_new, k_new
        done = np.abs(t).max() <= EQUILIBRIUM_RTOL * scale_tau
        if not done:
            last_failure[0] = f"the holding torque did not reach the tolerance in {max_iter} Newton iterations"
        return a, q, t, k, done, it

    found = []
    if mech.n_actuated == 1 and len(idx) > 1:
        for i0, i1 in itertools.pairwise(idx):
            if i1 != i0 + 1:
                continue
            k0, k1 = np.searchsorted(idx, i0), np.searchsorted(idx, i1)
            t0, t1 = tau[k0, 0], tau[k1, 0]
            if t0 == 0.0 or np.sign(t0) != np.sign(t1) and t1 != 0.0:
                start = k0 if abs(t0) <= abs(t1) else k1
                sol = newton(a_path[idx[start]].copy(), q_path[idx[start]], tau[start], K[start],
                             a_path[i0].copy(), a_path[i1].copy(), tau[k0].copy())
                found.append((*sol, last_failure[0]))
    else:
        # several inputs: Newton from the first assembled point; when it stalls (a minimum of
        # |holding| that is not zero), from up to 7 more points spread along the path
        starts = np.unique(np.r_[0, np.linspace(0, len(idx) - 1, min(len(idx), 8)).astype(int)])
        best = None
        for k0 in starts:
            sol = (*newton(a_path[idx[k0]].copy(), q_path[idx[k0]], tau[k0], K[k0]), last_failure[0])
            if best is None or (sol[4] and not best[4]) or \
                    (sol[4] == best[4] and np.linalg.norm(sol[2]) < np.linalg.norm(best[2])):
                best = sol
            if sol[4]:
                break
        found.append(best)
    out = []
    for a, q, t, k, conv, it, why in found:
        out.append(Equilibrium(a, q, t, k, classify(k, scale_k), bool(conv), it, "" if conv else why))
    return out
