"""The continuation of sweeps: one algorithm for every mechanism, in scalar loops.

This is the only implementation of :func:`linkcli.core.sweep.solve_sweep`'s continuation (issue
11 removed the numpy control flow that duplicated it; tests/test_sweep_kernel.py keeps that
path's results as a reference). Point by point:

* coarse points (:func:`coarse_indices`): input steps of at most ``max_step``; the first point
  is assembled at the estimate's own inputs (:func:`solve_point`; seeded restarts in sweep.py
  when it stalls) and followed to the first input; tangent predictor (the secant through the previous point where
  J_p is singular) + corrector with step bisection on a failure, a would-be branch jump or a
  det J_p sign change (``_continue``), restart from the last good configuration after
  failures (a ``reassembled`` event). Acceptance tests and limits are written once in
  :mod:`linkcli.core.continuation` and compiled here;
* the corrector (``_solve``) is loop_closure.solve_configuration's Levenberg-Marquardt /
  Newton for one point: same acceptance test, damping schedule and statuses; its step is the
  (damped) least-squares / minimum-norm solution of J_p dx = -r, so square, tall (more
  constraint rows than passive variables: planar loops written as spatial files,
  overconstrained loops) and wide J_p (idle freedoms, e.g. an S-S coupler's spin) are solved
  alike (inverse / LU when square and well conditioned, Jacobi SVD otherwise);
* between coarse points every point follows its left neighbour: first :func:`_fast_step`
  (second-order predictor, one chord step with the cached J_p factors, accepted only when it
  provably meets the tolerance and passes the branch check; square J_p), else a cubic Hermite
  guess checked against the branch (distance, det J_p sign against the segment's ends), else
  ``_continue`` from the left neighbour;
* det J_p sign checks: a square J_p by its LU sign; a tall one by the sign of
  det(Jp_ref^T J_p) seen from the step's (or segment's) start (:func:`_seen_sign`); a wide one
  gets none. Per point the kernel returns the final residual per loop, the condition number
  and (square J_p) the det sign; :func:`det_flips` gives a tall J_p's sign changes between
  neighbours (sweep.py builds the events from these).

Model evaluation (``_eval``): planar models run in SE(2) (every joint frame ``(x, y, c, s)``,
revolute axes +-z, prismatic axes in the plane; residual rows ``(x, y, angle)``), every other
model in general poses (rotation matrix and origin, 12 floats): each joint variable is an
elementary motion about / along a fixed unit axis of its joint frame (Rodrigues), a
multi-variable joint their product; the residual per loop is loop_closure's (planar
``(x, y, angle)``, spatial ``(p_B - p_A, log(R_A^T R_B))`` with the exact SO(3) log and its
branch near pi), the Jacobian analytic from the world axes (point-velocity differences of the
two loop frames, rotation rows ``Jr^-1(phi) R_B^T (w_B - w_A)``). tests/test_sweep_kernel.py
checks both against loop_closure.constraints (1e-12) and finite differences on every example.

Compiled or interpreted: written once as plain Python over scalars and small preallocated
arrays; :func:`_compiled` compiles each function with numba when this module is imported
(unless ``LINKCLI_JIT=never`` or numba is missing), independently of the process-wide mode of
the other kernel sets (jit.py), else leaves it as it is. sweep.py also loads a second,
never-compiled copy of this file (``sweep_kernel_interpreted``) so that a process can run the
kernel interpreted (cold numba cache, a short sweep) and switch to the compiled one later.
numba is imported when the compiled module is imported, so import it lazily (sweep.py does).

Measured (CPU; benchmarks/README.md, issue 11): four-bar 3600 points 1.5-1.7 ms compiled
(~0.45 us per point, the kernel itself within 3 % of the planar-only kernel it replaced),
~90-100 us per point interpreted; spatial RSSR (wide J_p, 6 x 7) 9-12 ms compiled at 721
points and 34-43 ms at 3600, 3.7-4.5 ms per point interpreted, against the numpy
continuation's 113-157 and 194-242 ms; a 10^6-point RSSR sweep peaks at 296 MB RSS (the numpy
continuation: 5.1 GB).
The planar evaluation generated per topology was measured and not built: the four-bar's
hand-unrolled in place of ``_eval_planar`` (bit-identical) takes 17-25 % off the kernel for a
~40 s CPU compile per topology (benchmarks/w1_specialised.py, benchmarks/README.md).
"""

from __future__ import annotations

import math

import numpy as np

from . import continuation as rules
from .jit import self_contained_numba
from .loop_closure import SINGULAR_CONDITION


def _compiled(f, inline="never"):
    """``numba.njit`` the scalar-loop function ``f`` unless the environment asks for
    interpreted kernels (``LINKCLI_JIT=never``, ``LINKCLI_NO_JIT``) or numba is not installed
    (:func:`linkcli.core.jit.self_contained_numba`), else return it unchanged; with
    ``cache=True``, no reference counting (``_nrt=False``: kernels never allocate) and numpy's
    float error model (no ZeroDivisionError checks: kernels test their divisors).

    The sweep kernel is self-contained (it calls no :func:`linkcli.core.jit.maybe_njit` kernel
    of another module: continuation.py's rules are compiled here, by this decorator), so
    importing it compiled does not fix the process-wide mode of the other kernel sets, and a
    process whose other kernels run interpreted can still run this one compiled (sweep.py
    decides per sweep)."""
    if __name__.endswith("_interpreted"):  # (sweep._interpreted_kernel's copy)
        return f
    numba = self_contained_numba()
    if numba is None:
        return f
    return numba.njit(cache=True, _nrt=False, error_model="numpy", inline=inline)(f)


def _inlined(f):
    """:func:`_compiled` with numba inlining ``f`` into its callers (the same operations in the
    same order: bit-identical results; used for small functions on the fine-point path and
    functions with one call site)."""
    return _compiled(f, inline="always")


# the continuation's acceptance tests and limits (written once in continuation.py)
_corrector_left_branch = _compiled(rules.corrector_left_branch)
_fine_point_left_branch = _compiled(rules.fine_point_left_branch)
_det_sign_flipped = _compiled(rules.det_sign_flipped)
_det_sign_left_branch = _compiled(rules.det_sign_left_branch)
_hermite_weights = _compiled(rules.hermite_weights)
_predictor_step_limit = _compiled(rules.predictor_step_limit)


# must equal loop_closure.Status (checked by tests/test_kinematics_fast.py)
CONVERGED, MAX_ITER, NO_ASSEMBLY, BRANCH_JUMP = 0, 1, 2, 3

_ILL = 1e-8  # conditioning ratio below which the LU / inverse step gives way to the SVD step
_CUT = 1e-13  # singular values below _CUT * largest are dropped (as loop_closure does)
_ACCEPT = 1.0 - 1e-12  # corrector steps must lower the error by this factor (as loop_closure's)

# --- layout --------------------------------------------------------------------------------------
(H_NQ, H_NL, H_NS, H_NP, H_NA, H_MAXD,  # sizes: variables, loops, tree steps, passive, actuated
 O_STEPI, O_LOOPI, O_VROT, O_PASSIVE, O_ACT,  # offsets into mi
 O_STEPF, O_LOOPF, O_VAX, O_CA, O_CB, O_SCALE,  # offsets into mf
 W_POSE, W_AXO, W_CQ, W_SQ, W_QTRIG, W_PAB, W_Q, W_R, W_J,  # offsets into wf ...
 W_JP, W_LU, W_LU0, W_AW, W_V, W_SV, W_RHS, W_DX, W_INFO0, W_AC, W_QP, W_STA, W_AS, W_HERM, W_DQ,
 W_PRA, W_PRQ, W_SPA, W_SPQ,  # the secant predictor's earlier point: current, and per bisection level
 I_PIV, I_PIV0, I_STD,  # offsets into wi
 H_ZERO,  # always 0: see _rt
 H_NC, H_LD, H_KIND, H_SHAPE,  # constraint rows, rows per loop (3, 6), model kind, J_p shape
 W_JREF, W_JREF2,  # J_p at the reference point of the det checks of a tall J_p (segment; step)
 H_SIZE) = range(56)

# model kinds (H_KIND): planar tree in SE(2) (x, y, c, s), or general (R, p) poses
PLANAR, SPATIAL = 0, 1
# shapes of J_p (n_c x n_p, H_SHAPE): square, tall (n_c > n_p), wide (n_c < n_p)
SQUARE, TALL, WIDE = 0, 1, 2

# (q, r, J) slots: results 1 and 2, corrector trial, continuation state, last converged coarse
# point, scratch (_continue's failed attempt at its end point; _finish's failed point)
SL_1, SL_2, SL_T, SL_C, SL_OK, SL_X = range(6)
N_SLOTS = 6


def pack(M, max_depth: int = rules.MAX_DEPTH):
    """(mi, mf, n_wf, n_wi) for the model tuple M (plain Python). The kind of model is read
    from its translation axes: (n_q, 2) planar, (n_q, 3) spatial (see the module docstring)."""
    stepi, stepf, loopi, loopf, vrot, vax, cA, cB, passive, act, scale = M
    n_q, n_l, n_s, n_p, n_a = len(vrot), len(loopi), len(stepi), len(passive), len(act)
    n_c = len(scale)
    kind = SPATIAL if np.shape(vax)[-1] == 3 else PLANAR
    head = np.zeros(H_SIZE, dtype=np.int64)
    head[[H_NQ, H_NL, H_NS, H_NP, H_NA, H_MAXD]] = (n_q, n_l, n_s, n_p, n_a, max_depth)
    head[[H_NC, H_LD, H_KIND]] = (n_c, n_c // n_l if n_l else 3, kind)
    head[H_SHAPE] = SQUARE if n_c == n_p else (TALL if n_c > n_p else WIDE)
    big = max(n_c, n_p)

    def place(slots, sizes, start):
        for slot, size in zip(slots, sizes, strict=True):
            head[slot] = start
            start += int(size)
        return start

    ints = [stepi, loopi, vrot, passive, act]
    place([O_STEPI, O_LOOPI, O_VROT, O_PASSIVE, O_ACT], [a.size for a in ints], H_SIZE)
    floats = [stepf, loopf, vax, cA, cB, scale]
    place([O_STEPF, O_LOOPF, O_VAX, O_CA, O_CB, O_SCALE], [a.size for a in floats], 0)
    n_wf = place([W_POSE, W_AXO, W_CQ, W_SQ, W_QTRIG, W_PAB, W_Q, W_R, W_J,
                  W_JP, W_LU, W_LU0, W_AW, W_V, W_SV, W_RHS, W_DX, W_INFO0, W_AC, W_QP, W_STA, W_AS, W_HERM, W_DQ,
                  W_PRA, W_PRQ, W_SPA, W_SPQ, W_JREF, W_JREF2],
                 [12 * (n_s + 3), 12 * n_q, n_q, n_q, n_q, 18 * n_l, N_SLOTS * n_q, N_SLOTS * n_c,
                  N_SLOTS * n_c * n_q, n_c * n_p, max(n_p * n_p, 9), n_p * n_p, big * big, big * big, big, n_c, n_p,
                  2, n_a, n_q, (max_depth + 2) * n_a, n_a, 5 * n_q, n_a, n_a, n_q, (max_depth + 2) * n_a,
                  (max_depth + 2) * n_q, n_c * n_p, n_c * n_p], 0)
    n_wi = place([I_PIV, I_PIV0, I_STD], [n_p, n_p, max_depth + 2], 0)
    mi = np.concatenate([head] + [np.asarray(a, dtype=np.int64).ravel() for a in ints])
    mf = np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in floats])
    return mi, mf, n_wf, n_wi


def workspace(n_wf: int, n_wi: int):
    """(wf, wi) scratch arrays for :func:`sweep`."""
    return np.zeros(n_wf), np.zeros(n_wi, dtype=np.int64)


# --- slots -------------------------------------------------------------------------------------
@_compiled
def _rt(mi, c):
    """The constant c as a run-time value. numba compiles a separate copy of a function for
    every literal argument it is called with (slot numbers, True / False); passing run-time
    values instead keeps one copy of each big function (compile time 25 s -> a few s)."""
    return mi[H_ZERO] + c


@_compiled
def _qo(mi, s):
    return mi[W_Q] + s * mi[H_NQ]


@_compiled
def _ro(mi, s):
    return mi[W_R] + s * mi[H_NC]


@_compiled
def _jo(mi, s):
    return mi[W_J] + s * mi[H_NC] * mi[H_NQ]


@_compiled
def _copy_slot(mi, wf, dst, src):
    """(q, r, J) of slot src -> slot dst."""
    n_q, n_c = mi[H_NQ], mi[H_NC]
    qd, qs, rd, rs, jd, js = _qo(mi, dst), _qo(mi, src), _ro(mi, dst), _ro(mi, src), _jo(mi, dst), _jo(mi, src)
    for k in range(n_q):
        wf[qd + k] = wf[qs + k]
    for k in range(n_c):
        wf[rd + k] = wf[rs + k]
    for k in range(n_c * n_q):
        wf[jd + k] = wf[js + k]


@_compiled
def _set_q(mi, wf, s, q):
    """q slot s <- q (an array)."""
    o = _qo(mi, s)
    for k in range(mi[H_NQ]):
        wf[o + k] = q[k]


# --- planar transforms (x, y, c, s) --------------------------------------------------------------
@_compiled
def _compose(x1, y1, c1, s1, x2, y2, c2, s2):
    return x1 + c1 * x2 - s1 * y2, y1 + s1 * x2 + c1 * y2, c1 * c2 - s1 * s2, s1 * c2 + c1 * s2


@_compiled
def _motion(x, y, c, s, k, q, rot, mf, wf, cq, sq, vax, sign):
    """(x, y, c, s) @ E_k(sign * q) with cos / sin of rotations from the trig cache at offsets
    cq, sq of wf and translation axes at offset vax of mf."""
    if rot:  # rotation about the frame's origin: x, y unchanged
        ck, sk = wf[cq + k], sign * wf[sq + k]
        return x, y, c * ck - s * sk, s * ck + c * sk
    d = sign * q
    return _compose(x, y, c, s, d * mf[vax + 2 * k], d * mf[vax + 2 * k + 1], 1.0, 0.0)


@_compiled
def _angle(y, x):
    """atan2(y, x); the series of atan(y / x) for the small angles of nearly closed loops
    (|y / x| < 0.01: truncation t^9 / 9, below 1e-17 relative)."""
    if x > 0.0 and abs(y) < 0.01 * x:
        t = y / x
        t2 = t * t
        return t * (1.0 - t2 * (1.0 / 3.0 - t2 * (0.2 - t2 / 7.0)))
    return math.atan2(y, x)


# --- general (spatial) poses: R row-major (9) then p (3), 12 floats --------------------------------
@_compiled
def _compose_const(wf, a, mf, b, out):
    """wf[out:out + 12] <- pose wf[a] @ constant pose mf[b] (out may equal a)."""
    for i in range(3):
        r0, r1, r2 = wf[a + 3 * i], wf[a + 3 * i + 1], wf[a + 3 * i + 2]
        for j in range(3):
            wf[out + 3 * i + j] = r0 * mf[b + j] + r1 * mf[b + 3 + j] + r2 * mf[b + 6 + j]
        wf[out + 9 + i] = r0 * mf[b + 9] + r1 * mf[b + 10] + r2 * mf[b + 11] + wf[a + 9 + i]


@_compiled
def _move(wf, t, rot, ax, ay, az, c, s, d):
    """wf[t] <- wf[t] @ E: the rotation with cosine c and sine s about the unit axis (ax, ay,
    az) (Rodrigues: ``c I + s K + (1 - c) a a^T``), or the translation by d along it."""
    if rot:
        t1 = 1.0 - c
        e00, e01, e02 = c + t1 * ax * ax, t1 * ax * ay - s * az, t1 * ax * az + s * ay
        e10, e11, e12 = t1 * ay * ax + s * az, c + t1 * ay * ay, t1 * ay * az - s * ax
        e20, e21, e22 = t1 * az * ax - s * ay, t1 * az * ay + s * ax, c + t1 * az * az
        for i in range(3):
            r0, r1, r2 = wf[t + 3 * i], wf[t + 3 * i + 1], wf[t + 3 * i + 2]
            wf[t + 3 * i] = r0 * e00 + r1 * e10 + r2 * e20
            wf[t + 3 * i + 1] = r0 * e01 + r1 * e11 + r2 * e21
            wf[t + 3 * i + 2] = r0 * e02 + r1 * e12 + r2 * e22
    else:
        for i in range(3):
            wf[t + 9 + i] += d * (wf[t + 3 * i] * ax + wf[t + 3 * i + 1] * ay + wf[t + 3 * i + 2] * az)


@_compiled
def _record_axis(wf, t, out, ax, ay, az):
    """The variable's axis in the world from the frame wf[t] before its motion: direction R a
    at out, origin p at out + 3."""
    for i in range(3):
        wf[out + i] = wf[t + 3 * i] * ax + wf[t + 3 * i + 1] * ay + wf[t + 3 * i + 2] * az
        wf[out + 3 + i] = wf[t + 9 + i]


@_compiled
def _series_or(t, exact, c0, c1, c2, c3, c4):
    """``exact`` for t >= 0.1, else the series c0 + c1 t^2 + ... + c4 t^8 (transforms._coef's
    rule: truncation below 1e-17 relative)."""
    if t >= 0.1:
        return exact
    t2 = t * t
    return c0 + t2 * (c1 + t2 * (c2 + t2 * (c3 + t2 * c4)))


@_compiled
def _log_so3(r00, r01, r02, r10, r11, r12, r20, r21, r22):
    """Rotation vector of R (transforms.log_so3, the same branches): angle atan2(|vee R|, c),
    ``vee(R) angle / sin(angle)`` for c >= 0, else the axis from the symmetric part's column
    with the largest diagonal, its sign from vee(R)."""
    sx, sy, sz = 0.5 * (r21 - r12), 0.5 * (r02 - r20), 0.5 * (r10 - r01)
    c = 0.5 * (r00 + r11 + r22 - 1.0)
    th = math.atan2(math.sqrt(sx * sx + sy * sy + sz * sz), c)
    if not c < 0.0:
        sinc = _series_or(th, math.sin(th) / th if th > 0.0 else 1.0, 1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880)
        return sx / sinc, sy / sinc, sz / sinc
    b00, b11, b22 = r00 - c, r11 - c, r22 - c
    if b00 >= b11 and b00 >= b22:
        x, y, z = b00, 0.5 * (r10 + r01), 0.5 * (r20 + r02)
    elif b11 >= b22:
        x, y, z = 0.5 * (r01 + r10), b11, 0.5 * (r21 + r12)
    else:
        x, y, z = 0.5 * (r02 + r20), 0.5 * (r12 + r21), b22
    n = math.sqrt(x * x + y * y + z * z)
    if n > 0.0:
        x, y, z = x / n, y / n, z / n
    f = -th if x * sx + y * sy + z * sz < 0.0 else th
    return f * x, f * y, f * z


@_compiled
def _eval_spatial(mi, mf, wf, sl, want_J):
    """:func:`_eval` for the general model (poses (R, p); loop_closure's residual rows: planar
    ``(x, y, angle)`` or spatial ``(p_B - p_A, log(R_A^T R_B))`` and Jacobian rows, the rotation
    rows ``Jr^-1(phi) R_B^T (w_B - w_A)``)."""
    n_q, n_l, n_s, ld = mi[H_NQ], mi[H_NL], mi[H_NS], mi[H_LD]
    qo, ro, jo = _qo(mi, sl), _ro(mi, sl), _jo(mi, sl)
    o_vrot, o_vax, cq, sq, qtrig = mi[O_VROT], mi[O_VAX], mi[W_CQ], mi[W_SQ], mi[W_QTRIG]
    pose, axo, pab = mi[W_POSE], mi[W_AXO], mi[W_PAB]
    for k in range(n_q):  # cos q, sin q of the rotations (the small-change rotation of _eval_planar)
        if mi[o_vrot + k] == 1:
            q = wf[qo + k]
            d = q - wf[qtrig + k]
            if d != 0.0:
                if abs(d) < 1e-3:
                    d2 = d * d
                    cd = 1.0 - d2 * (0.5 - d2 / 24.0)
                    sd = d * (1.0 - d2 * (1.0 / 6.0 - d2 / 120.0))
                    c0, s0 = wf[cq + k], wf[sq + k]
                    wf[cq + k] = c0 * cd - s0 * sd
                    wf[sq + k] = s0 * cd + c0 * sd
                else:
                    wf[cq + k] = math.cos(q)
                    wf[sq + k] = math.sin(q)
                wf[qtrig + k] = q
    for m in range(12):
        wf[pose + m] = 1.0 if m == 0 or m == 4 or m == 8 else 0.0
    t, t2 = pose + 12 * (n_s + 1), pose + 12 * (n_s + 2)  # scratch poses
    o_stepi, o_stepf, o_loopi, o_loopf = mi[O_STEPI], mi[O_STEPF], mi[O_LOOPI], mi[O_LOOPF]
    for i in range(n_s):
        oi, of = o_stepi + 5 * i, o_stepf + 24 * i
        v, u, s0, n, fwd = mi[oi], mi[oi + 1], mi[oi + 2], mi[oi + 3], mi[oi + 4]
        _compose_const(wf, pose + 12 * u, mf, of, t)
        if fwd == 1:
            for k in range(s0, s0 + n):
                a = o_vax + 3 * k
                _record_axis(wf, t, axo + 6 * k, mf[a], mf[a + 1], mf[a + 2])
                _move(wf, t, mi[o_vrot + k] == 1, mf[a], mf[a + 1], mf[a + 2], wf[cq + k], wf[sq + k], wf[qo + k])
        else:  # the inverse motion; the axis frames start from the joint frame on this link
            for k in range(s0 + n - 1, s0 - 1, -1):
                a = o_vax + 3 * k
                _move(wf, t, mi[o_vrot + k] == 1, mf[a], mf[a + 1], mf[a + 2], wf[cq + k], -wf[sq + k], -wf[qo + k])
            for m in range(12):
                wf[t2 + m] = wf[t + m]
            for k in range(s0, s0 + n):
                a = o_vax + 3 * k
                _record_axis(wf, t2, axo + 6 * k, mf[a], mf[a + 1], mf[a + 2])
                _move(wf, t2, mi[o_vrot + k] == 1, mf[a], mf[a + 1], mf[a + 2], wf[cq + k], wf[sq + k], wf[qo + k])
        _compose_const(wf, t, mf, of + 12, pose + 12 * v)
    err = 0.0
    o_scale = mi[O_SCALE]
    for li in range(n_l):
        oi, of = o_loopi + 4 * li, o_loopf + 24 * li
        par, chi, s0, n = mi[oi], mi[oi + 1], mi[oi + 2], mi[oi + 3]
        _compose_const(wf, pose + 12 * par, mf, of, t)  # frame A
        for k in range(s0, s0 + n):
            a = o_vax + 3 * k
            _record_axis(wf, t, axo + 6 * k, mf[a], mf[a + 1], mf[a + 2])
            _move(wf, t, mi[o_vrot + k] == 1, mf[a], mf[a + 1], mf[a + 2], wf[cq + k], wf[sq + k], wf[qo + k])
        _compose_const(wf, pose + 12 * chi, mf, of + 12, t2)  # frame B
        pl = pab + 18 * li
        for m in range(3):
            wf[pl + m] = wf[t + 9 + m]
            wf[pl + 3 + m] = wf[t2 + 9 + m]
        r00 = wf[t] * wf[t2] + wf[t + 3] * wf[t2 + 3] + wf[t + 6] * wf[t2 + 6]  # R_A^T R_B
        r01 = wf[t] * wf[t2 + 1] + wf[t + 3] * wf[t2 + 4] + wf[t + 6] * wf[t2 + 7]
        r02 = wf[t] * wf[t2 + 2] + wf[t + 3] * wf[t2 + 5] + wf[t + 6] * wf[t2 + 8]
        r10 = wf[t + 1] * wf[t2] + wf[t + 4] * wf[t2 + 3] + wf[t + 7] * wf[t2 + 6]
        r11 = wf[t + 1] * wf[t2 + 1] + wf[t + 4] * wf[t2 + 4] + wf[t + 7] * wf[t2 + 7]
        r12 = wf[t + 1] * wf[t2 + 2] + wf[t + 4] * wf[t2 + 5] + wf[t + 7] * wf[t2 + 8]
        r20 = wf[t + 2] * wf[t2] + wf[t + 5] * wf[t2 + 3] + wf[t + 8] * wf[t2 + 6]
        r21 = wf[t + 2] * wf[t2 + 1] + wf[t + 5] * wf[t2 + 4] + wf[t + 8] * wf[t2 + 7]
        r22 = wf[t + 2] * wf[t2 + 2] + wf[t + 5] * wf[t2 + 5] + wf[t + 8] * wf[t2 + 8]
        r = ro + ld * li
        for m in range(3):
            wf[r + m] = wf[t2 + 9 + m] - wf[t + 9 + m]
        if ld == 3:
            wf[r + 2] = math.atan2(r10, r00)
        else:
            px, py, pz = _log_so3(r00, r01, r02, r10, r11, r12, r20, r21, r22)
            wf[r + 3], wf[r + 4], wf[r + 5] = px, py, pz
            # Qm = Jr^-1(phi) R_B^T, Jr^-1 = I + K / 2 + coef K^2 (transforms.right_jacobian_inv_so3)
            th = math.sqrt(px * px + py * py + pz * pz)
            exact = (1.0 - 0.5 * th / math.tan(0.5 * th)) / (th * th) if th >= 0.1 else 0.0
            cf = _series_or(th, exact, 1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160)
            k00, k11, k22 = -(py * py + pz * pz), -(px * px + pz * pz), -(px * px + py * py)  # K^2
            k01, k02, k12 = px * py, px * pz, py * pz
            j00, j01, j02 = 1.0 + cf * k00, -0.5 * pz + cf * k01, 0.5 * py + cf * k02
            j10, j11, j12 = 0.5 * pz + cf * k01, 1.0 + cf * k11, -0.5 * px + cf * k12
            j20, j21, j22 = -0.5 * py + cf * k02, 0.5 * px + cf * k12, 1.0 + cf * k22
            for j in range(3):  # column j of R_B^T is row j of R_B
                b0, b1, b2 = wf[t2 + 3 * j], wf[t2 + 3 * j + 1], wf[t2 + 3 * j + 2]
                wf[pl + 6 + j] = j00 * b0 + j01 * b1 + j02 * b2
                wf[pl + 9 + j] = j10 * b0 + j11 * b1 + j12 * b2
                wf[pl + 12 + j] = j20 * b0 + j21 * b1 + j22 * b2
        for m in range(ld):
            e = abs(wf[r + m] * mf[o_scale + ld * li + m])
            if e != e:
                err = e
            elif e > err:
                err = e
    if want_J:  # point velocities of A's and B's origins and rotation rates per unit rate of each variable
        o_ca, o_cb = mi[O_CA], mi[O_CB]
        for li in range(n_l):
            pl = pab + 18 * li
            j0 = jo + ld * li * n_q
            for k in range(n_q):
                b, a = mf[o_cb + li * n_q + k], mf[o_ca + li * n_q + k]
                ak = axo + 6 * k
                wx, wy, wz = wf[ak], wf[ak + 1], wf[ak + 2]
                if b == 0.0 and a == 0.0:
                    vx, vy, vz, dx, dy, dz = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
                elif mi[o_vrot + k] == 1:  # v + w x p = w x (p - o)
                    ox, oy, oz = wf[ak + 3], wf[ak + 4], wf[ak + 5]
                    bx, by, bz = wf[pl + 3] - ox, wf[pl + 4] - oy, wf[pl + 5] - oz
                    ax_, ay_, az_ = wf[pl] - ox, wf[pl + 1] - oy, wf[pl + 2] - oz
                    vx = b * (wy * bz - wz * by) - a * (wy * az_ - wz * ay_)
                    vy = b * (wz * bx - wx * bz) - a * (wz * ax_ - wx * az_)
                    vz = b * (wx * by - wy * bx) - a * (wx * ay_ - wy * ax_)
                    dx, dy, dz = (b - a) * wx, (b - a) * wy, (b - a) * wz
                else:
                    vx, vy, vz = (b - a) * wx, (b - a) * wy, (b - a) * wz
                    dx, dy, dz = 0.0, 0.0, 0.0
                wf[j0 + k] = vx
                wf[j0 + n_q + k] = vy
                if ld == 3:
                    wf[j0 + 2 * n_q + k] = dz
                else:
                    wf[j0 + 2 * n_q + k] = vz
                    for m in range(3):
                        wf[j0 + (3 + m) * n_q + k] = (wf[pl + 6 + 3 * m] * dx + wf[pl + 7 + 3 * m] * dy
                                                      + wf[pl + 8 + 3 * m] * dz)
    return err


# --- residual and Jacobian -----------------------------------------------------------------------
@_compiled
def _eval(mi, mf, wf, sl, want_J):
    """Residual and Jacobian (n_c x n_q) at the q of slot sl, into that slot; returns the
    weighted max-norm error (NaN if any residual is NaN)."""
    if mi[H_KIND] == SPATIAL:
        return _eval_spatial(mi, mf, wf, sl, want_J)
    return _eval_planar(mi, mf, wf, sl, want_J)


@_compiled
def _eval_planar(mi, mf, wf, sl, want_J):
    """:func:`_eval` for the planar model (poses (x, y, c, s))."""
    n_q, n_l, n_s = mi[H_NQ], mi[H_NL], mi[H_NS]
    qo, ro, jo = _qo(mi, sl), _ro(mi, sl), _jo(mi, sl)
    o_vrot, o_vax, cq, sq, qtrig = mi[O_VROT], mi[O_VAX], mi[W_CQ], mi[W_SQ], mi[W_QTRIG]
    pose, axo, pab = mi[W_POSE], mi[W_AXO], mi[W_PAB]
    # cos q and sign * sin q of the rotation variables; a value whose variable moved by less than
    # 1e-3 since it was computed (the corrector's small steps) is rotated by the change with its
    # Taylor series (truncation < 1e-20) instead of calling cos and sin
    for k in range(n_q):
        if mi[o_vrot + k] == 1:
            q = wf[qo + k]
            d = q - wf[qtrig + k]
            if d != 0.0:
                g = mf[o_vax + 2 * k]
                if abs(d) < 1e-3:
                    d2 = d * d
                    cd = 1.0 - d2 * (0.5 - d2 / 24.0)
                    sd = d * (1.0 - d2 * (1.0 / 6.0 - d2 / 120.0))
                    c0, s0 = wf[cq + k], wf[sq + k]
                    wf[cq + k] = c0 * cd - g * s0 * sd
                    wf[sq + k] = s0 * cd + g * c0 * sd
                else:
                    wf[cq + k] = math.cos(q)
                    wf[sq + k] = g * math.sin(q)
                wf[qtrig + k] = q
    # link poses (x, y, c, s) down the tree; axis frames before each variable
    wf[pose], wf[pose + 1], wf[pose + 2], wf[pose + 3] = 0.0, 0.0, 1.0, 0.0
    o_stepi, o_stepf, o_loopi, o_loopf = mi[O_STEPI], mi[O_STEPF], mi[O_LOOPI], mi[O_LOOPF]
    for i in range(n_s):
        oi, of = o_stepi + 5 * i, o_stepf + 8 * i
        v, u, s0, n, fwd = mi[oi], mi[oi + 1], mi[oi + 2], mi[oi + 3], mi[oi + 4]
        pu = pose + 4 * u
        x, y, c, s = _compose(wf[pu], wf[pu + 1], wf[pu + 2], wf[pu + 3], mf[of], mf[of + 1], mf[of + 2], mf[of + 3])
        if fwd == 1:
            for k in range(s0, s0 + n):
                ak = axo + 4 * k
                wf[ak], wf[ak + 1], wf[ak + 2], wf[ak + 3] = x, y, c, s
                x, y, c, s = _motion(x, y, c, s, k, wf[qo + k], mi[o_vrot + k] == 1, mf, wf, cq, sq, o_vax, 1.0)
        else:  # the inverse motion; the axis frames start from the joint frame on this link
            for k in range(s0 + n - 1, s0 - 1, -1):
                x, y, c, s = _motion(x, y, c, s, k, wf[qo + k], mi[o_vrot + k] == 1, mf, wf, cq, sq, o_vax, -1.0)
            xa, ya, ca, sa = x, y, c, s
            for k in range(s0, s0 + n):
                ak = axo + 4 * k
                wf[ak], wf[ak + 1], wf[ak + 2], wf[ak + 3] = xa, ya, ca, sa
                xa, ya, ca, sa = _motion(xa, ya, ca, sa, k, wf[qo + k], mi[o_vrot + k] == 1, mf, wf, cq, sq, o_vax, 1.0)
        pv = pose + 4 * v
        wf[pv], wf[pv + 1], wf[pv + 2], wf[pv + 3] = _compose(x, y, c, s, mf[of + 4], mf[of + 5], mf[of + 6],
                                                              mf[of + 7])
    # loop frames A (parent side, through the loop joint's motion) and B (child side)
    err = 0.0
    o_scale = mi[O_SCALE]
    for li in range(n_l):
        oi, of = o_loopi + 4 * li, o_loopf + 8 * li
        par, chi, s0, n = mi[oi], mi[oi + 1], mi[oi + 2], mi[oi + 3]
        pp, pc = pose + 4 * par, pose + 4 * chi
        x, y, c, s = _compose(wf[pp], wf[pp + 1], wf[pp + 2], wf[pp + 3], mf[of], mf[of + 1], mf[of + 2], mf[of + 3])
        for k in range(s0, s0 + n):
            ak = axo + 4 * k
            wf[ak], wf[ak + 1], wf[ak + 2], wf[ak + 3] = x, y, c, s
            x, y, c, s = _motion(x, y, c, s, k, wf[qo + k], mi[o_vrot + k] == 1, mf, wf, cq, sq, o_vax, 1.0)
        xb, yb, cb, sb = _compose(wf[pc], wf[pc + 1], wf[pc + 2], wf[pc + 3], mf[of + 4], mf[of + 5], mf[of + 6],
                                  mf[of + 7])
        pl = pab + 4 * li
        wf[pl], wf[pl + 1], wf[pl + 2], wf[pl + 3] = x, y, xb, yb
        r = ro + 3 * li
        wf[r] = xb - x
        wf[r + 1] = yb - y
        wf[r + 2] = _angle(c * sb - s * cb, c * cb + s * sb)
        for m in range(3):
            e = abs(wf[r + m] * mf[o_scale + 3 * li + m])
            if e != e:
                err = e
            elif e > err:
                err = e
    if want_J:  # velocities of B's and A's origins per unit rate of each variable, and dw
        o_ca, o_cb = mi[O_CA], mi[O_CB]
        for li in range(n_l):
            pl = pab + 4 * li
            xa, ya, xb, yb = wf[pl], wf[pl + 1], wf[pl + 2], wf[pl + 3]
            j0 = jo + 3 * li * n_q
            for k in range(n_q):
                b, a = mf[o_cb + li * n_q + k], mf[o_ca + li * n_q + k]
                g = mf[o_vax + 2 * k]
                ak = axo + 4 * k
                if mi[o_vrot + k] == 1:
                    ox, oy = wf[ak], wf[ak + 1]
                    wf[j0 + k] = g * (a * (ya - oy) - b * (yb - oy))
                    wf[j0 + n_q + k] = g * (b * (xb - ox) - a * (xa - ox))
                    wf[j0 + 2 * n_q + k] = (b - a) * g
                else:
                    c, s, h = wf[ak + 2], wf[ak + 3], mf[o_vax + 2 * k + 1]
                    wf[j0 + k] = (b - a) * (c * g - s * h)
                    wf[j0 + n_q + k] = (b - a) * (s * g + c * h)
                    wf[j0 + 2 * n_q + k] = 0.0
    return err


@_compiled
def evaluate(mi, mf, wf, q, r, J):
    """Residual r (n_c,) and Jacobian J (n_c, n_q) of the packed model at q (n_q,) SI, in
    loop_closure.constraints' units and row order (m, rad); returns the weighted max-norm error.
    (For tests and callers outside the sweep; wf from :func:`workspace`.)"""
    n_q, n_c = mi[H_NQ], mi[H_NC]
    sl = _rt(mi, SL_1)
    for k in range(n_q):
        wf[mi[W_QTRIG] + k] = np.nan  # no cached cos / sin
    _set_q(mi, wf, sl, q)
    err = _eval(mi, mf, wf, sl, _rt(mi, 1) == 1)
    ro, jo = _ro(mi, sl), _jo(mi, sl)
    for i in range(n_c):
        r[i] = wf[ro + i]
        for k in range(n_q):
            J[i, k] = wf[jo + i * n_q + k]
    return err


@_compiled
def solve_point(mi, mf, wf, wi, a, guess, tol, max_iter, q_out):
    """One configuration: the corrector (``_solve``: loop_closure.solve_configuration's
    iteration for one point) at inputs a (n_a,) from guess (n_q,); q_out (n_q,) <- its last
    accepted iterate; returns the status. (sweep.py's first point: Newton from the estimate at
    its own inputs, before seeded restarts in numpy when that fails.)"""
    n_q = mi[H_NQ]
    for k in range(n_q):
        wf[mi[W_QTRIG] + k] = np.nan  # no cached cos / sin
    sl = _rt(mi, SL_1)
    st = _solve(mi, mf, wf, wi, a, guess, tol, max_iter, sl)
    qo = _qo(mi, sl)
    for k in range(n_q):
        q_out[k] = wf[qo + k]
    return st


@_compiled
def _input_rates_in_slot(mi, wf, wi, sl, col, out):
    """out (n_q,) <- dq/da for actuated variable number ``col`` at the state (q, J) of slot sl:
    loop_closure.tangent_map's column, the passive rates the least-squares / minimum-norm
    solution of J_p x = -J[:, actuated col] (:func:`_solve_passive`, undamped)."""
    n_q, n_c, n_p = mi[H_NQ], mi[H_NC], mi[H_NP]
    o_pas = mi[O_PASSIVE]
    act = mi[mi[O_ACT] + col]
    jo, rhs, dx, Jp = _jo(mi, sl), mi[W_RHS], mi[W_DX], mi[W_JP]
    for i in range(n_c):
        wf[rhs + i] = -wf[jo + i * n_q + act]
    _passive_block(mi, wf, sl, Jp)
    _solve_passive(mi, wf, wi, Jp, rhs, 0.0, dx)
    for k in range(n_q):
        out[k] = 0.0
    out[act] = 1.0
    for m in range(n_p):
        out[mi[o_pas + m]] = wf[dx + m]


@_compiled
def input_rates(mi, mf, wf, wi, q, col, out):
    """out (n_q,) <- dq/da at the configuration q (n_q,) SI for actuated variable number
    ``col`` (loop_closure.tangent_map's column; linkcli.core.extremes' root-finding)."""
    n_q = mi[H_NQ]
    for k in range(n_q):
        wf[mi[W_QTRIG] + k] = np.nan  # no cached cos / sin
    sl = _rt(mi, SL_1)
    _set_q(mi, wf, sl, q)
    _eval(mi, mf, wf, sl, _rt(mi, 1) == 1)
    _input_rates_in_slot(mi, wf, wi, sl, col, out)


@_compiled
def solve_between(mi, mf, wf, wi, a, q0, q1, m0, m1, t, tol, max_iter, col, q_out, rate_out):
    """A configuration between two solved points of a one-input path (linkcli.core.extremes'
    root-finding): at inputs a (n_a,), Newton (:func:`_solve`) from the cubic Hermite guess at
    fraction t of the segment (q0, q1 (n_q,) its ends, m0, m1 (n_q,) their tangents dq/da x
    the segment's input change; continuation.hermite_weights, as the sweep's points between
    coarse points); q_out <- the result, rate_out <- dq/da there for actuated variable number
    ``col`` (:func:`input_rates`). Returns the status; BRANCH_JUMP when the result left the
    guessed branch (continuation.fine_point_left_branch against the segment's change)."""
    n_q = mi[H_NQ]
    h00, h10, h01, h11 = _hermite_weights(t)
    guess = q_out  # (q_out holds the guess until the solve writes the result)
    span = 0.0
    for k in range(n_q):
        guess[k] = h00 * q0[k] + h10 * m0[k] + h01 * q1[k] + h11 * m1[k]
        span = max(span, abs(q1[k] - q0[k]))
    for m in range(mi[H_NA]):
        guess[mi[mi[O_ACT] + m]] = a[m]
    for k in range(n_q):
        wf[mi[W_QTRIG] + k] = np.nan
    sl = _rt(mi, SL_1)
    st = _solve(mi, mf, wf, wi, a, guess, tol, max_iter, sl)
    qo = _qo(mi, sl)
    dev = 0.0
    for k in range(n_q):
        dev = max(dev, abs(wf[qo + k] - guess[k]))
        q_out[k] = wf[qo + k]
    _input_rates_in_slot(mi, wf, wi, sl, col, rate_out)
    if st == CONVERGED and _fine_point_left_branch(dev, span):
        return BRANCH_JUMP
    return st


@_compiled
def stationary_between(mi, mf, wf, wi, a, col, var, a0, a1, q0, q1, m0, m1, f0, f1, xtol, tol, max_iter, q_out,
                       rate_out):
    """The input between a0 and a1 (actuated variable number ``col``) where the rate dq[var]/da
    is zero, the rates at the segment's ends f0, f1 being of opposite signs: Brent's zeroin
    (R. P. Brent 1973, netlib's zeroin.f: inverse quadratic interpolation, secant and bisection;
    the algorithm of scipy.optimize.brentq), each evaluation :func:`solve_between`. a (n_a,)
    the segment's inputs (a[col] is set to the root); q_out, rate_out <- the configuration and
    rates there. Returns the status of the last solve (not CONVERGED: a solve failed or left
    the branch, the root is not found). (Compiled: the root-finding in Python with scipy's
    brentq cost ~0.5 ms of call overhead per figure, as much as a study variant's whole sweep.)"""
    h = a1 - a0
    eps = 2.220446049250313e-16
    xa, xb, fa, fb = a0, a1, f0, f1
    xc, fc, d, e = xa, fa, xb - xa, xb - xa
    for _ in range(200):
        if fb * fc > 0.0:
            xc, fc, d, e = xa, fa, xb - xa, xb - xa
        if abs(fc) < abs(fb):
            xa, xb, xc = xb, xc, xb
            fa, fb, fc = fb, fc, fb
        tol1 = 2.0 * eps * abs(xb) + 0.5 * xtol
        xm = 0.5 * (xc - xb)
        if abs(xm) <= tol1 or fb == 0.0:
            break
        if abs(e) >= tol1 and abs(fa) > abs(fb):
            sr = fb / fa
            if xa == xc:
                p = 2.0 * xm * sr
                qq = 1.0 - sr
            else:
                qq = fa / fc
                r = fb / fc
                p = sr * (2.0 * xm * qq * (qq - r) - (xb - xa) * (r - 1.0))
                qq = (qq - 1.0) * (r - 1.0) * (sr - 1.0)
            if p > 0.0:
                qq = -qq
            p = abs(p)
            if 2.0 * p < 3.0 * xm * qq - abs(tol1 * qq) and p < abs(0.5 * e * qq):
                e = d
                d = p / qq
            else:
                d = xm
                e = d
        else:
            d = xm
            e = d
        xa, fa = xb, fb
        if abs(d) > tol1:
            xb += d
        else:
            xb += tol1 if xm > 0.0 else -tol1
        a[col] = xb
        st = solve_between(mi, mf, wf, wi, a, q0, q1, m0, m1, (xb - a0) / h, tol, max_iter, col, q_out, rate_out)
        if st != CONVERGED:
            return st
        fb = rate_out[var]
    a[col] = xb
    return solve_between(mi, mf, wf, wi, a, q0, q1, m0, m1, (xb - a0) / h, tol, max_iter, col, q_out, rate_out)


# --- small dense linear algebra on row-major blocks of wf ----------------------------------------
@_compiled
def _inv3(wf, A, ra, ca, X):
    """X = A^-1 by the adjugate, A the 3 x 3 matrix ``wf[A + i * ra + j * ca]`` (row stride ra,
    column stride ca: a block, or columns of a Jacobian), X a row-major block. Returns
    (det A, |det A| / the product of the column norms: 1 for orthogonal columns, -> 0 as A
    becomes singular); X is untouched when det A = 0."""
    a, b, c = wf[A], wf[A + ca], wf[A + 2 * ca]
    d, e, f = wf[A + ra], wf[A + ra + ca], wf[A + ra + 2 * ca]
    g, h, k = wf[A + 2 * ra], wf[A + 2 * ra + ca], wf[A + 2 * ra + 2 * ca]
    c00, c01, c02 = e * k - f * h, f * g - d * k, d * h - e * g
    det = a * c00 + b * c01 + c * c02
    norms = math.sqrt((a * a + d * d + g * g) * (b * b + e * e + h * h) * (c * c + f * f + k * k))
    if det == 0.0 or not norms > 0.0:
        return 0.0, 0.0
    inv = 1.0 / det
    wf[X], wf[X + 3], wf[X + 6] = c00 * inv, c01 * inv, c02 * inv
    wf[X + 1], wf[X + 4], wf[X + 7] = (c * h - b * k) * inv, (a * k - c * g) * inv, (b * g - a * h) * inv
    wf[X + 2], wf[X + 5], wf[X + 8] = (b * f - c * e) * inv, (c * d - a * f) * inv, (a * e - b * d) * inv
    return det, abs(det) / norms


@_compiled
def _passive_cols3(mi, sl):
    """(offset, row stride, column stride) of J_p in the J of slot sl when the three passive
    variables are consecutive (a strided 3 x 3 view), else (-1, 0, 0)."""
    o_pas = mi[O_PASSIVE]
    p0 = mi[o_pas]
    if mi[o_pas + 1] != p0 + 1 or mi[o_pas + 2] != p0 + 2:
        return -1, 0, 0
    return _jo(mi, sl) + p0, mi[H_NQ], 1


@_inlined
def _matvec3(wf, X, b, x):
    """x = X b (3 x 3 block X, vectors at offsets b, x; x may not alias b)."""
    b0, b1, b2 = wf[b], wf[b + 1], wf[b + 2]
    wf[x] = wf[X] * b0 + wf[X + 1] * b1 + wf[X + 2] * b2
    wf[x + 1] = wf[X + 3] * b0 + wf[X + 4] * b1 + wf[X + 5] * b2
    wf[x + 2] = wf[X + 6] * b0 + wf[X + 7] * b1 + wf[X + 8] * b2


@_compiled
def _lu(wf, wi, A, piv, n):
    """In-place LU with partial pivoting of the n x n block A (pivots at wi[piv:]). Returns
    (sign of det, smallest / largest |pivot|); (0, 0) when a pivot is exactly 0."""
    sign = 1.0
    pmin, pmax = np.inf, 0.0
    for k in range(n):
        p, big = k, abs(wf[A + k * n + k])
        for i in range(k + 1, n):
            if abs(wf[A + i * n + k]) > big:
                p, big = i, abs(wf[A + i * n + k])
        wi[piv + k] = p
        if p != k:
            sign = -sign
            for m in range(n):
                wf[A + k * n + m], wf[A + p * n + m] = wf[A + p * n + m], wf[A + k * n + m]
        if not big > 0.0:  # (a NaN pivot too)
            return 0.0, 0.0
        pmin, pmax = min(pmin, big), max(pmax, big)
        akk = wf[A + k * n + k]
        if akk < 0.0:
            sign = -sign
        inv = 1.0 / akk
        for i in range(k + 1, n):
            f = wf[A + i * n + k] * inv
            wf[A + i * n + k] = f
            for m in range(k + 1, n):
                wf[A + i * n + m] -= f * wf[A + k * n + m]
    return sign, (pmin / pmax if n else 1.0)


@_compiled
def _lu_solve(wf, wi, A, piv, n, b):
    """b <- A^-1 b in place with the factors of :func:`_lu`."""
    for k in range(n):
        p = wi[piv + k]
        if p != k:
            wf[b + k], wf[b + p] = wf[b + p], wf[b + k]
    for i in range(n):
        for m in range(i):
            wf[b + i] -= wf[A + i * n + m] * wf[b + m]
    for i in range(n - 1, -1, -1):
        for m in range(i + 1, n):
            wf[b + i] -= wf[A + i * n + m] * wf[b + m]
        wf[b + i] /= wf[A + i * n + i]


@_compiled
def _svd(wf, A, V, sv, m, n, want_V):
    """One-sided Jacobi SVD of the m x n block A (m >= n; overwritten by U diag(sv)); V (optional)
    the n x n right singular vectors; sv (n,) unsorted."""
    if want_V:
        for i in range(n):
            for j in range(n):
                wf[V + i * n + j] = 1.0 if i == j else 0.0
    for _ in range(60):
        rotated = False
        for i in range(n - 1):
            for j in range(i + 1, n):
                al, be, ga = 0.0, 0.0, 0.0
                for k in range(m):
                    x, y = wf[A + k * n + i], wf[A + k * n + j]
                    al += x * x
                    be += y * y
                    ga += x * y
                if ga == 0.0 or abs(ga) <= 1e-15 * math.sqrt(al * be):
                    continue
                rotated = True
                zeta = (be - al) / (2.0 * ga)
                t = (1.0 if zeta >= 0 else -1.0) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                for k in range(m):
                    x, y = wf[A + k * n + i], wf[A + k * n + j]
                    wf[A + k * n + i], wf[A + k * n + j] = c * x - s * y, s * x + c * y
                if want_V:
                    for k in range(n):
                        x, y = wf[V + k * n + i], wf[V + k * n + j]
                        wf[V + k * n + i], wf[V + k * n + j] = c * x - s * y, s * x + c * y
        if not rotated:
            break
    for i in range(n):
        t = 0.0
        for k in range(m):
            t += wf[A + k * n + i] * wf[A + k * n + i]
        wf[sv + i] = math.sqrt(t)


@_compiled
def _svd_of(wf, A, Aw, V, sv, m, n, want_V):
    """The SVD of the m x n block A by :func:`_svd` of A (tall or square) or of A^T (wide),
    copied to Aw; returns the number of singular values (min(m, n)) in sv."""
    if m >= n:
        for i in range(m * n):
            wf[Aw + i] = wf[A + i]
        _svd(wf, Aw, V, sv, m, n, want_V)
        return n
    for i in range(m):
        for j in range(n):
            wf[Aw + j * m + i] = wf[A + i * n + j]
    _svd(wf, Aw, V, sv, n, m, want_V)
    return m


@_compiled
def _condition_of(wf, A, Aw, V, sv, m, n):
    """Condition number s_max / s_min (inf when s_min = 0) of the m x n block A, as
    loop_closure.condition_number (1 when it is empty)."""
    if m == 0 or n == 0:
        return 1.0
    k = _svd_of(wf, A, Aw, V, sv, m, n, False)
    smax, smin = 0.0, np.inf
    for i in range(k):
        smax = max(smax, wf[sv + i])
        smin = min(smin, wf[sv + i])
    return smax / smin if smin > 0.0 else np.inf


@_compiled
def _solve_passive(mi, wf, wi, A, b, damping, x):
    """x = (damped) least-squares / minimum-norm solution of A x = b for the passive partition
    (n_c x n_p block A, b (n_c,), x (n_p,)): the inverse (3 x 3) or LU when square, undamped
    and well conditioned, else the damped SVD form ``sum_i v_i sigma_i / (sigma_i^2 + d^2)
    u_i^T b`` over sigma_i > _CUT * sigma_max, as loop_closure._least_squares_step computes it
    (tall, wide and square alike)."""
    n, m = mi[H_NP], mi[H_NC]
    lu = mi[W_LU]
    if damping == 0.0 and m == n:
        if n == 3:
            det, ratio = _inv3(wf, A, 3, 1, lu)
            if det != 0.0 and ratio > _ILL:
                _matvec3(wf, lu, b, x)
                return
        else:
            for i in range(n * n):
                wf[lu + i] = wf[A + i]
            for i in range(n):
                wf[x + i] = wf[b + i]
            sign, ratio = _lu(wf, wi, lu, mi[I_PIV], n)
            if sign != 0.0 and ratio > _ILL:
                _lu_solve(wf, wi, lu, mi[I_PIV], n, x)
                return
    for i in range(n):
        wf[x + i] = 0.0
    if m == 0 or n == 0:
        return
    Aw, V, sv = mi[W_AW], mi[W_V], mi[W_SV]
    k = _svd_of(wf, A, Aw, V, sv, m, n, _rt(mi, 1) == 1)
    smax = 0.0
    for i in range(k):
        smax = max(smax, wf[sv + i])
    for i in range(k):
        si = wf[sv + i]
        if si > _CUT * smax:
            coef = 0.0
            if m >= n:  # A = U S V^T, Aw = U S (m x n), V (n x n)
                for j in range(m):
                    coef += wf[Aw + j * n + i] * wf[b + j]  # (U sigma)^T b
                coef /= si * si + damping * damping
                for j in range(n):
                    wf[x + j] += wf[V + j * n + i] * coef
            else:  # A^T = U' S V'^T: Aw = U' S (n x m), V' (m x m); x = U' S / (S^2 + d^2) V'^T b
                for j in range(m):
                    coef += wf[V + j * m + i] * wf[b + j]
                coef /= si * si + damping * damping
                for j in range(n):
                    wf[x + j] += wf[Aw + j * m + i] * coef


@_compiled
def _passive_block(mi, wf, sl, Jp):
    """Jp (n_c x n_p block) <- the passive columns of J of slot sl."""
    n_q, n_c, n_p = mi[H_NQ], mi[H_NC], mi[H_NP]
    jo, o_pas = _jo(mi, sl), mi[O_PASSIVE]
    for i in range(n_c):
        for m in range(n_p):
            wf[Jp + i * n_p + m] = wf[jo + i * n_q + mi[o_pas + m]]


# --- one configuration (solve_configuration for one point) ---------------------------------------
@_compiled
def _solve(mi, mf, wf, wi, a, guess, tol, max_iter, sl):
    """Levenberg-Marquardt / Newton on the passive variables from ``guess`` with the actuated
    ones set to ``a``; result (the last accepted iterate) in slot sl; returns the status."""
    n_q, n_c, n_p, n_a = mi[H_NQ], mi[H_NC], mi[H_NP], mi[H_NA]
    o_pas, o_act = mi[O_PASSIVE], mi[O_ACT]
    s_t, yes = _rt(mi, SL_T), _rt(mi, 1) == 1
    qo = _qo(mi, sl)
    qt = _qo(mi, s_t)
    rhs, dx, Jp = mi[W_RHS], mi[W_DX], mi[W_JP]
    for k in range(n_q):
        wf[qo + k] = guess[k]
    for m in range(n_a):
        wf[qo + mi[o_act + m]] = a[m]
    err = _eval(mi, mf, wf, sl, yes)
    d = 0.0
    it = 0
    while it < max_iter and not err <= tol and d < 1e6:  # (NaN never converges)
        ro = _ro(mi, sl)
        for i in range(n_c):
            wf[rhs + i] = -wf[ro + i]
        done = False
        if d == 0.0 and n_p == 3 and n_c == 3:  # Newton step with the inverse of J_p read in place
            jp, ra, ca = _passive_cols3(mi, sl)
            if jp >= 0:
                det, ratio = _inv3(wf, jp, ra, ca, mi[W_LU])
                if det != 0.0 and ratio > _ILL:
                    _matvec3(wf, mi[W_LU], rhs, dx)
                    done = True
        if not done:
            _passive_block(mi, wf, sl, Jp)
            _solve_passive(mi, wf, wi, Jp, rhs, d, dx)
        for k in range(n_q):
            wf[qt + k] = wf[qo + k]
        for m in range(n_p):
            wf[qt + mi[o_pas + m]] += wf[dx + m]
        err_t = _eval(mi, mf, wf, s_t, yes)
        if err_t < err * _ACCEPT:
            err = err_t
            _copy_slot(mi, wf, sl, s_t)
            d *= 0.1
        else:
            d = max(d * 10.0, 1e-3)
        it += 1
    if not err <= tol:
        return NO_ASSEMBLY if d >= 1e6 else MAX_ITER
    return CONVERGED


@_compiled
def _passive_condition(mi, wf, sl):
    """Condition number (2-norm, Jacobi SVD; inf when singular) of J_p at the state in slot
    sl, as loop_closure.condition_number (scratch W_AW / W_SV; LU0 is left alone)."""
    Jp = mi[W_JP]
    _passive_block(mi, wf, sl, Jp)
    return _condition_of(wf, Jp, mi[W_AW], mi[W_V], mi[W_SV], mi[H_NC], mi[H_NP])


@_compiled
def _predicted_too_far(mi, mf, wf, qp, qc):
    """A predictor q_pred (at wf[qp:]) changes some passive variable of q0 (at wf[qc:]) by more
    than continuation.predictor_step_limit (the mechanism size is 1 / the first residual scale,
    loop_closure._residual_scale); also True for a NaN prediction."""
    o_pas, o_vrot, n_c = mi[O_PASSIVE], mi[O_VROT], mi[H_NC]
    size = 1.0 / mf[mi[O_SCALE]] if n_c > 0 else np.inf
    for m in range(mi[H_NP]):
        p = mi[o_pas + m]
        if not abs(wf[qp + p] - wf[qc + p]) <= _predictor_step_limit(mi[o_vrot + p] == 1, size):
            return True
    return False


@_compiled
def _predict(mi, wf, wi, a0, a1, sl, cached, has_prev):
    """Predictor into wf[W_QP] with q0, J(q0) in slot sl (as loop_closure.tangent_map): the tangent
    q0 + N(q0) (a1 - a0), or, where J_p(q0) is (nearly) singular and ``has_prev`` (an earlier
    point on the branch in W_PRA / W_PRQ), the secant through that point, which carries the
    branch straight through a branch point. ``cached``: the inverse (3 x 3) or LU factors of
    J(q0)'s passive partition are in LU0 (left by :func:`_diagnose`)."""
    n_q, n_c, n_p, n_a = mi[H_NQ], mi[H_NC], mi[H_NP], mi[H_NA]
    o_pas, o_act = mi[O_PASSIVE], mi[O_ACT]
    qo, jo, qp, rhs, dx = _qo(mi, sl), _jo(mi, sl), mi[W_QP], mi[W_RHS], mi[W_DX]
    if has_prev and _passive_condition(mi, wf, sl) > SINGULAR_CONDITION:
        pra, prq = mi[W_PRA], mi[W_PRQ]
        da2, dd = 0.0, 0.0
        for m in range(n_a):
            da = a0[m] - wf[pra + m]
            da2 += da * da
            dd += da * (a1[m] - a0[m])
        scale = dd / da2 if da2 > 0.0 else 0.0
        for k in range(n_q):
            wf[qp + k] = wf[qo + k] + (wf[qo + k] - wf[prq + k]) * scale
        return
    for k in range(n_q):
        wf[qp + k] = wf[qo + k]
    for m in range(n_a):
        wf[qp + mi[o_act + m]] += a1[m] - a0[m]
    for i in range(n_c):
        t = 0.0
        for m in range(n_a):
            t += wf[jo + i * n_q + mi[o_act + m]] * (a1[m] - a0[m])
        wf[rhs + i] = -t
    info = mi[W_INFO0]
    if cached and wf[info] != 0.0 and wf[info + 1] > _ILL:
        _cached_solve(mi, wf, wi, rhs, dx)
    else:
        _passive_block(mi, wf, sl, mi[W_JP])
        _solve_passive(mi, wf, wi, mi[W_JP], rhs, 0.0, dx)
    for m in range(n_p):
        wf[qp + mi[o_pas + m]] += wf[dx + m]


@_compiled
def _seen_sign(mi, wf, wi, ref, sl):
    """Sign (-1, 0, 1) of det(Jp_ref^T J_p) with J_p of slot sl and Jp_ref the block at ref
    (W_JREF / W_JREF2): a tall J_p's det sign seen from the reference point
    (1 at the reference point itself: see sweep.py's docstring). Scratch W_JP, W_AW, I_PIV."""
    n_c, n_p = mi[H_NC], mi[H_NP]
    Jp, P = mi[W_JP], mi[W_AW]
    _passive_block(mi, wf, sl, Jp)
    for i in range(n_p):
        for j in range(n_p):
            t = 0.0
            for k in range(n_c):
                t += wf[ref + k * n_p + i] * wf[Jp + k * n_p + j]
            wf[P + i * n_p + j] = t
    return _lu(wf, wi, P, mi[I_PIV], n_p)[0]


@_compiled
def _det_flipped(mi, wf, wi, s0, sl):
    """det J_p changes sign from the state in slot s0 to that in slot sl
    (continuation.det_sign_flipped): square J_p by the LU signs, a tall one seen from s0
    (:func:`_seen_sign`); never for a wide one (no square minor tied to the assembly mode).
    Scratch W_JP, W_JREF2, I_PIV; the cached factors in LU0 are left alone."""
    shape, Jp = mi[H_SHAPE], mi[W_JP]
    if shape == WIDE or mi[H_NP] == 0:
        return False
    if shape == TALL:
        _passive_block(mi, wf, s0, mi[W_JREF2])
        return _det_sign_flipped(1.0, _seen_sign(mi, wf, wi, mi[W_JREF2], sl))
    _passive_block(mi, wf, s0, Jp)
    d0 = _lu(wf, wi, Jp, mi[I_PIV], mi[H_NP])[0]
    _passive_block(mi, wf, sl, Jp)
    return _det_sign_flipped(d0, _lu(wf, wi, Jp, mi[I_PIV], mi[H_NP])[0])


@_compiled
def _continue(mi, mf, wf, wi, a0, a1, s0, sl, tol, max_iter, cached, a_prev, q_prev, has_prev):
    """Follow the branch from the state in slot s0 (at inputs a0) to inputs a1: predictor,
    corrector, branch check, step bisection (without recursion). Result in slot sl (may equal
    s0); the status is always that of the point a1: when the bisections fail before a1, the
    latest corrector attempt at a1 (kept in slot SL_X) with ``BRANCH_JUMP`` if it converged,
    else its own failure status. ``cached``: see :func:`_predict`; (a_prev, q_prev), when
    ``has_prev``: an earlier point on the branch for the secant predictor. Bisection keeps the
    recursion's earlier points: a step's first half uses its own earlier point, its second half
    starts from the midpoint with the step's start as the earlier point (stored per level)."""
    n_q, n_a, max_depth = mi[H_NQ], mi[H_NA], mi[H_MAXD]
    ac, qp, sta, std = mi[W_AC], mi[W_QP], mi[W_STA], mi[I_STD]
    pra, prq, spa, spq = mi[W_PRA], mi[W_PRQ], mi[W_SPA], mi[W_SPQ]
    if has_prev:
        for m in range(n_a):
            wf[pra + m] = a_prev[m]
        for k in range(n_q):
            wf[prq + k] = q_prev[k]
    s_c, s_end = _rt(mi, SL_C), _rt(mi, SL_X)
    st_end = CONVERGED  # status of the latest failed attempt at a1 (kept in slot s_end)
    cur = s0  # the state continued from (copied first when the result overwrites it)
    if s0 == sl:
        _copy_slot(mi, wf, s_c, s0)
        cur = s_c
    qo = _qo(mi, sl)
    for m in range(n_a):
        wf[ac + m] = a0[m]
        wf[sta + m] = a1[m]
    wi[std] = 0
    top = 1
    first = cached
    while top > 0:
        at = wf[sta + (top - 1) * n_a:sta + top * n_a]
        dep = wi[std + top - 1]
        _predict(mi, wf, wi, wf[ac:ac + n_a], at, cur, first, has_prev)
        first = False
        st = _solve(mi, mf, wf, wi, at, wf[qp:qp + n_q], tol, max_iter, sl)
        qc = _qo(mi, cur)
        moved = 0.0
        dev = 0.0
        for k in range(n_q):
            moved = max(moved, abs(wf[qp + k] - wf[qc + k]))
            dev = max(dev, abs(wf[qo + k] - wf[qp + k]))
        ok = st == CONVERGED and not _corrector_left_branch(dev, moved) and not _predicted_too_far(mi, mf, wf, qp, qc)
        if ok and dep < max_depth and _det_flipped(mi, wf, wi, cur, sl):
            ok = False  # bisect (continuation.det_sign_flipped says why)
        if ok:
            if top == 1:  # done: the result is in slot sl
                return CONVERGED
            # on to the target below from this midpoint: its earlier point is the start of the
            # step that was halved (stored when the midpoint was pushed)
            for m in range(n_a):
                wf[pra + m] = wf[spa + (top - 2) * n_a + m]
            for k in range(n_q):
                wf[prq + k] = wf[spq + (top - 2) * n_q + k]
            has_prev = True
            for m in range(n_a):
                wf[ac + m] = at[m]
            _copy_slot(mi, wf, s_c, sl)
            cur = s_c
            top -= 1
            continue
        if top == 1:  # an attempt at a1 itself failed: keep it, it is a1's result if no later one succeeds
            _copy_slot(mi, wf, s_end, sl)
            st_end = BRANCH_JUMP if st == CONVERGED else st
        if dep >= max_depth:  # a1 cannot be reached on the branch: report a1's own attempt
            _copy_slot(mi, wf, sl, s_end)
            return st_end
        wi[std + top - 1] = dep + 1
        qc = _qo(mi, cur)
        for m in range(n_a):
            wf[spa + (top - 1) * n_a + m] = wf[ac + m]
        for k in range(n_q):
            wf[spq + (top - 1) * n_q + k] = wf[qc + k]
        for m in range(n_a):
            wf[sta + top * n_a + m] = 0.5 * (wf[ac + m] + at[m])
        wi[std + top] = dep + 1
        top += 1
    return CONVERGED


@_inlined
def _fast_step(mi, mf, wf, wi, a_pp, a_p, a, q_pp, sp, sl, tol):
    """Try the cheap step from point i - 1 (slot sp; LU0 holds its J_p factors, from
    :func:`_diagnose`) to inputs a; result in slot sl. Returns False (nothing decided) when
    it does not apply or does not converge at once; the caller then runs :func:`_continue`.

    Predictor: the tangent one (as ``_continue``) plus the quadratic term through point
    i - 2 (q_pp at inputs a_pp): error O(h^3) instead of O(h^2) (~1e-9 rad at 0.1 deg steps
    of the four-bar). Corrector: one chord step dx = -J_p(q_{i-1})^-1 r(q_pred). The residual
    after it is taken from the linear model r(q_pred) + J(q_pred) dx, exact up to the Taylor
    remainder |r''| |dx|^2 / 2; the step is accepted only when |dx| <= 1e-7 (remainder below
    ~1e-13 of the mechanism size) and that residual meets half the tolerance, and when the
    result passes the same branch check as ``_continue`` (against the tangent predictor). The
    point then carries J(q_pred) (relative difference to J(q) ~|dx|) for its condition number
    and the next predictor. One evaluation per point instead of two (plus an inverse)."""
    n_q, n_c, n_p, n_a = mi[H_NQ], mi[H_NC], mi[H_NP], mi[H_NA]
    info = mi[W_INFO0]
    if not (wf[info] != 0.0 and wf[info + 1] > _ILL):
        return False
    da2, dd = 0.0, 0.0  # the previous input step must be rho times this one
    for m in range(n_a):
        da = a[m] - a_p[m]
        da2 += da * da
        dd += da * (a_p[m] - a_pp[m])
    if not da2 > 0.0:
        return False
    rho = dd / da2
    if not (0.25 <= rho <= 4.0):
        return False
    for m in range(n_a):
        if abs((a_p[m] - a_pp[m]) - rho * (a[m] - a_p[m])) > 1e-9 * math.sqrt(da2):
            return False
    o_pas, o_act, o_scale = mi[O_PASSIVE], mi[O_ACT], mi[O_SCALE]
    qp, qo, ro, jp, jo = _qo(mi, sp), _qo(mi, sl), _ro(mi, sl), _jo(mi, sp), _jo(mi, sl)
    rhs, dx = mi[W_RHS], mi[W_DX]
    q1 = mi[W_QP]  # the tangent predictor
    for i in range(n_c):
        t = 0.0
        for m in range(n_a):
            t += wf[jp + i * n_q + mi[o_act + m]] * (a[m] - a_p[m])
        wf[rhs + i] = -t
    _cached_solve(mi, wf, wi, rhs, dx)
    for k in range(n_q):
        wf[q1 + k] = wf[qp + k]
    for m in range(n_a):
        wf[q1 + mi[o_act + m]] = a[m]
    for k in range(n_q):
        wf[qo + k] = wf[q1 + k]
    for m in range(n_p):
        p = mi[o_pas + m]
        wf[q1 + p] += wf[dx + m]
        wf[qo + p] = wf[q1 + p] + (q_pp[p] - wf[qp + p] + rho * wf[dx + m]) / (rho * rho)
    _eval(mi, mf, wf, sl, _rt(mi, 1) == 1)
    for i in range(n_c):
        wf[rhs + i] = -wf[ro + i]
    _cached_solve(mi, wf, wi, rhs, dx)
    for m in range(n_p):
        if not abs(wf[dx + m]) <= 1e-7:  # (False for NaN too)
            return False
        wf[qo + mi[o_pas + m]] += wf[dx + m]
    for i in range(n_c):  # r(q) ~ r(q_pred) + J(q_pred) dx
        t = wf[ro + i]
        for m in range(n_p):
            t += wf[jo + i * n_q + mi[o_pas + m]] * wf[dx + m]
        wf[ro + i] = t
        if not abs(t * mf[o_scale + i]) <= 0.5 * tol:
            return False
    moved, dev = 0.0, 0.0
    for k in range(n_q):
        moved = max(moved, abs(wf[q1 + k] - wf[qp + k]))
        dev = max(dev, abs(wf[qo + k] - wf[q1 + k]))
    return not _corrector_left_branch(dev, moved) and not _predicted_too_far(mi, mf, wf, q1, qp)


@_inlined
def _cached_solve(mi, wf, wi, b, x):
    """x = J_p^-1 b with the factors left in LU0 by :func:`_diagnose` (x may not alias b)."""
    n_p = mi[H_NP]
    if n_p == 3:
        _matvec3(wf, mi[W_LU0], b, x)
    else:
        for i in range(n_p):
            wf[x + i] = wf[b + i]
        _lu_solve(wf, wi, mi[W_LU0], mi[I_PIV0], n_p, x)


# --- Hermite guesses between coarse points ------------------------------------------------------------------
@_compiled
def _tangent(mi, wf, wi, sl, dq, out):
    """wf[out:] <- N(q) dq for the state in slot sl: the actuated rows dq, the passive ones
    -J_p^-1 J_a dq (inverse, LU or pseudo-inverse: tangent_map's)."""
    n_q, n_c, n_p, n_a = mi[H_NQ], mi[H_NC], mi[H_NP], mi[H_NA]
    o_pas, o_act, jo, rhs, dx = mi[O_PASSIVE], mi[O_ACT], _jo(mi, sl), mi[W_RHS], mi[W_DX]
    for i in range(n_c):
        t = 0.0
        for m in range(n_a):
            t += wf[jo + i * n_q + mi[o_act + m]] * wf[dq + m]
        wf[rhs + i] = -t
    _passive_block(mi, wf, sl, mi[W_JP])
    _solve_passive(mi, wf, wi, mi[W_JP], rhs, 0.0, dx)
    for k in range(n_q):
        wf[out + k] = 0.0
    for m in range(n_a):
        wf[out + mi[o_act + m]] = wf[dq + m]
    for m in range(n_p):
        wf[out + mi[o_pas + m]] = wf[dx + m]


@_compiled
def _hermite_setup(mi, mf, wf, wi, Qa, Qb, qa, qb, sl):
    """Segment data of :func:`_hermite_guess` in W_HERM: q_a, q_b and the end tangents
    N(q_a) dQ, N(q_b) dQ (dQ = Qb - Qa); evaluates J at q_b in slot sl."""
    n_q, n_a = mi[H_NQ], mi[H_NA]
    h, dq = mi[W_HERM], mi[W_DQ]
    for m in range(n_a):
        wf[dq + m] = Qb[m] - Qa[m]
    for k in range(n_q):
        wf[h + k] = qa[k]
        wf[h + n_q + k] = qb[k]
    _set_q(mi, wf, sl, qb)
    _eval(mi, mf, wf, sl, _rt(mi, 1) == 1)
    _tangent(mi, wf, wi, sl, dq, h + 3 * n_q)


@_compiled
def _hermite_guess(mi, wf, t):
    """Cubic Hermite guess at fraction t of the segment into W_HERM + 4 n_q (continuation.hermite_weights);
    returns the span max|q_b - q_a| for the branch check."""
    n_q = mi[H_NQ]
    h = mi[W_HERM]
    h00, h10, h01, h11 = _hermite_weights(t)
    span = 0.0
    for k in range(n_q):
        qa, qb, m0, m1 = wf[h + k], wf[h + n_q + k], wf[h + 2 * n_q + k], wf[h + 3 * n_q + k]
        wf[h + 4 * n_q + k] = h00 * qa + h10 * m0 + h01 * qb + h11 * m1
        span = max(span, abs(qb - qa))
    return span


# --- per-point diagnostics -----------------------------------------------------------------------
@_inlined
def _eig_sym3(a00, a01, a02, a11, a12, a22):
    """Eigenvalues (largest, middle) of a symmetric 3x3 matrix, trigonometric closed form
    (absolute accuracy a few ulp of the largest)."""
    p1 = a01 * a01 + a02 * a02 + a12 * a12
    q = (a00 + a11 + a22) / 3.0
    b00, b11, b22 = a00 - q, a11 - q, a22 - q
    p2 = b00 * b00 + b11 * b11 + b22 * b22 + 2.0 * p1
    if not p2 > 0.0:
        return q, q
    p = math.sqrt(p2 / 6.0)
    det = b00 * (b11 * b22 - a12 * a12) - a01 * (a01 * b22 - a12 * a02) + a02 * (a01 * a12 - b11 * a02)
    h = min(1.0, max(-1.0, det / (2.0 * p * p * p)))
    phi = math.acos(h) / 3.0
    e1 = q + 2.0 * p * math.cos(phi)
    e3 = q + 2.0 * p * math.cos(phi + 2.0943951023931957)
    return e1, 3.0 * q - e1 - e3


@_inlined
def _diagnose(mi, wf, wi, sl, i, resid, worst, cond, det):
    """Point i from slot sl: loop residuals, worst loop, condition number (2-norm) and det sign
    of J_p; leaves the inverse (3 x 3) or LU factors of J_p in LU0 for the next predictor.

    Condition number sigma_1 / sigma_3: for 3 x 3 (one planar loop)
    ``lambda_1 sqrt(lambda_2) / |det J_p|`` with lambda_1 >= lambda_2 the two largest
    eigenvalues of J_p^T J_p (closed form, accurate) and det J_p (relative accuracy
    ~eps * condition, like an SVD's); by Jacobi SVD otherwise or when two singular values are
    tiny."""
    n_l, n_p, ld = mi[H_NL], mi[H_NP], mi[H_LD]
    ro = _ro(mi, sl)
    best = 0
    for li in range(n_l):
        e = 0.0
        for m in range(ld):
            x = abs(wf[ro + ld * li + m])
            if x > e or x != x:  # (a NaN residual stays NaN: max() would drop it)
                e = x
        resid[i, li] = e
        if resid[i, li] > resid[i, best]:
            best = li
    worst[i] = best
    Jp, lu0, info = mi[W_JP], mi[W_LU0], mi[W_INFO0]
    if mi[H_SHAPE] != SQUARE:  # no factors cached (the predictors solve by SVD); det: see _det_flipped
        wf[info], wf[info + 1] = 0.0, 0.0
        det[i] = 1.0
        _passive_block(mi, wf, sl, Jp)
        cond[i] = _condition_of(wf, Jp, mi[W_AW], mi[W_V], mi[W_SV], mi[H_NC], n_p)
        return
    jp, ra, ca = _passive_cols3(mi, sl) if n_p == 3 else (-1, 0, 0)
    if jp < 0:  # J_p as a block (else read in place: rows ra, columns ca apart)
        _passive_block(mi, wf, sl, Jp)
        jp, ra, ca = Jp, n_p, 1
    d3 = 0.0
    if n_p == 3:
        d3, ratio = _inv3(wf, jp, ra, ca, lu0)
        sign = 0.0 if d3 == 0.0 else (1.0 if d3 > 0.0 else -1.0)
    else:
        for k in range(n_p * n_p):
            wf[lu0 + k] = wf[Jp + k]
        sign, ratio = _lu(wf, wi, lu0, mi[I_PIV0], n_p)
    wf[info], wf[info + 1] = sign, ratio
    det[i] = sign
    if sign == 0.0:
        cond[i] = np.inf
        return
    if n_p == 3:
        c0 = (wf[jp], wf[jp + ra], wf[jp + 2 * ra])
        c1 = (wf[jp + ca], wf[jp + ra + ca], wf[jp + 2 * ra + ca])
        c2 = (wf[jp + 2 * ca], wf[jp + ra + 2 * ca], wf[jp + 2 * ra + 2 * ca])
        e1, e2 = _eig_sym3(c0[0] * c0[0] + c0[1] * c0[1] + c0[2] * c0[2], c0[0] * c1[0] + c0[1] * c1[1] + c0[2] * c1[2],
                           c0[0] * c2[0] + c0[1] * c2[1] + c0[2] * c2[2], c1[0] * c1[0] + c1[1] * c1[1] + c1[2] * c1[2],
                           c1[0] * c2[0] + c1[1] * c2[1] + c1[2] * c2[2], c2[0] * c2[0] + c2[1] * c2[1] + c2[2] * c2[2])
        if e2 > 1e-6 * e1:
            cond[i] = e1 * math.sqrt(e2) / abs(d3)
            return
    Aw, sv = mi[W_AW], mi[W_SV]
    for a in range(n_p):
        for m in range(n_p):
            wf[Aw + a * n_p + m] = wf[jp + a * ra + m * ca]
    _svd(wf, Aw, mi[W_V], sv, n_p, n_p, _rt(mi, 0) == 1)
    smax, smin = 0.0, np.inf
    for m in range(n_p):
        smax = max(smax, wf[sv + m])
        smin = min(smin, wf[sv + m])
    cond[i] = smax / smin if smin > 0.0 else np.inf


@_compiled
def _finish(mi, mf, wf, wi, Q, i, st, sl, q_out, resid, worst, cond, det):
    """Store slot sl as point i and its diagnostics as loop_closure computes
    them: a failed point is evaluated at its q with the actuated variables set to Q[i] (it may
    hold an intermediate input)."""
    qo = _qo(mi, sl)
    for k in range(mi[H_NQ]):
        q_out[i, k] = wf[qo + k]
    if st != CONVERGED:
        o_act = mi[O_ACT]
        for m in range(mi[H_NA]):
            q_out[i, mi[o_act + m]] = Q[i, m]
        sl = _rt(mi, SL_X)
        _set_q(mi, wf, sl, q_out[i])
        _eval(mi, mf, wf, sl, _rt(mi, 1) == 1)
    _diagnose(mi, wf, wi, sl, i, resid, worst, cond, det)


# --- the sweep -----------------------------------------------------------------------------------
@_compiled
def coarse_indices(Q, limit, idx):
    """Indices 0 = c_0 < c_1 < ... = n - 1 of the coarse points: inputs change by at most
    ``limit`` (per actuated variable) between consecutive coarse points (or consecutive points
    themselves exceed it); fills idx (n + 1,) and returns the count. (A compiled loop: a numpy
    scan called from the compiled path cost ~1.9 ms at 3600 points, about as much as the whole
    compiled sweep, measured under load ~8.)"""
    n, n_a = Q.shape
    idx[0] = 0
    cnt = 1
    for i in range(1, n):
        last = idx[cnt - 1]
        far = False
        for m in range(n_a):
            if abs(Q[i, m] - Q[last, m]) > limit[m]:
                far = True
        if far and i - 1 > last:
            idx[cnt] = i - 1
            cnt += 1
    if idx[cnt - 1] != n - 1:
        idx[cnt] = n - 1
        cnt += 1
    return cnt


@_compiled
def sweep(mi, mf, wf, wi, Q, q_start, coarse, tol, max_iter, q_out, status, resid, worst, cond, det, reassembled):
    """Continuation along Q (n, n_a) from the estimate q_start over the coarse points ``coarse``;
    fills the outputs q (n, n_q), status, resid (n, n_loops), worst, cond, det sign, reassembled
    flags (a coarse point restarted from the last good configuration; the first point when it
    was assembled at its input instead of followed from the estimate's). (mi, mf) from
    :func:`pack`, (wf, wi) from :func:`workspace`."""
    n_q, n_a = mi[H_NQ], mi[H_NA]
    qtrig, a_s, o_act = mi[W_QTRIG], mi[W_AS], mi[O_ACT]
    for k in range(n_q):
        wf[qtrig + k] = np.nan  # no cached cos / sin yet
    for m in range(n_a):
        wf[a_s + m] = q_start[mi[o_act + m]]
    a_start = wf[a_s:a_s + n_a]
    s1, s2, s_ok, yes, no = _rt(mi, SL_1), _rt(mi, SL_2), _rt(mi, SL_OK), _rt(mi, 1) == 1, _rt(mi, 0) == 1

    # coarse pass (sweep.solve_sweep)
    last_ok, prev, prev_ok = -1, -1, -1
    for ci in range(coarse.shape[0]):
        c = coarse[ci]
        if prev < 0:  # first point: assemble at the estimate's own inputs, then follow to Q[c]
            st = _solve(mi, mf, wf, wi, a_start, q_start, tol, max_iter, s2)
            if st == CONVERGED:
                st = _continue(mi, mf, wf, wi, a_start, Q[c], s2, s1, tol, max_iter, no, Q[c], q_start, no)
            if st != CONVERGED:  # not followed from the estimate's branch: a reassembly (sweep.py checks it)
                st = _solve(mi, mf, wf, wi, Q[c], q_start, tol, max_iter, s1)
                reassembled[c] = st == CONVERGED
        elif last_ok < 0:
            st = _solve(mi, mf, wf, wi, Q[c], q_out[prev], tol, max_iter, s1)
        else:
            p = prev_ok if prev_ok >= 0 else last_ok  # (the earlier point of the secant predictor)
            st = _continue(mi, mf, wf, wi, Q[last_ok], Q[c], s_ok, s1, tol, max_iter, no, Q[p], q_out[p], prev_ok >= 0)
        if st != CONVERGED and last_ok >= 0:  # restart from the last good configuration
            if _solve(mi, mf, wf, wi, Q[c], q_out[last_ok], tol, max_iter, s2) == CONVERGED:
                _copy_slot(mi, wf, s1, s2)
                st = CONVERGED
                reassembled[c] = True
        status[c] = st
        _finish(mi, mf, wf, wi, Q, c, st, s1, q_out, resid, worst, cond, det)
        if st == CONVERGED:  # (the secant's earlier point only when no failed point lies between)
            prev_ok, last_ok = (last_ok if last_ok == prev else -1), c
            _copy_slot(mi, wf, s_ok, s1)
        prev = c

    # points between coarse points
    skip = 0  # points to go before trying _fast_step again
    good = -1  # the latest converged point of the fine pass
    shape = mi[H_SHAPE]
    seen_b = 1.0
    for ci in range(coarse.shape[0] - 1):
        a, b = coarse[ci], coarse[ci + 1]
        if b - a < 2:
            continue
        ok_seg = status[a] == CONVERGED and status[b] == CONVERGED
        cur = s1  # slot of the previous point; results alternate between s1 and s2
        if ok_seg:
            _hermite_setup(mi, mf, wf, wi, Q[a], Q[b], q_out[a], q_out[b], s2)
            _set_q(mi, wf, cur, q_out[a])
            _eval(mi, mf, wf, cur, yes)
            # (the tangent at q_a, from the state in cur, completes the Hermite data)
            _tangent(mi, wf, wi, cur, mi[W_DQ], mi[W_HERM] + 2 * n_q)
            if shape == TALL:  # det signs seen from q_a (J_p kept in W_JREF); q_b's is in slot s2
                _passive_block(mi, wf, cur, mi[W_JREF])
                seen_b = _seen_sign(mi, wf, wi, mi[W_JREF], s2)
        if status[a] == CONVERGED:
            good = a
        for i in range(a + 1, b):
            nxt = s2 if cur == s1 else s1
            # a failed neighbour's q is no starting guess (it may be far off: rows of 1e9 rad
            # followed one another): the latest converged point instead
            g = good if good >= 0 else i - 1
            if not ok_seg:
                g = a if status[a] == CONVERGED else (b if status[b] == CONVERGED else g)
                st = _solve(mi, mf, wf, wi, Q[i], q_out[g], tol, max_iter, nxt)
            else:
                fast = False
                if skip > 0:
                    skip -= 1
                elif status[i - 1] == CONVERGED and i - 2 >= a and status[i - 2] == CONVERGED:
                    # slot cur holds point i - 1 and LU0 its factors (i - 1 was diagnosed last)
                    fast = _fast_step(mi, mf, wf, wi, Q[i - 2], Q[i - 1], Q[i], q_out[i - 2], cur, nxt, tol)
                    if not fast:
                        skip = 16  # steps too large for it here: do not waste evaluations
                if fast:
                    st = CONVERGED
                else:  # Hermite guess, corrector, branch check against the
                    # guess; continuation from the left neighbour when that fails
                    span = _hermite_guess(mi, wf, (i - a) / (b - a))
                    guess = mi[W_HERM] + 4 * n_q
                    st = _solve(mi, mf, wf, wi, Q[i], wf[guess:guess + n_q], tol, max_iter, nxt)
                    qn = _qo(mi, nxt)
                    dev = 0.0
                    for k in range(n_q):
                        dev = max(dev, abs(wf[qn + k] - wf[guess + k]))
                    if st != CONVERGED or _fine_point_left_branch(dev, span):
                        if status[i - 1] == CONVERGED:  # (secant through point i - 2 when it converged)
                            sec = i - 2 >= a and status[i - 2] == CONVERGED
                            p = i - 2 if sec else i - 1
                            st = _continue(mi, mf, wf, wi, Q[i - 1], Q[i], cur, nxt, tol, max_iter, i - 1 > a,
                                           Q[p], q_out[p], sec)
                        else:
                            st = _solve(mi, mf, wf, wi, Q[i], q_out[g], tol, max_iter, nxt)
            status[i] = st
            _finish(mi, mf, wf, wi, Q, i, st, nxt, q_out, resid, worst, cond, det)
            left = False
            if ok_seg and st == CONVERGED and shape == SQUARE:
                left = _det_sign_left_branch(det[i], det[a], det[b])
            elif ok_seg and st == CONVERGED and shape == TALL:
                left = _det_sign_left_branch(_seen_sign(mi, wf, wi, mi[W_JREF], nxt), 1.0, seen_b)
            if left:
                # det J_p differs from both ends of the segment: the other assembly branch
                # continue from the left neighbour instead
                if status[i - 1] == CONVERGED:
                    sec = i - 2 >= a and status[i - 2] == CONVERGED
                    p = i - 2 if sec else i - 1
                    st = _continue(mi, mf, wf, wi, Q[i - 1], Q[i], cur, nxt, tol, max_iter, no, Q[p], q_out[p], sec)
                else:
                    st = _solve(mi, mf, wf, wi, Q[i], q_out[g], tol, max_iter, nxt)
                status[i] = st
                _finish(mi, mf, wf, wi, Q, i, st, nxt, q_out, resid, worst, cond, det)
            if status[i] == CONVERGED:
                good = i
            cur = nxt


@_compiled
def det_flips(mi, mf, wf, wi, q, flipped):
    """flipped[i] (n - 1,): det J_p changes sign from point i to point i + 1 of the sweep q
    (n, n_q), a tall J_p seen from point i; the events' singular
    crossings for tall J_p (the sweep's per-point ``det`` is the sign only for a square one)."""
    n = q.shape[0]
    sa, sb = _rt(mi, SL_1), _rt(mi, SL_2)
    for k in range(mi[H_NQ]):
        wf[mi[W_QTRIG] + k] = np.nan
    if n > 0:
        _set_q(mi, wf, sa, q[0])
        _eval(mi, mf, wf, sa, _rt(mi, 1) == 1)
    for i in range(n - 1):
        _set_q(mi, wf, sb, q[i + 1])
        _eval(mi, mf, wf, sb, _rt(mi, 1) == 1)
        flipped[i] = _det_flipped(mi, wf, wi, sa, sb)
        sa, sb = sb, sa
