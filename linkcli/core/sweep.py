"""Sweeps of the actuated variables that keep their assembly branch (continuation).

Strategy (measured in PERFORMANCE.md as the fastest pure-numpy approach):

1. a sequential *coarse* pass over a subset of the points whose input steps are at most
   ``max_step``: tangent predictor (``qdot = N qdot_act``) and Newton corrector, with step
   bisection when the corrector lands far from the prediction (a would-be branch jump) or
   fails (approaching a dead centre);
2. cubic Hermite guesses for every point between coarse points, refined by a batched Newton
   solve over all of them at once;
3. a branch check of every refined point against its guess; points that fail it are re-solved
   sequentially from their neighbour.

Angles stay continuous (no wrapping): each point starts from its neighbour's solution.
Singular passive partitions crossed between two points (sign change of det J_p: toggle or
branch points) and points that cannot be assembled are reported as events, never silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .loop_closure import (ConfigurationResult, Status, constraints, length_scale, passive_indices,
                           solve_configuration, tangent_map)
from .mechanism import CompiledMechanism


@dataclass(frozen=True)
class SweepEvent:
    """Something the user must know about a sweep: ``kind`` in singular_crossing, no_assembly,
    reassembled, branch_jump; between point ``index`` and ``index + 1`` for crossings."""

    index: int
    kind: str
    loop: int = -1
    detail: float = float("nan")  # residual for no_assembly, condition for singular


@dataclass(frozen=True)
class SweepResult(ConfigurationResult):
    events: tuple = field(default_factory=tuple)


def _input_step_limit(mech: CompiledMechanism, max_angle: float) -> np.ndarray:
    """Largest input change (per actuated variable) between coarse points: ``max_angle`` rad
    for rotations, the same fraction of the mechanism size for translations."""
    L = length_scale(mech)
    rot = mech.q_is_rotation[mech.q_actuated]
    return np.where(rot, max_angle, max_angle * L / 2)


def _coarse_indices(Q_act: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Indices 0 = c_0 < c_1 < ... = n-1 such that inputs change by at most ``limit`` between
    consecutive coarse points (or consecutive points themselves exceed it)."""
    n = len(Q_act)
    idx = [0]
    for i in range(1, n):
        if np.any(np.abs(Q_act[i] - Q_act[idx[-1]]) > limit) and i - 1 > idx[-1]:
            idx.append(i - 1)
    if idx[-1] != n - 1:
        idx.append(n - 1)
    return np.asarray(idx)


def _solve_one(mech, a, guess, tol):
    res = solve_configuration(mech, a[None], guess[None], tol=tol)
    return res.q[0], int(res.status[0])


def _tangent(mech, q):
    return tangent_map(mech, constraints(mech, q).J)


def _continue(mech: CompiledMechanism, a0, q0, a1, tol, depth=0, max_depth=10):
    """Follow the branch from (a0, q0) to input a1. Returns (q1, status)."""
    N0 = _tangent(mech, q0)
    q_pred = q0 + N0 @ (a1 - a0)
    q1, st = _solve_one(mech, a1, q_pred, tol)
    moved = np.abs(q_pred - q0).max()
    jump = np.abs(q1 - q_pred).max() > 0.3 * moved + 1e-8
    if st == Status.CONVERGED and not jump:
        return q1, st
    if depth >= max_depth:
        return q1, (Status.BRANCH_JUMP if st == Status.CONVERGED else st)
    am = 0.5 * (a0 + a1)
    qm, stm = _continue(mech, a0, q0, am, tol, depth + 1, max_depth)
    if stm != Status.CONVERGED:
        return qm, stm
    return _continue(mech, am, qm, a1, tol, depth + 1, max_depth)


def _first_point(mech, a, q_start, tol):
    """Assemble at the estimate's own actuated values (the assembly mode the user chose), then
    follow that branch to the first input; plain Newton from the estimate if that fails."""
    q0, st = _solve_one(mech, q_start[mech.q_actuated], q_start, tol)
    if st == Status.CONVERGED:
        q1, st1 = _continue(mech, q_start[mech.q_actuated], q0, a, tol)
        if st1 == Status.CONVERGED:
            return q1, st1
    return _solve_one(mech, a, q_start, tol)


def solve_sweep(mech: CompiledMechanism, Q_act: np.ndarray, q_start: np.ndarray, *, tol: float = 1e-10,
                max_step: float = np.radians(10.0)) -> SweepResult:
    """Solve the configuration along an ordered path of actuated values.

    Q_act (n, n_act) SI, consecutive points close to each other (a sweep, or a grid in
    serpentine order); q_start (n_q,) starting estimate for the first point (assembly mode).
    """
    Q_act = np.atleast_2d(np.asarray(Q_act, dtype=float))
    n = len(Q_act)
    q = np.empty((n, mech.n_q))
    status = np.zeros(n, dtype=int)
    coarse = _coarse_indices(Q_act, _input_step_limit(mech, max_step))
    events: list[SweepEvent] = []
    q_prev, last_ok = None, None
    for c in coarse:
        if q_prev is None:
            q[c], status[c] = _first_point(mech, Q_act[c], q_start, tol)
        elif last_ok is None:
            q[c], status[c] = _solve_one(mech, Q_act[c], q_prev, tol)
        else:
            q[c], status[c] = _continue(mech, Q_act[last_ok], q[last_ok], Q_act[c], tol)
        if status[c] != Status.CONVERGED and last_ok is not None:
            # try a plain restart from the last good configuration: the mechanism may have
            # passed a limit position; a restart may land on another branch, so say so
            q_r, st_r = _solve_one(mech, Q_act[c], q[last_ok], tol)
            if st_r == Status.CONVERGED:
                q[c], status[c] = q_r, st_r
                events.append(SweepEvent(int(c), "reassembled"))
        if status[c] == Status.CONVERGED:
            last_ok = c
        q_prev = q[c]
    _fill_between(mech, Q_act, q, status, coarse, tol)
    res = solve_configuration(mech, Q_act, q, tol=tol, max_iter=0)  # final residuals and conditions
    status = np.where(status == Status.CONVERGED, res.status, status)
    events += _events(mech, q, status, res)
    events.sort(key=lambda e: e.index)
    return SweepResult(res.q, status, res.residual, res.iterations, res.condition, res.worst_loop, tuple(events))


def _fill_between(mech, Q_act, q, status, coarse, tol) -> None:
    """Hermite guesses + batched Newton + branch check for the points between coarse points."""
    fine = np.setdiff1d(np.arange(len(Q_act)), coarse)
    if len(fine) == 0:
        return
    seg = np.searchsorted(coarse, fine) - 1  # coarse segment of each fine point
    c0, c1 = coarse[seg], coarse[seg + 1]
    ok_seg = (status[c0] == Status.CONVERGED) & (status[c1] == Status.CONVERGED)
    guess = np.empty((len(fine), mech.n_q))
    good = coarse[status[coarse] == Status.CONVERGED]
    N = dict(zip(good, _tangent(mech, q[good]))) if len(good) else {}
    for s in np.unique(seg):
        sel = seg == s
        a, b = coarse[s], coarse[s + 1]
        if ok_seg[sel][0]:
            guess[sel] = _hermite(Q_act, q, N, a, b, fine[sel])
        else:
            guess[sel] = q[a] if status[a] == Status.CONVERGED else q[b]
    res = solve_configuration(mech, Q_act[fine], guess, tol=tol)
    span = np.abs(q[c1] - q[c0]).max(axis=-1)
    jumped = np.abs(res.q - guess).max(axis=-1) > 0.25 * span + 1e-6
    q[fine], status[fine] = res.q, res.status
    redo = fine[(jumped | (res.status != Status.CONVERGED)) & ok_seg]
    for i in redo:  # rare: sequential continuation from the left neighbour
        q[i], status[i] = _continue(mech, Q_act[i - 1], q[i - 1], Q_act[i], tol) if status[i - 1] == Status.CONVERGED \
            else _solve_one(mech, Q_act[i], q[i - 1], tol)


def _hermite(Q_act, q, N, a, b, idx) -> np.ndarray:
    """Cubic Hermite interpolation of q between coarse points a < b at indices idx, with end
    tangents N @ dQ (the actuated path is taken as linear in the index between a and b)."""
    t = ((idx - a) / (b - a))[:, None]
    dQ = Q_act[b] - Q_act[a]
    m0, m1 = N[a] @ dQ, N[b] @ dQ
    h00, h10, h01, h11 = 2 * t**3 - 3 * t**2 + 1, t**3 - 2 * t**2 + t, -2 * t**3 + 3 * t**2, t**3 - t**2
    return h00 * q[a] + h10 * m0 + h01 * q[b] + h11 * m1


def _events(mech, q, status, res) -> list[SweepEvent]:
    events: list[SweepEvent] = []
    ok = status == Status.CONVERGED
    for i in np.flatnonzero(~ok):
        if i == 0 or ok[i - 1]:
            kind = "branch_jump" if status[i] == Status.BRANCH_JUMP else "no_assembly"
            events.append(SweepEvent(int(i), kind, int(res.worst_loop[i]), float(res.residual[i].max(initial=0))))
    passive = passive_indices(mech)
    if mech.n_constraints == len(passive) and len(passive):
        det = np.linalg.det(constraints(mech, q).J[:, :, passive])
        flips = np.flatnonzero(ok[:-1] & ok[1:] & (np.sign(det[:-1]) * np.sign(det[1:]) < 0))
        events += [SweepEvent(int(i), "singular_crossing", -1, float(res.condition[i])) for i in flips]
    return events
