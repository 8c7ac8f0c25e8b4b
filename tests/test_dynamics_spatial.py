"""Spatial bodies: the Lie-group rotation update, spherical and redundant-constraint models.

Truths: conservation of world angular momentum and energy of a torque-free body; the Euler
equations ``J w' = (J w) x w``, ``R' = R hat(w)`` integrated by scipy (DOP853, rtol 1e-12); the
planar models of the same mechanisms (independent body and constraint formulation: planar
bodies, no redundant rows); forward kinematics (linkcli.core.forward) of the reported joint
variables.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp
from test_dynamics_fourbar import joint_state
from test_dynamics_support import load

from linkcli.core import forward
from linkcli.core.dynamics import simulate

J_BODY = np.diag([1.0, 2.0, 3.0])


def euler_reference(w_body0, t_eval):
    """(R (n, 3, 3), body angular velocity (n, 3)) of the torque-free body from R = I."""
    def rhs(t, y):
        R, w = y[:9].reshape(3, 3), y[9:]
        W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        return np.r_[(R @ W).ravel(), np.linalg.solve(J_BODY, np.cross(J_BODY @ w, w))]

    sol = solve_ivp(rhs, (0, t_eval[-1]), np.r_[np.eye(3).ravel(), w_body0], method="DOP853", rtol=1e-12,
                    atol=1e-12, t_eval=t_eval)
    return sol.y[:9].T.reshape(-1, 3, 3), sol.y[9:].T


def free_body_run(dt, t_end=5.0):
    mech = load("free_body.yaml")
    w0 = np.array([0.3, 2.0, 0.2])  # near the intermediate axis: the body tumbles
    # spherical joint variables Rz(q1) Ry(q2) Rx(q3): at q = 0, w = (qd3, qd2, qd1)
    r = simulate(mech, np.zeros(3), w0[::-1].copy(), t_end=t_end, dt=dt, every=int(round(0.01 / dt)))
    assert r.status == "ok"
    R, w = r.link_pose[:, 1, :3, :3], r.link_velocity[:, 1, 3:]
    return r, R, w, w0


def test_free_asymmetric_body_conserves_angular_momentum_and_energy():
    r, R, w, w0 = free_body_run(1e-3, t_end=10.0)
    L = np.einsum("sij,jk,slk,sl->si", R, J_BODY, R, w)  # R J R^T w
    # the LLM update conserves world angular momentum exactly: round-off only over 1e4 steps
    assert np.abs(L - L[0]).max() < 1e-12 * np.linalg.norm(L[0])
    assert np.abs(r.total - r.total[0]).max() < 1e-9 * r.total[0]  # measured 2e-13
    # and it precesses: the body-frame angular velocity turns far from its start
    w_body = np.einsum("sji,sj->si", R, w)
    assert np.abs(w_body - w0).max() > 1.0
    # Z-Y-X angles: no 2 pi jumps while tumbling (they move fast only near gimbal lock) and they
    # reproduce the body's rotation
    assert np.abs(np.diff(r.q, axis=0)).max() < 1.0
    assert np.abs(forward.link_poses(load("free_body.yaml"), r.q) - r.link_pose).max() < 1e-12


def test_free_body_follows_eulers_equations_with_second_order_error():
    errors = []
    for dt in (2e-3, 1e-3):
        r, R, w, w0 = free_body_run(dt)
        R_ref, w_ref = euler_reference(w0, r.t)
        w_body = np.einsum("sji,sj->si", R, w)
        errors.append(max(np.abs(R - R_ref).max(), np.abs(w_body - w_ref).max()))
    # measured 4.8e-5 and 1.2e-5 (angular velocity) over 5 s of tumbling
    assert errors[-1] < 3e-5
    assert 3.0 < errors[0] / errors[1] < 5.0, errors


def test_spherical_pendulum_swinging_in_a_plane_matches_the_planar_pendulum():
    spatial, planar = load("spherical_pendulum.yaml"), load("pendulum.yaml")
    a0 = -np.pi / 2 + 1.0
    rs = simulate(spatial, np.array([a0, 0.0, 0.0]), np.zeros(3), t_end=3.0, dt=1e-3, every=10)
    rp = simulate(planar, np.array([a0]), np.zeros(1), t_end=3.0, dt=1e-3, every=10)
    assert rs.status == "ok" and any("regularising" in w for w in rs.warnings)  # a rod has no spin inertia
    # same second-order accuracy, different discretisations of the rotation: measured 1.9e-6 rad
    assert np.abs(rs.q[:, 0] - rp.q[:, 0]).max() < 1e-5
    assert np.abs(rs.q[:, 1:]).max() < 1e-12
    assert np.abs(rs.reaction_force - rp.reaction_force).max() < 1e-3  # of ~60 N; measured 5e-5


def test_conical_spherical_pendulum_conserves_vertical_angular_momentum():
    mech = load("spherical_pendulum.yaml")
    r = simulate(mech, np.array([-np.pi / 2 + 1.0, 0.0, 0.0]), np.array([0.0, 1.5, 0.0]), t_end=5.0, dt=1e-3,
                 every=10)
    assert r.status == "ok"
    R, w = r.link_pose[:, 1, :3, :3], r.link_velocity[:, 1, 3:]
    cg = np.einsum("sij,j->si", R, mech.link_cg[1])
    v = r.link_velocity[:, 1, :3] + np.cross(w, cg)
    L = np.einsum("sij,jk,slk,sl->si", R, mech.link_inertia[1], R, w) + mech.link_mass[1] * np.cross(cg, v)
    # gravity along -y has no moment about y through the pivot
    assert np.abs(L[:, 1] - L[0, 1]).max() < 1e-10 * np.abs(L[0]).max()
    assert np.abs(r.total - r.total[0]).max() < 1e-4 * abs(r.total[0])  # measured 1.9e-5 J
    assert np.abs(r.q[:, 1]).max() > 0.3  # it really leaves the plane


def test_spatial_fourbar_with_redundant_constraints_matches_the_planar_model():
    planar, spatial = load("fourbar_w3.yaml"), load("fourbar_spatial.yaml")
    q0, qd0 = joint_state(np.radians(60.0))
    diffs = []
    for dt in (2e-3, 1e-3):
        rp = simulate(planar, q0, qd0, t_end=2.0, dt=dt, every=int(round(0.01 / dt)))
        rs = simulate(spatial, q0, qd0, t_end=2.0, dt=dt, every=int(round(0.01 / dt)))
        assert rs.status == "ok"
        assert rs.constraint_residual.max() <= 1e-10  # all 20 rows, the 3 dropped ones included
        diffs.append(np.abs(rp.q - rs.q).max())
    assert any("3 redundant" in w for w in rs.warnings)
    # both second order: they differ by O(dt^2) (measured 5.5e-6, 1.4e-6 rad; reactions 3e-6 relative)
    assert diffs[-1] < 1e-5 and 3.0 < diffs[0] / diffs[1] < 5.0
    # in-plane reactions are determinate and agree; the out-of-plane split is the minimum-norm
    # one, which is zero here (no out-of-plane load)
    scale = np.abs(rp.reaction_force).max()
    assert np.abs(rs.reaction_force - rp.reaction_force).max() < 1e-5 * scale
    assert np.abs(rs.reaction_force[..., 2]).max() < 1e-9 * scale
    assert np.abs(rs.reaction_moment).max() < 1e-9 * scale


def zoo_state():
    q0 = np.array([0.3, 0.1, 0.2, -0.3, 0.4, 0.05, 0.2, -0.4, 0.3, 0.1, -0.2, 0.5])
    qd0 = np.array([0.5, -0.2, 1.0, 0.3, -0.5, 0.1, 0.4, 0.2, -0.3, 0.2, 0.1, 0.6])
    return q0, qd0


def test_joint_zoo_reconstructs_every_joint_type():
    mech = load("joint_zoo.yaml")
    q0, qd0 = zoo_state()
    r = simulate(mech, q0, qd0, t_end=0.4, dt=1e-4)
    assert r.status == "ok" and not r.warnings
    # forward kinematics of the reported joint variables reproduces the bodies (constraints
    # hold to 1e-10, so poses to ~1e-10)
    assert np.abs(forward.link_poses(mech, r.q) - r.link_pose).max() < 1e-8
    # rates = time derivative of the variables (central differences, O(dt^2 q''') ~ 1e-6)
    fd = np.gradient(r.q, r.t, axis=0)[1:-1]
    assert np.abs(fd - r.qd[1:-1]).max() < 1e-5 * np.abs(r.qd).max()
    assert r.constraint_residual.max() <= 1e-10


def test_joint_zoo_energy_balance_with_dampers_closes_as_dt_squared():
    mech = load("joint_zoo.yaml")
    q0, qd0 = zoo_state()
    errors = []
    for dt in (2e-3, 1e-3):
        r = simulate(mech, q0, qd0, t_end=2.0, dt=dt, every=int(round(0.01 / dt)))
        assert r.status == "ok"
        errors.append(np.abs(r.energy_balance_error).max())
    # measured 9.4e-4 and 2.3e-4 J with 52 J dissipated
    assert errors[-1] < 1e-5 * abs(r.work_dampers[-1])
    assert 3.0 < errors[0] / errors[1] < 5.0, errors


def test_constant_torque_load_changes_angular_momentum_linearly():
    """A constant world torque on the body held at its CG: dL/dt = torque exactly, and the
    energy it feeds in is its work (the load is not a potential)."""
    tau = np.array([0.0, 0.5, 1.0])
    mech = load("free_body.yaml", {"loads": {"twist": {"link": "body", "torque": tau.tolist()}}})
    w0 = np.array([0.3, 2.0, 0.2])
    r = simulate(mech, np.zeros(3), w0[::-1].copy(), t_end=3.0, dt=1e-3, every=10)
    assert r.status == "ok"
    R, w = r.link_pose[:, 1, :3, :3], r.link_velocity[:, 1, 3:]
    L = np.einsum("sij,jk,slk,sl->si", R, J_BODY, R, w)
    # the momentum update is the exact impulse of a constant torque: round-off only
    assert np.abs(L - (L[0] + np.outer(r.t, tau))).max() < 1e-11 * np.abs(L).max()
    assert np.abs(r.energy_balance_error).max() < 1e-5 * np.abs(r.work_loads).max()  # O(dt^2)
