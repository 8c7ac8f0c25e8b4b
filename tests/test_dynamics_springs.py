"""Springs, dampers and constant loads against closed forms.

spring_mass.yaml: m = 2 kg on a prismatic joint along x, spring k = 50 N/m, free length 2 m
from the ground point (-2, 0) (q = 0 is the equilibrium), omega = 5 rad/s; the damped variant
adds c = 4 N s/m (zeta = 0.2). Truths: x(t) = x0 cos(w t) and the underdamped solution
x0 exp(-z w t) (cos(wd t) + z w / wd sin(wd t)); the rod pendulum (I = 2/3 kg m^2) with a
torsional spring is the same oscillator in the angle.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_dynamics_support import load

from linkcli.core.dynamics import simulate

K, MASS = 50.0, 2.0
W = np.sqrt(K / MASS)
I_PIVOT = 2.0 / 3.0


def test_spring_mass_oscillates_at_sqrt_k_over_m():
    r = simulate(load("spring_mass.yaml"), np.array([0.3]), np.zeros(1), t_end=2.0, dt=1e-3)
    assert r.status == "ok"
    # phase error of Stoermer-Verlet (w dt)^2 / 24 per radian: 1e-6 x 10 rad x 0.3 m ~ 3e-6 m
    assert np.abs(r.q[:, 0] - 0.3 * np.cos(W * r.t)).max() < 1e-5
    assert np.abs(r.qd[:, 0] + 0.3 * W * np.sin(W * r.t)).max() < 1e-4
    # element outputs: length 2 + x, rate = x', tension k x
    assert np.allclose(r.axial_length[:, 0], 2.0 + r.q[:, 0], atol=1e-12)
    assert np.allclose(r.axial_rate[:, 0], r.qd[:, 0], atol=1e-12)
    assert np.allclose(r.axial_force[:, 0], K * r.q[:, 0], atol=1e-10)
    # the prismatic joint carries the weight; no moment about the slider's CG (= joint origin)
    assert np.allclose(r.reaction_force[:, 0, :2], [0.0, MASS * 9.81], atol=1e-8)
    assert np.abs(r.reaction_moment[:, 0]).max() < 1e-8
    assert np.abs(r.total - r.total[0]).max() < 1e-4 * r.total[0]  # (w dt)^2 = 2.5e-5


def test_damped_spring_mass_and_energy_balance():
    r = simulate(load("spring_mass_damped.yaml"), np.array([0.3]), np.zeros(1), t_end=2.0, dt=1e-3)
    assert r.status == "ok"
    z = 4.0 / (2 * np.sqrt(K * MASS))
    wd = W * np.sqrt(1 - z * z)
    x = 0.3 * np.exp(-z * W * r.t) * (np.cos(wd * r.t) + z * W / wd * np.sin(wd * r.t))
    assert np.abs(r.q[:, 0] - x).max() < 1e-5  # measured 6e-7 (second order)
    assert np.all(np.diff(r.work_dampers) <= 0.0)
    # the energy lost is the dampers' work, to the integrator's O(dt^2)
    assert r.work_dampers[-1] == pytest.approx(r.total[-1] - r.total[0], rel=1e-4)
    assert np.abs(r.energy_balance_error).max() < 1e-4 * abs(r.work_dampers[-1])
    assert np.allclose(r.axial_force[:, 1], 4.0 * r.axial_rate[:, 1], atol=1e-12)  # pure damper


def test_stretched_spring_pulls_the_ends_together():
    """Reference element check: stiffness 10, free length 1, stretched to 2 -> tension 10."""
    mech = load("spring_mass.yaml", {"gravity": [0.0, 0.0],
                                     "springs": {"k": {"between": ["ground.anchor", "slider.O"],
                                                       "stiffness": 10.0, "free_length": 1.0}}})
    r = simulate(mech, np.array([0.0]), np.zeros(1), t_end=0.02, dt=1e-3)
    assert r.axial_length[0, 0] == pytest.approx(2.0) and r.axial_force[0, 0] == pytest.approx(10.0)
    # the slider (end b) moves towards the anchor (end a): x = -(10 / 2) t^2 / 2 early on
    assert np.allclose(r.q[:, 0], -2.5 * r.t**2, rtol=1e-3, atol=1e-12)


def test_torsional_spring_torque_and_oscillation():
    """Reference element check: stiffness 10, free angle 0.1 rad, at 0.4 rad -> torque -3."""
    mech = load("pendulum.yaml", {"gravity": [0.0, 0.0],
                                  "springs": {"t": {"type": "torsional", "joint": "pivot", "stiffness": 10.0,
                                                    "free_angle": 0.1}}})
    r = simulate(mech, np.array([0.4]), np.zeros(1), t_end=2.0, dt=1e-3)
    assert r.torsional_angle[0, 0] == pytest.approx(0.4) and r.torsional_torque[0, 0] == pytest.approx(-3.0)
    w = np.sqrt(10.0 / I_PIVOT)
    assert np.abs(r.q[:, 0] - (0.1 + 0.3 * np.cos(w * r.t))).max() < 2e-5  # (w dt)^2 w t x 0.3 ~ 1e-5
    assert np.allclose(r.torsional_torque[:, 0], -10.0 * (r.q[:, 0] - 0.1), atol=1e-12)
    assert np.abs(r.total - r.total[0]).max() < 1e-4 * r.total[0]


def test_torsional_spring_acts_on_the_continuous_angle_through_full_turns():
    """A motor turns the pivot at 1 rev/s for 3 s against a torsional spring: no jump at
    +-180 deg; the motor torque is the spring's (the rod has no angular acceleration)."""
    mech = load("pendulum.yaml", {"gravity": [0.0, 0.0],
                                  "joints": {"pivot": {"type": "revolute", "parent": "ground.O", "child": "rod.O",
                                                       "actuated": True}},
                                  "springs": {"t": {"type": "torsional", "joint": "pivot", "stiffness": 2.0}},
                                  "drivers": {"m": {"joint": "pivot", "type": "constant_speed",
                                                    "speed": 2 * np.pi, "start": 0.0}}})
    r = simulate(mech, np.zeros(1), np.array([2 * np.pi]), t_end=3.0, dt=1e-3, every=10)
    assert r.status == "ok"
    angle = 2 * np.pi * r.t
    assert np.allclose(r.torsional_angle[:, 0], angle, atol=1e-9)
    assert np.allclose(r.torsional_torque[:, 0], -2.0 * angle, atol=1e-8)
    assert np.allclose(r.driver_force[:, 0], 2.0 * angle, rtol=1e-6, atol=1e-6)
    # the motor's work is stored in the spring: 1/2 k angle^2
    assert np.allclose(r.work_drivers, 0.5 * 2.0 * angle**2, rtol=1e-6, atol=1e-9)


def test_torsional_damper_decays_like_the_linear_oscillator():
    c = 0.4
    mech = load("pendulum.yaml", {"gravity": [0.0, 0.0],
                                  "springs": {"t": {"type": "torsional", "joint": "pivot", "stiffness": 10.0}},
                                  "dampers": {"d": {"type": "torsional", "joint": "pivot", "damping": c}}})
    r = simulate(mech, np.array([0.3]), np.zeros(1), t_end=2.0, dt=1e-3)
    w = np.sqrt(10.0 / I_PIVOT)
    z = c / (2 * np.sqrt(10.0 * I_PIVOT))
    wd = w * np.sqrt(1 - z * z)
    x = 0.3 * np.exp(-z * w * r.t) * (np.cos(wd * r.t) + z * w / wd * np.sin(wd * r.t))
    assert np.abs(r.q[:, 0] - x).max() < 1e-5
    assert np.abs(r.energy_balance_error).max() < 1e-4 * abs(r.work_dampers[-1])
    # torsional outputs: the spring element's torque, then the damper element's
    assert np.allclose(r.torsional_torque[:, 1], -c * r.qd[:, 0], atol=1e-12)


def test_constant_load_shifts_the_equilibrium_and_does_work():
    mech = load("spring_mass.yaml", {"loads": {"push": {"link": "slider.O", "force": [5.0, 0.0]}}})
    r = simulate(mech, np.array([0.3]), np.zeros(1), t_end=2.0, dt=1e-3)
    x_eq = 5.0 / K
    assert np.abs(r.q[:, 0] - (x_eq + (0.3 - x_eq) * np.cos(W * r.t))).max() < 1e-5
    assert np.allclose(r.work_loads, 5.0 * (r.q[:, 0] - 0.3), atol=1e-12)
    assert np.abs(r.energy_balance_error).max() < 1e-4 * r.total[0]


def test_prismatic_motion_driver_force_is_the_inverse_dynamics():
    """The slider driven along x = A sin(w t) against the spring: driver force = m x'' + k x."""
    a, f = 0.2, 1.5
    w = 2 * np.pi * f
    mech = load("spring_mass.yaml", {
        "joints": {"slide": {"type": "prismatic", "parent": "ground.O", "child": "slider.O", "axis": [1, 0],
                             "actuated": True}},
        "drivers": {"push": {"joint": "slide", "type": "harmonic", "offset": 0.0, "amplitude": a, "frequency": f}}})
    r = simulate(mech, np.zeros(1), np.array([a * w]), t_end=2.0, dt=1e-3, every=10)
    assert r.status == "ok" and not r.warnings
    x = a * np.sin(w * r.t)
    assert np.allclose(r.q[:, 0], x, atol=1e-10)
    expect = -MASS * w**2 * x + K * x
    # node multipliers are second order, error ~ (w dt)^2 / 8 = 1.1e-5 relative (measured 1.2e-5)
    assert np.abs(r.driver_force[:, 0] - expect).max() < 5e-5 * np.abs(expect).max()
    # the driver's work is the change of the spring-mass energy (measured 1.0e-5 relative)
    assert np.abs(r.energy_balance_error).max() < 5e-5 * np.abs(r.work_drivers).max()
