"""Pendulums: periods against closed forms, statics against hand calculation, the double
pendulum against an independent minimal-coordinate integration.

Rod pendulum (tests/data/dynamics/pendulum.yaml): uniform rod, L = 1 m, m = 2 kg, pinned at one
end: I_pivot = m L^2 / 3, d = L / 2. Period of amplitude a: T = 4 sqrt(I/(m g d)) K(sin^2(a/2))
(scipy's ellipk takes the parameter m = k^2); small-amplitude limit 2 pi sqrt(I/(m g d)).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.special import ellipk
from test_dynamics_support import load

from linkcli.core.dynamics import simulate

M, L, G = 2.0, 1.0, 9.81
I_PIVOT, D = M * L**2 / 3.0, L / 2.0


@pytest.fixture(scope="module")
def pendulum():
    return load("pendulum.yaml")


def measured_period(r) -> float:
    """Mean time between successive downward passages through the bottom (q = -pi/2),
    crossing times by linear interpolation (exact to O(dt^2 q'''/q'), ~1e-9 s here)."""
    phi = r.q[:, 0] + np.pi / 2
    i = np.flatnonzero((phi[:-1] > 0) & (phi[1:] <= 0))
    tc = r.t[i] - phi[i] * (r.t[i + 1] - r.t[i]) / (phi[i + 1] - phi[i])
    return float(np.mean(np.diff(tc)))


@pytest.mark.parametrize("amplitude_deg", [1.0, 120.0])
def test_period_against_elliptic_integral(pendulum, amplitude_deg):
    a = np.radians(amplitude_deg)
    T_exact = 4.0 * np.sqrt(I_PIVOT / (M * G * D)) * ellipk(np.sin(a / 2) ** 2)
    r = simulate(pendulum, np.array([-np.pi / 2 + a]), np.zeros(1), t_end=3.2 * T_exact, dt=1e-3)
    assert r.status == "ok"
    # Stoermer-Verlet period error is O((w dt)^2) relative: w = 3.8 rad/s -> ~1e-6; 1e-5 allows 10x
    assert measured_period(r) == pytest.approx(T_exact, rel=1e-5)
    if amplitude_deg < 2:  # small-amplitude formula; its own error is a^2 / 16 = 1.9e-5 at 1 deg
        assert measured_period(r) == pytest.approx(2 * np.pi * np.sqrt(I_PIVOT / (M * G * D)), rel=5e-5)


def test_full_revolutions_give_a_continuous_angle(pendulum):
    # enough energy to go over the top: the angle grows without 2 pi jumps
    w0 = 2.0 * np.sqrt(M * G * D * 2 / I_PIVOT)  # twice the speed needed to reach the top
    r = simulate(pendulum, np.array([-np.pi / 2]), np.array([w0]), t_end=3.0, dt=1e-3, every=5)
    assert r.status == "ok"
    assert r.q[-1, 0] > -np.pi / 2 + 4 * np.pi  # at least two revolutions
    assert np.all(np.diff(r.q[:, 0]) > 0)
    # Stoermer-Verlet energy error ~ (w dt)^2 relative with w up to 11 rad/s: measured 1.2e-5
    assert np.abs(r.total - r.total[0]).max() < 1e-4 * r.total[0]


def test_pendulum_held_horizontal_by_a_motion_driver_matches_statics():
    mech = load("pendulum_held.yaml")
    r = simulate(mech, np.zeros(1), np.zeros(1), t_end=0.2, dt=1e-3, every=20)
    assert r.status == "ok" and not r.warnings
    # static: pin carries the weight (force on the rod: m g up), the driver the moment m g d
    assert np.allclose(r.reaction_force[:, 0], [0.0, M * G, 0.0], atol=1e-9)
    assert np.allclose(r.driver_force[:, 0], M * G * D, rtol=1e-12)
    # the pin transmits no moment about its axis: the driver's m g d is reported once, in driver_force
    assert np.abs(r.reaction_moment[:, 0]).max() <= 1e-12 * M * G * D
    assert np.abs(r.q).max() < 1e-12 and np.abs(r.qd).max() < 1e-9
    assert np.abs(r.work_drivers).max() == 0.0


# --- double pendulum ------------------------------------------------------------------------------
L1, L2, M1, M2 = 1.0, 0.8, 1.0, 0.6
I1, I2 = M1 * L1**2 / 12, M2 * L2**2 / 12


def double_pendulum_reference(phi0, t_eval):
    """Absolute rod angles from x (phi1, phi2) by Lagrange's equations with rods (CGs at
    mid-length), solve_ivp DOP853 at rtol 1e-11."""
    a = M2 * L1 * L2 / 2

    def rhs(t, y):
        p1, p2, w1, w2 = y
        c, s = np.cos(p1 - p2), np.sin(p1 - p2)
        Mm = np.array([[M1 * L1**2 / 4 + I1 + M2 * L1**2, a * c], [a * c, M2 * L2**2 / 4 + I2]])
        f = -np.array([a * s * w2**2 + (M1 * L1 / 2 + M2 * L1) * G * np.cos(p1),
                       -a * s * w1**2 + M2 * L2 / 2 * G * np.cos(p2)])
        return [w1, w2, *np.linalg.solve(Mm, f)]

    sol = solve_ivp(rhs, (0, t_eval[-1]), [*phi0, 0, 0], method="DOP853", rtol=1e-11, atol=1e-12, t_eval=t_eval)
    return sol.y[:2].T


def test_double_pendulum_matches_minimal_coordinates_with_second_order_error():
    mech = load("double_pendulum.yaml")
    q0 = np.array([0.3, 0.5])  # shoulder from x, elbow relative
    errors = []
    for dt in (2e-3, 1e-3, 5e-4):
        r = simulate(mech, q0, np.zeros(2), t_end=2.0, dt=dt, every=int(round(0.01 / dt)))
        assert r.status == "ok"
        ref = double_pendulum_reference([q0[0], q0[0] + q0[1]], r.t)
        sim = np.column_stack([r.q[:, 0], r.q[:, 0] + r.q[:, 1]])
        errors.append(np.abs(sim - ref).max())
        assert r.constraint_residual.max() <= 1e-10
    # measured: 9.5e-4, 2.4e-4, 5.9e-5 rad (max over 2 s); ratios 4.00
    assert errors[-1] < 2e-4
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((ratios > 3.0) & (ratios < 5.0)), (errors, ratios)


def test_axis_along_minus_z_reverses_the_joint_variable(pendulum):
    flipped = load("pendulum.yaml", {"joints": {"pivot": {"type": "revolute", "parent": "ground.O",
                                                          "child": "rod.O", "axis": [0, 0, -1]}}})
    a = -np.pi / 2 + 0.8
    r = simulate(pendulum, np.array([a]), np.zeros(1), t_end=1.0, dt=1e-3, every=10)
    rf = simulate(flipped, np.array([-a]), np.zeros(1), t_end=1.0, dt=1e-3, every=10)
    assert np.allclose(rf.q, -r.q, atol=1e-12) and np.allclose(rf.link_pose, r.link_pose, atol=1e-12)


def test_free_planar_body_flies_a_parabola():
    """Planar joint (no constraint rows): the CG falls freely, the body spins at constant rate."""
    mech = load("free_planar.yaml")
    v0, w0 = np.array([1.0, 2.0]), 3.0
    # planar joint variables x, y (of the body frame origin) and angle: origin velocity at q = 0
    # from the CG velocity v0 and w0: v_origin = v0 - w0 x (R cg)
    cg = np.array([0.2, 0.1])
    v_origin = v0 - w0 * np.array([-cg[1], cg[0]])
    r = simulate(mech, np.zeros(3), np.r_[v_origin, w0], t_end=1.0, dt=1e-3, every=10)
    assert r.status == "ok"
    th = w0 * r.t
    c, s = np.cos(th), np.sin(th)
    x_cg = np.column_stack([r.q[:, 0] + c * cg[0] - s * cg[1], r.q[:, 1] + s * cg[0] + c * cg[1]])
    expect = cg + np.outer(r.t, v0) + np.outer(r.t**2, [0.0, -9.81 / 2])
    # constant acceleration and rate are integrated exactly by Stoermer-Verlet (round-off only)
    assert np.abs(x_cg - expect).max() < 1e-10 and np.abs(r.q[:, 2] - th).max() < 1e-10
