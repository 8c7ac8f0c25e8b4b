"""Tests of linkcli.core.transforms against independent truths.

Truths used: scipy.spatial.transform.Rotation and scipy.linalg.expm/polar (independent
implementations), rotation/translation matrices written out by hand below, closed-form textbook
kinematics (Craig's PUMA 560) and published numbers (Corke's Robotics Toolbox PUMA 560), and
central finite differences. Tolerances are stated with their reason next to each assertion;
"eps" is the float64 machine epsilon, 2.2e-16.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from linkcli.core import transforms as tf

PI = np.pi
RNG = np.random.default_rng(12345)


# --- independent hand-written matrices (no use of the module under test) -------------------------
def Rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def Ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def Rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def H(R=None, p=(0.0, 0.0, 0.0)):
    T = np.eye(4)
    T[:3, :3] = np.eye(3) if R is None else R
    T[:3, 3] = p
    return T


def skew(w):
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def random_rotvecs(n, max_angle=PI - 1e-3):
    axis = RNG.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
    return axis * RNG.uniform(0, max_angle, size=(n, 1))


def random_transforms(shape):
    R = Rotation.random(int(np.prod(shape)), random_state=7).as_matrix().reshape(shape + (3, 3))
    T = np.zeros(shape + (4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = RNG.normal(size=shape + (3,))
    T[..., 3, 3] = 1
    return T


unit_axes = st.tuples(*[st.floats(-1, 1)] * 3).map(np.array).filter(lambda v: np.linalg.norm(v) > 1e-3)
unit_axes = unit_axes.map(lambda v: v / np.linalg.norm(v))


# --- hat / vee / elementary rotations ------------------------------------------------------------
def test_hat_vee():
    w, v = RNG.normal(size=(10, 3)), RNG.normal(size=(10, 3))
    # hat(w) v == w x v: a few flops per entry, so 1e-14 is far above rounding
    np.testing.assert_allclose((tf.hat(w) @ v[..., None])[..., 0], np.cross(w, v), atol=1e-14)
    np.testing.assert_array_equal(tf.vee(tf.hat(w)), w)  # exact: copies and halving of 2x


def test_rot_xyz_match_scipy():
    a = np.linspace(-4, 4, 9)
    for f, ax in ((tf.rot_x, "x"), (tf.rot_y, "y"), (tf.rot_z, "z")):
        # both are a cos/sin evaluation per entry: agreement to a few eps
        np.testing.assert_allclose(f(a), Rotation.from_euler(ax, a[:, None]).as_matrix(), atol=1e-15)
    np.testing.assert_allclose(tf.rot_z(0.3), Rz(0.3), atol=0)


# --- exp / log -----------------------------------------------------------------------------------
SPECIAL_ANGLES = [0.0, 1e-9, 1e-5, 0.0999, 0.1001, 1.0, 3.1, PI - 1e-6]
AXES = [np.array([1.0, 0, 0]), np.array([0, 0, 1.0]), np.array([1.0, -2.0, 0.5]) / np.sqrt(5.25)]


@pytest.mark.parametrize("angle", SPECIAL_ANGLES + [PI])
@pytest.mark.parametrize("axis", range(len(AXES)))
def test_exp_matches_expm(angle, axis):
    phi = AXES[axis] * angle
    # scipy.linalg.expm (Pade) of the hand-built skew matrix: both accurate to a few eps;
    # covers the Taylor branch (< 0.1) and both sides of its threshold.
    np.testing.assert_allclose(tf.exp_so3(phi), scipy.linalg.expm(skew(phi)), atol=2e-15)


@pytest.mark.parametrize("angle", SPECIAL_ANGLES)
@pytest.mark.parametrize("axis", range(len(AXES)))
def test_log_exp_explicit(angle, axis):
    phi = AXES[axis] * angle
    # relative accuracy: R's off-diagonal entries carry phi to relative eps, and near pi the
    # symmetric-part axis and atan2 angle are accurate to absolute eps; 1e-12 leaves margin.
    np.testing.assert_allclose(tf.log_so3(tf.exp_so3(phi)), phi, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("axis", range(len(AXES)))
def test_log_at_and_near_pi(axis):
    a = AXES[axis]
    phi = a * np.deg2rad(179.9)
    # the weak sin(angle) method loses ~eps/sin(0.1 deg); the symmetric-part method stays at eps
    np.testing.assert_allclose(tf.log_so3(tf.exp_so3(phi)), phi, atol=1e-13)
    R = tf.exp_so3(a * PI)
    out = tf.log_so3(R)
    # at exactly pi, +phi and -phi are the same rotation: either sign is accepted
    assert min(np.abs(out - a * PI).max(), np.abs(out + a * PI).max()) < 1e-13
    np.testing.assert_allclose(tf.exp_so3(out), R, atol=1e-15)
    # exact matrices with angle pi (diagonal +-1): axis must be exact
    for k in range(3):
        D = -np.ones(3)
        D[k] = 1
        e = np.zeros(3)
        e[k] = PI
        assert min(np.abs(tf.log_so3(np.diag(D)) - s * e).max() for s in (1, -1)) < 1e-15


@settings(max_examples=300, deadline=None)
@given(axis=unit_axes, angle=st.floats(0.0, PI - 1e-6))
def test_log_exp_roundtrip_hypothesis(axis, angle):
    phi = axis * angle
    # |phi| < pi is the principal branch: log(exp(phi)) == phi. Errors are absolute ~eps
    # (near 0 relative eps, near pi the symmetric-part axis), so atol=1e-12.
    np.testing.assert_allclose(tf.log_so3(tf.exp_so3(phi)), phi, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(axis=unit_axes, angle=st.floats(0.0, 3 * PI))
def test_exp_log_exp_any_angle(axis, angle):
    R = tf.exp_so3(axis * angle)
    out = tf.log_so3(R)
    assert np.linalg.norm(out) <= PI + 1e-12
    np.testing.assert_allclose(tf.exp_so3(out), R, atol=1e-13)  # a few eps per matrix entry


def test_log_matches_scipy():
    rots = Rotation.random(500, random_state=3)
    # scipy goes through quaternions: independent path, both accurate to ~eps absolute
    np.testing.assert_allclose(tf.log_so3(rots.as_matrix()), rots.as_rotvec(), atol=1e-12)


# --- Jacobians -----------------------------------------------------------------------------------
H_FD = 1e-6
JAC_PHIS = [np.zeros(3), np.array([1e-9, 0, 0]), np.array([3e-3, -4e-3, 1e-3]),
            np.array([0.0999, 0, 0]), np.array([0, 0.1001, 0]), np.array([0.3, -0.2, 0.9]),
            AXES[2] * 2.5, AXES[0] * 3.0]


def central_diff(f, n=3):
    cols = []
    for i in range(n):
        e = np.zeros(n)
        e[i] = H_FD
        cols.append((f(e) - f(-e)) / (2 * H_FD))
    return np.stack(cols, axis=-1)


# Central differences with h = 1e-6: truncation O(h^2) ~ 1e-12 and rounding ~eps/h ~ 2e-10,
# so agreement to ~1e-9 absolute is the honest level; rtol=1e-6 / atol=1e-8 leaves margin.
FD_TOL = dict(rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("k", range(len(JAC_PHIS)))
def test_jacobians_finite_differences(k):
    phi = JAC_PHIS[k]
    E, Et = tf.exp_so3(phi), tf.exp_so3(phi).T
    # exp(phi + d) = exp(phi) exp(Jr d) = exp(Jl d) exp(phi)
    Jr = central_diff(lambda d: tf.log_so3(Et @ tf.exp_so3(phi + d)))
    Jl = central_diff(lambda d: tf.log_so3(tf.exp_so3(phi + d) @ Et))
    # log(exp(phi) exp(d)) = phi + Jr_inv d ; log(exp(d) exp(phi)) = phi + Jl_inv d
    Jr_inv = central_diff(lambda d: tf.log_so3(E @ tf.exp_so3(d)))
    Jl_inv = central_diff(lambda d: tf.log_so3(tf.exp_so3(d) @ E))
    np.testing.assert_allclose(tf.right_jacobian_so3(phi), Jr, **FD_TOL)
    np.testing.assert_allclose(tf.left_jacobian_so3(phi), Jl, **FD_TOL)
    np.testing.assert_allclose(tf.right_jacobian_inv_so3(phi), Jr_inv, **FD_TOL)
    np.testing.assert_allclose(tf.left_jacobian_inv_so3(phi), Jl_inv, **FD_TOL)


def test_jacobian_identities():
    phi = np.concatenate([random_rotvecs(50), np.array(JAC_PHIS)])
    I = np.broadcast_to(np.eye(3), (len(phi), 3, 3))
    # algebraic identities of the closed forms; each side is accurate to a few eps
    np.testing.assert_allclose(tf.right_jacobian_so3(phi) @ tf.right_jacobian_inv_so3(phi), I, atol=1e-12)
    np.testing.assert_allclose(tf.left_jacobian_so3(phi) @ tf.left_jacobian_inv_so3(phi), I, atol=1e-12)
    np.testing.assert_allclose(tf.left_jacobian_so3(phi), tf.exp_so3(phi) @ tf.right_jacobian_so3(phi),
                               atol=1e-14)


# --- transforms ----------------------------------------------------------------------------------
def test_inverse_transform_and_points():
    T = random_transforms((20,))
    I = np.broadcast_to(np.eye(4), T.shape)
    # exact orthonormal R: R^T R = I to a few eps, |p| ~ 1
    np.testing.assert_allclose(tf.inverse_transform(T) @ T, I, atol=1e-14)
    np.testing.assert_allclose(tf.inverse_transform(T), np.linalg.inv(T), atol=1e-13)
    p = RNG.normal(size=(20, 3))
    ph = np.concatenate([p, np.ones((20, 1))], axis=-1)
    np.testing.assert_allclose(tf.transform_points(T, p), (T @ ph[..., None])[..., :3, 0], atol=1e-14)
    np.testing.assert_array_equal(tf.make_transform(T[..., :3, :3], T[..., :3, 3]), T)


def test_adjoint_conjugates_twists_v_w_order():
    T = random_transforms((10,))
    xi = RNG.normal(size=(10, 6))  # (v, w): linear first

    def twist_matrix(x):  # hand-built se(3) matrix for (v, w) ordering
        M = np.zeros((4, 4))
        M[:3, :3] = skew(x[3:])
        M[:3, 3] = x[:3]
        return M

    Ad = tf.adjoint(T)
    for i in range(10):
        lhs = T[i] @ scipy.linalg.expm(twist_matrix(xi[i])) @ np.linalg.inv(T[i])
        rhs = scipy.linalg.expm(twist_matrix(Ad[i] @ xi[i]))
        np.testing.assert_allclose(lhs, rhs, atol=1e-11)  # expm of |xi| ~ 2..5: ~1e-13 error


# --- DH ------------------------------------------------------------------------------------------
def test_dh_against_explicit_products():
    for theta, d, a, alpha in RNG.uniform(-3, 3, size=(20, 4)):
        std = H(Rz(theta)) @ H(p=(0, 0, d)) @ H(p=(a, 0, 0)) @ H(Rx(alpha))
        mod = H(Rx(alpha)) @ H(p=(a, 0, 0)) @ H(Rz(theta)) @ H(p=(0, 0, d))
        # same products, different association: a few eps
        np.testing.assert_allclose(tf.dh_standard(theta, d, a, alpha), std, atol=1e-14)
        np.testing.assert_allclose(tf.dh_modified(theta, d, a, alpha), mod, atol=1e-14)


PUMA_A2, PUMA_A3, PUMA_D3, PUMA_D4 = 0.4318, 0.0203, 0.15005, 0.4318


def test_puma560_standard_dh_corke():
    """Corke's Robotics Toolbox p560 (standard DH): fkine(qz) = [0.4521, -0.1500, 0.4318] with
    identity rotation; fkine(qn) = [0.5963, -0.1501, -0.0144] with R = [[0,0,1],[0,1,0],[-1,0,0]]."""
    alpha = np.array([PI / 2, 0, -PI / 2, PI / 2, -PI / 2, 0])
    a = np.array([0, PUMA_A2, PUMA_A3, 0, 0, 0])
    d = np.array([0, 0, PUMA_D3, PUMA_D4, 0, 0])

    def fk(q):
        T = np.eye(4)
        for Ti in tf.dh_standard(q, d, a, alpha):  # broadcasting: six links in one call
            T = T @ Ti
        return T

    T0 = fk(np.zeros(6))
    np.testing.assert_allclose(T0[:3, :3], np.eye(3), atol=1e-15)
    np.testing.assert_allclose(T0[:3, 3], [0.4521, -0.15005, 0.4318], atol=1e-12)  # exact sums
    Tn = fk(np.array([0, PI / 4, PI, 0, PI / 4, 0]))
    np.testing.assert_allclose(Tn[:3, :3], [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], atol=1e-15)
    np.testing.assert_allclose(Tn[:3, 3], [0.5963, -0.1501, -0.0144], atol=6e-5)  # printed to 4 dp


def test_puma560_modified_dh_craig():
    """Craig, Introduction to Robotics, PUMA 560 modified-DH table and closed-form 0T6 (eq. 3.14)."""
    alpha = np.array([0, -PI / 2, 0, -PI / 2, PI / 2, -PI / 2])
    a = np.array([0, 0, PUMA_A2, PUMA_A3, 0, 0])
    d = np.array([0, 0, PUMA_D3, PUMA_D4, 0, 0])
    for q in RNG.uniform(-PI, PI, size=(10, 6)):
        T = np.eye(4)
        for Ti in tf.dh_modified(q, d, a, alpha):
            T = T @ Ti
        c, s = np.cos(q), np.sin(q)
        c23, s23 = np.cos(q[1] + q[2]), np.sin(q[1] + q[2])
        c1, s1, c4, s4, c5, s5 = c[0], s[0], c[3], s[3], c[4], s[4]
        reach = PUMA_A2 * c[1] + PUMA_A3 * c23 - PUMA_D4 * s23
        p = [c1 * reach - PUMA_D3 * s1, s1 * reach + PUMA_D3 * c1,
             -PUMA_A3 * s23 - PUMA_A2 * s[1] - PUMA_D4 * c23]
        r3 = [-c1 * (c23 * c4 * s5 + s23 * c5) - s1 * s4 * s5,
              -s1 * (c23 * c4 * s5 + s23 * c5) + c1 * s4 * s5,
              s23 * c4 * s5 - c23 * c5]
        # products of six exact rotations vs closed form: a few eps
        np.testing.assert_allclose(T[:3, 3], p, atol=1e-14)
        np.testing.assert_allclose(T[:3, 2], r3, atol=1e-14)


# --- quaternions, rpy, Euler, axis-angle ---------------------------------------------------------
def quat_cases():
    """Random rotations plus ones that exercise every Shepperd branch (angle pi about x, y, z)."""
    R = Rotation.random(300, random_state=5).as_matrix()
    special = [np.eye(3), np.diag([1.0, -1, -1]), np.diag([-1.0, 1, -1]), np.diag([-1.0, -1, 1]),
               Rx(PI - 1e-7), Ry(3.0) @ Rz(0.1), Rotation.from_rotvec([PI, PI, 0] / np.sqrt(2)).as_matrix()]
    return np.concatenate([R, np.array(special)])


def test_quaternion_against_scipy_and_roundtrip():
    R = quat_cases()
    q = tf.matrix_to_quaternion(R)
    xyzw = Rotation.from_matrix(R).as_quat()  # scipy: scalar LAST (x, y, z, w)
    ref = np.concatenate([xyzw[:, 3:], xyzw[:, :3]], axis=-1)
    ref *= np.where(ref[:, :1] < 0, -1, 1)  # our canonical sign: w >= 0
    assert np.all(q[:, 0] >= 0)
    # q is sign-ambiguous only when w == 0; compare up to sign there. Accuracy ~eps (Shepperd).
    err = np.minimum(np.abs(q - ref).max(-1), np.abs(q + ref).max(-1))
    assert err.max() < 1e-14
    np.testing.assert_allclose(tf.quaternion_to_matrix(q), R, atol=1e-14)
    # quaternion_to_matrix normalises, and matches scipy for non-unit input
    q4 = RNG.normal(size=(50, 4)) * 3
    np.testing.assert_allclose(tf.quaternion_to_matrix(q4),
                               Rotation.from_quat(q4[:, [1, 2, 3, 0]]).as_matrix(), atol=1e-14)
    back = tf.matrix_to_quaternion(tf.quaternion_to_matrix(q4))
    qn = q4 / np.linalg.norm(q4, axis=-1, keepdims=True) * np.sign(q4[:, :1])
    np.testing.assert_allclose(back, qn, atol=1e-14)


def test_rpy_conventions_against_scipy():
    rpy = RNG.uniform(-PI, PI, size=(100, 3))
    rpy[:, 1] /= 2
    # Convention check: scipy lowercase 'xyz' = extrinsic (fixed axes) x, then y, then z,
    # which is Rz(yaw) Ry(pitch) Rx(roll); uppercase 'ZYX' (intrinsic) with angles reversed is the
    # same matrix. Verify all three against each other and against the hand-built product.
    ext = Rotation.from_euler("xyz", rpy).as_matrix()
    intr = Rotation.from_euler("ZYX", rpy[:, ::-1]).as_matrix()
    hand = np.array([Rz(y) @ Ry(p) @ Rx(r) for r, p, y in rpy])
    np.testing.assert_allclose(ext, hand, atol=1e-14)
    np.testing.assert_allclose(intr, hand, atol=1e-14)
    np.testing.assert_allclose(tf.rpy_to_matrix(rpy), hand, atol=1e-14)
    np.testing.assert_allclose(tf.euler_zyx_to_matrix(rpy[:, ::-1]), hand, atol=1e-14)
    # intrinsic z-y-x: Rz(a0) Ry(a1) Rx(a2)
    a = RNG.uniform(-1.5, 1.5, size=3)  # a1 within (-pi/2, pi/2): the principal solution
    np.testing.assert_allclose(tf.euler_zyx_to_matrix(a), Rz(a[0]) @ Ry(a[1]) @ Rx(a[2]), atol=1e-14)
    np.testing.assert_allclose(tf.matrix_to_euler_zyx(tf.euler_zyx_to_matrix(a)), a, atol=1e-12)


@settings(max_examples=300, deadline=None)
@given(r=st.floats(-PI + 1e-9, PI - 1e-9), p=st.floats(-PI / 2 + 1e-3, PI / 2 - 1e-3),
       y=st.floats(-PI + 1e-9, PI - 1e-9))
def test_rpy_roundtrip(r, p, y):
    out = tf.matrix_to_rpy(tf.rpy_to_matrix([r, p, y]))
    # away from gimbal lock (|cos p| >= 1e-3) angle errors are <= eps / cos(p) ~ 2e-13
    diff = (out - [r, p, y] + PI) % (2 * PI) - PI  # wrap: +-pi are the same angle
    assert np.abs(diff).max() < 1e-10


def test_rpy_gimbal_lock():
    r, y = 0.4, -1.1
    for p, yaw in ((PI / 2, y - r), (-PI / 2, y + r)):
        R = tf.rpy_to_matrix([r, p, y])
        out = tf.matrix_to_rpy(R)
        # deterministic choice: roll = 0 exactly, pitch = +-pi/2, rotation about z all in yaw
        assert out[0] == 0.0
        np.testing.assert_allclose(out[1:], [p, yaw], atol=1e-14)
        np.testing.assert_allclose(tf.rpy_to_matrix(out), R, atol=1e-14)
    # exact lock matrices
    np.testing.assert_allclose(tf.matrix_to_rpy(Ry(PI / 2)), [0, PI / 2, 0], atol=1e-15)


def test_axis_angle():
    axis = RNG.normal(size=(30, 3)) * 5  # non-unit axes
    angle = RNG.uniform(-7, 7, size=30)
    ref = Rotation.from_rotvec(axis / np.linalg.norm(axis, axis=-1, keepdims=True) * angle[:, None])
    np.testing.assert_allclose(tf.axis_angle_to_matrix(axis, angle), ref.as_matrix(), atol=1e-14)


# --- planar, checks, elementary motions ----------------------------------------------------------
def test_planar():
    x, y, ang = RNG.normal(size=(3, 40))
    ang *= 2
    T = tf.planar_transform(x, y, ang)
    hand = np.array([H(Rz(c), (a, b, 0)) for a, b, c in zip(x, y, ang, strict=True)])
    np.testing.assert_allclose(T, hand, atol=1e-15)
    wrapped = (ang + PI) % (2 * PI) - PI
    np.testing.assert_allclose(tf.planar_pose(T), np.stack([x, y, wrapped], -1), atol=1e-14)


def test_is_rotation_and_orthonormalize():
    R = Rotation.random(20, random_state=9).as_matrix()
    assert tf.is_rotation(R).all()
    assert not tf.is_rotation(np.diag([1.0, 1, -1]))  # reflection: orthonormal, det -1
    assert not tf.is_rotation(1.001 * np.eye(3))
    assert not tf.is_rotation(np.full((3, 3), np.nan))
    assert tf.is_rotation(np.eye(3) + 1e-12) and not tf.is_rotation(np.eye(3) + 1e-12, tol=1e-14)
    noisy = R + 1e-4 * RNG.normal(size=R.shape)
    fixed = tf.orthonormalize(noisy)
    assert tf.is_rotation(fixed, tol=1e-13).all()
    # nearest orthogonal matrix = orthogonal polar factor (scipy.linalg.polar), det +1 here
    polar = np.array([scipy.linalg.polar(m)[0] for m in noisy])
    np.testing.assert_allclose(fixed, polar, atol=1e-13)
    # a reflection is mapped to a proper rotation
    assert tf.is_rotation(tf.orthonormalize(np.diag([1.0, 1, -1]) + 1e-3), tol=1e-13)


def test_elementary_motion():
    axis = RNG.normal(size=(8, 3))
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
    q = RNG.uniform(-3, 3, size=8)
    is_rot = np.arange(8) % 2 == 0
    M = tf.elementary_motion(axis, is_rot, q)
    for i in range(8):
        ref = (H(Rotation.from_rotvec(axis[i] * q[i]).as_matrix()) if is_rot[i]
               else H(p=axis[i] * q[i]))
        np.testing.assert_allclose(M[i], ref, atol=1e-14)


# --- batching ------------------------------------------------------------------------------------
def test_batched_shapes_equal_loops():
    shape = (5, 7)
    T = random_transforms(shape)
    R = T[..., :3, :3]
    phi = random_rotvecs(35, max_angle=3 * PI).reshape(shape + (3,))
    p = RNG.normal(size=shape + (3,))
    dh = RNG.uniform(-2, 2, size=(4,) + shape)
    cases = [
        (tf.inverse_transform, (T,), (4, 4)), (tf.adjoint, (T,), (6, 6)),
        (tf.transform_points, (T, p), (3,)), (tf.log_so3, (R,), (3,)),
        (tf.exp_so3, (phi,), (3, 3)), (tf.right_jacobian_inv_so3, (phi,), (3, 3)),
        (tf.left_jacobian_so3, (phi,), (3, 3)), (tf.matrix_to_quaternion, (R,), (4,)),
        (tf.matrix_to_rpy, (R,), (3,)), (tf.orthonormalize, (R,), (3, 3)),
        (tf.dh_standard, tuple(dh), (4, 4)), (tf.dh_modified, tuple(dh), (4, 4)),
        (tf.rot_y, (dh[0],), (3, 3)), (tf.hat, (p,), (3, 3)), (tf.planar_pose, (T,), (3,)),
    ]
    for f, args, tail in cases:
        out = f(*args)
        assert out.shape == shape + tail, f.__name__
        for i in range(shape[0]):
            for j in range(shape[1]):
                # same arithmetic element by element, only SVD/LAPACK order may differ
                np.testing.assert_allclose(out[i, j], f(*(a[i, j] for a in args)), atol=1e-13,
                                           err_msg=f.__name__)
    # broadcasting of different batch shapes
    assert tf.make_transform(np.eye(3), p).shape == shape + (4, 4)
    assert tf.dh_standard(dh[0], 0.1, dh[1][:1], 0.0).shape == shape + (4, 4)
    motion = tf.elementary_motion([0, 0, 1], np.array([True, False])[:, None], np.zeros((3,)))
    assert motion.shape == (2, 3, 4, 4)
    assert tf.is_rotation(R).shape == shape
