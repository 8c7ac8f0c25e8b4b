"""Serial arms: planar 2R/3R closed forms, DH chains against explicit matrix products,
geometric Jacobians against the closed form and central differences, IK round trips.

Provenance: planar nR forward kinematics x = sum l_i cos(sum_{k<=i} q_k) (and y with sin);
Jacobian column j = z x (p_tool - p_j). DH products: T = prod_i A_i(q_i) with
A_i = Rz(theta_i + q_i) Tz(d_i) Tx(a_i) Rx(alpha_i) (standard) or
Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i + q_i) Tz(d_i) (modified, Craig).
"""

import numpy as np
import pytest
from kin_helpers import central_difference, mech_from_yaml

from linkcli.core import transforms as tf
from linkcli.core.forward import effector_pose, link_poses
from linkcli.core.inverse import IKStatus, solve_ik
from linkcli.core.jacobian import effector_jacobian, geometric_jacobian, jacobian_metrics

LENGTHS = (1.0, 0.8, 0.5)

ARM_3R = """
name: planar 3R
units: {length: m, angle: rad}
links:
  base: {}
serial:
  rows:
    - {a: 1.0}
    - {a: 0.8}
    - {a: 0.5}
base: base
effector: link3.origin
"""

PUMA_ROWS = [  # Corke's standard DH table of the PUMA 560: (a, alpha, d, theta offset)
    (0.0, np.pi / 2, 0.0, 0.0), (0.4318, 0.0, 0.0, 0.0), (0.0203, -np.pi / 2, 0.15005, 0.0),
    (0.0, np.pi / 2, 0.4318, 0.0), (0.0, -np.pi / 2, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)]


def dh_yaml(rows, convention, offsets=True):
    body = "\n".join(f"    - {{a: {a}, alpha: {al}, d: {d}, theta: {th + (0.1 * i if offsets else 0)}}}"
                     for i, (a, al, d, th) in enumerate(rows))
    return f"""
name: dh arm
kind: spatial
units: {{length: m, angle: rad}}
links:
  base: {{}}
serial:
  convention: {convention}
  base_transform: {{origin: [0.1, -0.2, 0.3], rpy: [0.1, 0.2, 0.3]}}
  rows:
{body}
base: base
effector: link6.origin
tool: {{origin: [0, 0, 0.05]}}
"""


def planar_fk(q):
    ang = np.cumsum(q, axis=-1)
    x = (np.asarray(LENGTHS) * np.cos(ang)).sum(-1)
    y = (np.asarray(LENGTHS) * np.sin(ang)).sum(-1)
    return np.stack([x, y, ang[..., -1]], -1)


@pytest.fixture(scope="module")
def arm():
    return mech_from_yaml(ARM_3R)


def test_planar_3r_forward_and_jacobian(arm):
    q = np.random.default_rng(1).uniform(-3, 3, (50, 3))
    T = effector_pose(arm, link_poses(arm, q))
    got, want = tf.planar_pose(T), planar_fk(q)
    np.testing.assert_allclose(got[:, :2], want[:, :2], atol=1e-12)  # same arithmetic, rounding only
    wrapped = (got[:, 2] - want[:, 2] + np.pi) % (2 * np.pi) - np.pi  # planar_pose angle is atan2
    np.testing.assert_allclose(wrapped, 0.0, atol=1e-12)
    J = effector_jacobian(arm, q)
    for k in range(5):
        Jfd = central_difference(lambda x: planar_fk(x), q[k])
        np.testing.assert_allclose(J[k], Jfd, atol=1e-8)  # central differences: O(h^2) ~ 1e-12
    np.testing.assert_allclose(geometric_jacobian(arm, q), J, atol=1e-14)  # serial: the same


def test_planar_3r_effector_frame_jacobian(arm):
    q = np.array([0.3, -0.7, 1.1])
    Jb, Je = effector_jacobian(arm, q, "base"), effector_jacobian(arm, q, "effector")
    c, s = np.cos(q.sum()), np.sin(q.sum())
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    np.testing.assert_allclose(R @ Je, Jb, atol=1e-14)


@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_dh_chain_equals_explicit_product(convention):
    mech = mech_from_yaml(dh_yaml(PUMA_ROWS, convention))
    q = np.random.default_rng(2).uniform(-np.pi, np.pi, (20, 6))
    T = np.broadcast_to(tf.make_transform(tf.rpy_to_matrix(np.array([0.1, 0.2, 0.3])), np.array([0.1, -0.2, 0.3])),
                        (20, 4, 4))
    for i, (a, al, d, th) in enumerate(PUMA_ROWS):
        theta = th + 0.1 * i + q[:, i]
        if convention == "standard":
            A = tf.dh_standard(theta, d, a, al)
        else:
            A = tf.dh_modified(theta, d, a, al)
        T = T @ A
    T = T @ tf.make_transform(np.eye(3), np.array([0, 0, 0.05]))
    np.testing.assert_allclose(effector_pose(mech, link_poses(mech, q)), T, atol=1e-12)


def test_puma_geometric_jacobian_matches_differences():
    mech = mech_from_yaml(dh_yaml(PUMA_ROWS, "standard", offsets=False))
    q0 = np.array([0.1, -0.4, 0.3, 0.8, -0.5, 0.2])
    J = geometric_jacobian(mech, q0)

    def pose(q):
        return effector_pose(mech, link_poses(mech, q))

    T0 = pose(q0)
    # position columns: d p / d q; rotation columns: vee(dR R^T) (world angular velocity)
    Jp = central_difference(lambda q: pose(q)[:3, 3], q0)
    Jw = central_difference(lambda q: tf.log_so3(pose(q)[:3, :3] @ T0[:3, :3].T), q0)
    np.testing.assert_allclose(J[:3], Jp, atol=1e-8)
    np.testing.assert_allclose(J[3:], Jw, atol=1e-8)
    m = jacobian_metrics(J)
    assert m.manipulability == pytest.approx(np.sqrt(np.linalg.det(J @ J.T)), rel=1e-9)


def test_ik_round_trip_planar(arm):
    rng = np.random.default_rng(3)
    for _ in range(10):
        q_true = rng.uniform(-2, 2, 3)
        T = effector_pose(arm, link_poses(arm, q_true))
        res = solve_ik(arm, T, np.zeros(3), mode="full")
        assert res.status == IKStatus.CONVERGED
        np.testing.assert_allclose(effector_pose(arm, link_poses(arm, res.q)), T, atol=1e-8)
        np.testing.assert_allclose(res.T_reached, T, atol=1e-8)


def test_ik_unreachable_reports_closest(arm):
    T = np.eye(4)
    T[:3, 3] = [3.0, 0.0, 0.0]  # reach is 2.3
    res = solve_ik(arm, T, np.array([0.1, 0.1, 0.1]), mode="position")
    assert res.status == IKStatus.UNREACHABLE
    np.testing.assert_allclose(res.T_reached[:2, 3], [2.3, 0.0], atol=1e-6)  # fully stretched toward it
    assert res.task_residual[0] == pytest.approx(0.7, abs=1e-6)


def test_ik_spatial_puma_round_trip():
    mech = mech_from_yaml(dh_yaml(PUMA_ROWS, "standard", offsets=False))
    q_true = np.array([0.3, -0.6, 0.4, 0.5, 0.7, -0.2])
    T = effector_pose(mech, link_poses(mech, q_true))
    res = solve_ik(mech, T, q_true + 0.3, mode="full")
    assert res.status == IKStatus.CONVERGED
    np.testing.assert_allclose(effector_pose(mech, link_poses(mech, res.q)), T, atol=1e-8)
