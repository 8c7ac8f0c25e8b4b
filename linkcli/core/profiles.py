"""Time profiles of drivers: value, first and second time derivative, vectorised over time.

A :class:`~linkcli.core.mechanism.Profile` holds SI numbers (rad or m for a motion, N m or N
for a torque/force; times in s, frequencies in Hz). ``params`` keys per kind (as written by
:func:`linkcli.compile._profile`):

* ``constant``: ``value``
* ``constant_speed``: ``start``, ``speed`` -> ``start + speed t``
* ``ramp``: ``start``, ``end``, ``t_start``, ``t_end``, ``cycloidal`` (1.0 or 0.0): from ``start``
  to ``end`` between ``t_start`` and ``t_end``, holding ``start`` before and ``end`` after;
  linear (constant rate) or cycloidal ``s(u) = u - sin(2 pi u) / (2 pi)`` (zero rate and
  acceleration at both ends)
* ``harmonic``: ``offset``, ``amplitude``, ``frequency`` [Hz], ``phase`` [rad] ->
  ``offset + amplitude sin(2 pi frequency t + phase)``
* ``table``: knots ``profile.t``, ``profile.values``; ``interpolation`` ``linear`` (piecewise
  linear; acceleration 0) or ``cubic`` (scipy not-a-knot cubic spline); end values are held
  outside the table (rate and acceleration 0 there)
"""

from __future__ import annotations

import numpy as np

from .mechanism import Profile

_TWO_PI = 2.0 * np.pi


def evaluate_profile(profile: Profile, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(value, rate, accel)`` of ``profile`` at times ``t`` (s, any shape), each shaped like ``t``."""
    t = np.asarray(t, dtype=float)
    kind = profile.kind
    if kind not in _KINDS:
        raise ValueError(f"unknown profile kind {kind!r}; expected one of {', '.join(_KINDS)}")
    value, rate, accel = _KINDS[kind](profile, t)
    return (np.broadcast_to(value, t.shape).astype(float), np.broadcast_to(rate, t.shape).astype(float),
            np.broadcast_to(accel, t.shape).astype(float))


def _constant(p: Profile, t):
    return np.full(t.shape, float(p.params["value"])), 0.0, 0.0


def _constant_speed(p: Profile, t):
    speed = float(p.params["speed"])
    return p.params["start"] + speed * t, np.full(t.shape, speed), 0.0


def _ramp(p: Profile, t):
    q0, q1 = float(p.params["start"]), float(p.params["end"])
    t0, t1 = float(p.params["t_start"]), float(p.params["t_end"])
    span = t1 - t0
    u = np.clip((t - t0) / span, 0.0, 1.0)
    inside = (t > t0) & (t < t1)
    if p.params.get("cycloidal", 0.0):
        s = u - np.sin(_TWO_PI * u) / _TWO_PI
        ds = 1.0 - np.cos(_TWO_PI * u)
        dds = _TWO_PI * np.sin(_TWO_PI * u)
    else:
        s, ds, dds = u, np.ones_like(u), np.zeros_like(u)
    d = q1 - q0
    return q0 + d * s, np.where(inside, d * ds / span, 0.0), np.where(inside, d * dds / span**2, 0.0)


def _harmonic(p: Profile, t):
    a, w = float(p.params["amplitude"]), _TWO_PI * float(p.params["frequency"])
    arg = w * t + float(p.params.get("phase", 0.0))
    return p.params["offset"] + a * np.sin(arg), a * w * np.cos(arg), -a * w * w * np.sin(arg)


def _table(p: Profile, t):
    knots = np.asarray(p.t, dtype=float)
    vals = np.asarray(p.values, dtype=float)
    tc = np.clip(t, knots[0], knots[-1])
    inside = (t >= knots[0]) & (t <= knots[-1])
    if p.interpolation == "cubic":
        from scipy.interpolate import CubicSpline

        spline = CubicSpline(knots, vals)
        value, rate, accel = spline(tc), spline(tc, 1), spline(tc, 2)
    else:
        seg = np.clip(np.searchsorted(knots, tc, side="right") - 1, 0, len(knots) - 2)
        slope = (vals[seg + 1] - vals[seg]) / (knots[seg + 1] - knots[seg])
        value, rate, accel = np.interp(tc, knots, vals), slope, np.zeros_like(tc)
    outside_hold = ~inside
    return value, np.where(outside_hold, 0.0, rate), np.where(outside_hold, 0.0, accel)


_KINDS = {"constant": _constant, "constant_speed": _constant_speed, "ramp": _ramp,
          "harmonic": _harmonic, "table": _table}


#: a prescribed rate jump counts when it exceeds this fraction of the profile's own rate scale
#: (:func:`rate_scale`: its largest mean rate over a segment, |change of value| / duration). Both
#: are rates of the same profile, so the ratio is the same in any length, angle or time unit (and
#: for any size of motion); round-off at a breakpoint is ~1e-15 of that scale (a cubic table that
#: ends flat has an end slope of that order), a real impulse is a sizeable fraction of it. The
#: one rule for the file's warning (:func:`linkcli.compile.driver_rate_jumps`) and the run's blame
#: (:func:`linkcli.core.dynamics.accuracy.motion_rate_jumps`).
RATE_JUMP_RTOL = 1e-6


def rate_scale(profile: Profile) -> float:
    """The profile's rate scale (SI units per s): the largest |change of value| / duration over
    a segment of a ramp or table (its knots); 0 for a profile without breakpoints."""
    if profile.kind == "ramp":
        span = float(profile.params["t_end"]) - float(profile.params["t_start"])
        return abs(float(profile.params["end"]) - float(profile.params["start"])) / span if span > 0 else 0.0
    if profile.kind == "table":
        knots, vals = np.asarray(profile.t, dtype=float), np.asarray(profile.values, dtype=float)
        return float(np.abs(np.diff(vals) / np.diff(knots)).max())
    return 0.0


def rate_jumps(profile: Profile) -> list[tuple[float, float, float, str]]:
    """``(t, rate before, rate after, where)`` (s; SI units per s; ``where``: "start", "end" or
    "knot") of each time at which the rate of ``profile`` (:func:`evaluate_profile`) jumps by more
    than :data:`RATE_JUMP_RTOL` of its :func:`rate_scale`: a linear ramp at ``t_start`` and
    ``t_end``; a table where it starts after t = 0 and where it ends moving (a cubic table's end
    slope), a linear table also at every knot where its slope changes. A cubic table is C2 at its
    inner knots; constant, constant-speed, harmonic and cycloidal profiles are smooth. At t <= 0
    the rate before is the rate at t = 0, the one a run starts with: a ramp's rate at ``t_start``
    itself is 0 (so a linear ramp from t = 0 jumps in the first step), a table starting at t = 0
    starts the run at its own rate (no jump). Breakpoints before t = 0 are not reported."""
    if profile.kind == "ramp" and not profile.params.get("cycloidal", 0.0):
        t0, t1 = float(profile.params["t_start"]), float(profile.params["t_end"])
        if not t1 > t0:
            return []
        # the rate at t_start and t_end themselves is 0 (held), inside it is constant
        _, (before0, inside, after1), _ = evaluate_profile(profile, np.array([t0, 0.5 * (t0 + t1), t1]))
        candidates = [(t0, float(before0), float(inside), "start"), (t1, float(inside), float(after1), "end")]
    elif profile.kind == "table":
        knots = np.asarray(profile.t, dtype=float)
        if len(knots) < 2 or np.any(np.diff(knots) <= 0):
            return []
        # inside the table (knots included) the rate is the spline's or the segment's
        _, (first, last), _ = evaluate_profile(profile, knots[[0, -1]])
        candidates = [(float(knots[0]), 0.0, float(first), "start")]
        if profile.interpolation != "cubic":  # segment rates from the segments' midpoints
            _, seg, _ = evaluate_profile(profile, 0.5 * (knots[:-1] + knots[1:]))
            candidates += [(float(knots[k + 1]), float(seg[k]), float(seg[k + 1]), "knot")
                           for k in range(len(seg) - 1)]
        candidates.append((float(knots[-1]), float(last), 0.0, "end"))
        if knots[0] <= 0.0:  # the run starts at the table's own rate at t = 0
            candidates = candidates[1:]
    else:
        return []
    limit = RATE_JUMP_RTOL * rate_scale(profile)
    return [c for c in candidates if c[0] >= 0.0 and abs(c[2] - c[1]) > limit]
