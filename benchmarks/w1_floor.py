"""W1's floor for a Newton continuation: the four-bar written by hand in one compiled loop.

A measuring stick for ``bench_kinematics.py`` (issue 11), not product code: how fast a compiled
continuation with the per-point work of linkcli's fine-point step can be on this machine when
nothing is general. The four-bar of mechanisms/fourbar.yaml (ground 4, crank 1, coupler 3.5,
rocker 3; coupler point P at (1.75, 0.6) in the coupler frame) in absolute link angles: crank
theta (input), coupler phi and rocker psi (passive), two residual rows (loop closure in x, y).
Per point, as ``sweep_kernel._fast_step`` + ``_diagnose``: the tangent predictor through the
cached inverse of J_p plus the quadratic term through point i - 2; one evaluation (cos / sin
of the three angles, residual, J_p); one chord step with the cached inverse; the same
acceptance tests (|dx| <= 1e-7, linearised residual <= tol / 2, continuation.corrector_left_branch
against the tangent predictor); then the inverse of J_p for the next point, its det sign, its
2-norm condition number (closed form for 2 x 2), the residual; and the positions of the
pins A, B and of P at the solution (the predicted cos / sin rotated by the chord step to
second order: |dx| <= 1e-7 keeps the error below 1e-21). A point whose chord step fails is
solved by Newton to convergence (only the first one does here). Not included: linkcli's coarse
pass (36 points), bisection, restarts, events and statuses beyond a flag, the general model
(tree of joint frames, 3 residual rows per loop, 4 variables), and its result table.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from linkcli.core import continuation as rules

_left_branch = numba.njit(cache=True)(rules.corrector_left_branch)


@numba.njit(cache=True, error_model="numpy")
def floor_sweep(theta, q0, a, b, c, d, px, py, tol, q, cond, det, status, resid, pins):
    """Fill q (n, 2) = (phi, psi), cond, det sign, status (0 ok, 1 chord step rejected: Newton
    used), resid (n,) and pins (n, 6) = A, B, P (x, y) along the crank angles theta (n,) from
    the estimate q0 = (phi, psi) (SI: m, rad)."""
    n = theta.shape[0]
    phi, psi = q0[0], q0[1]
    pphi, ppsi = phi, psi  # point i - 2
    inv00 = inv01 = inv10 = inv11 = 0.0
    ja0 = ja1 = 0.0
    for i in range(n):
        c1, s1 = math.cos(theta[i]), math.sin(theta[i])
        if i == 0:
            fphi, fpsi, tphi, tpsi = phi, psi, phi, psi
        else:  # tangent predictor (cached inverse) + quadratic term through i - 2
            da = theta[i] - theta[i - 1]
            t0 = -(inv00 * ja0 + inv01 * ja1) * da
            t1 = -(inv10 * ja0 + inv11 * ja1) * da
            tphi, tpsi = phi + t0, psi + t1
            if i >= 2:
                fphi, fpsi = tphi + (pphi - phi + t0), tpsi + (ppsi - psi + t1)
            else:
                fphi, fpsi = tphi, tpsi
        cp, sp, cq, sq = math.cos(fphi), math.sin(fphi), math.cos(fpsi), math.sin(fpsi)
        r0 = a * c1 + b * cp - d - c * cq
        r1 = a * s1 + b * sp - c * sq
        dx0 = -(inv00 * r0 + inv01 * r1)
        dx1 = -(inv10 * r0 + inv11 * r1)
        ok = i > 0 and abs(dx0) <= 1e-7 and abs(dx1) <= 1e-7
        j00, j01, j10, j11 = -b * sp, c * sq, b * cp, -c * cq
        rl0, rl1 = r0 + j00 * dx0 + j01 * dx1, r1 + j10 * dx0 + j11 * dx1
        ok = ok and abs(rl0) <= 0.5 * tol and abs(rl1) <= 0.5 * tol
        nphi, npsi = fphi + dx0, fpsi + dx1
        ok = ok and not _left_branch(max(abs(nphi - tphi), abs(npsi - tpsi)), max(abs(tphi - phi), abs(tpsi - psi)))
        status[i] = 0
        if not ok:  # Newton to convergence from the prediction
            status[i] = 1
            nphi, npsi = fphi, fpsi
            for _ in range(50):
                cp, sp, cq, sq = math.cos(nphi), math.sin(nphi), math.cos(npsi), math.sin(npsi)
                r0 = a * c1 + b * cp - d - c * cq
                r1 = a * s1 + b * sp - c * sq
                j00, j01, j10, j11 = -b * sp, c * sq, b * cp, -c * cq
                if max(abs(r0), abs(r1)) <= tol:
                    break
                dt = j00 * j11 - j01 * j10
                nphi -= (j11 * r0 - j01 * r1) / dt
                npsi -= (-j10 * r0 + j00 * r1) / dt
            dx0 = dx1 = 0.0
            rl0, rl1 = r0, r1
        pphi, ppsi, phi, psi = phi, psi, nphi, npsi
        q[i, 0], q[i, 1] = phi, psi
        resid[i] = max(abs(rl0), abs(rl1))
        dt = j00 * j11 - j01 * j10  # J_p at the evaluated point: the next predictor's inverse
        inv00, inv01, inv10, inv11 = j11 / dt, -j01 / dt, -j10 / dt, j00 / dt
        ja0, ja1 = -a * s1, a * c1
        det[i] = 1.0 if dt > 0.0 else (-1.0 if dt < 0.0 else 0.0)
        f = j00 * j00 + j01 * j01 + j10 * j10 + j11 * j11  # sigma_1^2 + sigma_2^2
        g = math.sqrt(max(f * f - 4.0 * dt * dt, 0.0))
        cond[i] = (f + g) / (2.0 * abs(dt)) if dt != 0.0 else np.inf
        cpf = cp - sp * dx0 - 0.5 * cp * dx0 * dx0  # cos / sin of phi at the solution
        spf = sp + cp * dx0 - 0.5 * sp * dx0 * dx0
        ax, ay = a * c1, a * s1
        pins[i, 0], pins[i, 1] = ax, ay
        pins[i, 2], pins[i, 3] = ax + b * cpf, ay + b * spf
        pins[i, 4], pins[i, 5] = ax + px * cpf - py * spf, ay + px * spf + py * cpf


def run(theta, q0, dims, coupler_point, tol=1e-10):
    """(q, cond, det, status, resid, pins) of :func:`floor_sweep` in fresh arrays (as a sweep
    returns them); dims = (crank, coupler, rocker, ground)."""
    n = len(theta)
    q, cond, det = np.empty((n, 2)), np.empty(n), np.empty(n)
    status, resid, pins = np.empty(n, dtype=np.int64), np.empty(n), np.empty((n, 6))
    floor_sweep(theta, np.asarray(q0, dtype=float), *dims, *coupler_point, tol, q, cond, det, status, resid, pins)
    return q, cond, det, status, resid, pins
