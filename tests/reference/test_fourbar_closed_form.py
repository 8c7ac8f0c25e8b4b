"""Four-bar positions against the closed form (circle intersection, equivalent to
Freudenstein's equation), both assembly modes, full crank revolutions, with branch keeping.

Provenance: the crank-rocker 4/1/3.5/3 is the reference library's case; the closed form is
B = intersection of the circles |B - A| = b and |B - O4| = c, A = a (cos t, sin t).
Tolerance: the solver converges to 1e-10 relative residual; positions then agree to ~1e-9 m
for unit-size links (the loop residual bounds the position error through a well-conditioned
Jacobian: condition < 1e2 away from toggles). We assert 1e-8.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kin_helpers import fourbar_closed_form, fourbar_yaml, mech_from_yaml

from linkcli.core.forward import frame_poses, link_poses
from linkcli.core.loop_closure import Status
from linkcli.core.planar_metrics import fourbar_loops, grashof_class, input_range, transmission_angle
from linkcli.core.sweep import solve_sweep

TOL = 1e-8


def pin_B(mech, q):
    return frame_poses(mech, link_poses(mech, q))[:, mech.frame_index("coupler.B"), :2, 3]


@pytest.mark.parametrize("sign, coupler_angle", [(+1, 0.6), (-1, -0.6)])
def test_crank_rocker_both_modes_full_revolution(sign, coupler_angle):
    d, a, b, c = 4.0, 1.0, 3.5, 3.0
    mech = mech_from_yaml(fourbar_yaml(d, a, b, c, assembly=f"{{crank_pin: 0.3, A: {coupler_angle}}}"))
    theta = np.linspace(0.0, 2 * np.pi, 721)
    res = solve_sweep(mech, theta[:, None], mech.q_init)
    assert np.all(res.status == Status.CONVERGED)
    expected = fourbar_closed_form(d, a, b, c, theta, sign)
    np.testing.assert_allclose(pin_B(mech, res.q), expected, atol=TOL)
    # angles are continuous: the coupler joint makes one full turn back (no +-180 deg wrap)
    assert np.abs(np.diff(res.q, axis=0)).max() < 0.1
    assert res.q[-1, 1] - res.q[0, 1] == pytest.approx(-2 * np.pi, abs=1e-8)
    assert res.events == ()


def test_two_revolutions_keep_branch_past_360():
    mech = mech_from_yaml(fourbar_yaml(4, 1, 3.5, 3, assembly="{crank_pin: 0.0, A: 0.9}"))
    theta = np.linspace(0, 4 * np.pi, 1441)
    res = solve_sweep(mech, theta[:, None], mech.q_init)
    np.testing.assert_allclose(pin_B(mech, res.q), fourbar_closed_form(4, 1, 3.5, 3, theta, +1), atol=TOL)
    np.testing.assert_allclose(res.q[720], res.q[0] + [2 * np.pi, -2 * np.pi, 0, 0], atol=1e-8)


def test_non_grashof_reports_limit_positions():
    """Triple rocker 4/3/1.5/2 (s + l = 5.5 > p + q = 5): the input cannot turn fully; the
    analytic range is where |A - O4| lies in [|b - c|, b + c]."""
    d, a, b, c = 4.0, 3.0, 1.5, 2.0
    mech = mech_from_yaml(fourbar_yaml(d, a, b, c, assembly="{crank_pin: 0.5, A: -1.0}"))
    loop = fourbar_loops(mech)[0]
    assert grashof_class(*loop.lengths) == "triple-rocker"
    lo, hi = input_range(loop)
    assert (lo, hi) == pytest.approx((-1.01072, 1.01072), abs=1e-5)  # arccos((25 - 12.25) / 24)
    theta = np.linspace(-1.5, 1.5, 301)
    res = solve_sweep(mech, theta[:, None], mech.q_init)
    ok = res.status == Status.CONVERGED
    inside = (theta > lo + 1e-3) & (theta < hi - 1e-3)
    outside = (theta < lo - 1e-3) | (theta > hi + 1e-3)
    assert ok[inside].all() and not ok[outside].any()
    kinds = {e.kind for e in res.events}
    assert "no_assembly" in kinds


@settings(max_examples=25, deadline=None, derandomize=True)
@given(s=st.floats(0.3, 1.0), gaps=st.lists(st.floats(0.05, 1.0), min_size=3, max_size=3),
       mode=st.sampled_from([1, -1]))
def test_random_grashof_crank_rockers(s, gaps, mode):
    """Crank-rockers valid by construction: crank shortest, s + l < p + q (Grashof)."""
    p, q_, l_max = sorted([s + g for g in np.cumsum(gaps)])
    if s + l_max >= p + q_ - 1e-3:
        l_max = p + q_ - s - 0.05
        if l_max <= q_:
            return
    d, b, c = l_max, p, q_  # ground longest; the shortest link is the crank -> crank-rocker
    mech = mech_from_yaml(fourbar_yaml(d, s, b, c, assembly=f"{{crank_pin: 0.0, A: {0.5 * mode}}}"))
    assert grashof_class(*fourbar_loops(mech)[0].lengths) == "crank-rocker"
    theta = np.linspace(0, 2 * np.pi, 361)
    res = solve_sweep(mech, theta[:, None], mech.q_init)
    assert np.all(res.status == Status.CONVERGED)
    B = pin_B(mech, res.q)
    errs = [np.abs(B - fourbar_closed_form(d, s, b, c, theta, sg)).max() for sg in (1, -1)]
    assert min(errs) < TOL * max(1, l_max)  # one branch, all the way round
    assert max(errs) > 1e-3


def test_transmission_angle_closed_form():
    """cos(mu) = (b^2 + c^2 - |A - O4|^2) / (2 b c)."""
    d, a, b, c = 4.0, 1.0, 3.5, 3.0
    mech = mech_from_yaml(fourbar_yaml(d, a, b, c, assembly="{crank_pin: 0.0, A: 0.6}"))
    theta = np.linspace(0, 2 * np.pi, 73)
    res = solve_sweep(mech, theta[:, None], mech.q_init)
    mu = transmission_angle(mech, fourbar_loops(mech)[0], res.q)
    expected = np.arccos((b * b + c * c - (a * a + d * d - 2 * a * d * np.cos(theta))) / (2 * b * c))
    np.testing.assert_allclose(mu, expected, atol=1e-8)


@pytest.mark.parametrize("lengths, expected", [
    ((4, 1, 3.5, 3), "crank-rocker"), ((1, 4, 3.5, 3), "double-crank"), ((4, 3, 1, 3.5), "double-rocker"),
    ((4, 3, 2, 3.5), "double-rocker"), ((4, 3, 1.5, 2), "triple-rocker"), ((2, 1, 2, 1), "change-point"),
    ((4, 3.5, 3, 1), "rocker-crank")])
def test_grashof_classes(lengths, expected):
    assert grashof_class(*lengths) == expected


@pytest.mark.parametrize("path", ["default", "interpreted", "kernel"])
def test_parallelogram_keeps_its_branch_through_the_change_point(path):
    """A parallelogram (ground = coupler, crank = rocker) has change points at 0 and 180 deg
    where the open and crossed branches meet. Following the open branch, the coupler stays
    parallel to the ground: A = -crank exactly. The singular point is reported. A coarse
    point lands exactly on the change point, where the tangent is undefined: only the secant
    predictor through the previous coarse point carries the branch on (the compiled kernel,
    which had no secant predictor, took the crossed branch there and reported a reassembly)."""
    from linkcli.core import sweep

    mech = mech_from_yaml(fourbar_yaml(3, 1, 3, 1, assembly="{crank_pin: 0.5, A: -0.5, B: 0.5, O4: -0.5}"))
    theta = np.radians(np.arange(10, 351, 5.0))  # lands exactly on 180 deg
    if path == "default":
        res = solve_sweep(mech, theta[:, None], mech.q_init)
    else:
        solve = sweep._solve_sweep_interpreted if path == "interpreted" else sweep._solve_sweep_compiled
        res = solve(mech, theta[:, None], mech.q_init, 1e-10, np.radians(10.0))
    assert np.all(res.status == Status.CONVERGED)
    np.testing.assert_allclose(res.q[:, 1], -theta, atol=1e-8)
    at = [theta[e.index] for e in res.events if e.kind in ("singular_point", "singular_crossing")]
    assert at and all(abs(np.degrees(a) - 180) <= 5 for a in at)


@pytest.mark.parametrize("path", ["interpreted", "kernel"])
@pytest.mark.parametrize("start", [1.0, -1.0])
def test_near_change_point_keeps_its_branch_with_coarse_steps(path, start):
    """Ground 3, crank 1, coupler 2, rocker 2.002: b + c exceeds a + d by 2 mm, so the change
    point (b + c = a + d) is missed and the two assembly modes stay apart (at crank 180 deg the
    coupler-rocker triangle 2/2.002/4 has height ~0.06 m, so the modes' B differ by ~0.13 m),
    but only just: with 5 deg steps and 10 deg coarse steps, a corrector started from the
    tangent predictor near 180 deg converges onto the other mode unless the continuation's
    branch check rejects it and bisects the step. The sweep starts off the grid (3 deg) so that
    no point sits at the closest approach. Truth: the circle intersection with the sign of the
    first point's mode, at every point. Tolerance: residual 1e-10 (relative) times the passive
    Jacobian's condition number (asserted < 1e3 below) bounds the position error by ~1e-7 m of
    a 3 m mechanism; the other mode is 1e5 times farther."""
    from linkcli.core import sweep

    d, a, b, c = 3.0, 1.0, 2.0, 2.002
    mech = mech_from_yaml(fourbar_yaml(d, a, b, c, assembly=f"{{A: {start}}}"))
    theta = np.radians(3.0 + np.arange(0.0, 361.0, 5.0))
    solve = sweep._solve_sweep_interpreted if path == "interpreted" else sweep._solve_sweep_compiled
    res = solve(mech, theta[:, None], mech.q_init, 1e-10, np.radians(10.0))
    assert (res.status == Status.CONVERGED).all()
    assert res.condition.max() < 1e3
    B = pin_B(mech, res.q)
    err = {s: np.abs(B - fourbar_closed_form(d, a, b, c, theta, s)).max(axis=1) for s in (+1, -1)}
    sign = min(err, key=lambda s: err[s][0])
    assert err[sign][0] < 1e-7 and err[-sign][0] > 0.1  # the first point is in one mode
    np.testing.assert_array_less(err[sign], 1e-7)


# Four-bars 0.03-5 mm from a change point (b + c = a + d + gap: Grashof crank-rockers whose two
# assembly modes come within ~0.008-0.08 of each other in sin(transmission angle) once per
# revolution), swept off the grid with steps and coarse steps (max_step) for which the
# corrector, started from the tangent predictor, converges onto the other mode unless the
# continuation rejects it: (d, a, b, c, step deg, first point deg, max_step deg). The first
# rows are the defect's repro cases (3/1/2/2.001 and 2.0005 in 0.5-2.5 deg steps, 3/1/3/1.002
# from 3 deg, 3/1/3/1.005 with 30 deg coarse steps), the others vary the geometry.
NEAR_CHANGE_POINT = [
    (3.0, 1.0, 2.0, 2.001, 0.5, 0.3, 10.0), (3.0, 1.0, 2.0, 2.001, 1.0, 0.3, 10.0),
    (3.0, 1.0, 2.0, 2.001, 2.5, 0.3, 10.0), (3.0, 1.0, 2.0, 2.0005, 0.5, 0.3, 10.0),
    (3.0, 1.0, 2.0, 2.0005, 2.0, 0.3, 10.0), (3.0, 1.0, 3.0, 1.002, 5.0, 3.0, 10.0),
    (3.0, 1.0, 3.0, 1.002, 2.0, 3.0, 10.0), (3.0, 1.0, 3.0, 1.005, 5.0, 3.0, 30.0),
    (3.0, 1.0, 3.0, 1.002, 5.0, 3.0, 30.0), (4.0, 1.0, 2.0, 3.001, 1.5, 0.7, 10.0),
    (3.0, 1.0, 2.5, 1.5005, 1.0, 0.2, 10.0), (3.0, 1.0, 2.0, 2.0002, 0.5, 0.1, 10.0),
    # found by a random search (seed 1, 300 four-bars): a point between two coarse points
    # jumps while both coarse points keep the mode (the fine points' det J_p check catches it)
    (3.9578556053413383, 1.0, 3.510387031097098, 1.4475020293339085, 2.9439156674385187, 4.4399934685131415, 30.0),
    (3.5839783592011405, 1.0, 2.8393047580345234, 1.7447065597811633, 5.898318434434528, 3.706926291433068, 30.0),
]


def sin_transmission(d, a, b, c, theta):
    """|sin| of the coupler-rocker angle of the closed form (either mode): twice the area of
    triangle A B O4 over b c; det J_p of the passive partition is proportional to it, so it
    vanishes exactly where J_p is singular (dead centres, change points)."""
    L = np.hypot(d - a * np.cos(theta), a * np.sin(theta))
    x = (b * b - c * c + L * L) / (2 * L)
    return np.sqrt(np.maximum(b * b - x * x, 0.0)) * L / (b * c)


def _assert_one_mode_and_true_crossings(d, a, b, c, theta, B, events):
    """Pin B (n, 2) stays in the closed-form assembly mode of its first point to 1e-7 m (the
    other mode is > 1e-3 m away there), and every event is a singular crossing with a toggle
    position (sin of the transmission angle < 1e-3 on a fine grid) between its two points."""
    err = {s: np.abs(B - fourbar_closed_form(d, a, b, c, theta, s)).max(axis=1) for s in (+1, -1)}
    sign = min(err, key=lambda s: err[s][0])
    assert err[sign][0] < 1e-7 and err[-sign][0] > 1e-3  # the first point is in one mode
    np.testing.assert_array_less(err[sign], 1e-7)
    for e in events:
        assert e.kind == "singular_crossing", e
        between = np.linspace(theta[e.index], theta[e.index + 1], 1001)
        assert sin_transmission(d, a, b, c, between).min() < 1e-3, e


@pytest.mark.parametrize("path", ["interpreted", "kernel"])
@pytest.mark.parametrize("start", [1.0, -1.0])
@pytest.mark.parametrize("d, a, b, c, step, first, max_step", NEAR_CHANGE_POINT)
def test_near_change_point_sweeps_keep_their_branch(d, a, b, c, step, first, max_step, start, path):
    """The continuation must not jump to the other mode (it used to, with every row ``ok``
    and errors up to 3.5 m, the only trace a ``singular_crossing`` event that was not one):
    every row on the first point's mode of the closed form, and any singular crossing reported
    must be real: the closed form's sin(transmission angle) (~ det J_p) gets near zero between
    the two points (below 1e-3; on these four-bars it stays above 0.0078, so none may be
    reported). Tolerance 1e-7 m on a 3-4 m mechanism: residual 1e-10 (relative) times the
    condition number of J_p (< 1e3 here, asserted) bounds the position error by ~1e-7 of the
    size; the other mode is > 1e4 times farther."""
    from linkcli.core import sweep

    mech = mech_from_yaml(fourbar_yaml(d, a, b, c, assembly=f"{{A: {start}}}"))
    theta = np.radians(first + np.arange(0.0, 361.0, step))
    solve = sweep._solve_sweep_interpreted if path == "interpreted" else sweep._solve_sweep_compiled
    res = solve(mech, theta[:, None], mech.q_init, 1e-10, np.radians(max_step))
    assert (res.status == Status.CONVERGED).all()
    assert res.condition.max() < 1e3
    B = pin_B(mech, res.q)
    _assert_one_mode_and_true_crossings(d, a, b, c, theta, B, res.events)


@pytest.mark.parametrize("d, a, b, c, first, step, start", [
    # found by a random search (seed 3, 250 four-bars): from the estimate {A: -1} the kernel's
    # plain Newton at the first input converged to the other assembly mode with angles turns
    # away (-23.35 rad for -1.99), while solve_sweep assembles at the estimate first
    (3.19899, 1.0, 1.31229, 2.89043, 4.06, 5.07, -1.0),
    (3.19899, 1.0, 1.31229, 2.89043, 4.06, 5.07, 1.0),
])
def test_compiled_sweep_starts_in_the_estimates_assembly_mode(d, a, b, c, first, step, start):
    """Both paths take the first point by one routine (assembly at the estimate, then
    continuation to the first input), so the compiled sweep keeps the assembly mode the file's
    estimate chose. Truth: every row of both paths on the circle-intersection closed form's
    mode (1e-7 m, as above) nearest the estimate (its coupler joint A, the only one it sets,
    against the closed form's at the estimate's own input, crank 0, in either mode, wrapped), with the same joint angles
    (no turns added)."""
    from linkcli.core import sweep

    mech = mech_from_yaml(fourbar_yaml(d, a, b, c, assembly=f"{{A: {start}}}"))
    theta = np.radians(first + np.arange(0.0, 361.0, step))
    results = [f(mech, theta[:, None], mech.q_init, 1e-10, np.radians(10.0))
               for f in (sweep._solve_sweep_interpreted, sweep._solve_sweep_compiled)]
    modes = []
    for res in results:
        assert (res.status == Status.CONVERGED).all()
        B = pin_B(mech, res.q)
        err = {s: np.abs(B - fourbar_closed_form(d, a, b, c, theta, s)).max(axis=1) for s in (+1, -1)}
        sign = min(err, key=lambda s: err[s][0])
        np.testing.assert_array_less(err[sign], 1e-7)
        modes.append(sign)
    q0 = mech.q_init
    crank = np.array([q0[0]])
    gap = {s: abs(wrap(start - closed_form_joint_angles(d, a, b, c, crank, s)[0, 1])) for s in (+1, -1)}
    expected = min(gap, key=gap.get)
    assert gap[-expected] > 2 * gap[expected]  # the estimate is clearly nearer one mode
    assert modes == [expected, expected]
    np.testing.assert_allclose(results[1].q, results[0].q, atol=1e-8)


def closed_form_joint_angles(d, a, b, c, theta, sign):
    """Joint angles (crank_pin, A, B, O4) of fourbar_yaml's four-bar in closed form, each
    wrapped to (-pi, pi]: the crank angle, then the relative angle child - parent of every joint
    from the absolute link angles (crank theta, coupler along A -> B, rocker along O4 -> B,
    ground 0) of the circle-intersection pin B."""
    B = fourbar_closed_form(d, a, b, c, theta, sign)
    A = np.stack([a * np.cos(theta), a * np.sin(theta)], -1)
    coupler = np.arctan2(B[:, 1] - A[:, 1], B[:, 0] - A[:, 0])
    rocker = np.arctan2(B[:, 1], B[:, 0] - d)
    return np.stack([theta, coupler - theta, rocker - coupler, -rocker], -1)


def wrap(x):
    return (x + np.pi) % (2 * np.pi) - np.pi


@pytest.mark.parametrize("path", ["interpreted", "kernel"])
@pytest.mark.parametrize("start, step, turn", [(0.6, 3.0, 90.0), (0.6, 7.0, 90.0), (0.6, 3.0, 360.0),
                                               (-0.6, 3.0, 360.0)])
def test_reversing_path_keeps_continuous_angles_between_coarse_points(path, start, step, turn):
    """A crank that turns forward and back (0 -> ``turn`` -> 0 deg) with coarse steps of up to
    45 deg: the coarse segment around the reversal has its two ends at nearby inputs, but the
    points between them run out to the reversal and back, so the Hermite guesses between the
    coarse points (which take the input as linear in the index) are up to ~1.3 rad off, and
    the batched corrector converges from some of them onto the *same* assembly mode with joint
    angles whole turns away (2 pi ... 12 pi): the det J_p check cannot see that, only the
    check of each fine point's distance from its guess (the kernel's fine pass, as the former numpy
    path's batched fill did) sends such a point back to continuation from its neighbour.

    Truth, independent of the solver: the closed-form joint angles (circle intersection) in the
    first point's mode, continued along the path: every joint angle's change between
    neighbours equals the closed-form change wrapped to (-pi, pi] (the steps here are < 0.2
    rad), and the first point equals the closed form modulo 2 pi. Tolerance 1e-8 rad: the
    residual tolerance 1e-10 (relative to the 4 m size) times the inverse passive Jacobian's
    norm (< 25 on this crank-rocker, see test_kinematics_fast) bounds each angle's error by
    ~1e-8; a wrong turn is 6.28 rad."""
    from linkcli.core import sweep

    d, a, b, c = 4.0, 1.0, 3.5, 3.0
    mech = mech_from_yaml(fourbar_yaml(d, a, b, c, assembly=f"{{crank_pin: 0.3, A: {start}}}"))
    out = np.radians(np.arange(0.0, turn + 1e-9, step))
    theta = np.concatenate([out, out[::-1][1:]])
    solve = sweep._solve_sweep_interpreted if path == "interpreted" else sweep._solve_sweep_compiled
    res = solve(mech, theta[:, None], mech.q_init, 1e-10, np.radians(45.0))
    assert (res.status == Status.CONVERGED).all()
    closed = closed_form_joint_angles(d, a, b, c, theta, +1 if start > 0 else -1)
    np.testing.assert_allclose(wrap(res.q[0] - closed[0]), 0.0, atol=1e-8)
    np.testing.assert_allclose(np.diff(res.q, axis=0), wrap(np.diff(closed, axis=0)), atol=1e-8)


@pytest.mark.parametrize("start", [1.0, -1.0])
@pytest.mark.parametrize("d, a, b, c, step, first, max_step",
                         NEAR_CHANGE_POINT[:3] + NEAR_CHANGE_POINT[5:6] + NEAR_CHANGE_POINT[-2:])
def test_near_change_point_spatial_files_keep_their_branch(d, a, b, c, step, first, max_step, start):
    """The same four-bars written as spatial files (6 constraint rows per loop, 3 passive
    variables: J_p is tall and has no det of its own; the branch checks take the det of its
    projection on the constraint subspace at each step's start). Before that, the numpy path
    made no det check on them and 3/1/2/2.001 from 0.3 deg in 0.5 deg steps jumped to the
    other mode with every row ok (pin B 3.47 m off the closed form). Truth and tolerance as in
    test_near_change_point_sweeps_keep_their_branch (the motion is the same plane's: z = 0)."""
    mech = mech_from_yaml(fourbar_yaml(d, a, b, c, assembly=f"{{A: {start}}}", kind="spatial"))
    assert mech.n_constraints == 6 and mech.n_q - mech.n_actuated == 3
    theta = np.radians(first + np.arange(0.0, 361.0, step))
    res = solve_sweep(mech, theta[:, None], mech.q_init, max_step=np.radians(max_step))
    assert (res.status == Status.CONVERGED).all()
    assert res.condition.max() < 1e3
    poses = frame_poses(mech, link_poses(mech, res.q))[:, mech.frame_index("coupler.B"), :3, 3]
    np.testing.assert_allclose(poses[:, 2], 0.0, atol=1e-9)  # stays in its plane
    B = poses[:, :2]
    _assert_one_mode_and_true_crossings(d, a, b, c, theta, B, res.events)


def test_parallelogram_spatial_file_reports_its_change_point():
    """The parallelogram of test_parallelogram_keeps_its_branch_through_the_change_point as a
    spatial file: the open branch is kept (A = -crank exactly, 1e-8 rad as there) and the
    change point at 180 deg is reported, now that the projected det J_p is checked."""
    mech = mech_from_yaml(fourbar_yaml(3, 1, 3, 1, assembly="{crank_pin: 0.5, A: -0.5, B: 0.5, O4: -0.5}",
                                       kind="spatial"))
    theta = np.radians(np.arange(10, 351, 5.0))
    res = solve_sweep(mech, theta[:, None], mech.q_init)
    assert np.all(res.status == Status.CONVERGED)
    np.testing.assert_allclose(res.q[:, 1], -theta, atol=1e-8)
    at = [theta[e.index] for e in res.events if e.kind in ("singular_point", "singular_crossing")]
    assert at and all(abs(np.degrees(a) - 180) <= 5 for a in at)
