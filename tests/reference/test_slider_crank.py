"""Offset slider-crank position, velocity and acceleration against the closed form.

x(t) = r cos t + sqrt(l^2 - (r sin t - e)^2) for crank r, connecting rod l, offset e; its first
and second time derivatives are written out by hand below (independent of the solver, which
uses the analytic constraint Jacobian and spatial-twist bias accelerations).
Tolerance: positions 1e-8 m (solver residual 1e-10 relative, conditioned ~10); rates and
accelerations are linear solves at that configuration, so they agree to ~1e-8 as well.
"""

import numpy as np
import pytest
from kin_helpers import mech_from_yaml

from linkcli.core.loop_closure import Status, constraints
from linkcli.core.mobility import mobility_report
from linkcli.core.sweep import solve_sweep
from linkcli.core.velocity import joint_accelerations, joint_rates

R, L, E = 1.0, 3.5, 0.5

SLIDER_CRANK = f"""
name: offset slider-crank
units: {{length: m, angle: rad}}
links:
  ground: {{frames: {{O: [0, 0], S: [0, {E}]}}}}
  crank: {{frames: {{O: [0, 0], A: [{R}, 0]}}}}
  rod: {{frames: {{A: [0, 0], B: [{L}, 0]}}}}
  slider: {{frames: {{S: [0, 0]}}}}
joints:
  crank_pin: {{type: revolute, parent: ground.O, child: crank.O, actuated: true}}
  A: {{type: revolute, parent: crank.A, child: rod.A}}
  B: {{type: revolute, parent: rod.B, child: slider.S}}
  slide: {{type: prismatic, parent: ground.S, child: slider.S, axis: [1, 0]}}
base: ground
effector: slider.S
assembly: {{crank_pin: 0.0, A: -0.14, slide: 4.4}}
"""


def closed_form(theta, w, alpha):
    s, c = R * np.sin(theta) - E, R * np.cos(theta)
    D = np.sqrt(L * L - s * s)
    x = c + D
    xd = -R * np.sin(theta) * w - s * c * w / D
    xdd = (-R * np.cos(theta) * w**2 - R * np.sin(theta) * alpha - w**2 * (c * c - s * R * np.sin(theta)) / D
           - s * s * c * c * w**2 / D**3 - s * c * alpha / D)
    return x, xd, xdd


@pytest.fixture(scope="module")
def mech():
    return mech_from_yaml(SLIDER_CRANK)


def test_position_velocity_acceleration(mech):
    theta = np.linspace(0, 2 * np.pi, 181)
    w, alpha = 2.5, -1.3
    res = solve_sweep(mech, theta[:, None], mech.q_init)
    assert np.all(res.status == Status.CONVERGED)
    k = mech.q_names.index("slide")
    qd = joint_rates(mech, res.q, np.full((len(theta), 1), w))
    qdd = joint_accelerations(mech, res.q, qd, np.full((len(theta), 1), alpha))
    x, xd, xdd = closed_form(theta, w, alpha)
    np.testing.assert_allclose(res.q[:, k], x, atol=1e-8)
    np.testing.assert_allclose(qd[:, k], xd, atol=1e-8)
    np.testing.assert_allclose(qdd[:, k], xdd, atol=1e-7)
    # identity: the constraint Jacobian annihilates the rates
    assert np.abs(np.einsum("nij,nj->ni", constraints(mech, res.q).J, qd)).max() < 1e-10


def test_mobility(mech):
    rep = mobility_report(mech, solve_sweep(mech, np.array([[0.4]]), mech.q_init).q[0])
    assert (rep.gruebler, rep.mobility, rep.redundant, rep.passive_rank_deficit) == (1, 1, 0, 0)
