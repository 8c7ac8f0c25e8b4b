"""The exact extremes of a joint variable over a one-input sweep (a range of motion).

The rows of a sweep sample the motion; the largest and smallest value of a joint variable lie
between samples in general (a rocker's extreme positions, where its rate through the input is
zero). Over a sweep of one actuated variable ``a`` the extremes of a variable ``q_i`` are among

* the solved rows themselves (the ends of the sweep, or of a solved run);
* the configurations at the located limits of motion (:func:`linkcli.core.limits.locate_limits`:
  the branch ends there, between a solved and a failed row), given by the caller. A limit is a
  fold: within ``d`` of it (the bisection's bracket) a passive variable differs from its value
  at the fold like ``sqrt(d)``, so an extreme reached at a limit is as exact as that (~1e-6 rad
  for a bracket of 1e-12 rad), not to the solver's tolerance. No stationary point is searched
  between the last solved row and a limit;
* the interior stationary points: where ``dq_i/da`` (the tangent map,
  :func:`linkcli.core.loop_closure.tangent_map`) changes sign between two consecutive solved
  rows of one branch (no event between them). Each is located by bracketed root-finding on
  that rate (Brent's method, the algorithm of scipy.optimize.brentq, compiled with the solves:
  ``sweep_kernel.stationary_between``), every evaluation solving the configuration at its input
  by Newton (the sweep kernel's corrector) from the cubic Hermite guess of the segment's two rows -- the sweep's own
  guess for points between coarse points, with its branch test
  (:func:`linkcli.core.continuation.fine_point_left_branch`).

Which segments are searched: those next to a sampled local extreme (a row whose value is not
exceeded by its neighbours', or an end of a run) within the largest row-to-row change of the
rows' extremes (:func:`_segments_to_search`), where the rate's sign differs at the two ends.
A stationary maximum and minimum both inside one segment (the rate changing sign twice between
two rows) leave no trace in the samples and are not found: the sweep's step must resolve the
variable's wiggles. The value at a located stationary point is exact to the Newton tolerance
(the location error enters the value squared).

Cost: per searched segment a few Jacobian evaluations and ~4-8 Newton solves (each ~2 iterations
from the Hermite guess), in the compiled (or interpreted) sweep kernel. Everything SI; no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import continuation as rules
from .loop_closure import Status
from .mechanism import CompiledMechanism

#: Newton tolerance of the refined configurations (residual relative to the mechanism size, or
#: rad): near rounding, as locate_limits, so the refined value is exact to ~1e-13 rad / of size
REFINE_TOL = 1e-13


@dataclass(frozen=True)
class Extremes:
    """Smallest and largest value (SI: rad or m) of a joint variable over a sweep, and the
    input (SI) where each is reached. ``located``: stationary points located between rows;
    ``unresolved``: segments next to a sampled extreme where no sign change of the rate could
    be bracketed or the solve left the branch (their sampled values stand)."""

    lo: float
    hi: float
    lo_at: float
    hi_at: float
    located: int = 0
    unresolved: int = 0


class KernelPoints:
    """Configurations and input rates of one mechanism (or one study variant) through the sweep
    kernel ``pk`` (compiled or interpreted :mod:`linkcli.core.sweep_kernel`) and its packed model
    (``mi`` integers, ``mf`` floats: the variant's geometry). ``mech`` supplies the topology
    (passive and actuated sets), the same for every variant of a mechanism."""

    def __init__(self, mech: CompiledMechanism, pk, mi: np.ndarray, mf: np.ndarray, n_wf: int, n_wi: int) -> None:
        self.mech, self.pk, self.mi, self.mf = mech, pk, mi, mf
        self.wf, self.wi = pk.workspace(n_wf, n_wi)

    def between(self, a: np.ndarray, ends: tuple, t: float, tol: float, col: int) -> tuple[np.ndarray, np.ndarray, int]:
        """(q, dq/da, kernel status) at inputs a (n_act,) at fraction t of a segment ``ends`` =
        (q0, q1, m0, m1) (its end configurations and tangents, C-contiguous float64): Newton from
        the segment's cubic Hermite guess, BRANCH_JUMP (3) when it left the guessed branch
        (sweep_kernel.solve_between)."""
        q, rate = np.empty(self.mech.n_q), np.empty(self.mech.n_q)
        q0, q1, m0, m1 = ends
        st = self.pk.solve_between(self.mi, self.mf, self.wf, self.wi, a, q0, q1, m0, m1, float(t), float(tol),
                                   rules.MAX_ITER, col, q, rate)
        return q, rate, int(st)

    def rates(self, q: np.ndarray, col: int) -> np.ndarray:
        """dq/da (n_q,) at the configuration q (n_q,) for actuated variable number ``col``
        (loop_closure.tangent_map's column, computed in the kernel; rad/rad, m/rad, ...)."""
        out = np.empty(self.mech.n_q)
        self.pk.input_rates(self.mi, self.mf, self.wf, self.wi, np.ascontiguousarray(q, dtype=np.float64), col, out)
        return out


class _LeftBranch(Exception):
    """A refinement solve failed or converged off the segment's branch."""


def sweep_extremes(points: KernelPoints, Q_act: np.ndarray, q: np.ndarray, ok: np.ndarray, var: int, col: int, *,
                   breaks=(), ends=(), xtol: float = 1e-9) -> Extremes | None:
    """The extremes of joint variable ``var`` over a sweep of actuated variable number ``col``.

    Q_act (n, n_act) SI in solve order (consecutive rows neighbours, only column ``col``
    varying); q (n, n_q) SI; ok (n,) the rows solved on the followed branch; ``breaks``:
    indices k with an event between rows k and k + 1 (a singular crossing, a restart: no
    stationary point is searched there); ``ends``: (a (n_act,), q (n_q,)) configurations at
    located limits of motion (candidates). ``xtol``: width (SI) of the input bracket at which a
    stationary point is taken as found. None when no row is solved.
    """
    Q_act = np.asarray(Q_act, dtype=float)
    a = Q_act[:, col]
    ok = np.asarray(ok, dtype=bool)
    v = q[:, var]
    best = _Best()
    if ok.any():
        rows = np.flatnonzero(ok & np.isfinite(v))
        if len(rows):
            i, j = rows[np.argmin(v[rows])], rows[np.argmax(v[rows])]
            best.add(float(v[i]), float(a[i]))
            best.add(float(v[j]), float(a[j]))
    for a_end, q_end in ends:
        best.add(float(q_end[var]), float(a_end[col]))
    if best.lo_at is None:
        return None
    rates: dict[int, np.ndarray] = {}

    def rate(k: int) -> float:
        if k not in rates:
            rates[k] = points.rates(q[k], col)
        return float(rates[k][var])

    located = unresolved = 0
    for s in _segments_to_search(v, ok, breaks):
        r0, r1 = rate(s), rate(s + 1)
        if r0 == 0.0 or r1 == 0.0 or (r0 > 0) == (r1 > 0):
            # no sign change: no stationary point the rows cannot see, unless the values move
            # against the rates' common sign (the variable turns twice between the rows)
            if r0 != 0.0 and r1 != 0.0 and _turns_inside(v, s, r0, a):
                unresolved += 1
            continue
        try:
            val, at = _stationary(points, Q_act, q, rates, s, col, var, xtol)
        except _LeftBranch:
            unresolved += 1
            continue
        best.add(val, at)
        located += 1
    assert best.lo_at is not None and best.hi_at is not None
    return Extremes(best.lo, best.hi, best.lo_at, best.hi_at, located, unresolved)


def _segments_to_search(v: np.ndarray, ok: np.ndarray, breaks) -> list[int]:
    """Segments s (rows s, s + 1, both solved, no break between) next to a row whose value its
    segment neighbours do not exceed on one side (a sampled local maximum or minimum, an end
    of a run included) and that lies within ``margin`` of the rows' highest (lowest) value:
    ``margin`` is the largest change between two consecutive rows, which bounds how far a
    stationary point between two rows can rise above (fall below) the higher (lower) of them
    when the step resolves the variable's curvature (the premise of the module docstring).
    Local extremes farther from the rows' extremes cannot hold the range's."""
    n = len(v)
    seg = ok[:-1] & ok[1:]
    for k in breaks:
        if 0 <= k < n - 1:
            seg[k] = False
    if not seg.any():
        return []
    step = np.abs(np.diff(v))[seg]
    margin = float(step.max())
    vo = v[ok]
    hi, lo = float(vo.max()), float(vo.min())
    out: set[int] = set()
    for k in np.flatnonzero(ok & ((v >= hi - margin) | (v <= lo + margin))).tolist():
        left = k > 0 and bool(seg[k - 1])
        right = k < n - 1 and bool(seg[k])
        nb = ([float(v[k - 1])] if left else []) + ([float(v[k + 1])] if right else [])
        if nb and (v[k] >= max(nb) or v[k] <= min(nb)):
            if left:
                out.add(k - 1)
            if right:
                out.add(k)
    return sorted(out)


def _turns_inside(v: np.ndarray, s: int, r0: float, a: np.ndarray) -> bool:
    """Rates of one sign at both rows of segment s, but the values move against that sign:
    the variable turns (twice) inside the segment."""
    dv, da = float(v[s + 1]) - float(v[s]), float(a[s + 1]) - float(a[s])
    return dv * da * r0 < 0


class _Best:
    def __init__(self) -> None:
        self.lo, self.hi = math.inf, -math.inf
        self.lo_at: float | None = None
        self.hi_at: float | None = None

    def add(self, value: float, at: float) -> None:
        if not math.isfinite(value):
            return
        if value < self.lo:
            self.lo, self.lo_at = value, at
        if value > self.hi:
            self.hi, self.hi_at = value, at


def _stationary(points: KernelPoints, Q_act, q, rates, s: int, col: int, var: int, xtol: float) -> tuple[float, float]:
    """(value, input) SI of the stationary point of q[var] between rows s and s + 1: Brent's
    bracketed root-finding on the rate (scipy.optimize.brentq's algorithm, compiled with the
    solves: sweep_kernel.stationary_between), each evaluation a Newton solve from the segment's
    Hermite guess."""
    a0, a1 = float(Q_act[s, col]), float(Q_act[s + 1, col])
    h = a1 - a0
    c = np.ascontiguousarray
    inputs = c(Q_act[s], dtype=np.float64)
    out_q, out_rate = np.empty(points.mech.n_q), np.empty(points.mech.n_q)
    st = points.pk.stationary_between(points.mi, points.mf, points.wf, points.wi, inputs, col, var, a0, a1,
                                      c(q[s], dtype=np.float64), c(q[s + 1], dtype=np.float64),
                                      c(rates[s] * h, dtype=np.float64), c(rates[s + 1] * h, dtype=np.float64),
                                      float(rates[s][var]), float(rates[s + 1][var]), float(xtol), REFINE_TOL,
                                      rules.MAX_ITER, out_q, out_rate)
    if st != Status.CONVERGED:
        raise _LeftBranch(s)
    return float(out_q[var]), float(inputs[col])


__all__ = ["Extremes", "KernelPoints", "sweep_extremes", "REFINE_TOL"]
