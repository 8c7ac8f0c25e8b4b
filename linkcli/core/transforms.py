"""Rigid-body transform utilities (pure numpy, vectorised over leading batch dimensions).

Conventions
-----------
* Units: angles in radians, lengths in metres.
* Every function accepts leading batch dimensions (``(..., 3)`` vectors, ``(..., 3, 3)``
  rotations, ``(..., 4, 4)`` homogeneous transforms, ``(...)`` scalars) and broadcasts them
  together; there are no Python loops over batch elements. Results are float64.
* ``T_a_b`` is the pose of frame ``b`` in frame ``a``: ``p_a = T_a_b @ p_b`` (column vectors);
  ``R_a_b`` is its rotation part. Rotations are active.
* Rotation vectors ``phi = angle * axis`` (so(3) coordinates); ``hat(w) @ v == cross(w, v)``.
* Twists are 6-vectors ordered **(v, w)**: linear part first, angular part second, everywhere
  (:func:`adjoint` acts on twists in this order).
* Quaternions are ``(w, x, y, z)`` (scalar first), unit norm, returned with ``w >= 0``.
* Roll-pitch-yaw ``(roll, pitch, yaw)`` are rotations about the fixed x, y, z axes applied in
  that order: ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``. Intrinsic z-y-x Euler angles
  ``(a0, a1, a2)`` give the same matrix with the order reversed: ``R = Rz(a0) @ Ry(a1) @ Rx(a2)``.
* so(3) Jacobians: ``exp(phi + d) ~= exp(phi) @ exp(Jr(phi) @ d) ~= exp(Jl(phi) @ d) @ exp(phi)``
  and ``log(exp(phi) @ exp(d)) ~= phi + Jr_inv(phi) @ d`` for small ``d``; ``Jl(phi) = Jr(-phi)``.

Why not scipy's ``Rotation`` for the rpy/quaternion conversions: importing
scipy.spatial.transform costs 0.49-0.61 s (``python -X importtime``, 3 runs, load 5-8 on the
2-core VM, 1 Dec 2026) and `linkcli solve` imports no scipy at all (its imports total ~0.9 s in
the same measurement), so it would add about half to its start-up. The closed forms here are a
few numpy lines each, vectorised, and tested against independent constructions
(tests/test_transforms.py).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "hat", "vee", "rot_x", "rot_y", "rot_z", "exp_so3", "log_so3",
    "right_jacobian_so3", "right_jacobian_inv_so3", "left_jacobian_so3", "left_jacobian_inv_so3",
    "make_transform", "inverse_transform", "transform_points", "adjoint",
    "rpy_to_matrix", "matrix_to_rpy", "euler_zyx_to_matrix", "matrix_to_euler_zyx",
    "matrix_to_quaternion", "quaternion_to_matrix", "axis_angle_to_matrix",
    "dh_standard", "dh_modified", "planar_transform", "planar_pose",
    "is_rotation", "orthonormalize", "elementary_motion",
]

_SERIES_TOL = 0.1  # below this angle the 5-term Taylor series truncate at < 1e-17 relative;
# above it (t - sin t)/t^3 etc. lose <= eps/t^2 (~2e-14) relative, i.e. eps after the K^2 factor
_GIMBAL_TOL = 1e-12  # cos(pitch) below which matrix_to_rpy treats the pose as gimbal-locked


def wrap_to_pi(a):
    """Angles ``a`` (rad, any shape) wrapped to [-pi, pi): the signed difference modulo a turn."""
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


def _f(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _mat(rows) -> np.ndarray:
    """Stack a nested list of broadcastable arrays into an array of shape (..., n, m)."""
    flat = np.broadcast_arrays(*[_f(e) for row in rows for e in row])
    out = np.stack(flat, axis=-1)
    return out.reshape(out.shape[:-1] + (len(rows), len(rows[0])))


def _swap(M: np.ndarray) -> np.ndarray:
    return np.swapaxes(M, -1, -2)


def _coef(theta: np.ndarray, series, exact) -> np.ndarray:
    """``exact(theta)``, replaced by the series ``sum(c_k theta^2k)`` for small ``theta``."""
    small = theta < _SERIES_TOL
    t2 = theta * theta
    poly = series[-1]
    for c in series[-2::-1]:
        poly = c + t2 * poly
    return np.where(small, poly, exact(np.where(small, 1.0, theta)))


def _sinc(t):  # sin(t) / t
    return _coef(t, (1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880), lambda x: np.sin(x) / x)


def _cosc(t):  # (1 - cos t) / t^2, written without cancellation
    return _coef(t, (0.5, -1 / 24, 1 / 720, -1 / 40320, 1 / 3628800),
                 lambda x: 2.0 * (np.sin(0.5 * x) / x) ** 2)


def _sinc3(t):  # (t - sin t) / t^3
    return _coef(t, (1 / 6, -1 / 120, 1 / 5040, -1 / 362880, 1 / 39916800), lambda x: (x - np.sin(x)) / x**3)


def _jinv_coef(t):  # 1/t^2 - (1 + cos t) / (2 t sin t) = (1 - (t/2) cot(t/2)) / t^2
    return _coef(t, (1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160),
                 lambda x: (1.0 - 0.5 * x / np.tan(0.5 * x)) / x**2)


# --- so(3) ---------------------------------------------------------------------------------------
def hat(w) -> np.ndarray:
    """Skew matrix of ``w`` (..., 3) -> (..., 3, 3) with ``hat(w) @ v == cross(w, v)``."""
    w = _f(w)
    z = np.zeros(w.shape[:-1])
    x, y, zz = w[..., 0], w[..., 1], w[..., 2]
    return _mat([[z, -zz, y], [zz, z, -x], [-y, x, z]])


def vee(W) -> np.ndarray:
    """Inverse of :func:`hat`: (..., 3, 3) -> (..., 3), from the antisymmetric part of ``W``."""
    W = _f(W)
    return 0.5 * np.stack([W[..., 2, 1] - W[..., 1, 2], W[..., 0, 2] - W[..., 2, 0],
                           W[..., 1, 0] - W[..., 0, 1]], axis=-1)


def rot_x(a) -> np.ndarray:
    """Rotation by angle ``a`` (..., rad) about x -> (..., 3, 3)."""
    c, s = np.cos(_f(a)), np.sin(_f(a))
    o, z = np.ones_like(c), np.zeros_like(c)
    return _mat([[o, z, z], [z, c, -s], [z, s, c]])


def rot_y(a) -> np.ndarray:
    """Rotation by angle ``a`` (..., rad) about y -> (..., 3, 3)."""
    c, s = np.cos(_f(a)), np.sin(_f(a))
    o, z = np.ones_like(c), np.zeros_like(c)
    return _mat([[c, z, s], [z, o, z], [-s, z, c]])


def rot_z(a) -> np.ndarray:
    """Rotation by angle ``a`` (..., rad) about z -> (..., 3, 3)."""
    c, s = np.cos(_f(a)), np.sin(_f(a))
    o, z = np.ones_like(c), np.zeros_like(c)
    return _mat([[c, -s, z], [s, c, z], [z, z, o]])


def exp_so3(phi) -> np.ndarray:
    """Rotation matrix (..., 3, 3) of the rotation vector ``phi`` (..., 3) (rad), Rodrigues'
    formula ``I + sinc(t) K + (1 - cos t)/t^2 K^2`` with Taylor series for small ``t = |phi|``."""
    phi = _f(phi)
    t = np.linalg.norm(phi, axis=-1)[..., None, None]
    K = hat(phi)
    return np.eye(3) + _sinc(t) * K + _cosc(t) * (K @ K)


def log_so3(R) -> np.ndarray:
    """Rotation vector (..., 3) of the rotation matrix ``R`` (..., 3, 3), with angle in [0, pi].

    The angle is ``atan2(|s|, c)`` with ``s = vee(R)`` (= sin(angle) axis) and
    ``c = (trace R - 1)/2``, accurate over the whole range. For angles below pi/2 the vector is
    ``s * angle / sin(angle)`` (series near 0); above pi/2 the axis is taken from the column of
    the symmetric part ``(R + R^T)/2 - c I = (1 - c) axis axis^T`` with the largest diagonal, its
    sign from ``s``. At exactly pi either sign may be returned.
    """
    R = _f(R)
    s = vee(R)
    c = 0.5 * (np.trace(R, axis1=-2, axis2=-1) - 1.0)
    sn = np.linalg.norm(s, axis=-1)
    theta = np.arctan2(sn, c)
    near_zero = s / _sinc(theta)[..., None]  # s * theta / sin(theta)
    B = 0.5 * (R + _swap(R)) - c[..., None, None] * np.eye(3)
    k = np.argmax(np.diagonal(B, axis1=-2, axis2=-1), axis=-1)
    col = np.take_along_axis(B, np.broadcast_to(k[..., None, None], B.shape[:-1] + (1,)), axis=-1)[..., 0]
    n = np.linalg.norm(col, axis=-1, keepdims=True)
    axis = col / np.where(n > 0, n, 1.0)  # n > 1/sqrt(3) wherever this branch is used (c < 0)
    sign = np.where(np.sum(axis * s, axis=-1) < 0, -1.0, 1.0)
    near_pi = (sign * theta)[..., None] * axis
    return np.where((c < 0)[..., None], near_pi, near_zero)


def right_jacobian_so3(phi) -> np.ndarray:
    """Right Jacobian ``Jr(phi) = I - (1-cos t)/t^2 K + (t - sin t)/t^3 K^2`` (..., 3, 3)."""
    phi = _f(phi)
    t = np.linalg.norm(phi, axis=-1)[..., None, None]
    K = hat(phi)
    return np.eye(3) - _cosc(t) * K + _sinc3(t) * (K @ K)


def left_jacobian_so3(phi) -> np.ndarray:
    """Left Jacobian ``Jl(phi) = Jr(-phi)`` (..., 3, 3)."""
    return right_jacobian_so3(-_f(phi))


def right_jacobian_inv_so3(phi) -> np.ndarray:
    """Inverse right Jacobian ``I + K/2 + (1/t^2 - (1+cos t)/(2 t sin t)) K^2`` (..., 3, 3);
    singular at |phi| = 2 pi."""
    phi = _f(phi)
    t = np.linalg.norm(phi, axis=-1)[..., None, None]
    K = hat(phi)
    return np.eye(3) + 0.5 * K + _jinv_coef(t) * (K @ K)


def left_jacobian_inv_so3(phi) -> np.ndarray:
    """Inverse left Jacobian ``Jl_inv(phi) = Jr_inv(-phi)`` (..., 3, 3)."""
    return right_jacobian_inv_so3(-_f(phi))


# --- homogeneous transforms ----------------------------------------------------------------------
def make_transform(R, p) -> np.ndarray:
    """``T_a_b`` (..., 4, 4) from rotation ``R_a_b`` (..., 3, 3) and origin of b in a ``p`` (..., 3) (m)."""
    R, p = _f(R), _f(p)
    batch = np.broadcast_shapes(R.shape[:-2], p.shape[:-1])
    T = np.zeros(batch + (4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = p
    T[..., 3, 3] = 1.0
    return T


def inverse_transform(T) -> np.ndarray:
    """``T_b_a`` from ``T_a_b`` (..., 4, 4) using ``R^T`` and ``-R^T p``."""
    T = _f(T)
    Rt = _swap(T[..., :3, :3])
    return make_transform(Rt, -(Rt @ T[..., :3, 3, None])[..., 0])


def transform_points(T, p) -> np.ndarray:
    """Points ``p_a = T_a_b @ p_b`` (..., 3) (m) from points ``p_b`` (..., 3) in frame b."""
    T, p = _f(T), _f(p)
    return (T[..., :3, :3] @ p[..., None])[..., 0] + T[..., :3, 3]


def adjoint(T) -> np.ndarray:
    """Adjoint (..., 6, 6) of ``T_a_b`` for twists ordered (v, w): maps a twist in b coordinates
    to a coordinates, ``[[R, hat(p) R], [0, R]]``; ``T exp(xi) T^-1 = exp(adjoint(T) xi)``."""
    T = _f(T)
    R, p = T[..., :3, :3], T[..., :3, 3]
    Ad = np.zeros(T.shape[:-2] + (6, 6))
    Ad[..., :3, :3] = R
    Ad[..., 3:, 3:] = R
    Ad[..., :3, 3:] = hat(p) @ R
    return Ad


# --- parametrisations ----------------------------------------------------------------------------
def rpy_to_matrix(rpy) -> np.ndarray:
    """``Rz(yaw) @ Ry(pitch) @ Rx(roll)`` (..., 3, 3) from ``rpy = (roll, pitch, yaw)`` (..., 3),
    i.e. rotations about the fixed x, y, z axes in that order (scipy ``from_euler('xyz')``)."""
    rpy = _f(rpy)
    return rot_z(rpy[..., 2]) @ rot_y(rpy[..., 1]) @ rot_x(rpy[..., 0])


def matrix_to_rpy(R) -> np.ndarray:
    """Inverse of :func:`rpy_to_matrix`: (..., 3) ``(roll, pitch, yaw)`` with pitch in
    [-pi/2, pi/2] and roll, yaw in [-pi, pi]. At gimbal lock (``cos(pitch) < 1e-12``) roll is set to
    0 and the whole rotation about z goes into yaw."""
    R = _f(R)
    cp = np.hypot(R[..., 0, 0], R[..., 1, 0])
    pitch = np.arctan2(-R[..., 2, 0], cp)
    lock = cp < _GIMBAL_TOL
    roll = np.where(lock, 0.0, np.arctan2(R[..., 2, 1], R[..., 2, 2]))
    yaw = np.where(lock, np.arctan2(-R[..., 0, 1], R[..., 1, 1]), np.arctan2(R[..., 1, 0], R[..., 0, 0]))
    return np.stack([roll, pitch, yaw], axis=-1)


def euler_zyx_to_matrix(a) -> np.ndarray:
    """Intrinsic z-y-x Euler angles ``a = (a0, a1, a2)`` (..., 3) -> ``Rz(a0) @ Ry(a1) @ Rx(a2)``;
    the same matrix as ``rpy_to_matrix(a[..., ::-1])``."""
    return rpy_to_matrix(_f(a)[..., ::-1])


def matrix_to_euler_zyx(R) -> np.ndarray:
    """Inverse of :func:`euler_zyx_to_matrix` (same ranges and gimbal-lock rule as rpy)."""
    return matrix_to_rpy(R)[..., ::-1]


def matrix_to_quaternion(R) -> np.ndarray:
    """Unit quaternion ``(w, x, y, z)`` (..., 4) with ``w >= 0`` of ``R`` (..., 3, 3), Shepperd's
    method: of the four candidates ``4 q_k q`` the one with the largest ``|q_k|`` is normalised."""
    R = _f(R)
    r = [[R[..., i, j] for j in range(3)] for i in range(3)]
    (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = r
    tr = m00 + m11 + m22
    cand = _mat([
        [1 + tr, m21 - m12, m02 - m20, m10 - m01],
        [m21 - m12, 1 + m00 - m11 - m22, m01 + m10, m02 + m20],
        [m02 - m20, m01 + m10, 1 - m00 + m11 - m22, m12 + m21],
        [m10 - m01, m02 + m20, m12 + m21, 1 - m00 - m11 + m22],
    ])
    k = np.argmax(np.stack([tr, m00, m11, m22], axis=-1), axis=-1)
    idx = np.broadcast_to(k[..., None, None], cand.shape[:-2] + (1, 4))
    q = np.take_along_axis(cand, idx, axis=-2)[..., 0, :]
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


def quaternion_to_matrix(q) -> np.ndarray:
    """Rotation matrix (..., 3, 3) of the quaternion ``(w, x, y, z)`` (..., 4) (normalised first)."""
    q = _f(q)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return _mat([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def axis_angle_to_matrix(axis, angle) -> np.ndarray:
    """Rotation by ``angle`` (..., rad) about ``axis`` (..., 3; any nonzero length) -> (..., 3, 3)."""
    axis = _f(axis)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    return exp_so3(axis * _f(angle)[..., None])


def dh_standard(theta, d, a, alpha) -> np.ndarray:
    """Standard DH link transform ``Rz(theta) Tz(d) Tx(a) Rx(alpha)`` (..., 4, 4); angles rad,
    lengths m, all arguments (...) broadcast together."""
    ct, st, ca, sa = np.cos(_f(theta)), np.sin(_f(theta)), np.cos(_f(alpha)), np.sin(_f(alpha))
    a, d = _f(a), _f(d)
    z, o = np.zeros_like(ct), np.ones_like(ct)
    return _mat([[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st],
                 [z, sa, ca, d], [z, z, z, o]])


def dh_modified(theta, d, a, alpha) -> np.ndarray:
    """Modified (Craig) DH link transform ``Rx(alpha) Tx(a) Rz(theta) Tz(d)`` (..., 4, 4)."""
    ct, st, ca, sa = np.cos(_f(theta)), np.sin(_f(theta)), np.cos(_f(alpha)), np.sin(_f(alpha))
    a, d = _f(a), _f(d)
    z, o = np.zeros_like(ct), np.ones_like(ct)
    return _mat([[ct, -st, z, a], [st * ca, ct * ca, -sa, -sa * d],
                 [st * sa, ct * sa, ca, ca * d], [z, z, z, o]])


def planar_transform(x, y, angle) -> np.ndarray:
    """(..., 4, 4) planar pose: rotation by ``angle`` (rad) about z, origin ``(x, y, 0)`` (m)."""
    x, y = _f(x), _f(y)
    return make_transform(rot_z(angle), np.stack(np.broadcast_arrays(x, y, np.zeros_like(x)), axis=-1))


def planar_pose(T) -> np.ndarray:
    """``[x, y, angle]`` (..., 3) of a planar pose (..., 4, 4); ``angle = atan2(R10, R00)``."""
    T = _f(T)
    return np.stack([T[..., 0, 3], T[..., 1, 3], np.arctan2(T[..., 1, 0], T[..., 0, 0])], axis=-1)


# --- checks and repair ---------------------------------------------------------------------------
def is_rotation(R, tol: float = 1e-9) -> np.ndarray:
    """Bool array (...): ``R`` (..., 3, 3) is finite, ``max|R^T R - I| <= tol`` and
    ``|det R - 1| <= tol``."""
    R = _f(R)
    with np.errstate(invalid="ignore"):  # non-finite input just yields False
        err = np.max(np.abs(_swap(R) @ R - np.eye(3)), axis=(-2, -1))
        ok = (err <= tol) & (np.abs(np.linalg.det(R) - 1.0) <= tol)
    return ok & np.all(np.isfinite(R), axis=(-2, -1))


def orthonormalize(R) -> np.ndarray:
    """Nearest rotation (Frobenius norm) to ``R`` (..., 3, 3) via SVD, ``U diag(1, 1, det(U V^T)) V^T``."""
    U, _, Vt = np.linalg.svd(_f(R))
    d = np.where(np.linalg.det(U @ Vt) < 0, -1.0, 1.0)
    U = np.concatenate([U[..., :2], U[..., 2:] * d[..., None, None]], axis=-1)
    return U @ Vt


def elementary_motion(axis, is_rotation, q) -> np.ndarray:
    """Motion (..., 4, 4) of one joint variable: a rotation by ``q`` (rad) about the unit ``axis``
    (..., 3) through the origin when ``is_rotation`` (...) is true, else a translation ``q * axis``
    (m). All arguments broadcast together."""
    axis, q, rot = _f(axis), _f(q)[..., None], np.asarray(is_rotation, dtype=bool)[..., None]
    v = axis * q
    R = np.where(rot[..., None], exp_so3(np.where(rot, v, 0.0)), np.eye(3))
    return make_transform(R, np.where(rot, 0.0, v))


class Unwrap:
    """``np.unwrap`` of the finite values of a sequence given block by block: the same floating
    point operations as numpy 2's unwrap of the whole (period 2 pi, discontinuity pi; the
    corrections are summed in the same order), so the result is bit-identical (checked by
    tests/test_solve_stream.py against ``np.unwrap``). NaN stays NaN and is skipped, as
    ``angle[finite] = np.unwrap(angle[finite])`` does. Used by the solve and simulate tables (rad),
    whose rows come chunk by chunk."""

    def __init__(self) -> None:
        self.last: float | None = None  # last finite value seen
        self.total = 0.0  # running sum of the corrections

    def __call__(self, p: np.ndarray) -> np.ndarray:
        out = np.array(p, dtype=float)
        finite = np.isfinite(out)
        v = out[finite]
        if len(v) == 0:
            return out
        first = self.last is None
        ext = v.copy() if first else np.r_[self.last, v]
        dd = np.diff(ext)
        ddmod = np.mod(dd + np.pi, 2 * np.pi) - np.pi
        np.copyto(ddmod, np.pi, where=(ddmod == -np.pi) & (dd > 0))
        correction = ddmod - dd
        np.copyto(correction, 0, where=np.abs(dd) < np.pi)
        sums = np.cumsum(np.r_[self.total, correction])[1:]
        if first:
            v[1:] += sums
        else:
            v += sums
        if len(sums):
            self.total = float(sums[-1])
        self.last = float(ext[-1])
        out[finite] = v
        return out
