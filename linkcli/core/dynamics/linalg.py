"""Small dense linear algebra and 3-vector helpers for the per-step kernels.

3-vectors are tuples ``(x, y, z)`` (no allocation in compiled code); rotations are (3, 3)
arrays. The LU solver works in place on preallocated arrays and reports singular matrices
through its return value instead of raising, so a kernel can stop with a status.
"""

from __future__ import annotations

import math

from ..jit import maybe_njit


@maybe_njit(refcount=False)
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@maybe_njit(refcount=False)
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@maybe_njit(refcount=False)
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@maybe_njit(refcount=False)
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@maybe_njit(refcount=False)
def scale(s, a):
    return (s * a[0], s * a[1], s * a[2])


# one copy, not one per constant i
@maybe_njit(signature="UniTuple(float64, 3)(float64[:, ::1], int64)", refcount=False)
def row3(A, i):
    """Row ``i`` of a (n, 3) C-contiguous float array as a tuple."""
    return (A[i, 0], A[i, 1], A[i, 2])


@maybe_njit(refcount=False)
def matvec(R, v):
    """``R @ v`` for a (3, 3) array and a 3-tuple."""
    return (R[0, 0] * v[0] + R[0, 1] * v[1] + R[0, 2] * v[2],
            R[1, 0] * v[0] + R[1, 1] * v[1] + R[1, 2] * v[2],
            R[2, 0] * v[0] + R[2, 1] * v[1] + R[2, 2] * v[2])


@maybe_njit(refcount=False)
def matTvec(R, v):
    """``R.T @ v`` for a (3, 3) array and a 3-tuple."""
    return (R[0, 0] * v[0] + R[1, 0] * v[1] + R[2, 0] * v[2],
            R[0, 1] * v[0] + R[1, 1] * v[1] + R[2, 1] * v[2],
            R[0, 2] * v[0] + R[1, 2] * v[1] + R[2, 2] * v[2])


@maybe_njit(refcount=False)
def matmul3(A, B, out):
    """``out = A @ B`` for (3, 3) arrays (``out`` must not alias the inputs)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@maybe_njit(refcount=False)
def wrap_angle(a):
    """``a`` wrapped to [-pi, pi)."""
    return a - 2.0 * math.pi * math.floor((a + math.pi) / (2.0 * math.pi))


@maybe_njit(refcount=False)
def rotation_from_vector(phi, out):
    """``out = exp(hat(phi))`` (3, 3), Rodrigues' formula with series for small angles (rad)."""
    t2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    t = math.sqrt(t2)
    if t < 1e-4:
        a = 1.0 - t2 / 6.0 + t2 * t2 / 120.0
        b = 0.5 - t2 / 24.0 + t2 * t2 / 720.0
    else:
        a = math.sin(t) / t
        b = (1.0 - math.cos(t)) / t2
    x, y, z = phi[0], phi[1], phi[2]
    out[0, 0] = 1.0 - b * (y * y + z * z)
    out[1, 1] = 1.0 - b * (x * x + z * z)
    out[2, 2] = 1.0 - b * (x * x + y * y)
    out[0, 1] = -a * z + b * x * y
    out[1, 0] = a * z + b * x * y
    out[0, 2] = a * y + b * x * z
    out[2, 0] = -a * y + b * x * z
    out[1, 2] = -a * x + b * y * z
    out[2, 1] = a * x + b * y * z


@maybe_njit(inline=True, refcount=False)
def copy1(dst, src):
    """``dst[:] = src`` for 1-D arrays (explicit loops here and below compile without numba's
    broadcasting checks, which cost seconds of compile time per use)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@maybe_njit(inline=True, refcount=False)
def copy2(dst, src):
    """``dst[:, :] = src`` for 2-D arrays."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@maybe_njit(inline=True, refcount=False)
def copy3(dst, src):
    """``dst[:, :, :] = src`` for 3-D arrays."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            for k in range(src.shape[2]):
                dst[i, j, k] = src[i, j, k]


@maybe_njit(refcount=False)
def rotate_world(R, phi, tmp, tmp2):
    """``R <- exp(hat(phi)) @ R`` in place (world-frame increment ``phi``, rad)."""
    rotation_from_vector(phi, tmp)
    matmul3(tmp, R, tmp2)
    copy2(R, tmp2)


@maybe_njit(refcount=False)
def reorthonormalize(R, S, T):
    """One Newton-Schulz step ``R <- 1.5 R - 0.5 R R^T R`` in place (removes first-order drift
    from SO(3)); ``S``, ``T`` are (3, 3) scratch arrays."""
    for i in range(3):
        for j in range(3):
            S[i, j] = R[i, 0] * R[j, 0] + R[i, 1] * R[j, 1] + R[i, 2] * R[j, 2]
    matmul3(S, R, T)
    for i in range(3):
        for j in range(3):
            R[i, j] = 1.5 * R[i, j] - 0.5 * T[i, j]


@maybe_njit(refcount=False)
def invert3(A, out):
    """``out = inv(A)`` for a (3, 3) array (adjugate / determinant); False when singular."""
    c00 = A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]
    c01 = A[1, 2] * A[2, 0] - A[1, 0] * A[2, 2]
    c02 = A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]
    det = A[0, 0] * c00 + A[0, 1] * c01 + A[0, 2] * c02
    if det == 0.0:
        return False
    d = 1.0 / det
    out[0, 0], out[1, 0], out[2, 0] = c00 * d, c01 * d, c02 * d
    out[0, 1] = (A[0, 2] * A[2, 1] - A[0, 1] * A[2, 2]) * d
    out[1, 1] = (A[0, 0] * A[2, 2] - A[0, 2] * A[2, 0]) * d
    out[2, 1] = (A[0, 1] * A[2, 0] - A[0, 0] * A[2, 1]) * d
    out[0, 2] = (A[0, 1] * A[1, 2] - A[0, 2] * A[1, 1]) * d
    out[1, 2] = (A[0, 2] * A[1, 0] - A[0, 0] * A[1, 2]) * d
    out[2, 2] = (A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]) * d
    return True


@maybe_njit(refcount=False)
def rotation_z(R, angle):
    """``R = Rz(angle)`` (3, 3) in place (rad)."""
    c, s = math.cos(angle), math.sin(angle)
    R[0, 0], R[0, 1], R[0, 2] = c, -s, 0.0
    R[1, 0], R[1, 1], R[1, 2] = s, c, 0.0
    R[2, 0], R[2, 1], R[2, 2] = 0.0, 0.0, 1.0


# --- banded LU (the step's saddle-point matrices in a bandwidth-reducing order) ----------------------
# Storage (row-wise, as LAPACK gbtrf by rows): entry (i, j) of an N x N matrix with lower and upper
# bandwidth ``kl`` is ``B[i, j - i + kl]``, ``|j - i| <= kl``; the columns up to ``3 kl + 1`` leave
# room for the fill of partial pivoting (the upper bandwidth of U grows to ``2 kl``). The cost is
# O(N kl^2) instead of O(N^3); with ``kl = N - 1`` it is the dense LU. Hand-written because the
# step kernels are compiled (numba cannot call LAPACK's gbtrf/gbtrs from nopython code without
# per-call arrays; scipy.linalg.solve_banded does not keep the factors and allocates).
@maybe_njit(refcount=False)
def band_lu_factor(B, N, kl, piv):
    """In-place LU with partial pivoting of the band matrix ``B`` (see above) of order ``N``;
    L is kept as the sequence of Gauss transforms (row interchanges ``piv`` applied in turn,
    as gbtrf). Returns the smallest ``|pivot| / max|entry|`` (0.0 when exactly singular, 1.0 for
    an empty matrix)."""
    if N == 0:
        return 1.0
    amax = 0.0
    for i in range(N):
        for c in range(2 * kl + 1):
            v = abs(B[i, c])
            if v > amax:
                amax = v
    if amax == 0.0:
        return 0.0
    worst = 1.0
    ju = 0  # last column reached by U so far (as gbtrf): no row from k on has entries beyond it
    for k in range(N):
        last = min(N - 1, k + kl)
        p = k
        best = abs(B[k, kl])
        for i in range(k + 1, last + 1):
            v = abs(B[i, k - i + kl])
            if v > best:
                best, p = v, i
        piv[k] = p
        if best == 0.0:
            return 0.0
        if best / amax < worst:
            worst = best / amax
        ju = max(ju, min(N - 1, p + kl))
        right = ju  # the pivot row (either of the swapped rows) has no entry beyond ju
        if p != k:
            for j in range(k, right + 1):
                B[k, j - k + kl], B[p, j - p + kl] = B[p, j - p + kl], B[k, j - k + kl]
        inv = 1.0 / B[k, kl]
        for i in range(k + 1, last + 1):
            f = B[i, k - i + kl] * inv
            B[i, k - i + kl] = f
            if f != 0.0:
                for j in range(k + 1, right + 1):  # the pivot row's nonzeros (saddle-point rows are sparse)
                    u = B[k, j - k + kl]
                    if u != 0.0:
                        B[i, j - i + kl] -= f * u
    return worst


@maybe_njit(refcount=False)
def band_lu_solve(B, N, kl, piv, b):
    """Solve in place ``A x = b`` (``b[:N]`` overwritten) with the factors of :func:`band_lu_factor`."""
    for k in range(N):
        p = piv[k]
        if p != k:
            b[k], b[p] = b[p], b[k]
        t = b[k]
        if t != 0.0:
            for i in range(k + 1, min(N - 1, k + kl) + 1):
                b[i] -= B[i, k - i + kl] * t
    for k in range(N - 1, -1, -1):
        s = b[k]
        for j in range(k + 1, min(N - 1, k + 2 * kl) + 1):
            s -= B[k, j - k + kl] * b[j]
        b[k] = s / B[k, kl]


@maybe_njit(refcount=False)
def band_lu_det_sign(B, N, kl, piv):
    """Sign (-1, 0 or 1) of the determinant of the matrix factorised by :func:`band_lu_factor`
    (product of the pivots' signs, one factor -1 per row interchange). O(N)."""
    sign = 1
    for k in range(N):
        d = B[k, kl]
        if d == 0.0:
            return 0
        if d < 0.0:
            sign = -sign
        if piv[k] != k:
            sign = -sign
    return sign
