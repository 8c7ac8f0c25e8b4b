"""Redundant (dependent) constraint rows of an overconstrained spatial loop: the Bennett linkage.

The integrator solves for an independent subset of the rows (18 of the Bennett's 21) and
checks the dropped ones after every step. A subset chosen at one configuration can lose rank
at another where the full set does not (the subset picked at j1 = 90 deg is singular at
j1 = 180 and 360 deg, the one picked at 45 deg near 144.7 deg): Newton may then follow a
spurious branch of the subset (the shipped example used to end `inaccurate` at j1 = 180 deg,
and ran 1.5 m open after it), and near it the dropped rows open and the solved rows'
multipliers (the driver's work) blow up. The rows are then picked again.

Truths: Bennett's closure equation tan(theta1 / 2) tan(theta2 / 2) = sin((beta + alpha) / 2) /
sin((beta - alpha) / 2), theta3 = -theta1, theta4 = -theta2 (the file's convention), and the
kinematic solver (configuration_at) at the same input; the trapezoid of the reported driver
torque times the prescribed rate (the driver's work); the energy balance; a run at dt / 2 for
the substeps of a refined step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_dynamics_support import load

from linkcli.analyses.simulate import SimulateRequest, request_from_defaults, run_simulate
from linkcli.compile import compile_mechanism
from linkcli.core.dynamics import runner, simulate
from linkcli.core.loop_closure import mechanism_size
from linkcli.core.sweep import configuration_at
from linkcli.core.velocity import joint_rates
from linkcli.io.loader import load_mechanism, validate_document
from linkcli.io.yaml_source import read_yaml_file

BENNETT = Path(__file__).parent.parent / "mechanisms" / "gallery" / "bennett.yaml"
ALPHA, BETA = np.radians(45.0), np.radians(60.0)


def bennett(start_deg: float | None = None, speed_deg: float = 90.0):
    """The gallery file, its motor (constant speed) starting at ``start_deg`` (None: the file's)."""
    if start_deg is None:
        return compile_mechanism(load_mechanism(BENNETT).model)
    data, smap = read_yaml_file(str(BENNETT))
    data["drivers"] = {"motor": {"joint": "j1", "type": "constant_speed", "speed": speed_deg, "start": start_deg}}
    return compile_mechanism(validate_document(data, smap, str(BENNETT)).model)


def closed_form(theta1: np.ndarray) -> np.ndarray:
    """(n, 4) joint angles (rad) of the file's branch from Bennett's closure equation."""
    k = np.sin((BETA + ALPHA) / 2) / np.sin((BETA - ALPHA) / 2)
    theta2 = 2 * np.arctan(k / np.tan(theta1 / 2))
    return np.c_[theta1, theta2, -theta1, -theta2]


def wrapped(a: np.ndarray) -> np.ndarray:
    return (a + np.pi) % (2 * np.pi) - np.pi


def run_from(start_deg: float, t_end: float, speed_deg: float = 90.0, dt: float = 1e-3):
    mech = bennett(start_deg, speed_deg)
    q0 = configuration_at(mech, np.radians([start_deg])).q
    r = simulate(mech, q0, joint_rates(mech, q0, np.radians([speed_deg])), t_end=t_end, dt=dt)
    return mech, r


# The closure tolerance of a run: tol (1e-10) times the mechanism size; every row at most that
# (the solved rows are closed to tol times a step's displacement, the dropped ones checked).
def closure_tolerance(mech, tol: float = 1e-10) -> float:
    return tol * mechanism_size(mech) * (1 + 1e-6)


def test_the_shipped_bennett_example_runs_ok_through_j1_180_deg():
    mech = bennett()
    out = run_simulate(mech, request_from_defaults(load_mechanism(BENNETT).model.analysis.simulate))
    r = out.result
    assert out.n_failed == 0 and r.status == "ok", r.message  # was `inaccurate`: KE 16.4 -> 2.5 J at the end
    assert np.isclose(np.degrees(r.q[-1, 0]), 180.0, atol=1e-9)
    assert r.constraint_residual.max() <= closure_tolerance(mech)  # measured 9.9e-12 m
    assert any("re-selected" in w and "18 equations, as before" in w for w in r.warnings)  # rank 18 of 21 rows
    # fully prescribed motion: every row is the kinematic solution at its input (see below)
    assert np.abs(wrapped(r.q - closed_form(r.q[:, 0]))).max() < 1e-8
    # energy: driven, no damper, no load; second-order balance (measured 1.3e-4 J of ~30 J)
    assert abs(r.total[-1] - r.total[0] - r.work_drivers[-1]) < 1e-3 * (np.abs(r.work_drivers).max() + r.kinetic.max())


def test_bennett_motion_matches_the_kinematics_across_j1_180_and_360_deg():
    """From the file's start at 90 deg, 180 deg/s for 1.6 s (j1 to 378 deg). The motion is
    fully prescribed (mobility 1, driven): each step's positions solve all loop equations at
    the driver's value, so the joint angles are the kinematic ones to the closure tolerance,
    whatever dt: errors <= residual / smallest singular value of the scaled loop Jacobian
    (>= 0.05 along this motion) = 2.2e-10 m / 0.05 = 4.4e-9 rad (measured 1.5e-10 rad)."""
    mech, r = run_from(90.0, 1.6, speed_deg=180.0)
    assert r.status == "ok", r.message
    assert r.constraint_residual.max() <= closure_tolerance(mech)
    j1 = np.degrees(r.q[:, 0])
    assert j1.max() > 370
    assert np.abs(wrapped(r.q - closed_form(r.q[:, 0]))).max() < 1e-8
    # the kinematic solver at inputs on both sides of 180 and 360 deg (fk of `linkcli fk --set`)
    for target in (170.0, 179.0, 180.0, 181.0, 189.0, 270.0, 359.0, 360.0, 361.0, 370.0):
        i = int(np.argmin(np.abs(j1 - target)))
        fk = configuration_at(mech, r.q[i, :1], tol=1e-12)
        assert np.abs(wrapped(fk.q - r.q[i])).max() < 1e-8, (target, np.degrees(fk.q), np.degrees(r.q[i]))


def test_driver_work_near_a_rank_loss_of_the_solved_rows_matches_torque_times_rate():
    """Start at 45 deg: the rows picked there lose rank near 144.7 deg, where the driver's work
    used to jump by -0.109 J in one step (the trapezoid of torque x rate: +0.0135 J) and the
    residual reach 1.5e-8 m under status ok. Per step, the discrete work -(lambda + mu)/2 dq
    and the trapezoid of the reported torque agree to second order: (omega h)^2 relative,
    omega <= 8 rad/s the fastest link, 6e-5 of a step's work (measured 3.6e-6)."""
    mech, r = run_from(45.0, 1.2)
    assert r.status == "ok", r.message
    assert r.constraint_residual.max() <= closure_tolerance(mech)  # measured 1.2e-10 m
    trapezoid = 0.5 * (r.driver_force[1:, 0] + r.driver_force[:-1, 0]) * np.radians(90.0) * np.diff(r.t)
    assert np.abs(np.diff(r.work_drivers) - trapezoid).max() < 1e-4 * np.abs(trapezoid).max()
    balance = r.total - r.total[0] - r.work_drivers
    assert np.abs(balance).max() < 1e-4 * r.kinetic.max()  # measured 1.8e-6 J of 2 J


def test_driver_work_of_refined_steps_equals_the_substeps_run():
    """A driven crank at 60 rad/s, dt 1e-2 (0.6 rad a step): every step is refined into 2
    substeps; the work (and state) at the saved nodes equal a run at dt / 2 up to the Newton
    tolerance (the same substep equations), and each step's work is the trapezoid of the
    reported torque x rate to the trapezoid rule's accuracy."""
    overrides = {"joints": {"pivot": {"type": "revolute", "parent": "ground.O", "child": "rod.O", "actuated": True}},
                 "drivers": {"spin": {"joint": "pivot", "type": "constant_speed", "speed": 60.0, "start": -np.pi / 2}}}
    mech = load("pendulum.yaml", overrides)
    q0, qd0 = np.array([-np.pi / 2]), np.array([60.0])
    r = simulate(mech, q0, qd0, t_end=0.5, dt=1e-2)
    half = simulate(mech, q0, qd0, t_end=0.5, dt=5e-3, every=2)
    assert r.status == half.status == "ok"
    assert r.refined_steps == 50 and half.refined_steps == 0
    scale = np.abs(np.diff(half.work_drivers)).max()
    assert np.abs(r.work_drivers - half.work_drivers).max() < 1e-8 * scale
    trapezoid = 0.5 * (r.driver_force[1:, 0] + r.driver_force[:-1, 0]) * 60.0 * np.diff(r.t)
    # the trapezoid rule's own error over a step: h^3 / 12 max |d^2 (tau omega) / dt^2| = (omega h)^2 / 12 of
    # h omega max|tau| (tau = m g d cos(theta): its second derivative is -omega^2 tau), 0.03; the discrete
    # work's over the substeps, (omega h / 2)^2 / 12 = 0.0075 more (measured 0.023)
    bound = ((60.0 * 1e-2) ** 2 / 12 + (60.0 * 5e-3) ** 2 / 12) * 60.0 * 1e-2 * np.abs(r.driver_force[:, 0]).max()
    assert np.abs(np.diff(r.work_drivers) - trapezoid).max() < bound


def test_a_run_whose_joints_open_stops_at_the_first_open_row_and_says_where(monkeypatch):
    """Planted: the re-selection disabled, the rows picked at 135 deg are followed through their
    rank loss at 180 deg (t = 0.5 s). The dropped rows open there: the run must stop at the
    last closed row with a failure naming the time, the joint and how far it is open, the rows
    before kept (none open), the summary and the failure count saying so."""
    monkeypatch.setattr(runner, "_reselect", lambda *args: None)
    mech = bennett(135.0)
    out = run_simulate(mech, SimulateRequest(t_end=0.6, dt=1e-3))
    r = out.result
    assert r.status == "diverged" and out.n_failed == 1
    assert out.summary["status"] == "diverged"
    assert 0.45 < r.t[-1] < 0.5 and len(r.t) > 450  # the good rows up to the crossing are kept
    assert r.constraint_residual.max() <= closure_tolerance(mech)
    assert "do not stay closed" in r.message and "joint '" in r.message and "open by" in r.message
    assert f"t = {r.t[-1]:.6g} s" in r.message


@pytest.mark.parametrize("start", [100.0, 200.0])
def test_bennett_from_other_starts_stays_closed(start):
    """Other starts, 300 deg/s for 0.3 s (100 -> 190 deg across 180 deg; 200 -> 290 deg): every
    row within the closure tolerance and on Bennett's closure equation (as above)."""
    mech, r = run_from(start, 0.3, speed_deg=300.0)
    assert r.status == "ok", r.message
    assert r.constraint_residual.max() <= closure_tolerance(mech)
    assert np.abs(wrapped(r.q - closed_form(r.q[:, 0]))).max() < 1e-8


def test_a_start_not_closed_to_the_runs_tolerance_is_refused():
    """The first row is a row too: a start open by more than tol x size (here j2 off by 1e-8 rad:
    ~1e-8 m) is refused before any row is written, naming the joint; with tol 1e-6 it runs."""
    mech = bennett(90.0)
    q0 = configuration_at(mech, np.radians([90.0])).q.copy()
    q0[1] += 1e-8
    qd0 = joint_rates(mech, q0, np.radians([90.0]))
    with pytest.raises(ValueError, match=r"closure tolerance 1.22e-10 m .* joint '.*' is open by"):
        simulate(mech, q0, qd0, t_end=0.01, dt=1e-3)
    assert simulate(mech, q0, qd0, t_end=0.01, dt=1e-3, tol=1e-6).status == "ok"


def test_an_open_row_that_reaches_the_analysis_is_flagged_from_its_time(monkeypatch):
    """Belt and braces: the analysis checks every row's residual against the same closure
    tolerance. Planted: the core's result altered to be open by 1e-6 m from t = 0.05 s on."""
    import dataclasses

    import linkcli.core.dynamics as dyn

    real = dyn.simulate

    def opened(*args, **kwargs):
        r = real(*args, **kwargs)
        return dataclasses.replace(r, constraint_residual=np.where(r.t >= 0.05 - 1e-12, 1e-6, r.constraint_residual))

    monkeypatch.setattr(dyn, "simulate", opened)
    out = run_simulate(bennett(), SimulateRequest(t_end=0.1, dt=1e-3))
    assert out.n_failed == 1 and out.summary["status"] == "inaccurate"
    assert "open by 1e-06 m at t = 0.05 s" in out.summary["message"] and "1.22e-10 m" in out.summary["message"]


def _scaled_bennett(scale: float):
    """The gallery Bennett with every length times ``scale`` (same angles: the same linkage)."""
    data, smap = read_yaml_file(str(BENNETT))
    for frames in (data["links"][name]["frames"] for name in data["links"]):
        for frame in frames.values():
            if isinstance(frame, dict):
                frame["origin"] = [scale * v for v in frame["origin"]]
    return compile_mechanism(validate_document(data, smap, str(BENNETT)).model)


@pytest.mark.parametrize("scale, shown", [(1e-3, "1.22e-13"), (1e3, "1.22e-07")])
def test_the_closure_tolerance_scales_with_the_mechanism(scale, shown):
    """The closure tolerance is tol x the mechanism size, so a 1 mm Bennett holds its joints to
    1.22e-13 m and a 1 km one to 1.22e-7 m: the same start, open by the same 1e-8 rad of j2
    (a gap ~1e-8 x size), is refused at every scale with that scale's tolerance in the message,
    and runs when the tolerance is loosened past it (a tolerance not scaled by the size would
    let the 1 mm start through: 1e-11 m < 1e-10 m)."""
    mech = _scaled_bennett(scale)
    assert mechanism_size(mech) == pytest.approx(1.2247448713915892 * scale, rel=1e-12)
    q0 = configuration_at(mech, np.radians([90.0])).q.copy()
    q0[1] += 1e-8
    qd0 = joint_rates(mech, q0, np.radians([90.0]))
    with pytest.raises(ValueError, match=rf"closure tolerance {shown} m .* joint '.*' is open by"):
        simulate(mech, q0, qd0, t_end=0.01, dt=1e-3)
    assert simulate(mech, q0, qd0, t_end=0.01, dt=1e-3, tol=1e-6).status == "ok"


def test_a_tolerance_below_round_off_still_starts():
    """--tol 1e-16 asks for less than round-off: the start is assembled to round-off (the Bennett's
    estimate keeps ~1.8e-16 m, which a 1e-16 x size assembly tolerance refused as a bad
    `assembly` estimate) and the run stays closed to its round-off-floored closure tolerance."""
    mech = bennett()
    out = run_simulate(mech, SimulateRequest(t_end=0.02, dt=1e-3, tol=1e-16))
    assert out.n_failed == 0 and out.result.status == "ok", out.result.message
    assert out.result.constraint_residual.max() <= 1e-12  # measured ~4e-13 m at --tol 1e-12
