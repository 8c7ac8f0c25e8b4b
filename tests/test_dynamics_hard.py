"""Hard models for the integrator: convergence of positions and reactions down to dt 1e-6,
damped systems against the exact discrete scheme and conservation laws, zero and tiny
rotational inertia, fast rotations (refined steps), failures that stop cleanly.

Truths: solve_ivp (DOP853, rtol/atol 1e-13) of the minimal-coordinate equations, closed-form
reactions ``F = m a_cg - m g`` from that solution, elliptic-integral periods, a plain numpy
implementation of the damped oscillator's discrete Lagrange-d'Alembert recursion, world angular
momentum about a fixed point.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.special import ellipk
from test_dynamics_support import load

from linkcli.core.assembly import assemble
from linkcli.core.dynamics import simulate
from linkcli.core.velocity import joint_rates

M, L, G = 2.0, 1.0, 9.81  # rod pendulum (tests/data/dynamics/pendulum.yaml)
I_PIVOT, D = M * L**2 / 3.0, L / 2.0


def pendulum_reference(phi0, w0, t_end, inertia=I_PIVOT, mgd=M * G * D):
    """Dense solution (phi, phi') of ``I phi'' = -m g d cos(phi)`` (phi from +x)."""
    return solve_ivp(lambda t, y: [y[1], -(mgd / inertia) * np.cos(y[0])], (0, t_end), [phi0, w0],
                     method="DOP853", rtol=1e-13, atol=1e-13, dense_output=True).sol


def test_positions_and_reactions_converge_at_second_order_down_to_dt_1e6():
    """Rod pendulum spinning at 20 rad/s for 0.1 s: errors of the angle and of the pivot
    reaction (against m a_cg - m g of the reference) at dt = 1e-3 .. 1e-6."""
    mech = load("pendulum.yaml")
    phi0, w0, t_end = -np.pi / 2, 20.0, 0.1
    sol = pendulum_reference(phi0, w0, t_end)
    err_q, err_f = [], []
    for dt in (1e-3, 1e-4, 1e-5, 1e-6):
        r = simulate(mech, np.array([phi0]), np.array([w0]), t_end=t_end, dt=dt, every=int(round(1e-3 / dt)))
        assert r.status == "ok"
        phi, w = sol(r.t)
        alpha = -(M * G * D / I_PIVOT) * np.cos(phi)
        a_cg = D * np.stack([-np.sin(phi) * alpha - np.cos(phi) * w**2, np.cos(phi) * alpha - np.sin(phi) * w**2], 1)
        force = M * a_cg - M * np.array([0.0, -G])
        err_q.append(np.abs(r.q[:, 0] - phi).max())
        err_f.append(np.abs(r.reaction_force[:, 0, :2] - force).max() / np.abs(force).max())
    # second order: each tenfold smaller dt divides the error by 100 (measured 100.0, 100.0, 104
    # for both); [70, 140] allows the round-off of 1e5 steps at dt 1e-6 (~4e-12 rad)
    for e in (err_q, err_f):
        ratios = np.array(e[:-1]) / np.array(e[1:])
        assert np.all((ratios > 70) & (ratios < 140)), (e, ratios)
    assert err_f[-1] < 1e-9  # measured 7e-11: no dt^-2 growth of the reactions' round-off


def damped_recursion(x0, m, k, c, h, n):
    """The integrator's scheme for m x'' = -k x - c x' written out for one coordinate:
    position step ``m dx/h = m v + h/2 F(x) - c/2 dx``, velocity step
    ``m v1 = m dx/h + h/2 F(x1) - c/2 dx`` (discrete Lagrange-d'Alembert, dampers at both ends)."""
    x, v, out = x0, 0.0, [x0]
    for _ in range(n):
        dx = (m * v + 0.5 * h * (-k * x)) / (m / h + 0.5 * c)
        x1 = x + dx
        v = (m * dx / h - 0.5 * h * k * x1 - 0.5 * c * dx) / m
        x = x1
        out.append(x)
    return np.array(out)


def test_damped_oscillator_reaches_the_exact_discrete_schemes_error():
    """spring_mass_damped.yaml (m 2 kg, k 50 N/m, c 4 N s/m): at dt 5e-5 (where a fixed absolute
    Newton tolerance of 1e-10 gave 4.5e-7) the run equals the scheme's own recursion to
    round-off, so its error against the closed form is the scheme's (3.9e-9)."""
    m_, k, c, x0, dt, t_end = 2.0, 50.0, 4.0, 0.3, 5e-5, 2.0
    r = simulate(load("spring_mass_damped.yaml"), np.array([x0]), np.zeros(1), t_end=t_end, dt=dt, every=100)
    assert r.status == "ok"
    n = int(round(t_end / dt))
    x_scheme = damped_recursion(x0, m_, k, c, dt, n)[::100]
    wn, zeta = np.sqrt(k / m_), c / (2 * np.sqrt(k * m_))
    wd = wn * np.sqrt(1 - zeta**2)
    x_exact = x0 * np.exp(-zeta * wn * r.t) * (np.cos(wd * r.t) + zeta * wn / wd * np.sin(wd * r.t))
    # the recursion accumulates round-off like the integrator: 4e4 steps x ~1e-16 relative x 0.3 m
    assert np.abs(r.q[:, 0] - x_scheme).max() < 1e-11
    scheme_error = np.abs(x_scheme - x_exact).max()
    assert abs(np.abs(r.q[:, 0] - x_exact).max() - scheme_error) < 1e-11 and scheme_error < 1e-8


def test_damped_free_spinning_body_conserves_angular_momentum_to_round_off():
    """damped_shaft.yaml: the flywheel's spin relative to the shaft decays through the damper
    (internal), the world angular momentum about the ball joint does not change."""
    mech = load("damped_shaft.yaml")
    r = simulate(mech, np.zeros(4), np.array([0.3, 0.2, 1.0, 5.0]), t_end=10.0, dt=1e-3, every=100)
    assert r.status == "ok"
    R, w = r.link_pose[:, 1:, :3, :3], r.link_velocity[:, 1:, 3:]
    J = (np.diag([0.5, 0.5, 0.1]), np.diag([0.2, 0.2, 0.3]))
    Lw = sum(np.einsum("sij,jk,slk,sl->si", R[:, b], J[b], R[:, b], w[:, b]) for b in range(2))
    # 1e4 steps of round-off (measured 3e-13); the damper really works: spin 5 -> 0.006 rad/s
    assert np.abs(Lw - Lw[0]).max() < 1e-11 * np.linalg.norm(Lw[0])
    assert abs(r.qd[-1, 3]) < 0.01 and r.work_dampers[-1] < -0.9


@pytest.mark.parametrize("amplitude_deg", [30.0, 150.0])
def test_point_mass_pendulum_period_against_elliptic_integral(amplitude_deg):
    """point_pendulum.yaml: 1.5 kg with no rotational inertia on a massless 0.8 m rod."""
    a, length = np.radians(amplitude_deg), 0.8
    period = 4.0 * np.sqrt(length / G) * ellipk(np.sin(a / 2) ** 2)
    r = simulate(load("point_pendulum.yaml"), np.array([-np.pi / 2 + a]), np.zeros(1), t_end=2.2 * period,
                 dt=1e-3)
    assert r.status == "ok" and not r.warnings
    phi = r.q[:, 0] + np.pi / 2
    i = np.flatnonzero((phi[:-1] > 0) & (phi[1:] <= 0))
    tc = r.t[i] - phi[i] * (r.t[i + 1] - r.t[i]) / (phi[i + 1] - phi[i])
    # Stoermer-Verlet period error ~ (w dt)^2 / 24 relative, w <= 6.9 rad/s: < 2e-6; 1e-5 margin
    assert np.mean(np.diff(tc)) == pytest.approx(period, rel=1e-5)
    # the tension is m (g sin(phi) + L phi'^2) along the rod: at the bottom m (g + L w^2)
    bottom = i[0]
    w = r.qd[bottom, 0]
    assert np.linalg.norm(r.reaction_force[bottom, 0, :2]) == pytest.approx(1.5 * (G + length * w**2), rel=1e-3)


def slider_crank_reference(theta0, w0, t_eval):
    """Crank angle of the spatial slider-crank (slider_crank_spatial.yaml) from its 1-DOF
    Lagrangian ``T = J(theta) theta'^2 / 2``, ``V(theta)``: velocities of the CGs by complex-step
    derivatives of their positions (exact to round-off), J' and V' by central differences
    (step 1e-5: error ~1e-10 relative)."""
    r, l_rod, m1, m2, m3, i2 = 0.1, 0.4, 0.5, 1.0, 2.0, 0.01333

    def positions(th):  # CGs of crank, rod, slider and the rod angle, for real or complex th
        ax, ay = r * np.cos(th), r * np.sin(th)
        sphi = -r * np.sin(th) / l_rod  # the slider stays on y = 0
        cphi = np.sqrt(1 - sphi**2)
        return (0.5 * ax, 0.5 * ay), (ax + 0.2 * cphi, ay + 0.2 * sphi), (ax + l_rod * cphi, 0 * th), np.arcsin(sphi)

    def J(th):
        d = [np.imag(np.asarray(v)) / 1e-30 for v in _flatten(positions(th + 1e-30j))]
        (c1x, c1y, c2x, c2y, sx, sy, phi) = d
        return m1 * (c1x**2 + c1y**2) + 0.000417 + m2 * (c2x**2 + c2y**2) + i2 * phi**2 + m3 * (sx**2 + sy**2)

    def V(th):
        p = positions(th)
        return G * (m1 * p[0][1] + m2 * p[1][1] + m3 * p[2][1])

    def rhs(t, y):
        th, w = y
        e = 1e-5
        dJ, dV = (J(th + e) - J(th - e)) / (2 * e), (V(th + e) - V(th - e)) / (2 * e)
        return [w, -(0.5 * dJ * w**2 + dV) / J(th)]

    return solve_ivp(rhs, (0, t_eval[-1]), [theta0, w0], method="DOP853", rtol=1e-12, atol=1e-12,
                     t_eval=t_eval).y[0]


def _flatten(p):
    (a, b), (c, d), (e, f), phi = p
    return a, b, c, d, e, f, phi


def test_zero_inertia_slider_in_a_spatial_slider_crank_matches_a_minimal_coordinate_model():
    mech = load("slider_crank_spatial.yaml")
    start = assemble(mech, np.array([np.radians(30.0)]), mech.q_init)
    qd0 = joint_rates(mech, start.q, np.array([5.0]))
    errors = []
    for dt in (2e-3, 1e-3):
        r = simulate(mech, start.q, qd0, t_end=1.0, dt=dt, every=int(round(0.01 / dt)))
        assert r.status == "ok"
        # the planar loop of spatial joints has 3 redundant rows, reported by joint name
        assert any("redundant" in w and "'crank_pin'" in w and "'slide'" in w for w in r.warnings), r.warnings
        errors.append(np.abs(r.q[:, 0] - slider_crank_reference(np.radians(30.0), 5.0, r.t)).max())
    # second order against the reference: ratio 4 for half the step (measured 9.4e-4 and 2.4e-4 rad)
    assert 3.0 < errors[0] / errors[1] < 5.0, errors
    assert errors[1] < 1e-3


def test_tiny_inertia_large_step_finishes_ok_and_matches_the_reference():
    """A 2 kg rod pendulum whose mass sits at 0.5 m with a rotational inertia of only 1e-6 kg m^2
    at dt 1e-2 (the predictor h p / I once landed on the wrong root: a 179 deg flip)."""
    overrides = {"links": {"ground": {"frames": {"O": [0, 0]}},
                           "rod": {"mass": 2.0, "cg": [0.5, 0], "inertia": 1e-6,
                                   "frames": {"O": [0, 0], "tip": [1, 0]}}}}
    mech = load("pendulum.yaml", overrides)
    inertia = 2.0 * 0.25 + 1e-6
    sol = pendulum_reference(0.0, 0.0, 2.0, inertia=inertia, mgd=2.0 * G * 0.5)
    errors = []
    for dt in (1e-2, 5e-3):
        r = simulate(mech, np.zeros(1), np.zeros(1), t_end=2.0, dt=dt)
        assert r.status == "ok", r.message
        errors.append(np.abs(r.q[:, 0] - sol(r.t)[0]).max())
    # second order (ratio ~4) and the large step's error is the scheme's: measured 3.1e-3 and
    # 7.7e-4 rad (a wrong root would be off by ~pi)
    assert 3.0 < errors[0] / errors[1] < 5.0, errors
    assert errors[0] < 1e-2


def test_fast_rotation_is_refined_on_the_same_output_grid():
    """60 rad/s at dt 1e-2 turns the rod 0.6 rad per step: every step is rejected and computed
    as substeps; the rows are those of the requested grid and equal a run at dt / 2."""
    mech = load("pendulum.yaml")
    r = simulate(mech, np.array([-np.pi / 2]), np.array([60.0]), t_end=0.5, dt=1e-2)
    half = simulate(mech, np.array([-np.pi / 2]), np.array([60.0]), t_end=0.5, dt=5e-3, every=2)
    assert r.status == "ok" and half.status == "ok"
    assert r.refined_steps == 50 and half.refined_steps == 0
    assert np.allclose(r.t, np.arange(51) * 1e-2, rtol=0, atol=1e-12)
    # the same substeps as the dt / 2 run, up to the Newton tolerance
    assert np.abs(r.q - half.q).max() < 1e-8


def test_a_step_that_cannot_be_refined_stops_and_says_where_and_why():
    mech = load("pendulum.yaml")
    r = simulate(mech, np.array([-np.pi / 2]), np.array([1e4]), t_end=0.1, dt=1e-2)
    assert r.status == "diverged" and len(r.t) == 1  # only the good start row
    # 1e4 rad/s turns the rod 1.6 rad even in a 64th of the step: Newton fails there
    assert "t = 0 s" in r.message and "64 substeps" in r.message and "'rod'" in r.message
    assert "try a smaller dt" in r.message


def test_tol_is_validated():
    with pytest.raises(ValueError, match="tol"):
        simulate(load("pendulum.yaml"), np.zeros(1), np.zeros(1), t_end=0.1, dt=1e-2, tol=0.1)


# --- point masses (links' `masses:`) ---------------------------------------------------------------
BOB_OVERRIDES = {"links": {"ground": {"frames": {"O": [0, 0]}},
                           "rod": {"shape": {"type": "rod", "between": ["O", "tip"], "mass": 2.0},
                                   "frames": {"O": [0, 0], "tip": [1, 0], "mid": [0.5, 0.2]},
                                   "masses": {"bob": {"at": "tip", "mass": 1.5},
                                              "clamp": {"at": "mid", "mass": 0.5}}}}}


def test_point_masses_combine_by_the_parallel_axis_theorem():
    mech = load("pendulum.yaml", BOB_OVERRIDES)
    parts = [(2.0, np.array([0.5, 0.0]), 2.0 / 12.0), (1.5, np.array([1.0, 0.0]), 0.0),
             (0.5, np.array([0.5, 0.2]), 0.0)]  # (kg, position m, own Izz kg m^2)
    m = sum(p[0] for p in parts)
    cg = sum(p[0] * p[1] for p in parts) / m
    izz = sum(i + mi * np.sum((c - cg) ** 2) for mi, c, i in parts)
    assert mech.link_mass[1] == pytest.approx(m, rel=1e-15)
    assert np.allclose(mech.link_cg[1][:2], cg, rtol=0, atol=1e-15)
    assert mech.link_inertia[1][2, 2] == pytest.approx(izz, rel=1e-14)


def test_pendulum_with_point_masses_period_against_elliptic_integral():
    mech = load("pendulum.yaml", BOB_OVERRIDES)
    m, cg = mech.link_mass[1], mech.link_cg[1]
    i_pivot = mech.link_inertia[1][2, 2] + m * np.sum(cg[:2] ** 2)
    d = np.linalg.norm(cg[:2])
    a = np.radians(60.0)
    period = 4.0 * np.sqrt(i_pivot / (m * G * d)) * ellipk(np.sin(a / 2) ** 2)
    offset = np.arctan2(cg[1], cg[0])  # the CG's direction in the link frame: q = -pi/2 - offset hangs
    r = simulate(mech, np.array([-np.pi / 2 + a - offset]), np.zeros(1), t_end=2.2 * period, dt=1e-3)
    assert r.status == "ok"
    phi = r.q[:, 0] + offset + np.pi / 2
    i = np.flatnonzero((phi[:-1] > 0) & (phi[1:] <= 0))
    tc = r.t[i] - phi[i] * (r.t[i + 1] - r.t[i]) / (phi[i + 1] - phi[i])
    assert np.mean(np.diff(tc)) == pytest.approx(period, rel=1e-5)  # (w dt)^2/24 ~ 1e-6


def test_point_mass_at_an_unknown_frame_is_an_error_at_its_line(tmp_path):
    from test_dynamics_support import DATA

    from linkcli.io.loader import load_mechanism

    text = (DATA / "pendulum.yaml").read_text().replace(
        "    frames: {O: [0, 0], tip: [1, 0]}",
        "    frames: {O: [0, 0], tip: [1, 0]}\n    masses: {bob: {at: tpi, mass: 1}}")
    f = tmp_path / "p.yaml"
    f.write_text(text)
    with pytest.raises(Exception) as info:
        load_mechanism(f)
    assert "tpi" in str(info.value) and "tip" in str(info.value) and ":13:" in str(info.value)


def test_massless_coupler_between_two_pins_matches_the_minimal_coordinate_model(monkeypatch):
    """The W3 four-bar with a coupler that has neither mass nor inertia (a two-force member):
    the saddle-point step needs no mass inverse, so no regularisation; against the Lagrangian
    of test_dynamics_fourbar with the coupler's mass and inertia set to zero."""
    import test_dynamics_fourbar as fb

    links = {"ground": {"frames": {"O2": [0, 0], "O4": [4, 0]}},
             "crank": {"shape": {"type": "rod", "between": ["O2", "A"], "mass": 1.0},
                       "frames": {"O2": [0, 0], "A": [1, 0]}},
             "coupler": {"frames": {"A": [0, 0], "B": [3, 0]}},
             "rocker": {"shape": {"type": "rod", "between": ["O4", "B"], "mass": 3.5},
                        "frames": {"O4": [0, 0], "B": [3.5, 0]}}}
    mech = load("fourbar_w3.yaml", {"links": links})
    monkeypatch.setattr(fb, "MASS", np.array([1.0, 0.0, 3.5]))
    monkeypatch.setattr(fb, "INERTIA", np.array([1.0 / 12.0, 0.0, 3.5 * 3.5**2 / 12.0]))
    q0, qd0 = fb.joint_state(np.radians(60.0))
    errors = []
    for dt in (2e-3, 1e-3):
        r = simulate(mech, q0, qd0, t_end=2.0, dt=dt, every=int(round(0.01 / dt)))
        assert r.status == "ok" and not r.warnings, (r.message, r.warnings)
        errors.append(np.abs(r.q[:, 0] - fb.reference(q0[0], 2.0, r.t)).max())
        # a two-force member: the pin forces on the coupler are equal and opposite along it
        f_a, f_b = r.reaction_force[:, 1, :2], r.reaction_force[:, 2, :2]  # joints A (on coupler), B (on rocker)
        assert np.abs(f_a - f_b).max() < 1e-9 * np.abs(f_a).max()
    # second order: measured 2.1e-4 and 5.1e-5 rad (ratio 4.0)
    assert 3.0 < errors[0] / errors[1] < 5.0, errors
    assert errors[1] < 2e-4
