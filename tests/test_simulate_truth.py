"""A failing or doubtful simulation tells the truth about where and why (tryout 6):

* a motion driver whose prescribed rate jumps (a table ending while moving, a linear ramp) is
  warned of in the file (driver, time, rates) and named as the cause of the energy jump at that
  time, not the step (a smaller dt cannot remove an impulsive stop);
* a divergence is blamed on "massless" links only when a link truly has a free direction without
  mass or inertia, and a spring over the step limit is named with the stable dt, its omega
  from the effective mass the integrator uses (:mod:`linkcli.core.dynamics.modes`);
* a spring on a freedom without inertia of its own (a point mass on a sprung pin) is warned of,
  and a run in which it rings on the regularising inertia is not ``ok``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from linkcli.compile import compile_mechanism
from linkcli.core.assembly import assemble
from linkcli.core.dynamics import simulate
from linkcli.core.dynamics.bodies import REGULARISATION
from linkcli.core.dynamics.modes import massless_freedoms, spring_modes
from linkcli.core.dynamics.setup import all_rows, prepare
from linkcli.io.loader import load_mechanism

TABLE_T = [0, 0.3, 0.7, 1.0, 1.6]
TABLE_MOVING = [-90, -80, -95, -70, -90]  # tryout6/pend_table.yaml: ends at -305.8 deg/s


def pendulum(tmp_path: Path, driver: str, name: str = "p.yaml") -> Path:
    """A 1 kg, 1 m rod pendulum about a driven pin (gravity 9.81 m/s^2), the driver's YAML given."""
    path = tmp_path / name
    path.write_text(f"""name: driven pendulum
kind: planar
units: {{length: m, angle: deg}}
gravity: [0, -9.81]
links:
  ground:
    frames: {{O: [0, 0]}}
  arm:
    shape: {{type: rod, between: [O, tip], mass: 1.0}}
    frames: {{O: [0, 0], tip: [1, 0]}}
joints:
  pin: {{type: revolute, parent: ground.O, child: arm.O, actuated: true}}
base: ground
effector: arm.tip
assembly: {{pin: -90}}
drivers:
  wave: {driver}
analysis:
  simulate: {{t_end: 1.0, dt: 1.0e-3}}
""", encoding="utf-8")
    return path


def table(t, values) -> str:
    return f"{{joint: pin, type: table, t: {list(t)}, values: {list(values)}}}"


def driver_warnings(path: Path) -> list:
    return [w for w in load_mechanism(path).warnings if w.key_path[:1] == ("drivers",)]


# -- driver rate jumps -------------------------------------------------------------------------
def test_a_table_ending_while_moving_is_warned_with_its_end_rate(tmp_path):
    path = pendulum(tmp_path, table(TABLE_T, TABLE_MOVING))
    # independent truth: the end slope of the not-a-knot spline by a one-sided difference
    # (error ~ |v''| h / 2 = 1e-4 deg/s at h = 1e-7 s; the message prints 4 digits)
    spline, h = CubicSpline(TABLE_T, TABLE_MOVING), 1e-7
    end_rate = (spline(1.6) - spline(1.6 - h)) / h
    (w,) = driver_warnings(path)
    assert w.severity == "warning" and w.key_path == ("drivers", "wave", "t")
    assert w.line == 17  # the driver's line in the file
    assert f"rate jumps at t = 1.6 s (end) from {end_rate:.4g} to 0 deg/s" in w.message
    assert "-305.8" in w.message and "no smaller dt fixes them" in w.message


def test_a_table_ending_at_rest_and_a_cycloidal_ramp_are_not_warned(tmp_path):
    # a cubic through the knots is reproduced exactly by the not-a-knot spline: p(t) = -90 + 30 (3u^2 - 2u^3),
    # u = t / 1.6, has zero slope at both ends (the run starts at rest, the table ends at rest)
    t = np.linspace(0, 1.6, 6)
    u = t / 1.6
    values = -90 + 30 * (3 * u**2 - 2 * u**3)
    assert driver_warnings(pendulum(tmp_path, table(t.round(6).tolist(), values.round(12).tolist()))) == []
    ramp = "{joint: pin, type: ramp, end: -45, t_start: 0.2, t_end: 0.5, shape: cycloidal}"
    assert driver_warnings(pendulum(tmp_path, ramp, "c.yaml")) == []


def test_a_linear_ramp_and_a_linear_table_are_warned_at_each_kink(tmp_path):
    (w,) = driver_warnings(pendulum(tmp_path, "{joint: pin, type: ramp, end: -45, t_start: 0.2, t_end: 0.5, "
                                                 "shape: linear}"))
    rate = 45 / 0.3  # deg/s, (end - start) / duration
    assert f"at t = 0.2 s (start) from 0 to {rate:.4g} deg/s; at t = 0.5 s (end) from {rate:.4g} to 0" in w.message
    assert "shape: cycloidal" in w.hint
    lin = "{joint: pin, type: table, t: [0, 1, 2], values: [-90, -80, -80], interpolation: linear}"
    (w,) = driver_warnings(pendulum(tmp_path, lin, "l.yaml"))
    assert "at t = 1 s (knot) from 10 to 0 deg/s" in w.message  # the last segment is flat: no end jump
    assert "t = 2 s" not in w.message


@pytest.mark.parametrize("moving", [True, False])
def test_the_energy_jump_of_an_impulsive_stop_is_blamed_on_the_driver(run_cli, tmp_path, moving):
    t = np.linspace(0, 1.6, 6)
    u = t / 1.6
    at_rest = (-90 + 30 * (3 * u**2 - 2 * u**3)).round(12).tolist()
    path = pendulum(tmp_path, table(TABLE_T, TABLE_MOVING) if moving else table(t.round(6).tolist(), at_rest))
    r = run_cli("simulate", path, "--t-end", "1.7", "-o", tmp_path / "o.csv")
    if not moving:  # the same motion brought to rest: exact to the end (no step can be blamed)
        assert r.exit_code == 0, r.stderr
        return
    assert r.exit_code == 1
    m = re.search(r"more than 10 % from t = ([\d.]+) s on\): motion driver 'wave' changes its prescribed rate by "
                  r"([\d.]+) deg/s at t = 1.6 s", r.stderr)
    assert m, r.stderr
    assert 1.6 <= float(m.group(1)) <= 1.6 + 2e-3  # the step after the table's end
    assert float(m.group(2)) == pytest.approx(305.8, abs=0.05)
    assert "A smaller dt does not fix it" in r.stderr and "try a smaller dt" not in r.stderr


# -- massless links and stiff springs ------------------------------------------------------------
BLOCK = """name: block on a rail
kind: planar
units: {{length: mm, angle: deg}}
links:
  ground:
    frames: {{rail: [0, 0], anchor: [-100, 0]}}
  block:
    mass: 500 g
    cg: [0, 0]
    inertia: 0
    frames: {{P: [0, 0]}}
joints:
  slide: {{type: prismatic, parent: ground.rail, child: block.P}}
base: ground
effector: block.P
assembly: {{slide: 10}}
springs:
  k1: {{between: [ground.anchor, block.P], stiffness: {k}, free_length: 100}}
"""

POINT_MASS = """name: pendulum carrying a point mass on a sprung hinge
kind: planar
units: {{length: m, angle: deg}}
gravity: [0, -9.81]
links:
  ground:
    frames: {{O: [0, 0]}}
  rod1:
    shape: {{type: rod, between: [O, A], mass: 1.0}}
    frames: {{O: [0, 0], A: [1, 0]}}
  bob:
    mass: 2.0
    cg: [0, 0]
    inertia: {inertia}
    frames: {{A: [0, 0], mark: [0.1, 0]}}
joints:
  shoulder: {{type: revolute, parent: ground.O, child: rod1.O}}
  elbow: {{type: revolute, parent: rod1.A, child: bob.A}}
springs:
  tw: {{type: torsional, joint: elbow, stiffness: {k}, free_angle: 0}}
base: ground
effector: bob.mark
assembly: {{shoulder: -60, elbow: {elbow}}}
"""


def compiled(tmp_path: Path, text: str, name: str = "m.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path, compile_mechanism(load_mechanism(path).model)


def modes_at_start(mech):
    setup, w, _ = prepare(mech, mech.q_init, np.zeros(mech.n_q), 0.01, 1e-3)
    G = all_rows(setup.model, w.pos, w.rot, setup.drv[1])[0]
    return setup, massless_freedoms(mech, setup.model, G, w.rot), spring_modes(mech, setup.model, G, w.pos, w.rot)


def test_a_block_without_inertia_on_a_rail_is_not_massless_and_its_spring_mode_is_sqrt_k_over_m(tmp_path):
    _, mech = compiled(tmp_path, BLOCK.format(k="2e4 N/mm"))
    _, massless, (mode,) = modes_at_start(mech)
    assert massless == ()  # the prismatic joint does not let the block turn
    # closed form: a mass on a spring along its rail, omega = sqrt(k / m); the reduced eigenproblem is exact
    # linear algebra (rtol 1e-9 covers the SVD's round-off)
    assert mode.omega == pytest.approx(np.sqrt(2e7 / 0.5), rel=1e-9) and not mode.regularised
    assert mode.inertia == pytest.approx(0.5, rel=1e-9) and mode.links == ("block",)


def test_a_point_mass_on_a_pin_is_massless_in_rotation_and_a_rod_pendulum_spring_is_not(tmp_path):
    _, mech = compiled(tmp_path, POINT_MASS.format(inertia=0, k=1.0, elbow=10))
    setup, massless, (mode,) = modes_at_start(mech)
    assert massless == ("bob",)
    # the only inertia the elbow spring moves is the regularising one the setup gave the bob
    i_reg = setup.model.body_inertia[1, 2, 2]
    assert i_reg == pytest.approx(REGULARISATION * 2.0 * setup.model.mechanism_size**2, rel=1e-12)
    assert mode.regularised and mode.links == ("bob",)
    assert mode.omega == pytest.approx(np.sqrt(1.0 / i_reg), rel=1e-6)  # relative share of the rod ~1e-6
    # with the bob's own inertia the elbow spring's mode is that of the bob about its cg, in series with
    # the rod about the shoulder: 1/I_eff = 1/I_bob + 1/(I_rod + m_bob L^2) for a pin at the cg (no coupling)
    _, mech = compiled(tmp_path, POINT_MASS.format(inertia=0.01, k=1.0, elbow=10), "real.yaml")
    _, massless, (mode,) = modes_at_start(mech)
    i_eff = 1 / (1 / 0.01 + 1 / (1.0 / 3 + 2.0 * 1.0**2))
    assert massless == () and not mode.regularised
    assert mode.inertia == pytest.approx(i_eff, rel=1e-9)


def test_a_diverging_stiff_spring_is_named_with_the_stable_dt_and_no_massless_link(run_cli, tmp_path):
    path, _ = compiled(tmp_path, BLOCK.format(k="2e4 N/mm"))
    r = run_cli("simulate", path, "--dt", "1e-3", "--t-end", "0.2", "-o", tmp_path / "o.csv")
    assert r.exit_code == 1 and "diverged" in r.stderr
    omega = np.sqrt(2e7 / 0.5)  # rad/s, closed form (see above)
    assert f"spring 'k1' is too stiff for the step: omega*dt = {omega * 1e-3:.3g} > 2" in r.stderr
    assert f"use dt < {2 / omega:.3g} s" in r.stderr
    assert "without mass" not in r.stderr


def test_a_spring_on_a_regularised_freedom_is_warned_and_its_ringing_run_is_not_ok(run_cli, tmp_path):
    ringing, _ = compiled(tmp_path, POINT_MASS.format(inertia=0, k=1.0, elbow=10), "ring.yaml")
    r = run_cli("simulate", ringing, "--t-end", "0.2", "-o", tmp_path / "a.csv")
    assert "spring 'tw' acts on a freedom of link(s) bob without mass or inertia of its own" in r.stderr
    assert r.exit_code == 1 and "inaccurate" in r.stderr
    assert "spring 'tw' (links bob) acts on a freedom without mass or inertia of its own and rings" in r.stderr
    # the same spring at rest stays at rest (nothing else turns the bob): physical, ok, still warned
    rest, _ = compiled(tmp_path, POINT_MASS.format(inertia=0, k=1.0, elbow=0), "rest.yaml")
    r = run_cli("simulate", rest, "--t-end", "0.2", "-o", tmp_path / "b.csv")
    assert r.exit_code == 0, r.stderr
    assert "acts on a freedom of link(s) bob" in r.stderr
    # with its own inertia the sprung bob swings physically: ok, no warning
    real, _ = compiled(tmp_path, POINT_MASS.format(inertia=0.01, k=1.0, elbow=10), "real.yaml")
    r = run_cli("simulate", real, "--t-end", "0.2", "-o", tmp_path / "c.csv")
    assert r.exit_code == 0, r.stderr
    assert "without mass or inertia" not in r.stderr


def test_the_step_check_of_a_spring_on_a_regularised_freedom_uses_the_regularising_inertia(tmp_path):
    _, mech = compiled(tmp_path, POINT_MASS.format(inertia=0, k=10.0, elbow=0))
    res = simulate(mech, mech.q_init, np.zeros(mech.n_q), t_end=0.02, dt=1e-2)
    setup, _, _ = modes_at_start(mech)
    i_reg = REGULARISATION * 2.0 * setup.model.mechanism_size**2  # the regularising inertia (bodies.regularise)
    omega = np.sqrt(10.0 / i_reg)  # the rod's share shifts it by ~1e-6 (see above): 3 digits are exact
    (w,) = [w for w in res.warnings if "too stiff for the step" in w]
    assert f"omega*dt = {omega * 1e-2:.3g} > 2" in w and "the regularising inertia" in w


@pytest.mark.parametrize("name, free", [("slider_crank_spatial.yaml", ()), ("spherical_pendulum.yaml", ("rod",))])
def test_a_rod_is_massless_only_where_its_joints_let_it_spin(name, free):
    """Uniform rods have no inertia about their own axis: held by revolute joints (the spatial
    slider-crank) that spin is not a freedom; on a ball joint (the spherical pendulum) it is."""
    from test_dynamics_support import load

    mech = load(name)
    start = assemble(mech, mech.q_init[mech.q_actuated], mech.q_init)
    setup, w, _ = prepare(mech, start.q, np.zeros(mech.n_q), 0.01, 1e-3)
    G = all_rows(setup.model, w.pos, w.rot, setup.drv[1])[0]
    assert massless_freedoms(mech, setup.model, G, w.rot) == free
