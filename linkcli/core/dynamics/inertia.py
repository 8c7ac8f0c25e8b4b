"""Inertia of the bodies: mass matrix blocks, momentum, and the Lee-Leok-McClamroch discrete
rotational momentum with its Jacobian (all world frame, SI: kg, kg m^2, m/s, rad/s)."""

from __future__ import annotations

from ..jit import maybe_njit


@maybe_njit(refcount=False)
def world_inertia(J, R, out):
    """``out = R J R^T`` (3, 3)."""
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += R[i, k] * (J[k, 0] * R[j, 0] + J[k, 1] * R[j, 1] + J[k, 2] * R[j, 2])
            out[i, j] = s


@maybe_njit(refcount=False)
def mass_block(m, b, rot, K, off, scale_, S):
    """``K[block of body b] = scale_ * M_b`` (at offset ``off``): ``diag(m, m, Izz)`` planar,
    ``diag(m, m, m, R J R^T)`` spatial; ``S`` (3, 3) scratch."""
    mb = m.body_mass[b] * scale_
    if m.planar:
        K[off, off] = mb
        K[off + 1, off + 1] = mb
        K[off + 2, off + 2] = m.body_inertia[b, 2, 2] * scale_
        return
    for i in range(3):
        K[off + i, off + i] = mb
    world_inertia(m.body_inertia[b], rot[b], S)
    for i in range(3):
        for j in range(3):
            K[off + 3 + i, off + 3 + j] = S[i, j] * scale_


@maybe_njit(refcount=False)
def momentum(m, rot, vel, omg, out, S):
    """Generalized momentum ``out = M v`` (n,); ``S`` (3, 3) scratch."""
    for b in range(m.body_mass.shape[0]):
        mb = m.body_mass[b]
        if m.planar:
            out[3 * b], out[3 * b + 1] = mb * vel[b, 0], mb * vel[b, 1]
            out[3 * b + 2] = m.body_inertia[b, 2, 2] * omg[b, 2]
        else:
            world_inertia(m.body_inertia[b], rot[b], S)
            for i in range(3):
                out[6 * b + i] = mb * vel[b, i]
                out[6 * b + 3 + i] = S[i, 0] * omg[b, 0] + S[i, 1] * omg[b, 1] + S[i, 2] * omg[b, 2]


@maybe_njit(refcount=False)
def _relative(R0, R1, F):
    """``F = R0^T R1``."""
    for i in range(3):
        for j in range(3):
            F[i, j] = R0[0, i] * R1[0, j] + R0[1, i] * R1[1, j] + R0[2, i] * R1[2, j]


@maybe_njit(refcount=False)
def discrete_momentum(J, R0, R1, F, B):
    """World ``R0 vee(F J_d - J_d F^T)`` with ``F = R0^T R1``, ``J_d = tr(J)/2 I - J``: h times
    the LLM discrete angular momentum. ``F``, ``B`` (3, 3) scratch."""
    _relative(R0, R1, F)
    half_tr = 0.5 * (J[0, 0] + J[1, 1] + J[2, 2])
    for i in range(3):  # B = F J_d
        for j in range(3):
            B[i, j] = half_tr * F[i, j] - (F[i, 0] * J[0, j] + F[i, 1] * J[1, j] + F[i, 2] * J[2, j])
    v0, v1, v2 = B[2, 1] - B[1, 2], B[0, 2] - B[2, 0], B[1, 0] - B[0, 1]  # vee(B - B^T)
    return (R0[0, 0] * v0 + R0[0, 1] * v1 + R0[0, 2] * v2,
            R0[1, 0] * v0 + R0[1, 1] * v1 + R0[1, 2] * v2,
            R0[2, 0] * v0 + R0[2, 1] * v1 + R0[2, 2] * v2)


@maybe_njit(refcount=False)
def discrete_momentum_jacobian(J, R0, R1, h, out, F, B):
    """``out`` (3, 3) ``= d(discrete_momentum / h) / d theta`` for a world rotation ``theta`` of
    ``R1``: ``R1 (tr(J_d F) I - J_d F) R1^T / h`` (from ``hat(x) A + A^T hat(x) =
    hat((tr(A) I - A) x)``). ``F``, ``B`` (3, 3) scratch."""
    _relative(R0, R1, F)
    half_tr = 0.5 * (J[0, 0] + J[1, 1] + J[2, 2])
    for i in range(3):  # B = J_d F
        for j in range(3):
            B[i, j] = half_tr * F[i, j] - (J[i, 0] * F[0, j] + J[i, 1] * F[1, j] + J[i, 2] * F[2, j])
    tr = B[0, 0] + B[1, 1] + B[2, 2]
    for i in range(3):
        for j in range(3):
            F[i, j] = (tr if i == j else 0.0) - B[i, j]
    for i in range(3):  # out = R1 F R1^T / h
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += R1[i, k] * (F[k, 0] * R1[j, 0] + F[k, 1] * R1[j, 1] + F[k, 2] * R1[j, 2])
            out[i, j] = s / h
