"""forces --equilibrium from a start where the reduced stiffness is singular.

At two horizontal rods of a double pendulum gravity's torque is stationary in both angles:
the reduced stiffness K is the zero matrix there, Newton's step -K^-1 tau does not exist, and the
search once fed NaN inputs to the sweep (exit 2, "q_actuated must be finite"). The search now
steps down the potential energy where K is singular and lets Newton refine the minimum.

Independent truth (hand potential): rods of mass m and length L, shoulder angle t1 from +x,
elbow angle t2 relative to rod 1, gravity g along -y; the CGs sit at the rods' middles, so

    V = m g L (3/2 sin t1 + 1/2 sin(t1 + t2)),
    tau = dV/dt = m g L (3/2 cos t1 + 1/2 cos(t1 + t2),  1/2 cos(t1 + t2)),
    K = d2V/dt2 = -m g L [[3/2 sin t1 + 1/2 sin(t1 + t2), 1/2 sin(t1 + t2)],
                          [1/2 sin(t1 + t2),              1/2 sin(t1 + t2)]].

K vanishes at t = (0, 0); at the hanging rest position t = (-90, 0) deg, tau = 0 and
K = m g L [[2, 1/2], [1/2, 1/2]] (19.62 and 4.905 N m/rad on the diagonal), eigenvalues
m g L (5/4 +- sqrt(13)/4), both positive: stable. At t = (-90, 90) deg (rod 1 hanging, rod 2
horizontal) K = m g L [[3/2, 0], [0, 0]]: singular in the elbow only.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

DOUBLE = Path(__file__).resolve().parents[1] / "mechanisms" / "double_pendulum.yaml"
M, G, L = 1.0, 9.81, 1.0  # the file's rods: kg, m/s^2, m

#: analytic reduced stiffness against the hand formulas: round-off of sums of O(m g L) terms
RTOL_ANALYTIC = 1e-9
#: the rest position: Newton stops at |tau| <= 1e-10 of the torques seen (~20 N m), i.e. an
#: angle error below ~1e-9 / (stiffness ~3.4 N m/rad) rad; 1e-7 rad leaves room and still
#: rejects any other rest position (the nearest is 180 deg away)
ATOL_ANGLE = 1e-7

PENDULUM = """\
name: rod pendulum
kind: planar
units: {length: m, angle: deg}
gravity: [0, -9.81]
links:
  ground: {frames: {O: [0, 0]}}
  rod:
    shape: {type: rod, between: [O, tip], mass: 1.0}
    frames: {O: [0, 0], tip: [1, 0]}
joints:
  pin: {type: revolute, parent: ground.O, child: rod.O}
base: ground
effector: rod.tip
assembly: {pin: 0}
"""


def hand_holding(t1, t2):
    return M * G * L * np.array([1.5 * np.cos(t1) + 0.5 * np.cos(t1 + t2), 0.5 * np.cos(t1 + t2)])


def hand_stiffness(t1, t2):
    s1, s12 = np.sin(t1), np.sin(t1 + t2)
    return -M * G * L * np.array([[1.5 * s1 + 0.5 * s12, 0.5 * s12], [0.5 * s12, 0.5 * s12]])


@pytest.fixture(scope="module")
def double():
    from linkcli.cli.common import load_and_compile
    from linkcli.core.kinetostatics import freed_mechanism

    mech = load_and_compile(DOUBLE)[1]
    free = freed_mechanism(mech, mech.q_init)
    assert [free.q_names[k] for k in free.q_actuated] == ["shoulder", "elbow"]
    return free


def _rest_from(free, t1, t2):
    from linkcli.core.kinetostatics import find_equilibria

    a = np.array([t1, t2])
    q = free.q_init.copy()
    q[free.q_actuated] = a
    eqs = find_equilibria(free, a[None], q[None], np.array([True]))
    assert len(eqs) == 1
    return eqs[0]


def test_reduced_stiffness_matches_the_hand_potential(double):
    from linkcli.core.kinetostatics import reduced_stiffness

    rng = np.random.default_rng(7)
    angles = rng.uniform(-np.pi, np.pi, (5, 2))
    angles = np.vstack([angles, [0.0, 0.0], [-np.pi / 2, np.pi / 2]])  # + the two singular starts
    q = np.tile(double.q_init, (len(angles), 1))
    q[:, double.q_actuated] = angles
    st = reduced_stiffness(double, q)
    scale = M * G * L
    for k, (t1, t2) in enumerate(angles):
        np.testing.assert_allclose(st.holding[k], hand_holding(t1, t2), rtol=0, atol=RTOL_ANALYTIC * scale)
        np.testing.assert_allclose(st.stiffness[k], hand_stiffness(t1, t2), rtol=0, atol=RTOL_ANALYTIC * scale)
    assert np.abs(st.stiffness[-2]).max() <= RTOL_ANALYTIC * scale  # horizontal rods: K = 0
    assert abs(np.linalg.eigvalsh(st.stiffness[-1])[0]) <= RTOL_ANALYTIC * scale  # singular in one input


@pytest.mark.parametrize("start_deg", [(0.0, 0.0), (-90.0, 90.0), (0.0, 180.0)],
                         ids=["both_horizontal_K_zero", "elbow_singular", "folded_K_zero"])
def test_double_pendulum_from_a_singular_start_hangs(double, start_deg):
    t1, t2 = np.radians(start_deg)
    e = _rest_from(double, t1, t2)
    assert e.converged, e.reason
    assert not e.reason
    # the hanging pose, up to whole turns: from the folded start the elbow unfolds continuously
    # to +360 deg (hinge angles keep the winding the motion gave them), the same configuration
    wrapped = np.angle(np.exp(1j * (e.a - [-np.pi / 2, 0.0])))
    np.testing.assert_allclose(wrapped, 0.0, rtol=0, atol=ATOL_ANGLE)
    # a true rest position: the holding torque is zero within Newton's tolerance (1e-10 of the
    # torques seen, ~20 N m at the start) and agrees with the hand gradient there
    assert np.abs(e.holding).max() <= 1e-10 * 2 * M * G * L
    assert np.abs(hand_holding(*e.a)).max() <= 1e-6  # N m: stiffness ~20 N m/rad x ATOL_ANGLE
    K_hand = M * G * L * np.array([[2.0, 0.5], [0.5, 0.5]])
    np.testing.assert_allclose(e.stiffness, K_hand, rtol=0, atol=1e-6)  # K varies by ~mgL x ATOL_ANGLE
    ev = np.linalg.eigvalsh(e.stiffness)
    np.testing.assert_allclose(ev, M * G * L * (1.25 + np.array([-1.0, 1.0]) * np.sqrt(13) / 4), rtol=1e-7)
    assert e.stability == "stable"


def test_cli_double_pendulum_from_horizontal(run_cli):
    r = run_cli("forces", DOUBLE, "--equilibrium", "-f", "json")
    assert r.exit_code == 0, r.output
    assert "must be finite" not in r.output
    data = json.loads(r.stdout)["data"]
    assert abs(data["shoulder.q [deg]"][0] + 90.0) < np.degrees(ATOL_ANGLE)
    assert abs(data["elbow.q [deg]"][0]) < np.degrees(ATOL_ANGLE)
    assert abs(data["shoulder.stiffness [N m/rad]"][0] - 2 * M * G * L) < 1e-6
    assert abs(data["elbow.stiffness [N m/rad]"][0] - 0.5 * M * G * L) < 1e-6
    assert data["stability"] == ["stable"] and data["status"] == ["ok"]


def test_one_input_pendulum_from_horizontal(run_cli, tmp_path):
    """One free hinge, K = -m g L/2 sin t = 0 at the start; rest hanging with m g L/2."""
    path = tmp_path / "rod.yaml"
    path.write_text(PENDULUM, encoding="utf-8")
    r = run_cli("forces", path, "--equilibrium", "-f", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)["data"]
    assert abs(data["pin.q [deg]"][0] + 90.0) < np.degrees(ATOL_ANGLE)
    assert abs(data["pin.stiffness [N m/rad]"][0] - 0.5 * M * G * L) < 1e-6
    assert data["stability"] == ["stable"]


def test_no_rest_position_is_a_truthful_analysis_failure(run_cli, tmp_path):
    """A constant torque of 10 N m beats gravity's largest, m g L / 2 = 4.9 N m: the holding
    torque never vanishes (V = m g L/2 sin t - 10 t has no stationary point). The search must
    say so, where it stopped and why, with exit 1 (an analysis failure), not 2."""
    path = tmp_path / "twisted.yaml"
    path.write_text(PENDULUM + "loads:\n  twist: {link: rod.O, torque: 10.0}\n", encoding="utf-8")
    r = run_cli("forces", path, "--equilibrium", "-f", "json")
    assert r.exit_code == 1, r.output
    assert "must be finite" not in r.output
    assert "no rest position found" in r.stderr and "stopped at pin =" in r.stderr
    assert "holding torque pin" in r.stderr
    assert "no rest position: the search stopped at pin =" in r.stderr  # the summary line, not "rest position at"
    assert "rest position at" not in r.stderr
    data = json.loads(r.stdout)["data"]
    assert data["status"] != ["ok"]


def test_a_start_at_rest_is_classified_by_its_stiffness(double):
    """Started exactly upright (t = (90, 0) deg) the holding torque is zero at the only point:
    that is a rest position, unstable (hand K = -m g L [[2, 1/2], [1/2, 1/2]], both eigenvalues
    negative), not "neutral everywhere" (which needs K = 0 too: a balanced mechanism)."""
    e = _rest_from(double, np.pi / 2, 0.0)
    assert e.converged and e.stability == "unstable"
    np.testing.assert_allclose(e.stiffness, -M * G * L * np.array([[2.0, 0.5], [0.5, 0.5]]), rtol=0,
                               atol=RTOL_ANALYTIC * M * G * L)
