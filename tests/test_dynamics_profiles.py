"""Driver time profiles (linkcli.core.profiles) against closed forms and finite differences.

Truths: the defining formulas written out below, central finite differences of the value
(rate) and of the rate (acceleration) with h = 1e-6 s (error ~ h^2 f''' + eps f / h ~ 1e-9
relative, so rtol 1e-6 is honest), and scipy's CubicSpline for tables.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from linkcli.core.mechanism import Profile
from linkcli.core.profiles import evaluate_profile

H = 1e-6


def check_derivatives(p: Profile, t: np.ndarray) -> None:
    """rate = d value/dt and accel = d rate/dt at ``t`` (away from kinks) by central differences."""
    v, r, a = evaluate_profile(p, t)
    vp, rp, _ = evaluate_profile(p, t + H)
    vm, rm, _ = evaluate_profile(p, t - H)
    scale_r = max(1.0, np.abs(r).max())
    scale_a = max(1.0, np.abs(a).max())
    assert np.allclose((vp - vm) / (2 * H), r, rtol=1e-6, atol=1e-6 * scale_r)
    assert np.allclose((rp - rm) / (2 * H), a, rtol=1e-6, atol=1e-5 * scale_a)


def test_constant():
    v, r, a = evaluate_profile(Profile("constant", {"value": 2.5}), np.linspace(-1, 5, 7))
    assert np.all(v == 2.5) and np.all(r == 0) and np.all(a == 0)


def test_constant_speed():
    p = Profile("constant_speed", {"start": 0.3, "speed": -2.0})
    t = np.linspace(0, 10, 11)
    v, r, a = evaluate_profile(p, t)
    assert np.allclose(v, 0.3 - 2.0 * t) and np.all(r == -2.0) and np.all(a == 0.0)
    check_derivatives(p, t + 0.05)


@pytest.mark.parametrize("cycloidal", [0.0, 1.0])
def test_ramp(cycloidal):
    p = Profile("ramp", {"start": 1.0, "end": 3.0, "t_start": 0.5, "t_end": 2.5, "cycloidal": cycloidal})
    v, r, a = evaluate_profile(p, np.array([0.0, 0.5, 1.5, 2.5, 4.0]))
    assert np.allclose(v, [1.0, 1.0, 2.0, 3.0, 3.0])  # holds outside, midpoint value 2 (both shapes)
    assert r[0] == r[-1] == 0.0 and a[0] == a[-1] == 0.0
    u = np.linspace(0.01, 0.99, 40)
    t = 0.5 + 2.0 * u
    v, r, a = evaluate_profile(p, t)
    s = u - np.sin(2 * np.pi * u) / (2 * np.pi) if cycloidal else u
    assert np.allclose(v, 1.0 + 2.0 * s, rtol=0, atol=1e-14)
    if cycloidal:  # zero rate and acceleration at both ends
        _, r_end, a_end = evaluate_profile(p, np.array([0.5 + 1e-9, 2.5 - 1e-9]))
        assert np.allclose(r_end, 0.0, atol=1e-7) and np.allclose(a_end, 0.0, atol=1e-6)
    else:
        assert np.allclose(r, 1.0) and np.allclose(a, 0.0)
    check_derivatives(p, t)


def test_harmonic():
    p = Profile("harmonic", {"offset": 0.2, "amplitude": 0.5, "frequency": 1.5, "phase": 0.3})
    t = np.linspace(0, 2, 37)
    v, r, a = evaluate_profile(p, t)
    w = 2 * np.pi * 1.5
    assert np.allclose(v, 0.2 + 0.5 * np.sin(w * t + 0.3), atol=1e-15)
    assert np.allclose(a, -(w**2) * (v - 0.2), atol=1e-12)
    check_derivatives(p, t)


def test_table_linear():
    knots, vals = np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 1.0])
    p = Profile("table", {}, t=knots, values=vals, interpolation="linear")
    t = np.array([-1.0, 0.5, 2.0, 5.0])
    v, r, a = evaluate_profile(p, t)
    assert np.allclose(v, [0.0, 1.0, 1.5, 1.0])
    assert np.allclose(r, [0.0, 2.0, -0.5, 0.0]) and np.all(a == 0.0)
    check_derivatives(p, np.array([0.3, 0.7, 1.5, 2.9]))


def test_table_cubic_matches_scipy_and_holds_end_values():
    knots = np.array([0.0, 0.5, 1.2, 2.0, 3.0])
    vals = np.array([0.0, 0.4, 1.5, 1.1, 2.0])
    p = Profile("table", {}, t=knots, values=vals, interpolation="cubic")
    t = np.linspace(0.0, 3.0, 61)
    v, r, a = evaluate_profile(p, t)
    spline = CubicSpline(knots, vals)
    assert np.allclose(v, spline(t), atol=1e-14) and np.allclose(r, spline(t, 1)) and np.allclose(a, spline(t, 2))
    v, r, a = evaluate_profile(p, np.array([-2.0, 4.0]))
    assert np.allclose(v, [0.0, 2.0]) and np.all(r == 0.0) and np.all(a == 0.0)
    check_derivatives(p, np.array([0.2, 0.9, 1.7, 2.5]))


def test_shapes_and_unknown_kind():
    p = Profile("constant_speed", {"start": 0.0, "speed": 1.0})
    v, r, a = evaluate_profile(p, np.zeros((2, 3)))
    assert v.shape == r.shape == a.shape == (2, 3)
    assert evaluate_profile(p, 2.0)[0].shape == ()
    with pytest.raises(ValueError, match="unknown profile kind"):
        evaluate_profile(Profile("square", {}), np.zeros(1))
