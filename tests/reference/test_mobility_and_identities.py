"""Mobility by rank next to the Gruebler count, and identities between analyses:
analytic constraint Jacobian = central differences, J qdot = 0, velocity = d/dt position,
batched solve = point-by-point solve, planar four-bar = the same four-bar modelled spatially.

Tolerances: central differences with h = 1e-6 have truncation error ~h^2 * |q'''| ~ 1e-12 and
round-off ~eps/h ~ 1e-10, so 1e-7 absolute is honest for O(1) Jacobian entries.
"""

import numpy as np
import pytest
from kin_helpers import central_difference, fourbar_yaml, mech_from_yaml

from linkcli.core.forward import frame_poses, link_poses
from linkcli.core.loop_closure import Status, constraints, solve_configuration
from linkcli.core.mobility import mobility_report
from linkcli.core.sweep import solve_sweep
from linkcli.core.velocity import frame_motion, joint_rates

PLANAR = fourbar_yaml(4, 1, 3.5, 3, assembly="{crank_pin: 0.5, A: 0.6}")
SPATIAL = fourbar_yaml(4, 1, 3.5, 3, assembly="{crank_pin: 0.5, A: 0.6}", kind="spatial")


@pytest.mark.parametrize("text", [PLANAR, SPATIAL])
def test_constraint_jacobian_matches_central_differences(text):
    mech = mech_from_yaml(text)
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = rng.uniform(-3, 3, mech.n_q)  # anywhere, not only on the constraint manifold
        J = constraints(mech, q).J
        Jfd = central_difference(lambda x: constraints(mech, x, jacobian=False).r, q)
        np.testing.assert_allclose(J, Jfd, atol=1e-7)


def test_spatial_model_of_planar_fourbar_has_three_redundant_constraints():
    planar, spatial = mech_from_yaml(PLANAR), mech_from_yaml(SPATIAL)
    theta = np.linspace(0, 2 * np.pi, 91)
    rp = solve_sweep(planar, theta[:, None], planar.q_init)
    rs = solve_sweep(spatial, theta[:, None], spatial.q_init)
    assert np.all(rs.status == Status.CONVERGED)
    np.testing.assert_allclose(rs.q, rp.q, atol=1e-8)  # same joint angles either way
    rep = mobility_report(spatial, rs.q[10])
    assert (rep.n_constraints, rep.gruebler, rep.rank, rep.mobility, rep.redundant) == (6, -2, 3, 1, 3)
    rep_p = mobility_report(planar, rp.q[10])
    assert (rep_p.gruebler, rep_p.mobility, rep_p.redundant) == (1, 1, 0)


def test_rates_satisfy_constraints_and_match_position_differences():
    # h = 1e-3: truncation h^2 |q'''| / 6 ~ 1e-7, solver noise (residual 4e-10) / 2h ~ 2e-7
    mech = mech_from_yaml(PLANAR)
    h = 1e-3
    theta = np.array([1.0 - h, 1.0, 1.0 + h])
    res = solve_sweep(mech, theta[:, None], mech.q_init)
    qd = joint_rates(mech, res.q, np.ones((3, 1)))
    assert np.abs(constraints(mech, res.q).J[1] @ qd[1]).max() < 1e-12
    np.testing.assert_allclose(qd[1], (res.q[2] - res.q[0]) / (2 * h), atol=2e-6)
    v, _, _ = frame_motion(mech, res.q[1], qd[1])
    P = frame_poses(mech, link_poses(mech, res.q))[:, :, :3, 3]
    np.testing.assert_allclose(v, (P[2] - P[0]) / (2 * h), atol=2e-6)


def test_batched_solve_equals_point_by_point():
    mech = mech_from_yaml(PLANAR)
    theta = np.linspace(0.2, 1.2, 7)
    guess = np.tile(mech.q_init, (7, 1))
    batch = solve_configuration(mech, theta[:, None], guess)
    for i, t in enumerate(theta):
        one = solve_configuration(mech, np.array([t]), mech.q_init)
        np.testing.assert_allclose(batch.q[i], one.q, atol=1e-12)
        assert batch.status[i] == one.status


def test_unassemblable_point_is_a_status_with_the_loop():
    """Coupler + rocker cannot reach: a status naming the loop, never an exception."""
    mech = mech_from_yaml(fourbar_yaml(4, 1, 1.2, 1.3))
    res = solve_configuration(mech, np.array([0.0]), mech.q_init)
    assert res.status == Status.NO_ASSEMBLY
    assert res.residual[0] > 0.1 and res.worst_loop == 0
