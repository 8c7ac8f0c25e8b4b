"""Dynamics of the W3 four-bar (ground 4, crank 1, coupler 3, rocker 3.5 m; uniform slender
links of 1 kg/m; gravity -9.81 y) against an independent reference.

Reference: Lagrange's equation in the minimal coordinate theta2 (crank angle),
``M(t2) t2'' + C(t2) t2'^2 + V'(t2) = tau``, with the closed-form position solution of the
loop (circle intersection, open branch) and its first/second kinematic coefficients from the
differentiated loop equation, written below without any linkcli code; integrated by scipy's
DOP853 at rtol 1e-11. The maximal-coordinate simulation shares nothing with it but the numbers
of the file.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from test_dynamics_support import load, planar_balance_residuals

from linkcli.core.dynamics import simulate

R1, R2, R3, R4 = 4.0, 1.0, 3.0, 3.5  # ground, crank, coupler, rocker (m)
MASS = np.array([R2, R3, R4])  # 1 kg/m
INERTIA = MASS * np.array([R2, R3, R4]) ** 2 / 12.0
G = 9.81


# --- independent reference ------------------------------------------------------------------------
def loop_angles(t2):
    """Coupler and rocker angles (open branch, B above the line A-O4) for crank angle t2."""
    A = R2 * np.exp(1j * t2)
    e = R1 - A
    L = abs(e)
    x = (R3**2 - R4**2 + L**2) / (2 * L)
    y = np.sqrt(R3**2 - x**2)
    u = e / L
    B = A + (x + 1j * y) * u
    return np.angle(B - A), np.angle(B - R1)


def coefficients(t2):
    """theta3, theta4 and their first and second derivatives with respect to theta2."""
    t3, t4 = loop_angles(t2)
    Mk = np.array([[-R3 * np.sin(t3), R4 * np.sin(t4)], [R3 * np.cos(t3), -R4 * np.cos(t4)]])
    k3, k4 = np.linalg.solve(Mk, [R2 * np.sin(t2), -R2 * np.cos(t2)])
    c = R2 * np.exp(1j * t2) + R3 * np.exp(1j * t3) * k3**2 - R4 * np.exp(1j * t4) * k4**2
    k3d, k4d = np.linalg.solve(Mk, [c.real, c.imag])
    return t3, t4, k3, k4, k3d, k4d


def generalized(t2):
    """``(M, C, dV)`` of Lagrange's equation in theta2 (kg m^2, kg m^2, N m)."""
    t3, t4, k3, k4, k3d, k4d = coefficients(t2)
    e2, e3, e4 = np.exp(1j * t2), np.exp(1j * t3), np.exp(1j * t4)
    J = [R2 / 2 * 1j * e2, R2 * 1j * e2 + R3 / 2 * 1j * e3 * k3, R4 / 2 * 1j * e4 * k4]
    Jd = [-R2 / 2 * e2, -R2 * e2 + R3 / 2 * (1j * e3 * k3d - e3 * k3**2), R4 / 2 * (1j * e4 * k4d - e4 * k4**2)]
    k, kd = np.array([1.0, k3, k4]), np.array([0.0, k3d, k4d])
    M = sum(MASS[i] * abs(J[i]) ** 2 for i in range(3)) + np.sum(INERTIA * k**2)
    C = sum(MASS[i] * (J[i] * np.conj(Jd[i])).real for i in range(3)) + np.sum(INERTIA * k * kd)
    dV = sum(MASS[i] * G * J[i].imag for i in range(3))
    return M, C, dV


def reference(t2_0, t_end, t_eval):
    """Crank angle of the free four-bar released from rest (solve_ivp DOP853, rtol 1e-11)."""
    def rhs(t, y):
        M, C, dV = generalized(y[0])
        return [y[1], -(C * y[1] ** 2 + dV) / M]

    sol = solve_ivp(rhs, (0.0, t_end), [t2_0, 0.0], method="DOP853", rtol=1e-11, atol=1e-12, t_eval=t_eval)
    return sol.y[0]


def joint_state(t2, w2=0.0):
    """Joint variables (crank_pin, A, B, O4) and their rates for crank angle/speed."""
    t3, t4, k3, k4, _, _ = coefficients(t2)
    q = np.array([t2, t3 - t2, t4 - t3, t4])
    qd = w2 * np.array([1.0, k3 - 1.0, k4 - k3, k4])
    return q, qd


@pytest.fixture(scope="module")
def fourbar():
    return load("fourbar_w3.yaml")


# --- tests ------------------------------------------------------------------------------------------
def test_released_from_rest_matches_minimal_coordinates_with_second_order_error(fourbar):
    q0, qd0 = joint_state(np.radians(60.0))
    t_end = 3.0
    errors = []
    for dt in (4e-3, 2e-3, 1e-3):
        r = simulate(fourbar, q0, qd0, t_end=t_end, dt=dt, every=int(round(0.01 / dt)))
        assert r.status == "ok", r.message
        ref = reference(q0[0], t_end, r.t)
        errors.append(np.abs(r.q[:, 0] - ref).max())
        # loops closed to the Newton tolerance at every saved step
        assert r.constraint_residual.max() <= 1e-10
    # Stoermer-Verlet phase error: measured 6.9e-4, 1.7e-4, 4.3e-5 rad (max over 3 s, about two
    # swings) at dt = 4, 2, 1 ms: halving dt divides it by 4.00
    assert errors[-1] < 1e-4
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((ratios > 3.0) & (ratios < 5.0)), (errors, ratios)


def test_joint_variables_are_continuous_and_consistent_with_the_loop(fourbar):
    q0, qd0 = joint_state(np.radians(60.0))
    r = simulate(fourbar, q0, qd0, t_end=4.0, dt=1e-3, every=5)
    assert r.status == "ok"
    # the crank passes +-180 deg while swinging; q must never jump by 2 pi
    assert np.abs(np.diff(r.q, axis=0)).max() < 0.1
    # all joint variables equal the closed-form loop angles of the crank angle
    t3, t4 = loop_angles(r.q[:, 0])
    expect = np.column_stack([r.q[:, 0], t3 - r.q[:, 0], t4 - t3, t4])
    diff = (r.q - expect + np.pi) % (2 * np.pi) - np.pi
    assert np.abs(diff).max() < 1e-9  # loop closed to 1e-10 m over ~3 m links
    # joint rates: finite differences of the saved angles (dt_save = 5e-3, O(dt^2) ~ 1e-4)
    fd = np.gradient(r.q, r.t, axis=0)
    assert np.abs(fd[1:-1] - r.qd[1:-1]).max() < 1e-3 * max(1.0, np.abs(r.qd).max())


def test_energy_has_no_secular_drift_over_1e5_steps(fourbar):
    q0, qd0 = joint_state(np.radians(60.0))
    r = simulate(fourbar, q0, qd0, t_end=100.0, dt=1e-3, every=10)
    assert r.status == "ok"
    err = np.abs(r.total - r.total[0])
    tenth = len(err) // 10
    first, last = err[:tenth].max(), err[-tenth:].max()
    # symplectic integrator: bounded O(dt^2) oscillation (~2e-3 J of ~117 J), no growth
    assert last < 1e-2 and first < 1e-2
    assert last < 2.0 * first, (first, last)
    assert r.constraint_residual.max() <= 1e-10


CONSTANT_SPEED = {"drivers": {"motor": {"joint": "crank_pin", "kind": "motion", "type": "constant_speed",
                                        "speed": 180.0, "start": 60.0}}}


@pytest.mark.parametrize("gravity", [[0.0, -9.81], [0.0, 0.0]])
def test_constant_speed_driver_torque_equals_virtual_work(gravity):
    mech = load("fourbar_w3.yaml", {**CONSTANT_SPEED, "gravity": gravity})
    w2 = np.pi  # 180 deg/s
    q0, qd0 = joint_state(np.radians(60.0), w2)
    r = simulate(mech, q0, qd0, t_end=4.0, dt=1e-3, every=10)  # two full crank revolutions
    assert r.status == "ok", r.message
    assert not r.warnings
    # the crank follows the profile exactly and continuously through +-180 deg
    assert np.abs(r.q[:, 0] - (np.radians(60.0) + w2 * r.t)).max() < 1e-10
    assert np.abs(r.qd[:, 0] - w2).max() < 1e-9
    # virtual work: tau w2 = d/dt(T + V) with T = M w2^2 / 2 -> tau = C w2^2 + dV (theta2'' = 0)
    g = -gravity[1]
    expect = []
    for t2 in r.q[:, 0]:
        M, C, dV = generalized(t2)
        expect.append(C * w2**2 + dV * g / G)
    expect = np.array(expect)
    scale = np.abs(expect).max()
    # node multipliers are second order: measured 1.6e-6 (gravity) and 3.1e-6 relative
    assert np.abs(r.driver_force[:, 0] - expect).max() < 2e-5 * scale
    # energy balance closes to the integrator's order: measured 6e-7 and 1.1e-6 relative
    assert np.abs(r.energy_balance_error).max() < 1e-5 * np.abs(r.work_drivers).max()


def test_energy_balance_with_driver_closes_as_dt_squared():
    harmonic = {"joint": "crank_pin", "type": "harmonic", "offset": 60.0, "amplitude": 40.0, "frequency": 0.5}
    mech = load("fourbar_w3.yaml", {"drivers": {"motor": harmonic}})
    errors = []
    for dt in (2e-3, 1e-3):
        w0 = np.radians(40.0) * 2 * np.pi * 0.5
        q0, qd0 = joint_state(np.radians(60.0), w0)
        r = simulate(mech, q0, qd0, t_end=2.0, dt=dt, every=int(round(0.01 / dt)))
        assert r.status == "ok"
        errors.append(np.abs(r.energy_balance_error).max())
    # measured 5.1e-5 and 1.3e-5 J with 17 J of driver work
    assert errors[1] < 1e-5 * np.abs(r.work_drivers).max()
    assert 3.0 < errors[0] / errors[1] < 5.0, errors


def test_torque_driver_applies_its_value_and_does_work():
    motor = {"joint": "crank_pin", "kind": "torque", "type": "constant", "value": 5.0}
    mech = load("fourbar_w3.yaml", {"gravity": [0.0, 0.0], "drivers": {"motor": motor}})
    q0, qd0 = joint_state(np.radians(60.0))
    r = simulate(mech, q0, qd0, t_end=2.0, dt=1e-3, every=10)
    assert r.status == "ok"
    assert np.all(r.driver_force[:, 0] == 5.0)
    # work of a constant torque = torque x crank rotation; and it all went into kinetic energy
    assert np.allclose(r.work_drivers, 5.0 * (r.q[:, 0] - q0[0]), rtol=1e-6, atol=1e-9)
    assert np.abs(r.energy_balance_error).max() < 1e-4 * r.work_drivers[-1]
    # reference: theta2'' = (tau - C theta2'^2) / M
    sol = solve_ivp(lambda t, y: [y[1], (5.0 - generalized(y[0])[1] * y[1] ** 2) / generalized(y[0])[0]],
                    (0, 2.0), [q0[0], 0.0], method="DOP853", rtol=1e-11, atol=1e-12, t_eval=r.t)
    assert np.abs(r.q[:, 0] - sol.y[0]).max() < 1e-4  # O(dt^2) with dt = 1e-3


INVERTED_O4 = {"joints": {"crank_pin": {"type": "revolute", "parent": "ground.O2", "child": "crank.O2"},
                          "A": {"type": "revolute", "parent": "crank.A", "child": "coupler.A"},
                          "B": {"type": "revolute", "parent": "coupler.B", "child": "rocker.B"},
                          "O4": {"type": "revolute", "parent": "rocker.O4", "child": "ground.O4"}}}


@pytest.mark.parametrize("overrides", [None, INVERTED_O4], ids=["O4 child rocker", "O4 child ground"])
def test_reactions_balance_every_link(overrides):
    """Newton-Euler check of every moving link from the reported reactions (on the child, about
    the child's joint origin; the parent gets the opposite): sum of forces = m a_cg and sum of
    moments about the CG = Izz angular acceleration (accelerations by central differences of
    the saved motion). Inverting joint O4 (child = the base) exercises the other branch."""
    mech = load("fourbar_w3.yaml", overrides)
    q0, qd0 = joint_state(np.radians(60.0))
    if overrides:
        q0[3], qd0[3] = -q0[3], -qd0[3]  # O4 now measures the ground relative to the rocker
    r = simulate(mech, q0, qd0, t_end=1.0, dt=1e-4, every=10)
    f_res, m_res, force, moment = planar_balance_residuals(mech, r)
    # second differences at dt_save = 1e-3: error ~ dt^2 / 12 times the 4th derivative, ~1e-5 of
    # the ~50 N forces; the integrator's own O(dt^2) error at dt = 1e-4 is smaller still
    assert np.abs(f_res).max() < 1e-3 * np.abs(force[:, 1:]).max()
    assert np.abs(m_res).max() < 1e-3 * np.abs(moment[:, 1:]).max()


def test_every_and_progress(fourbar):
    q0, qd0 = joint_state(np.radians(60.0))
    seen = []
    r = simulate(fourbar, q0, qd0, t_end=0.105, dt=1e-3, every=10, progress=seen.append)
    assert np.allclose(r.t, np.r_[np.arange(0, 0.101, 0.01), 0.105])
    assert seen and seen[-1] == pytest.approx(0.105) and np.all(np.diff(seen) > 0)
    full = simulate(fourbar, q0, qd0, t_end=0.105, dt=1e-3)
    assert np.allclose(full.q[::10], r.q[:-1]) and np.allclose(full.q[-1], r.q[-1])
