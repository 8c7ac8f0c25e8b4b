"""Forces along a motion (linkcli/core/kinetostatics.py, linkcli/analyses/forces.py) against
independent truths: the power balance, simulate's driver torque, the exact slider-crank engine
formula, a hand free-body solution of a loaded four-bar, and the closed-form equilibria of a
spring-balanced pendulum with their stability.

What the computations share: the inverse dynamics uses the kinematic sweep (positions,
velocities, accelerations from linkcli/core/velocity.py) and the dynamics model's constraint
rows and load kernels. The closed forms below use neither (only the positions of the sweep
points, which the kinematics tests check against closed forms elsewhere).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import MECHANISMS
from kin_helpers import mech_from_yaml

from linkcli.analyses.forces import ForcesRequest, parse_rate, run_equilibrium, run_forces
from linkcli.analyses.inputs import Sweep
from linkcli.compile import compile_mechanism
from linkcli.core import kinetostatics as ks
from linkcli.core.forward import frame_poses, link_poses
from linkcli.core.loop_closure import Status
from linkcli.core.sweep import solve_sweep
from linkcli.core.velocity import joint_accelerations, joint_rates
from linkcli.errors import AnalysisInputError
from linkcli.io.loader import load_mechanism


def _mech(name):
    return compile_mechanism(load_mechanism(MECHANISMS / name).model)


def _motion(mech, angles, speed, acc=0.0):
    """Sweep of the single input over ``angles`` (rad) with constant rate/acceleration."""
    res = solve_sweep(mech, np.asarray(angles, float)[:, None], mech.q_init)
    assert np.all(res.status == Status.CONVERGED)
    n = len(angles)
    qd = joint_rates(mech, res.q, np.full((n, 1), speed))
    qdd = joint_accelerations(mech, res.q, qd, np.full((n, 1), acc))
    return res, qd, qdd


# -- power balance ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name, speed, acc", [("fourbar.yaml", 2 * math.pi, 3.0),
                                              ("motor_fourbar.yaml", 2 * math.pi, -5.0),
                                              ("slider_crank.yaml", 4.0, 0.0)])
def test_power_balance_at_every_point(name, speed, acc):
    """Input power = dT/dt - power of gravity, springs, dampers and loads, at every point, each
    term computed here from the reported motion and element forces (not from the solve)."""
    mech = _mech(name)
    res, qd, qdd = _motion(mech, np.radians(np.arange(0.0, 360.0, 3.0)), speed, acc)
    fr = ks.inverse_dynamics(mech, res.q, qd, qdd, res.status == Status.CONVERGED, res.condition)
    assert np.all(fr.status == ks.OK)
    bm = ks.body_motion(mech, res.q, qd, qdd)
    m = mech.link_mass[1:]
    J = mech.link_inertia[1:, 2, 2]  # planar: Izz about the CG
    dT = np.einsum("b,nbi,nbi->n", m, bm.vel, bm.acc) + np.einsum("b,nb,nb->n", J, bm.omg[..., 2], bm.alpha[..., 2])
    p_gravity = np.einsum("b,nbi,i->n", m, bm.vel, mech.gravity)
    p_axial = -np.einsum("ne,ne->n", fr.axial[..., 2], fr.axial[..., 1])  # tension resists lengthening
    p_tors = np.einsum("ne,ne->n", fr.torsional[..., 2], fr.torsional[..., 1])
    p_in = fr.driver_force[:, 0] * qd[:, mech.q_actuated[0]]
    scale = np.abs(dT).max() + np.abs(p_gravity).max() + np.abs(p_axial).max() + np.abs(p_tors).max()
    # round-off: a dozen products of O(scale) terms, each with relative error ~1e-16, plus the
    # kinematic solve's 1e-10 loop tolerance entering the multipliers linearly -> 1e-9 relative
    assert np.abs(p_in - (dT - p_gravity - p_axial - p_tors)).max() <= 1e-9 * scale
    assert np.abs(fr.power_input + fr.power_applied - fr.kinetic_rate).max() <= 1e-9 * scale


def test_shaking_force_is_the_sum_of_the_ground_reactions():
    """Two computations of the wrench on the ground: momentum balance (the reported shaking
    force) and the sum of the reactions of the joints touching the ground and of the motors
    mounted on it (a driver's torque is not part of its joint's reaction)."""
    mech = _mech("fourbar.yaml")
    res, qd, qdd = _motion(mech, np.radians(np.arange(0.0, 360.0, 5.0)), 2 * math.pi, 1.0)
    fr = ks.inverse_dynamics(mech, res.q, qd, qdd)
    F, M = np.zeros_like(fr.shaking_force), np.zeros_like(fr.shaking_moment)
    T = link_poses(mech, res.q)
    for j in range(mech.n_joints):
        o_b = (T[:, mech.joint_child[j]] @ mech.T_child_joint[j])[:, :3, 3]  # the moment's reference point
        sign = 1.0 if mech.joint_child[j] == 0 else -1.0 if mech.joint_parent[j] == 0 else 0.0
        F += sign * fr.reaction_force[:, j]
        M += sign * (fr.reaction_moment[:, j] + np.cross(o_b, fr.reaction_force[:, j]))
    for k, i in enumerate(mech.q_actuated):  # the motors' torques (on the child, minus on the parent)
        j = mech.q_joint[i]
        sign = 1.0 if mech.joint_child[j] == 0 else -1.0 if mech.joint_parent[j] == 0 else 0.0
        axis = (T[:, mech.joint_child[j]] @ mech.T_child_joint[j])[:, :3, :3] @ mech.q_axis[i]
        M += sign * fr.driver_force[:, k, None] * axis
    scale = np.abs(fr.reaction_force).max()
    assert np.abs(F - fr.shaking_force).max() <= 1e-12 * scale  # round-off of a few sums
    # moments: round-off with lever arms <= 4 m, plus the two sides of the loop-closing joint
    # differing by the loop residual (the sweep's 1e-10 m tolerance) times the pin force
    assert np.abs(M - fr.shaking_moment).max() <= 4e-11 * scale + 2 * fr.residual.max() * scale


# -- simulate's driver torque ----------------------------------------------------------------------
def test_driver_torque_equals_simulate_for_a_constant_speed_motor():
    """motor_fourbar: a constant-speed motor against a spring, a damper and gravity. simulate's
    driver torque and reactions at its saved states must equal the inverse dynamics at the same
    crank angles. simulate computes its multipliers from the acceleration-level equations at
    the integrator's states (dynamics/node_multipliers.py); with the only degree of freedom
    driven, those states are exact up to the integrator's Newton tolerance (1e-10 m or rad),
    so the agreement does not depend on dt: measured 3.6e-10 of the peak torque at dt = 2e-3
    and 1e-3; asserted 1e-8 (30x margin)."""
    from linkcli.core.assembly import assemble
    from linkcli.core.dynamics import simulate

    mech = _mech("motor_fourbar.yaml")
    speed = float(mech.driver_profile[0].params["speed"])
    q0 = assemble(mech, np.array([float(mech.driver_profile[0].params["start"])]), mech.q_init).q
    for dt in (2e-3, 1e-3):
        sim = simulate(mech, q0, joint_rates(mech, q0[None], np.array([[speed]]))[0], t_end=0.5, dt=dt)
        assert sim.ok, sim.message
        k = mech.q_actuated[0]
        res = solve_sweep(mech, sim.q[:, [k]], sim.q[0])
        n = len(sim.t)
        qd = joint_rates(mech, res.q, np.full((n, 1), speed))
        qdd = joint_accelerations(mech, res.q, qd, np.zeros((n, 1)))
        fr = ks.inverse_dynamics(mech, res.q, qd, qdd)
        scale = np.abs(fr.driver_force[:, 0]).max()
        assert np.abs(fr.driver_force[:, 0] - sim.driver_force[:, 0]).max() <= 1e-8 * scale
        # the reactions are the same quantity: same convention (on the child, world frame)
        assert np.abs(fr.reaction_force - sim.reaction_force).max() <= 1e-8 * np.abs(fr.reaction_force).max()


# -- the slider-crank engine formula -----------------------------------------------------------------
ENGINE = """
name: engine
kind: planar
units: {{length: m, angle: rad}}
gravity: [0, -9.81]
links:
  ground: {{frames: {{O: [0, 0]}}}}
  crank: {{mass: {mA}, cg: [{r}, 0], inertia: 0, frames: {{O: [0, 0], A: [{r}, 0]}}}}
  rod: {{frames: {{A: [0, 0], B: [{l}, 0]}}}}
  piston: {{mass: {mB}, cg: [0, 0], inertia: 0, frames: {{B: [0, 0]}}}}
joints:
  crank_pin: {{type: revolute, parent: ground.O, child: crank.O, actuated: true}}
  A: {{type: revolute, parent: crank.A, child: rod.A}}
  B: {{type: revolute, parent: rod.B, child: piston.B}}
  slide: {{type: prismatic, parent: ground.O, child: piston.B}}
base: ground
assembly: {{crank_pin: 0.5, A: -0.6, B: 0.1, slide: {x0}}}
"""


def test_slider_crank_torque_matches_the_exact_engine_formula():
    """Crank r with a rotating point mass m_A at the crank pin, massless connecting rod l_rod,
    reciprocating mass m_B; constant crank speed w. Exact (not the harmonic series): with
    x = r cos t + S, S = sqrt(l_rod^2 - r^2 sin^2 t), the crank torque is
    T = m_B x' x'' w^2 + m_A g r cos t (piston inertia, and the weight of the rotating mass;
    its centripetal force passes through the crank centre)."""
    r, l_rod, mA, mB, w, g = 0.05, 0.17, 1.3, 0.9, 314.0, 9.81
    mech = mech_from_yaml(ENGINE.format(r=r, l=l_rod, mA=mA, mB=mB, x0=r + l_rod))
    t = np.radians(np.arange(0.0, 360.0, 2.0)) + 1e-3
    res, qd, qdd = _motion(mech, t, w)
    fr = ks.inverse_dynamics(mech, res.q, qd, qdd, res.status == Status.CONVERGED, res.condition)
    s, c = np.sin(t), np.cos(t)
    S = np.sqrt(l_rod**2 - r**2 * s**2)
    x1 = -r * s - r**2 * s * c / S
    x2 = -r * c - r**2 * (c**2 - s**2) / S - r**4 * s**2 * c**2 / S**3
    T = mB * x1 * x2 * w**2 + mA * g * r * c
    # 1e-9 relative to the largest torque: both are exact; the kinematic sweep's 1e-10 loop
    # tolerance and round-off of the solve (condition of the rod/piston rows ~ l_rod/r) remain
    assert np.abs(fr.driver_force[:, 0] - T).max() <= 1e-9 * np.abs(T).max()


# -- static four-bar with a coupler load: hand free-body solution -------------------------------------
def test_static_fourbar_coupler_load_matches_the_free_body_solution():
    """Massless links, a force F at the coupler point P. The rocker is a two-force member
    (force along O4-B); moments about A on the coupler give its magnitude, the coupler's force
    balance the pin force at A, the crank's moment balance about O2 the input torque."""
    mech = _mech("fourbar.yaml")
    angles = np.radians(np.arange(0.0, 360.0, 7.5))
    res, _, _ = _motion(mech, angles, 0.0)
    F = np.array([30.0, -100.0, 0.0])
    P = mech.frame_names.index("coupler.P")
    loads = [ks.ExtraLoad(P, F, np.zeros(3))]
    zero = np.zeros_like(res.q)
    fr = ks.inverse_dynamics(mech, res.q, zero, zero, extra_loads=loads, gravity=np.zeros(3))
    # the file's links have masses: with gravity off and at rest they carry no load
    Tf = frame_poses(mech, link_poses(mech, res.q))[..., :3, 3]
    pos = {n: Tf[:, mech.frame_names.index(n)] for n in ("ground.O2", "ground.O4", "coupler.A", "coupler.B",
                                                         "coupler.P")}
    A, B, Pp, O2, O4 = pos["coupler.A"], pos["coupler.B"], pos["coupler.P"], pos["ground.O2"], pos["ground.O4"]
    cross = lambda a, b: a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]  # noqa: E731
    u = (B - O4) / np.linalg.norm(B - O4, axis=1)[:, None]
    f = -cross(Pp - A, np.broadcast_to(F, A.shape)) / cross(B - A, u)
    F_cB = f[:, None] * u  # on the coupler from the rocker
    F_cA = -(F + F_cB)  # on the coupler from the crank
    torque = cross(A - O2, F_cA)  # motor torque on the crank
    j = {n: mech.joint_names.index(n) for n in ("crank_pin", "A", "B", "O4")}
    scale = np.abs(F_cA).max()
    # 1e-9 relative: both solutions are exact; the condition of the linear system is modest
    # for this crank-rocker (transmission angle stays within 40-140 deg)
    assert np.abs(fr.driver_force[:, 0] - torque).max() <= 1e-9 * np.abs(torque).max()
    assert np.abs(fr.reaction_force[:, j["A"]] - F_cA).max() <= 1e-9 * scale  # on the child: coupler
    assert np.abs(fr.reaction_force[:, j["B"]] + F_cB).max() <= 1e-9 * scale  # on the child: rocker
    assert np.abs(fr.reaction_force[:, j["crank_pin"]] - F_cA).max() <= 1e-9 * scale  # ground on crank
    assert np.abs(fr.reaction_force[:, j["O4"]] + F_cB).max() <= 1e-9 * scale  # rocker on ground (child)
    assert np.abs(fr.reaction_moment[:, j["A"], 2]).max() <= 1e-9 * scale  # a pin carries no moment


def test_statically_indeterminate_spatial_fourbar_gets_the_planar_answer_with_a_warning():
    """The spatial model of the four-bar has 3 redundant loop equations: the in-plane forces
    and the input torque are still determinate and must equal the planar model's; the rest is
    the minimum-norm split, reported with a warning."""
    planar, spatial = _mech("fourbar.yaml"), _mech("planar_fourbar_as_spatial.yaml")
    angles = np.radians(np.arange(0.0, 360.0, 15.0))
    out = []
    for mech in (planar, spatial):
        res, _, _ = _motion(mech, angles, 0.0)
        zero = np.zeros_like(res.q)
        loads = [ks.ExtraLoad(mech.frame_names.index("coupler.P"), np.array([0.0, -100.0, 0.0]), np.zeros(3))]
        out.append(ks.inverse_dynamics(mech, res.q, zero, zero, extra_loads=loads, gravity=np.zeros(3)))
    p, s = out
    assert not p.warnings and any("statically indeterminate" in w for w in s.warnings)
    scale = np.abs(p.reaction_force).max()
    assert np.abs(p.driver_force - s.driver_force).max() <= 1e-8 * np.abs(p.driver_force).max()
    assert np.abs(p.reaction_force[..., :2] - s.reaction_force[..., :2]).max() <= 1e-8 * scale


# -- equilibrium of a spring-balanced pendulum ---------------------------------------------------------
PENDULUM = """
name: spring-balanced pendulum
kind: planar
units: {{length: m, angle: deg}}
gravity: [0, -{g}]
links:
  ground: {{frames: {{O: [0, 0], S: [0, {h}]}}}}
  arm: {{mass: {m}, cg: [{c}, 0], inertia: 0.01, frames: {{O: [0, 0], E: [{a}, 0]}}}}
joints:
  pivot: {{type: revolute, parent: ground.O, child: arm.O, actuated: true}}
base: ground
springs:
  balance: {{between: [ground.S, arm.E], stiffness: {k}, free_length: {L0}}}
"""


def test_spring_balanced_pendulum_equilibria_and_stability():
    """V(t) = m g c sin t + k (L - L0)^2 / 2, L = sqrt(a^2 + h^2 - 2 a h sin t). V' = cos t
    (m g c - k a h (1 - L0 / L)): rest at t = +-90 deg and where L = L0 / (1 - m g c / (k a h)).
    V'' = -+(m g c - k a h (1 - L0/L)) at t = +-90 deg, k a^2 h^2 L0 cos^2 t / L^3 > 0 at the others."""
    m, c, g, k, a, h, L0 = 2.0, 0.5, 9.81, 100.0, 0.6, 0.8, 0.3
    mech = mech_from_yaml(PENDULUM.format(m=m, c=c, g=g, k=k, a=a, h=h, L0=L0))
    req = ForcesRequest(sweeps=[Sweep("pivot", -179.3, 180.0, step=0.7)])
    out = run_equilibrium(mech, req)
    theta = np.radians(out.table["pivot.q [deg]"])
    kah, mgc = k * a * h, m * g * c
    Ls = L0 / (1 - mgc / kah)
    ts = math.asin((a * a + h * h - Ls * Ls) / (2 * a * h))
    L = lambda t: math.sqrt(a * a + h * h - 2 * a * h * math.sin(t))  # noqa: E731
    expect = sorted([(-math.pi / 2, mgc - kah * (1 - L0 / L(-math.pi / 2))),
                     (ts, kah * a * h * L0 * math.cos(ts) ** 2 / Ls**3),
                     (math.pi / 2, -(mgc - kah * (1 - L0 / L(math.pi / 2)))),
                     (math.pi - ts, kah * a * h * L0 * math.cos(ts) ** 2 / Ls**3)])
    assert len(theta) == 4
    # Newton converges quadratically to the holding-torque tolerance (1e-10 of the largest
    # torque): the angle is then exact to ~1e-10 / K rad; 1e-9 rad is safe
    assert np.abs(np.sort(theta) - [e[0] for e in expect]).max() <= 1e-9
    K = out.table["pivot.stiffness [N m/rad]"][np.argsort(theta)]
    # analytic stiffness vs the closed form: round-off only
    assert np.allclose(K, [e[1] for e in expect], rtol=1e-8, atol=0)
    assert list(out.table["stability"][np.argsort(theta)]) == ["unstable", "stable", "unstable", "stable"]
    assert out.n_failed == 0


def test_reduced_stiffness_of_a_two_input_mechanism_is_symmetric_and_matches_the_pendulum():
    """Two independent pendulums on one ground (2 inputs): K is diagonal, each entry the
    single pendulum's V'' = -m g c sin t (gravity only)."""
    mech = mech_from_yaml("""
    name: two pendulums
    kind: planar
    units: {length: m, angle: rad}
    gravity: [0, -9.81]
    links:
      ground: {frames: {O: [0, 0], Q: [1, 0]}}
      p1: {mass: 2.0, cg: [0.5, 0], inertia: 0.1, frames: {O: [0, 0]}}
      p2: {mass: 3.0, cg: [0.25, 0], inertia: 0.1, frames: {Q: [0, 0]}}
    joints:
      j1: {type: revolute, parent: ground.O, child: p1.O, actuated: true}
      j2: {type: revolute, parent: ground.Q, child: p2.Q, actuated: true}
    base: ground
    """)
    q = np.array([[0.3, -1.1], [2.0, 0.4]])
    st = ks.reduced_stiffness(mech, q)
    expect = np.array([[np.diag([-2 * 9.81 * 0.5 * math.sin(t1), -3 * 9.81 * 0.25 * math.sin(t2)])] for t1, t2 in q])
    assert np.allclose(st.stiffness, expect[:, 0], rtol=1e-12, atol=1e-12)
    assert np.allclose(st.holding, [[2 * 9.81 * 0.5 * math.cos(t1), 3 * 9.81 * 0.25 * math.cos(t2)] for t1, t2 in q],
                       rtol=1e-12, atol=1e-12)


# -- the analysis and the command ------------------------------------------------------------------------
def test_speed_strings_are_parsed_with_units():
    deg = {"length": "m", "angle": "deg"}
    assert parse_rate("60rpm", True, math.pi / 180, 1, "--speed", deg) == pytest.approx(2 * math.pi, rel=1e-14)
    assert parse_rate("360", True, math.pi / 180, 1, "--speed", deg) == pytest.approx(2 * math.pi, rel=1e-15)
    assert parse_rate("20 mm/s", False, 1.0, 1, "--speed", deg) == pytest.approx(0.02, rel=1e-14)
    mm = {"length": "mm", "angle": "rad"}  # a mm file: the number is in mm/s, the scale makes it SI
    assert parse_rate("0.5 m/s", False, 1e-3, 1, "--speed", mm) == pytest.approx(0.5, rel=1e-14)
    assert parse_rate("10 rad/s^2", True, 1.0, 2, "--acceleration", mm) == pytest.approx(10.0, rel=1e-15)
    with pytest.raises(AnalysisInputError, match="angular speed"):
        parse_rate("3 m/s", True, 1.0, 1, "--speed crank", deg)
    with pytest.raises(AnalysisInputError, match="expected"):
        parse_rate("3 N", True, 1.0, 1, "--speed crank", deg)


def test_toggle_point_is_reported_and_the_rest_kept():
    """The parallelogram swept in whole degrees sits exactly on its change point at 180 deg:
    that point gets status singular (no finite torque), every other point its forces."""
    mech = _mech("parallelogram.yaml")
    out = run_forces(mech, ForcesRequest(sweeps=[Sweep(mech.q_names[mech.q_actuated[0]], 170, 190, step=1)],
                                         static=True))
    status = list(out.table["status"])
    assert "singular" in status and status.count("ok") >= len(status) - 2
    assert any("singular configuration" in m for m in out.messages)
    col = next(h for h in out.table.headers() if h.endswith(".torque [N m]"))
    v = out.table[col]
    assert np.all(np.isfinite(v[np.array(status) == "ok"])) and np.all(np.isnan(v[np.array(status) != "ok"]))


def test_cli_forces_writes_a_table_and_summary(tmp_path, fourbar_path):
    from typer.testing import CliRunner

    from linkcli.cli.app import app

    out = tmp_path / "f.json"
    r = CliRunner().invoke(app, ["forces", fourbar_path, "--speed", "crank_pin=60rpm", "-o", str(out)])
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    assert "crank_pin.torque [N m]" in data["data"] and "shaking.F [N]" in data["data"]
    assert data["metadata"]["summary"]["inputs"]["crank_pin"]["peak"] > 0
    r = CliRunner().invoke(app, ["forces", fourbar_path, "--static", "--no-gravity", "--load", "coupler.P=0,-100",
                                 "--sweep", "crank_pin=0:90:10", "-f", "csv"])
    assert r.exit_code == 0, r.output
    assert "mechanical_advantage [N/(N m)]" in r.stdout.splitlines()[0]
    r = CliRunner().invoke(app, ["forces", fourbar_path, "--speed", "crank_pin=3 m/s"])
    assert r.exit_code == 2 and "angular speed" in r.output
    r = CliRunner().invoke(app, ["forces", fourbar_path, "--load", "couplr.P=0,1"])
    assert r.exit_code == 2 and "coupler.P" in r.output
    r = CliRunner().invoke(app, ["forces", fourbar_path, "--load", "coupler.P=0,2 m"])
    assert r.exit_code == 2 and "force" in r.output
    r1, r2 = (CliRunner().invoke(app, ["forces", fourbar_path, "--static", "--sweep", "crank_pin=0:20:10", "-f", "csv",
                                       "--load", load]) for load in ("coupler.P=0,-100", "coupler.P=0 N,-0.1 kN"))
    assert r1.exit_code == 0 and r1.stdout == r2.stdout


def test_idle_freedom_rssr_torque_is_the_virtual_work_of_the_load():
    """RSSR: the coupler's spin about its S-S axis is an idle freedom the input does not drive.
    A load at a ball joint (on that axis) does not move it: the crank torque is minus the
    virtual work of the load per unit crank rate, F . dp/dtheta (velocity analysis), and a
    warning names the idle freedom."""
    from linkcli.core.velocity import frame_motion

    mech = _mech("rssr_spatial.yaml")
    res, _, _ = _motion(mech, np.radians(np.arange(0.0, 360.0, 10.0)), 0.0)
    fB = mech.frame_names.index("coupler.B")
    F = np.array([3.0, -2.0, -10.0])
    zero = np.zeros_like(res.q)
    fr = ks.inverse_dynamics(mech, res.q, zero, zero, extra_loads=[ks.ExtraLoad(fB, F, np.zeros(3))])
    assert any("idle degree" in w for w in fr.warnings) and np.all(fr.status == ks.OK)
    qd = joint_rates(mech, res.q, np.ones((len(res.q), 1)))
    v = frame_motion(mech, res.q, qd)[0][:, fB]  # dp_B / dtheta
    expect = -v @ F
    # both exact; the kinematic tolerance 1e-10 and the pseudo-inverse's round-off remain
    assert np.abs(fr.driver_force[:, 0] - expect).max() <= 1e-8 * np.abs(expect).max()


def test_forces_job_in_batch_and_the_figure(tmp_path):
    """The batch registry runs `forces` with the file's defaults merged (rms figures work), and
    the forces figure is written."""
    from linkcli.batch.analyses import run_analysis
    from linkcli.batch.figures import default_figures, evaluate_figures
    from linkcli.model.jobs import ForcesDefaults

    loaded = load_mechanism(MECHANISMS / "fourbar.yaml")
    mech = compile_mechanism(loaded.model)
    opts = ForcesDefaults.model_validate({"sweep": {"crank_pin": {"from": 0, "to": 350, "step": 10}},
                                          "speed": {"crank_pin": "60 rpm"}})
    out = run_analysis("forces", mech, loaded, opts)
    assert out.n_failed == 0 and out.table.n == 36
    figs = {f.name: f.value for f in evaluate_figures(default_figures("forces", mech), out.table, mech)}
    tau = out.table["crank_pin.torque [N m]"]
    assert figs["absmax(crank_pin.torque)"] == pytest.approx(np.abs(tau).max(), rel=1e-15)
    assert figs["rms(crank_pin.torque)"] == pytest.approx(np.sqrt(np.mean(tau**2)), rel=1e-14)
    pytest.importorskip("matplotlib")
    from linkcli.plot.forces import forces_figure

    forces_figure(mech, out.table, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 10_000


def test_forces_do_not_depend_on_the_file_units():
    """The engine in mm and degrees (speed given as '3000 rpm', the input sweep in degrees)
    gives the same torques in N m and forces in N as in m and rad."""
    r, l_rod, mA, mB = 0.05, 0.17, 1.3, 0.9
    si = mech_from_yaml(ENGINE.format(r=r, l=l_rod, mA=mA, mB=mB, x0=r + l_rod))
    mm_text = ENGINE.format(r=r * 1e3, l=l_rod * 1e3, mA=mA, mB=mB, x0=(r + l_rod) * 1e3).replace(
        "{length: m, angle: rad}", "{length: mm, angle: deg}").replace(
        "crank_pin: 0.5, A: -0.6, B: 0.1", "crank_pin: 28.6, A: -34.4, B: 5.7")
    mm = mech_from_yaml(mm_text)
    a = ForcesRequest(sweeps=[Sweep("crank_pin", 0.0, 2 * math.pi, num=37)], speeds={"crank_pin": "3000 rpm"})
    b = ForcesRequest(sweeps=[Sweep("crank_pin", 0.0, 360.0, num=37)], speeds={"crank_pin": "3000 rpm"})
    ta, tb = run_forces(si, a).table, run_forces(mm, b).table
    for h in ("crank_pin.torque [N m]", "B.Fx [N]", "slide.Fy [N]", "shaking.Mz [N m]"):
        # same physics; the sweeps' 1e-10 tolerances are relative to different length scales
        assert np.allclose(ta[h], tb[h], rtol=1e-8, atol=1e-8 * np.abs(ta[h]).max()), h


def test_file_forces_block_takes_units_and_rejects_the_wrong_kind():
    from linkcli.analyses.forces import request_from_defaults
    from linkcli.errors import MechanismFileError

    good = PENDULUM.format(m=1, c=0.5, g=9.81, k=10, a=0.5, h=0.8, L0=0.3) + \
        "analysis: {forces: {speed: {pivot: '30 rpm'}, loads: {arm.E: ['0 N', '-2 kN']}}}\n"
    import textwrap

    from linkcli.io.loader import validate_document
    from linkcli.io.yaml_source import load_yaml

    data, smap = load_yaml(textwrap.dedent(good), "<t>")
    model = validate_document(data, smap, "<t>").model
    req = request_from_defaults(model)
    assert req.speeds["pivot"] == pytest.approx(180.0, rel=1e-14)  # deg/s: the file is in degrees
    assert req.loads["arm.E"] == [0.0, -2000.0]
    bad = good.replace("'30 rpm'", "'3 m/s'")
    data, smap = load_yaml(textwrap.dedent(bad), "<t>")
    with pytest.raises(MechanismFileError) as err:
        validate_document(data, smap, "<t>")
    text = "\n".join(d.format() for d in err.value.diagnostics)
    assert "analysis.forces.speed.pivot" in text and "angle" in text


@pytest.mark.parametrize("name", ["watt_sixbar.yaml", "stephenson_sixbar.yaml", "fivebar.yaml", "spherical_rrp.yaml"])
def test_static_input_torques_are_the_virtual_work_of_an_effector_load(name):
    """Multi-loop, two-input and spatial mechanisms at rest with a force F at the effector frame
    (gravity off): the torque/force of input i is minus F . dp/dtheta_i, dp/dtheta_i from the
    velocity analysis with a unit rate of input i (virtual work)."""
    from linkcli.core.velocity import frame_motion

    mech = _mech(name)
    m = mech.n_actuated
    base = mech.q_init[mech.q_actuated]
    steps = np.linspace(-0.2, 0.2, 9)[:, None] * np.eye(m)[0]  # sweep the first input near the estimate
    res = solve_sweep(mech, base + steps, mech.q_init)
    ok = res.status == Status.CONVERGED
    assert ok.sum() >= 5
    f = mech.effector_frame
    F = np.array([7.0, -20.0, 0.0 if mech.planar else 5.0])
    zero = np.zeros_like(res.q)
    fr = ks.inverse_dynamics(mech, res.q, zero, zero, ok, res.condition,
                             extra_loads=[ks.ExtraLoad(f, F, np.zeros(3))], gravity=np.zeros(3))
    good = fr.status == ks.OK
    for i in range(m):
        rate = np.zeros((len(res.q), m))
        rate[:, i] = 1.0
        qd = joint_rates(mech, res.q, rate)
        v = frame_motion(mech, res.q, qd)[0][:, f]
        expect = -(v @ F)
        # both exact up to the kinematic tolerance (1e-10) amplified by the conditioning
        assert np.abs(fr.driver_force[good, i] - expect[good]).max() <= 1e-8 * max(np.abs(expect).max(), 1.0)


def test_spatial_robot_power_balance_with_three_dimensional_inertia():
    """PUMA 560 (spatial inertia tensors, gyroscopic terms) at random states: input power
    equals dT/dt minus the power of gravity, with T = sum m v^2 / 2 + w . I_w w / 2 computed
    here (dT/dt = sum m v . a + w . I_w alpha: the gyroscopic term does no work)."""
    mech = _mech("puma560.yaml")
    rng = np.random.default_rng(5)
    n = 50
    q = rng.uniform(-np.pi, np.pi, (n, mech.n_q))
    qd = rng.uniform(-3, 3, (n, mech.n_q))
    qdd = rng.uniform(-10, 10, (n, mech.n_q))
    fr = ks.inverse_dynamics(mech, q, qd, qdd)
    assert np.all(fr.status == ks.OK)
    bm = ks.body_motion(mech, q, qd, qdd)
    I_w = np.einsum("nbij,bjk,nblk->nbil", bm.rot, mech.link_inertia[1:], bm.rot)
    dT = np.einsum("b,nbi,nbi->n", mech.link_mass[1:], bm.vel, bm.acc) + np.einsum("nbi,nbij,nbj->n", bm.omg, I_w,
                                                                                   bm.alpha)
    p_g = np.einsum("b,nbi,i->n", mech.link_mass[1:], bm.vel, mech.gravity)
    p_in = np.einsum("nk,nk->n", fr.driver_force, qd[:, mech.q_actuated])
    scale = np.abs(dT).max() + np.abs(p_g).max()
    assert np.abs(p_in - (dT - p_g)).max() <= 1e-11 * scale  # round-off of sums over 6 links


@pytest.mark.parametrize("name", ["fourbar.yaml", "planar_fourbar_as_spatial.yaml"])
def test_pin_moments_in_the_joint_frame(name):
    """A revolute pin transmits no moment about its axis (M3 in the joint frame), driven or not:
    the driving torque is reported once, in driver_force (spatial model: also with the
    minimum-norm split)."""
    mech = _mech(name)
    res, qd, qdd = _motion(mech, np.radians(np.arange(0.0, 360.0, 10.0)), 2 * math.pi, 2.0)
    P = mech.frame_names.index("coupler.P")  # a load, so that the massless spatial model has forces
    load = [ks.ExtraLoad(P, np.array([10.0, -50.0, 0.0]), np.zeros(3))]
    fr = ks.inverse_dynamics(mech, res.q, qd, qdd, extra_loads=load)
    scale = np.abs(fr.reaction_force).max()
    assert np.abs(fr.driver_force[:, 0]).max() > 1e-3 * scale  # the driver carries a load
    assert np.abs(fr.reaction_moment_local[:, :, 2]).max() <= 1e-10 * scale  # every pin, crank_pin included


def test_cli_equilibrium(tmp_path):
    """Wiring: --equilibrium prints one row per rest position with its stability; --plot is
    refused there (exit 2, before anything is computed)."""
    from typer.testing import CliRunner

    from linkcli.cli.app import app

    f = tmp_path / "arm.yaml"
    f.write_text(PENDULUM.format(m=2.0, c=0.5, g=9.81, k=100.0, a=0.6, h=0.8, L0=0.3), encoding="utf-8")
    r = CliRunner().invoke(app, ["forces", str(f), "--equilibrium", "--sweep", "pivot=-179.3:180:0.7", "-f", "csv"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 5 and "pivot.stiffness [N m/rad]" in lines[0]
    assert sum(line.endswith(",stable,ok") for line in lines) == 2
    assert sum(line.endswith("unstable,ok") for line in lines) == 2
    pytest.importorskip("matplotlib")
    r = CliRunner().invoke(app, ["forces", str(f), "--equilibrium", "--plot", str(tmp_path / "x.png")])
    assert r.exit_code == 2 and "--equilibrium" in r.output


def test_two_input_equilibrium_by_newton_from_the_start_point():
    """Two pendulums on one ground, one with a torsional spring (free at 0 rad, k = 20 N m/rad):
    Newton from near the rest position finds t1 = -90 deg (hanging) and t2 solving
    k t2 + m g c cos t2 = 0, both stable (K = diag(m1 g c1, k - m2 g c2 sin t2) > 0)."""
    from scipy.optimize import brentq

    mech = mech_from_yaml("""
    name: two pendulums
    kind: planar
    units: {length: m, angle: deg}
    gravity: [0, -9.81]
    links:
      ground: {frames: {O: [0, 0], Q: [1, 0]}}
      p1: {mass: 2.0, cg: [0.5, 0], inertia: 0.1, frames: {O: [0, 0]}}
      p2: {mass: 3.0, cg: [0.25, 0], inertia: 0.1, frames: {Q: [0, 0]}}
    joints:
      j1: {type: revolute, parent: ground.O, child: p1.O, actuated: true}
      j2: {type: revolute, parent: ground.Q, child: p2.Q, actuated: true}
    base: ground
    springs:
      s2: {type: torsional, joint: j2, stiffness: 20, free_angle: 0}
    """)
    out = run_equilibrium(mech, ForcesRequest(set={"j1": -70.0, "j2": -20.0}))
    assert out.table.n == 1 and out.n_failed == 0
    k, mgc2 = 20.0, 3.0 * 9.81 * 0.25
    t2 = brentq(lambda t: k * t + mgc2 * math.cos(t), -math.pi / 2, 0.0, xtol=1e-15)
    assert math.radians(out.table["j1.q [deg]"][0]) == pytest.approx(-math.pi / 2, abs=1e-9)
    assert math.radians(out.table["j2.q [deg]"][0]) == pytest.approx(t2, abs=1e-9)
    assert out.table["j2.stiffness [N m/rad]"][0] == pytest.approx(k - mgc2 * math.sin(t2), rel=1e-8)
    assert out.table["stability"][0] == "stable"


def test_perfectly_balanced_arm_is_neutral_everywhere():
    """Zero-free-length spring with k a h = m g c: V is constant, the holding torque vanishes
    at every angle (the classical gravity compensator): reported once, neutral everywhere,
    instead of sign changes of round-off noise."""
    m, c, g, a, h = 2.0, 0.5, 9.81, 0.6, 0.8
    k = m * g * c / (a * h)
    mech = mech_from_yaml(PENDULUM.format(m=m, c=c, g=g, k=k, a=a, h=h, L0=0))
    out = run_equilibrium(mech, ForcesRequest(sweeps=[Sweep("pivot", -170.0, 170.0, step=1.0)]))
    assert out.table.n == 1 and out.table["stability"][0] == "neutral everywhere"
    assert any("balanced" in msg for msg in out.messages)


LEVER = """
name: lever
kind: planar
units: {{length: mm, angle: deg}}
gravity: [0, -9.81]
links:
  ground: {{frames: {{O: [0, 0], S: [0, 300]}}}}
  arm: {{mass: 2.0, cg: [150, 0], inertia: 0.01, frames: {{O: [0, 0], P: [{r}, 0]}}}}
joints:
  pivot: {{type: revolute, parent: ground.O, child: arm.O, actuated: true}}
base: ground
springs:
  s: {{between: [ground.S, arm.P], stiffness: 50, free_length: 100}}
"""


def test_mechanical_advantage_is_the_load_over_its_own_holding_torque():
    """Review finding 2: with gravity and a spring on the lever, |F| / |tau_F| must not use the
    total driver torque. A vertical force F at r (m) from the pivot at angle t needs tau_F =
    F r cos t: MA = 1 / (r |cos t|) 1/m, independent of F, gravity and the spring."""
    r_mm = 400.0
    mech = mech_from_yaml(LEVER.format(r=r_mm))
    req = ForcesRequest(sweeps=[Sweep("pivot", -60.0, 60.0, step=15.0)], static=True,
                        loads={"arm.P": [0.0, "-0.1 kN"]})
    out = run_forces(mech, req)
    t = np.radians(out.table["pivot.q [deg]"])
    ma = out.table["mechanical_advantage [N/(N m)]"]
    # both are exact: round-off of a few flops
    assert np.allclose(ma, 1.0 / (r_mm * 1e-3 * np.abs(np.cos(t))), rtol=1e-12, atol=0)
    # and the driver torque still holds everything (gravity, spring): not the load alone
    assert np.abs(out.table["pivot.torque [N m]"] - 100.0 * 0.4 * np.cos(t)).max() > 1.0


def test_fourbar_mechanical_advantage_matches_finite_differences_of_the_load_point():
    """Four-bar with gravity on and a coupler load F: MA = |F| / |F . dP/dtheta| with dP/dtheta
    from central finite differences of the solved coupler point (h = 1e-6 rad: truncation
    ~h^2 ~ 1e-12, round-off ~1e-16/h ~ 1e-10 relative)."""
    mech = _mech("fourbar.yaml")
    angles = np.arange(5.0, 360.0, 30.0)
    out = run_forces(mech, ForcesRequest(sweeps=[Sweep("crank_pin", 5.0, 335.0, step=30.0)], static=True,
                                         loads={"coupler.P": [30.0, -100.0]}))
    assert out.n_failed == 0
    F = np.array([30.0, -100.0])
    P = mech.frame_names.index("coupler.P")
    h = 1e-6
    pts = []
    for d in (h, -h):
        res = solve_sweep(mech, np.radians(angles)[:, None] + d, mech.q_init, tol=1e-14)
        pts.append(frame_poses(mech, link_poses(mech, res.q))[:, P, :2, 3])
    dP = (pts[0] - pts[1]) / (2 * h)
    expect = np.linalg.norm(F) / np.abs(dP @ F)
    assert np.allclose(out.table["mechanical_advantage [N/(N m)]"], expect, rtol=1e-7, atol=0)


ARM_PENDULUM = """
name: arm with a free pendulum
kind: planar
units: {{length: mm, angle: deg}}
gravity: [0, -{g}]
links:
  ground: {{frames: {{O: [0, 0]}}}}
  arm: {{mass: {m1}, cg: [{c1}, 0], inertia: 0.01, frames: {{O: [0, 0], A: [{L1}, 0]}}}}
  bob: {{mass: {m2}, cg: [{L2}, 0], inertia: 0.001, frames: {{A: [0, 0], tip: [{L2}, 0]}}}}
joints:
  pin: {{type: revolute, parent: ground.O, child: arm.O, actuated: true}}
  hinge: {{type: revolute, parent: arm.A, child: bob.A}}
base: ground
assembly: {{pin: -60, hinge: 0}}
loads:
  push: {{link: bob.tip, force: [{P}, 0]}}
"""


def test_equilibrium_moves_the_free_hinge_too():
    """Review finding 1: an actuated arm (mass m1, CG c1 = L1/2) carrying a free pendulum (point
    mass m2 at L2) pushed sideways by P at its tip. At rest the hinge carries no moment: the bob
    hangs at d2 from the downward vertical, tan d2 = P / (m2 g); the arm at d1, tan d1 = P /
    ((m1 c1 / L1 + m2) g) (moments about the pin). Joint variables: pin = -90 deg + d1, hinge =
    d2 - d1. Hanging: stable."""
    g, m1, m2, L1, L2, P = 9.81, 2.0, 1.0, 400.0, 300.0, 5.0
    mech = mech_from_yaml(ARM_PENDULUM.format(g=g, m1=m1, c1=L1 / 2, m2=m2, L1=L1, L2=L2, P=P))
    out = run_equilibrium(mech, ForcesRequest(set={"pin": -60.0}))
    d1, d2 = math.atan(P / ((m1 / 2 + m2) * g)), math.atan(P / (m2 * g))
    assert out.n_failed == 0 and list(out.table["stability"]) == ["stable"]
    # Newton to a holding torque below 1e-10 of the torques seen: the angles are exact to
    # ~1e-10 / K rad (K ~ 1 N m/rad here); 1e-8 deg is safe and far below any modelling effect
    assert abs(out.table["pin.q [deg]"][0] - math.degrees(-math.pi / 2 + d1)) <= 1e-8
    assert abs(out.table["hinge.q [deg]"][0] - math.degrees(d2 - d1)) <= 1e-8
    for col in ("pin.holding_torque [N m]", "hinge.holding_torque [N m]"):
        assert abs(out.table[col][0]) <= 1e-9
    assert any("hinge not actuated but free" in m for m in out.messages)


def test_shaker_pendulum_rest_position_holds_both_joints_still():
    """The shaker pendulum (free hinge, spring, side load) at the reported rest position: with the
    hinge made an input too, kinetostatics (the Newton-Euler solve, another algorithm than the
    equilibrium's virtual work) needs no torque at either joint."""
    mech = _mech("shaker_pendulum.yaml")
    out = run_equilibrium(mech, ForcesRequest(sweeps=[Sweep("pin", -20.0, 20.0, step=10.0)]))
    assert out.n_failed == 0
    q = np.radians([[out.table["pin.q [deg]"][0], out.table["hinge.q [deg]"][0]]])
    free = ks.freed_mechanism(mech, mech.q_init)
    assert list(free.q_actuated) == [0, 1]
    fr = ks.inverse_dynamics(free, q, np.zeros_like(q), np.zeros_like(q))
    # weights ~15 N on 0.5 m arms: torques ~ 7 N m; the rest position is exact to 1e-10 of that
    assert np.abs(fr.driver_force).max() <= 1e-8


def test_failed_rows_keep_their_input_and_solve_statuses():
    """Review findings 5, 6. Four-bar ground 4, crank 2.5, coupler 2, rocker 3: A is at
    |A - O4|^2 = 22.25 - 20 cos t from O4, the dyad reaches at most 2 + 3 = 5, so no configuration
    exists where cos t < -0.1375 (t in (97.9, 262.1) deg): `no_configuration` as in solve, with
    the input value kept. The coupling rod's dead centres are `singular`, their input kept."""
    from kin_helpers import fourbar_yaml

    from linkcli.analyses.solve import SolveRequest, run_solve

    mech = mech_from_yaml(fourbar_yaml(4.0, 2.5, 2.0, 3.0, "{crank_pin: 0.3}"))
    sweeps = [Sweep("crank_pin", 0.3, 6.0, step=0.1)]
    out = run_forces(mech, ForcesRequest(sweeps=sweeps, static=True, loads={"coupler.B": [0.0, -10.0]}))
    t = np.asarray(out.table["crank_pin.q [rad]"], float)
    assert np.allclose(t, np.arange(0.3, 6.0 + 1e-9, 0.1), rtol=0, atol=1e-12)  # inputs kept on every row
    status = np.asarray(out.table["status"])
    far = np.abs(np.cos(t) + 0.1375) > 0.02  # away from the range's ends (bisection territory)
    assert np.all((status[far] == "no_configuration") == (np.cos(t[far]) < -0.1375))
    solved = np.asarray(run_solve(mech, SolveRequest(sweeps=sweeps)).table["status"])
    assert list(status) == list(solved)  # the same words as solve for the kinematics
    assert out.n_failed == int(np.sum(status != "ok")) > 0
    torque = np.asarray(out.table["crank_pin.torque [N m]"], float)
    # rows past 262.1 deg are reassembled in the other assembly mode (status other_branch: the
    # estimate's mode reaches them only the other way round, at t - 2 pi, in another
    # configuration); their forces are those of the configuration found
    solved_here = (status == "ok") | (status == "other_branch")
    assert np.all(np.isnan(torque[~solved_here])) and np.all(np.isfinite(torque[solved_here]))
    # the coupling rod's dead centres: singular, with the input written
    from linkcli.analyses.forces import request_from_defaults

    model = load_mechanism(MECHANISMS / "coupling_rod.yaml").model
    cr = run_forces(compile_mechanism(model), request_from_defaults(model))
    st = np.asarray(cr.table["status"])
    assert set(st[st != "ok"]) == {"singular"} and np.all(np.isfinite(cr.table["axle1.q [deg]"]))


def test_balance_residual_and_speeds_carry_units(tmp_path, fourbar_path):
    """Review findings 4, 13, 14: the residual is a force (moments divided by the mechanism size),
    the input speed in the metadata is in the file's units with its unit; the summary's peak
    equals the largest |torque| of the table."""
    from typer.testing import CliRunner

    from linkcli.cli.app import app

    out = tmp_path / "f.json"
    r = CliRunner().invoke(app, ["forces", fourbar_path, "--speed", "crank_pin=60rpm", "-o", str(out)])
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    res = np.asarray(data["data"]["balance_residual [N]"], float)
    F = np.abs(np.asarray(data["data"]["crank_pin.F [N]"], float)).max()
    # round-off of an LU solve of a well-conditioned system: 1e-9 of the forces
    assert np.all(res <= 1e-9 * F)
    assert data["metadata"]["input_speed"] == {"crank_pin": {"value": pytest.approx(360.0, rel=1e-12),
                                                             "unit": "deg/s"}}
    torque = np.asarray(data["data"]["crank_pin.torque [N m]"], float)
    s = data["metadata"]["summary"]["inputs"]["crank_pin"]
    assert s["peak"] == np.abs(torque).max() and s["rms"] == pytest.approx(np.sqrt(np.mean(torque**2)), rel=1e-12)
    assert "crank_pin: peak" in r.output and "N m" in r.output


def test_simulate_summary_names_the_driver_load_unit(tmp_path):
    from typer.testing import CliRunner

    from linkcli.cli.app import app

    r = CliRunner().invoke(app, ["simulate", str(MECHANISMS / "motor_fourbar.yaml"), "--t-end", "0.02", "--dt", "0.01",
                                 "-o", str(tmp_path / "s.csv")])
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "peak driver load" in x)
    assert line.rstrip().endswith("N m"), line


def test_idle_spin_of_a_spherical_coupler_is_not_made_an_input():
    """The RSSR coupler's spin about its own axis (inside the spherical joints) carries no load:
    the equilibrium stays over the crank alone (as inverse dynamics leaves it idle)."""
    mech = _mech("rssr_spatial.yaml")
    free = ks.freed_mechanism(mech, mech.q_init)
    assert list(free.q_actuated) == list(mech.q_actuated)
