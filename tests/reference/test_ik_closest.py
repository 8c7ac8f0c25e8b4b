"""Inverse kinematics of unreachable targets: the closest pose against closed forms.

Provenance:
* a serial arm's position workspace without limits: planar 3R (1, 0.8, 0.5) reaches every point
  within 2.3 of its base, so a target at distance R > 2.3 is R - 2.3 from the closest pose;
* PUMA 560 (mechanisms/puma560.yaml, standard DH): the wrist centre (the tool point, d6 = 0)
  lies at distance sqrt(r^2 + d3^2) from the shoulder, r the in-plane reach of the upper arm
  a2 = 0.4318 plus forearm (a3, d4) = (0.0203, 0.4318), d3 = 0.15005 the shoulder offset; the
  outer boundary is the sphere of radius sqrt((a2 + hypot(a3, d4))^2 + d3^2). For targets whose
  closest sphere point lies outside the cylinder of radius d3 and needs no joint at a limit,
  the distance is |t| - that radius;
* a 2R arm (1, 0.8) whose elbow is limited to [0, 90] deg cannot fold enough to reach a point
  0.5 from its base (that needs 150 deg); inside the limits the closest pose folds to 90 deg and
  reaches sqrt(1 + 0.64) from the base, so it is sqrt(1.64) - 0.5 from the target.

Tolerance 1e-9 m, the issue's requirement: the distance is stationary at the minimum, so it is
known to ~1e-15 once the pose is within ~1e-7 rad of the optimum.
"""

import numpy as np
import pytest
from kin_helpers import mech_from_yaml, open_fourbar_yaml

from linkcli.analyses.ik import IKRequest, run_ik
from linkcli.compile import compile_mechanism
from linkcli.io.loader import load_mechanism

R3 = """
name: 3R
kind: planar
units: {length: m, angle: deg}
links: {base: {}}
serial:
  convention: standard
  rows:
    - {name: l1, joint_name: j1, a: 1.0}
    - {name: l2, joint_name: j2, a: 0.8}
    - {name: l3, joint_name: j3, a: 0.5}
base: base
effector: l3
assembly: {j1: 30, j2: 45, j3: -30}
"""

R2_LIMITED = """
name: 2R with a limited elbow
kind: planar
units: {length: m, angle: deg}
links: {base: {}}
serial:
  convention: standard
  rows:
    - {name: l1, joint_name: j1, a: 1.0}
    - {name: l2, joint_name: j2, a: 0.8, limits: [0, 90]}
base: base
effector: l2
assembly: {j1: 30, j2: 45}
"""


@pytest.mark.parametrize("target", [[3.0, 1.0], [-2.0, 2.5], [0.1, -2.4]])
def test_planar_3r_unreachable_is_at_the_closed_form_distance(target):
    out = run_ik(mech_from_yaml(R3), IKRequest([target], mode="position"))
    table, failed = out.table, out.n_failed
    assert failed == 1 and table["status"][0] == "unreachable"
    assert table["position_error [m]"][0] == pytest.approx(np.hypot(*target) - 2.3, abs=1e-9)
    # ... and the distance is reported in words (the command's summary line), not only a column
    assert f"closest pose reached is {np.hypot(*target) - 2.3:.9g} m away" in table.metadata["events"][0]


def test_puma_unreachable_is_at_the_closed_form_distance():
    mech = compile_mechanism(load_mechanism("mechanisms/puma560.yaml").model)
    radius = np.hypot(0.4318 + np.hypot(0.0203, 0.4318), 0.15005)
    targets = [[1.2, 0.5, 0.6], [-0.4, 1.1, -0.3]]
    out = run_ik(mech, IKRequest(targets, mode="position"))
    table, failed = out.table, out.n_failed
    assert failed == 2 and list(table["status"]) == ["unreachable"] * 2
    expected = [np.linalg.norm(t) - radius for t in targets]
    np.testing.assert_allclose(table["position_error [m]"], expected, atol=1e-9)
    # the arm joints (the wrist's do not move the wrist centre) are off their limits: no limit
    # binds, so the closed form applies
    q = np.radians(np.stack([table[f"joint{i}.q [deg]"] for i in range(1, 4)], axis=1))
    assert np.all((q > mech.q_lower[:3] + 1e-6) & (q < mech.q_upper[:3] - 1e-6))


def test_target_reachable_only_outside_limits_gives_the_closest_pose_inside_them():
    out = run_ik(mech_from_yaml(R2_LIMITED), IKRequest([[0.3, 0.4]], mode="position"))
    table, failed = out.table, out.n_failed
    assert failed == 1 and table["status"][0] == "unreachable"
    assert table["j2.q [deg]"][0] == pytest.approx(90.0, abs=1e-7)  # folded as far as allowed
    assert table["position_error [m]"][0] == pytest.approx(np.sqrt(1.64) - 0.5, abs=1e-9)


def column(table, prefix: str) -> np.ndarray:
    """The column whose header starts with ``prefix`` (its unit may change)."""
    (name,) = [n for n in table.headers() if n.split(" [")[0] == prefix]
    return np.asarray(table[name], dtype=float)


def test_fivebar_unreachable_closest_pose_closes_its_loops():
    """Five-bar (mechanisms/fivebar.yaml: ground 2, cranks 1, distal links 2): the tool point P
    is within 3 of both O1 = (0, 0) and O5 = (2, 0); the workspace's top is the lens corner
    (1, sqrt(8)) with both arms stretched, so the target (1, 3.5) is 3.5 - sqrt(8) away. The
    closest pose used to keep a loop residual of 2e-7 (its distance then off by 1e-7)."""
    mech = compile_mechanism(load_mechanism("mechanisms/fivebar.yaml").model)
    out = run_ik(mech, IKRequest([[1.0, 3.5]], mode="position"))
    table = out.table
    assert out.n_failed == 1 and table["status"][0] == "unreachable"
    assert table["position_error [m]"][0] == pytest.approx(3.5 - np.sqrt(8.0), abs=1e-9)
    assert column(table, "loop_residual")[0] <= 1e-9  # the ik tolerance (relative to a size of ~2 m)
    assert table["reached.x [m]"][0] == pytest.approx(1.0, abs=1e-7)




def test_a_pose_that_cannot_close_its_loops_is_not_presented():
    # links 1 + 1 + 1 cannot span a ground of 10: no configuration exists
    out = run_ik(mech_from_yaml(open_fourbar_yaml()), IKRequest([[1.0, 1.0]], mode="position"))
    table = out.table
    assert out.n_failed == 1 and table["status"][0] == "no_assembly"
    for name in ("crank_pin.q [deg]", "A.q [deg]", "reached.x [m]", "reached.y [m]", "position_error [m]"):
        assert np.isnan(table[name][0]), name


# --- the closest pose where the attempts crawl: singular minima, limits, batches -------------------
R3_HOLE = R3.replace("a: 0.8}", "a: 0.3}").replace("a: 0.5}", "a: 0.2}")


@pytest.mark.parametrize("radius", [0.0, 0.1, 0.2236, 0.45, 0.4999])
def test_planar_3r_target_in_the_inner_hole(radius):
    """3R (1, 0.3, 0.2) reaches the annulus 0.5 <= |p| <= 1.5: a target at radius R < 0.5 is
    0.5 - R from the closest pose, the arm folded back (elbow at 180 deg, wrist straight): a
    singular pose, where damped Gauss-Newton converges only linearly. Tolerance 1e-9 m as above."""
    mech = mech_from_yaml(R3_HOLE)
    target = [radius * np.cos(0.7), radius * np.sin(0.7)]
    out = run_ik(mech, IKRequest([target], mode="position"))
    table = out.table
    assert out.n_failed == 1 and table["status"][0] == "unreachable"
    assert table["position_error [m]"][0] == pytest.approx(0.5 - radius, abs=1e-9)
    elbow, wrist = np.radians(table["j2.q [deg]"][0]), np.radians(table["j3.q [deg]"][0])
    # the minimum pins the fold to ~1e-10 rad (the polish stops at a scaled gradient of 1e-10)
    assert abs(np.cos(elbow) + 1) < 1e-12 and abs(np.sin(wrist)) < 1e-7
    if radius > 0:  # ... and the folded arm points at the target (at R = 0 every direction is closest)
        reached = np.array([table["reached.x [m]"][0], table["reached.y [m]"][0]])
        np.testing.assert_allclose(reached, 0.5 * np.array(target) / radius, atol=1e-8)


@pytest.mark.parametrize("beyond", [0.0, 1e-6, 1e-3, 0.3])
def test_planar_3r_at_and_just_beyond_its_reach(beyond):
    """The outer boundary |p| = 2.3 itself is reached (the arm stretched: singular, a distance
    of order tol); a target ``beyond`` past it is that far from the closest pose, to 1e-12 m
    (the distance is stationary at the minimum: its error is second order in the pose's)."""
    target = [(2.3 + beyond) * np.cos(-1.1), (2.3 + beyond) * np.sin(-1.1)]
    table = run_ik(mech_from_yaml(R3), IKRequest([target], mode="position")).table
    if beyond == 0.0:
        assert table["status"][0] == "converged" and table["position_error [m]"][0] < 1e-7  # 100 tol
    else:
        assert table["status"][0] == "unreachable"
        assert table["position_error [m]"][0] == pytest.approx(beyond, abs=1e-12)


def test_batched_attempts_are_the_attempts_one_by_one():
    """The restarts run as one batch: each must follow the path it follows alone (same pose,
    same iterations). Five-bar, an unreachable target: every restart runs to its minimum."""
    from linkcli.analyses.ik import target_pose
    from linkcli.core.inverse import _attempts, task_rows
    from linkcli.core.loop_closure import mechanism_size

    mech = compile_mechanism(load_mechanism("mechanisms/fivebar.yaml").model)
    T, _ = target_pose(mech, [1.0, 3.5])
    rows = task_rows(mech, "position")
    spread = np.where(mech.q_is_rotation, np.pi, 0.5 * mechanism_size(mech))
    starts = mech.q_init + np.random.default_rng(0).uniform(-1, 1, (6, mech.n_q)) * spread
    together = _attempts(mech, T, starts, rows, 1e-9, 200)
    for s, t in zip(starts, together, strict=True):
        (alone,) = _attempts(mech, T, s[None], rows, 1e-9, 200)
        assert (t.status, t.iterations) == (alone.status, alone.iterations)
        np.testing.assert_allclose(t.q, alone.q, rtol=0, atol=1e-12)  # rounding of batched products


def test_an_attempt_with_a_joint_at_its_limit_stops_at_its_minimum():
    """UR5 (limits +-360 deg), unreachable target (1.2, 0.5, 0.6): the first attempt drives the
    shoulder to its -360 deg limit. Clipping the steps alone left the other joints a step that
    assumed the shoulder moves, and the attempt crawled to its 200-iteration cap; holding the
    joint it stops at a local minimum, the projected gradient (the held joint left out) below
    the attempt's tolerance."""
    from linkcli.analyses.ik import target_pose
    from linkcli.core.inverse import GTOL_ATTEMPT, _attempts, _stationarity, _task, _task_weights, task_rows
    from linkcli.core.sweep import configuration_at

    mech = compile_mechanism(load_mechanism("mechanisms/gallery/ur5.yaml").model)
    T, _ = target_pose(mech, [1.2, 0.5, 0.6])
    q0 = configuration_at(mech, mech.q_init[mech.q_actuated]).q
    rows = task_rows(mech, "position")
    (r,) = _attempts(mech, T, q0[None], rows, 1e-9, 200)
    assert r.iterations < 200 and np.isclose(r.q[1], mech.q_lower[1])  # the shoulder held at -360 deg
    w = _task_weights(mech, rows)
    e, Jt, ev, _ = _task(mech, r.q, T, rows)
    assert _stationarity(mech, r.q, Jt * w[:, None], e * w, ev.J) < GTOL_ATTEMPT


def test_stationarity_is_the_gradient_along_the_loop_closure():
    """The attempts' stop test against central differences: at a closed five-bar pose the
    projected gradient of f = |W e|^2 / 2 is the derivative of f along the closure manifold,
    sqrt(sum_i (df/ds_i)^2) over an orthonormal basis s_i of its tangent space (the null space
    of the loop Jacobian), each df/ds_i by central differences of f at poses projected back onto
    the closure. rtol 1e-6: a central difference at h = 1e-5 errs by ~h^2 f''' ~ 1e-10."""
    from linkcli.analyses.ik import target_pose
    from linkcli.core.inverse import _project_loops, _stationarity, _task, _task_weights, task_rows
    from linkcli.core.loop_closure import constraints
    from linkcli.core.sweep import configuration_at

    mech = compile_mechanism(load_mechanism("mechanisms/fivebar.yaml").model)
    T, _ = target_pose(mech, [1.0, 3.5])
    rows = task_rows(mech, "position")
    w = _task_weights(mech, rows)
    q = configuration_at(mech, np.radians([75.0, 100.0])).q

    def f(p):
        e = _task(mech, _project_loops(mech, p, 1e-12), T, rows)[0] * w
        return 0.5 * float(e @ e)

    basis = np.linalg.svd(constraints(mech, q).J)[2][mech.n_constraints:]  # (2, n_q) orthonormal
    h = 1e-5
    along = np.array([(f(q + h * s) - f(q - h * s)) / (2 * h) for s in basis])
    e, Jt, ev, _ = _task(mech, q, T, rows)
    A, r = Jt * w[:, None], e * w
    measured = _stationarity(mech, q, A, r, ev.J) * np.linalg.norm(A) * np.linalg.norm(r)
    assert measured == pytest.approx(np.linalg.norm(along), rel=1e-6)
    assert np.linalg.norm(along) > 1e-2  # a pose away from the minimum: the check is not 0 == 0


def test_unreachable_five_bar_is_solved_in_few_iterations():
    """Iterations of the answer (the best attempt's plus its polish's): the polish once ran to
    its 500-iteration cap (548 reported, ~10 s) because its stop test sat below the rounding
    floor of the loop residual."""
    mech = compile_mechanism(load_mechanism("mechanisms/fivebar.yaml").model)
    table = run_ik(mech, IKRequest([[1.0, 3.5]], mode="position")).table
    assert table["status"][0] == "unreachable" and table["iterations"][0] < 100
