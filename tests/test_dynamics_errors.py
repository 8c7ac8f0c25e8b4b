"""Invalid input raises ValueError naming the problem; a run that cannot continue stops with a
status and a message and returns everything computed up to then."""

from __future__ import annotations

import numpy as np
import pytest
from test_dynamics_fourbar import joint_state
from test_dynamics_support import load

from linkcli.core.dynamics import simulate

JOINTS = {"crank_pin": {"type": "revolute", "parent": "ground.O2", "child": "crank.O2", "actuated": True},
          "A": {"type": "revolute", "parent": "crank.A", "child": "coupler.A"},
          "B": {"type": "revolute", "parent": "coupler.B", "child": "rocker.B"},
          "O4": {"type": "revolute", "parent": "ground.O4", "child": "rocker.O4", "actuated": True}}


def test_unassembled_start_is_rejected():
    mech = load("fourbar_w3.yaml")
    q0, qd0 = joint_state(np.radians(60.0))
    q0[1] += 0.1
    with pytest.raises(ValueError, match="not an assembled configuration"):
        simulate(mech, q0, qd0, t_end=0.1, dt=1e-3)


def test_start_contradicting_a_motion_driver_is_rejected():
    mech = load("fourbar_w3.yaml", {"drivers": {"m": {"joint": "crank_pin", "type": "constant", "value": 10.0}}})
    q0, qd0 = joint_state(np.radians(60.0))
    with pytest.raises(ValueError, match="motion driver 'm'"):
        simulate(mech, q0, qd0, t_end=0.1, dt=1e-3)


def test_drivers_that_over_constrain_the_mechanism_are_rejected():
    q0, qd0 = joint_state(np.radians(60.0))
    mech = load("fourbar_w3.yaml", {"joints": JOINTS, "drivers": {
        "m1": {"joint": "crank_pin", "type": "constant", "value": 60.0},
        "m2": {"joint": "O4", "type": "constant", "value": float(np.degrees(q0[3]))}}})
    with pytest.raises(ValueError, match="over-constrain"):
        simulate(mech, q0, qd0, t_end=0.1, dt=1e-3)


@pytest.mark.parametrize("kwargs, match", [({"q0": np.zeros(3)}, "4 values"), ({"t_end": -1.0}, "positive"),
                                           ({"dt": 0.0}, "positive"), ({"every": 0}, "every")])
def test_bad_arguments(kwargs, match):
    mech = load("fourbar_w3.yaml")
    q0, qd0 = joint_state(np.radians(60.0))
    args = {"q0": q0, "qd0": qd0, "t_end": 0.1, "dt": 1e-3, **kwargs}
    with pytest.raises(ValueError, match=match):
        simulate(mech, args.pop("q0"), args.pop("qd0"), **args)


def test_inconsistent_initial_rates_are_projected_with_a_warning():
    mech = load("fourbar_w3.yaml")
    q0, _ = joint_state(np.radians(60.0))
    r = simulate(mech, q0, np.array([1.0, 0.0, 0.0, 0.0]), t_end=0.01, dt=1e-3)
    assert r.status == "ok" and any("qd0 was not consistent" in w for w in r.warnings)
    _, qd_expected = joint_state(np.radians(60.0), r.qd[0, 0])
    assert np.allclose(r.qd[0], qd_expected, atol=1e-9)  # projected onto the constraint tangent


def test_a_driver_pushing_the_rocker_past_its_limit_stops_the_run_with_what_was_computed():
    """Crank-rocker driven at the rocker at constant speed: the rocker's range ends at a toggle
    position, where no assembly exists beyond; the run stops there with a message."""
    q0, _ = joint_state(np.radians(60.0))
    mech = load("fourbar_w3.yaml", {"joints": JOINTS, "drivers": {
        "m": {"joint": "O4", "type": "constant_speed", "speed": 30.0, "start": float(np.degrees(q0[3]))}}})
    r = simulate(mech, q0, np.zeros(4), t_end=5.0, dt=1e-3, every=10)
    assert r.status in ("diverged", "singular")
    # at the toggle the step matrix is singular: the (banded) LU of the saddle-point matrix says
    # so; Newton stalling near it says "diverged" and suggests a smaller dt -- either names the time
    assert "t = 1.1" in r.message and ("dt" in r.message or "singular configuration" in r.message)
    assert 1.0 < r.t[-1] < 1.2 and len(r.t) == len(r.q) == len(r.reaction_force) == len(r.total)
    assert r.constraint_residual.max() <= 1e-10  # everything returned is a converged state
