"""Sweeps past limit positions and singular points keep their joint angles: no ok row whole
turns away from its neighbour (the predictor from a nearly singular J_p used to propose huge
steps; the corrector converged turns away and the branch test, relative to that step,
accepted: the Chebyshev linkage's rows after a limit position had B.q ~ 408,841 deg, all ok,
no event). continuation.predictor_step_limit now caps the predictor and bisects above it.

Truth, independent of the solver: the Chebyshev straight-line linkage is the four-bar
ground 4, rocker 5, coupler 2, rocker 5 (mechanisms/gallery/chebyshev.yaml); its input
left_pivot = phi is the four-bar input theta = phi + atan2(4, 3) of kin_helpers.fourbar_yaml
(the left rocker's frame B sits at (3, 4)), and left_pivot = -90 deg is an exact limit
position (|A - O4| = 3 = c - b, a 3-4-5 triangle). Its joint angles in closed form (circle
intersection, test_fourbar_closed_form.closed_form_joint_angles), either assembly mode, are
compared with every ok row modulo 2 pi, and between consecutive ok rows without an event
the change must equal the closed form's change in the same mode (steps here move no joint
by half a turn: a wrong turn shows as 2 pi). Tolerance 1e-6 rad: residual 1e-10 (relative)
times the condition number of J_p (rows with condition < 1e4 are compared; closer to the
limit positions, where the error grows like sqrt(residual), only the change is checked,
to 1e-3 rad; a wrong turn is 6.28 rad)."""

from pathlib import Path

import numpy as np
import pytest
from test_fourbar_closed_form import closed_form_joint_angles, wrap

from linkcli.core.loop_closure import Status, _solve_configuration

D, A, B, C = 4.0, 5.0, 2.0, 5.0  # the Chebyshev linkage as fourbar_yaml's four-bar
OFFSET = np.arctan2(4.0, 3.0)
# the file's joint angles (left_pivot, B, A, right_pivot) minus fourbar_yaml's (crank_pin, A, B,
# O4): its links are drawn at angles OFFSET (left rocker), pi (coupler, B -> A) and
# pi - OFFSET (right rocker, Q2 -> A) where fourbar_yaml draws them along x
FILE_MINUS_CLOSED = np.array([-OFFSET, OFFSET - np.pi, OFFSET, np.pi - OFFSET])
ROOT = Path(__file__).resolve().parents[2]


def excused(events, i):
    """An event says the joint angles may jump from row i to row i + 1: any event at row i + 1
    (reassembled, branch jump, ...), or a singular point / crossing at row i (reported between
    rows i and i + 1). A reassembly at row i excuses row i only, not its successor."""
    return any(e.index == i + 1 or (e.index == i and "singular" in e.kind) for e in events)


def paths():
    out = {"cli_-10deg": np.arange(0.0, -181.0, -10.0),
           "45deg": np.arange(40.0, -321.0, -45.0),
           "reversing_10deg": np.concatenate([np.arange(0.0, -181.0, -10.0), np.arange(-170.0, 1.0, 10.0)]),
           "reversing_45deg": np.concatenate([np.arange(0.0, -316.0, -45.0), np.arange(-270.0, 1.0, 45.0)])}
    return out


def check_against_closed_form(mech, phi_deg, res):
    theta = np.radians(phi_deg) + OFFSET
    ok = res.status == Status.CONVERGED
    assert ok.sum() >= 3
    closed = {s: closed_form_joint_angles(D, A, B, C, theta, s) + FILE_MINUS_CLOSED for s in (+1, -1)}
    err = {s: np.abs(wrap(res.q - closed[s])).max(axis=1) for s in (+1, -1)}
    mode = np.where(err[+1] <= err[-1], 1, -1)
    well = ok & (res.condition < 1e4)
    np.testing.assert_array_less(np.minimum(err[+1], err[-1])[well], 1e-6)
    np.testing.assert_array_less(np.minimum(err[+1], err[-1])[ok], 1e-3)
    for i in range(len(theta) - 1):
        if not (ok[i] and ok[i + 1]) or excused(res.events, i):
            continue
        assert mode[i] == mode[i + 1], (i, phi_deg[i])  # a change of mode is an event
        s = mode[i]
        step = wrap(closed[s][i + 1] - closed[s][i])
        np.testing.assert_allclose(res.q[i + 1] - res.q[i], step, atol=1e-3, err_msg=str(phi_deg[i + 1]))


@pytest.mark.parametrize("path", ["interpreted", "kernel"])
@pytest.mark.parametrize("max_step", [10.0, 45.0])
@pytest.mark.parametrize("name", sorted(paths()))
def test_chebyshev_rows_past_limit_positions_match_the_closed_form(name, max_step, path):
    from linkcli.core import sweep

    mech = chebyshev()
    phi = paths()[name]
    solve = sweep._solve_sweep_interpreted if path == "interpreted" else sweep._solve_sweep_compiled
    res = solve(mech, np.radians(phi)[:, None], mech.q_init, 1e-10, np.radians(max_step))
    check_against_closed_form(mech, phi, res)


def chebyshev():
    from linkcli.compile import compile_mechanism
    from linkcli.io.loader import load_mechanism

    return compile_mechanism(load_mechanism(ROOT / "mechanisms/gallery/chebyshev.yaml").model)


@pytest.mark.parametrize("file", ["mechanisms/gallery/chebyshev.yaml", "mechanisms/coupling_rod.yaml",
                                  "mechanisms/parallelogram.yaml"])
@pytest.mark.parametrize("max_step", [10.0, 45.0])
def test_example_sweeps_close_their_loops_and_move_continuously(file, max_step):
    """The examples at 10 deg input steps (forward and reversing, coarse steps 10 and 45 deg):
    every ok row closes its loops (re-evaluated by loop_closure, no iteration) and no passive
    joint moves by more than the predictor's limit between consecutive ok rows unless an
    event says so (at 10 deg steps, these mechanisms' passive joints move < 0.5 rad away from
    their singular points; a wrong turn is 6.28 rad)."""
    from linkcli.compile import compile_mechanism
    from linkcli.core import sweep
    from linkcli.io.loader import load_mechanism

    mech = compile_mechanism(load_mechanism(ROOT / file).model)
    a0 = mech.q_init[mech.q_actuated]
    out = np.radians(np.arange(0.0, 181.0, 10.0))
    for Q in (a0 + np.radians(np.arange(0.0, 361.0, 10.0))[:, None],
              a0 + np.concatenate([out, out[::-1][1:], -out[1:]])[:, None]):
        res = sweep._solve_sweep_compiled(mech, Q, mech.q_init, 1e-10, np.radians(max_step))
        ok = res.status == Status.CONVERGED
        assert np.isfinite(res.q[ok]).all()
        closed = _solve_configuration(mech, Q[ok], res.q[ok], 1e-10, 0)[0]
        assert (closed.status == Status.CONVERGED).all()
        limit = np.pi / 2  # (continuation.predictor_step_limit of a rotation)
        for i in range(len(Q) - 1):
            if ok[i] and ok[i + 1] and not excused(res.events, i):
                assert np.abs(res.q[i + 1] - res.q[i]).max() <= limit, (file, i)


def test_failed_points_start_from_the_latest_converged_point():
    """The coupling rod (three cranks coupled as parallelograms) on a reversing path, 3 deg steps,
    45 deg coarse steps, passes its change point at 180 deg exactly on a grid point twice; some
    points after it fail. Each failed point used to start its corrector from its failed
    neighbour's q, and rows of failed points reported joint angles of ~1e9 rad. Truth: every
    passive angle of this linkage equals +-(crank angle) on either branch (parallelograms), so
    no attempt (ok or failed) started from a converged point ends more than a turn beyond the
    inputs' range (|q| <= pi + 2 pi here); the converged rows close their loops."""
    from linkcli.compile import compile_mechanism
    from linkcli.core import sweep
    from linkcli.io.loader import load_mechanism

    mech = compile_mechanism(load_mechanism(ROOT / "mechanisms/coupling_rod.yaml").model)
    a0 = mech.q_init[mech.q_actuated]
    t = np.concatenate([np.linspace(0, 0.5, 61), np.linspace(0.5, -0.5, 121)[1:]])
    Q = a0 + 2 * np.pi * t[:, None]
    for solve in (sweep._solve_sweep_compiled, sweep._solve_sweep_interpreted):
        res = solve(mech, Q, mech.q_init, 1e-10, np.radians(45.0))
        assert np.abs(res.q).max() <= 3 * np.pi
        ok = res.status == Status.CONVERGED
        assert ok.sum() > len(Q) // 2
        assert (_solve_configuration(mech, Q[ok], res.q[ok], 1e-10, 0)[0].status == Status.CONVERGED).all()


@pytest.mark.parametrize("step", [0.5, 3.0])
@pytest.mark.parametrize("path", ["interpreted", "kernel"])
def test_parallelogram_reversing_through_its_change_point_keeps_its_branch(step, path):
    """mechanisms/parallelogram.yaml (ground = coupler, crank = rocker) on a path from 60 deg
    out to 240 and back to -120 deg, 45 deg coarse steps: on the way back a grid point sits
    exactly on the change point at 180 deg. The step after it used to fail (branch_jump) and
    the following rows stayed ok on the crossed branch until a false singular_crossing brought
    them back; the fine pass now continues with the secant through the two previous points
    (as the coarse pass), which carries the branch through the change point. Truth: on the
    open branch the coupler stays parallel to the ground, coupler joint = -crank joint
    exactly (the estimate's sum is 0); tolerance 1e-8 rad (residual 1e-10 times the passive
    Jacobian's condition away from the change points; at them the exact point itself is
    solved to the same residual)."""
    from linkcli.compile import compile_mechanism
    from linkcli.core import sweep
    from linkcli.io.loader import load_mechanism

    mech = compile_mechanism(load_mechanism(ROOT / "mechanisms/parallelogram.yaml").model)
    a0 = mech.q_init[mech.q_actuated]
    n = int(round(360 / step)) + 1
    t = np.concatenate([np.linspace(0, 0.5, n // 2 + 1), np.linspace(0.5, -0.5, n)[1:]])
    Q = a0 + 2 * np.pi * t[:, None]
    solve = sweep._solve_sweep_interpreted if path == "interpreted" else sweep._solve_sweep_compiled
    res = solve(mech, Q, mech.q_init, 1e-10, np.radians(45.0))
    assert (res.status == Status.CONVERGED).all()
    assert mech.q_init[0] + mech.q_init[1] == 0.0
    np.testing.assert_allclose(res.q[:, 1], -res.q[:, 0], atol=1e-8)
    assert all(e.kind in ("singular_crossing", "singular_point") for e in res.events)
