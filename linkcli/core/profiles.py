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
