"""Which configuration: the assembly mode of the file's estimate and the winding of passive
angles, against closed forms written here without linkcli (a tester's silent wrong answers).

Truths (each written independently of linkcli's solver):

* four-bar, crank input: A = a (cos t, sin t), B the intersection of the circles (A, b) and
  (O4, c), the mode the sign of the angle at A; rocker input: A the intersection of the circles
  (O2, a) and (B, b). The estimate's mode is the sign whose configuration is nearest the
  estimate; the physical winding of each relative angle is the closed form unwrapped along a
  fine path (2001 points) of the input from the estimate's value, starting from the
  representative nearest the estimate's angle (continuous motion from the estimate).
* offset slider-crank: slide = cos t +- sqrt(L^2 - (e - sin t)^2) (crank 1, offset e).
* static input torque by virtual work: tau = dV/dq (V = gravity + spring potential of the
  closed-form configuration), central differences h = 1e-6 rad (truncation ~1e-10 of V'''/6).

Tolerances: the solver closes loops to 1e-10 (m or rad) and the closed forms are exact to
rounding, so angles agree to ~1e-9 rad; 1e-6 deg (1.7e-8 rad) leaves room for the conditioning
of the passive Jacobian (below 1e3 at these points). The wrong answers found were whole turns
(360 deg) or another mode (tens of degrees) off.
"""

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from linkcli.compile import compile_mechanism
from linkcli.core.loop_closure import Status
from linkcli.core.sweep import configuration_at, solve_sweep
from linkcli.io.loader import load_mechanism

DATA = Path(__file__).resolve().parent / "data" / "branch"
MECH = Path(__file__).resolve().parents[1] / "mechanisms"
r = np.radians
ANGLE_TOL_DEG = 1e-6


def _compiled(path):
    return compile_mechanism(load_mechanism(str(path)).model)


# --- closed forms ---------------------------------------------------------------------------------
def _from_crank(t, a, b, c, d, s):
    """(coupler angle beta, rocker angle phi) absolute, rad: crank a at angle t from O2 = 0,
    coupler b, rocker c about O4 = (d, 0), mode s = +-1."""
    ax, ay = a * np.cos(t), a * np.sin(t)
    dx, dy = d - ax, -ay
    e = np.hypot(dx, dy)
    beta = np.arctan2(dy, dx) + s * np.arccos((b * b + e * e - c * c) / (2 * b * e))
    bx, by = ax + b * np.cos(beta), ay + b * np.sin(beta)
    return beta, np.arctan2(by, bx - d)


def _from_rocker(phi, a, b, c, d, s):
    """(crank angle t, coupler angle beta, A, B) of a four-bar whose rocker is at phi."""
    bx, by = d + c * np.cos(phi), c * np.sin(phi)
    e = np.hypot(bx, by)
    t = np.arctan2(by, bx) + s * np.arccos((a * a + e * e - b * b) / (2 * a * e))
    ax, ay = a * np.cos(t), a * np.sin(t)
    return t, np.arctan2(by - ay, bx - ax), (ax, ay), (bx, by)


def _continuous(values, reference):
    """Angles (rad) along a fine path made continuous, starting at the representative nearest
    ``reference``."""
    u = np.unwrap(values)
    return u - 2 * np.pi * np.round((u[0] - reference) / (2 * np.pi))


def _estimate_mode(rel_at_estimate, estimate):
    """The mode s whose relative angles at the estimate's input are nearest the estimate."""
    def dist(s):
        d = np.asarray(rel_at_estimate(s)) - np.asarray(estimate)
        return np.abs((d + np.pi) % (2 * np.pi) - np.pi).max()
    return min((1, -1), key=dist)


def fourbar_crank_truth(a, b, c, d, t_est, est, t, o4_sign=1):
    """Relative angles (crank_pin, A, B, O4) deg at crank t (rad) reached continuously from the
    estimate (t_est, est = (A, B, O4) rad) in its mode; O4 = o4_sign * phi (the joint's
    parent/child order)."""
    def rel(s, tt):
        beta, phi = _from_crank(tt, a, b, c, d, s)
        return beta - tt, phi - beta, o4_sign * phi
    s = _estimate_mode(lambda s: [v[0] for v in rel(s, np.array([t_est]))], est)
    path = np.linspace(t_est, t, 2001)
    out = [_continuous(v, e)[-1] for v, e in zip(rel(s, path), est, strict=True)]
    return np.degrees([t, *out]), s


# --- item 1: the configuration at inputs away from the estimate -----------------------------------
def test_simulate_start_at_set_input_is_the_estimates_mode(run_cli, tmp_path):
    """mechanisms/fourbar.yaml --set crank_pin=200: main started the crossed mode
    (A -232.80, B -98.95, O4 131.75) while fk/draw gave the open one."""
    out = tmp_path / "s.csv"
    res = run_cli("simulate", MECH / "fourbar.yaml", "--set", "crank_pin=200", "--t-end", "0.001", "-o", out)
    assert res.exit_code == 0, res.stderr
    row = _first_row(out)
    truth, _ = fourbar_crank_truth(1, 3.5, 3, 4, r(45), r([-5.36, 61.85, -101.49]), r(200), o4_sign=-1)
    got = [row["crank_pin.q [deg]"], row["A.q [deg]"], row["B.q [deg]"], row["O4.q [deg]"]]
    np.testing.assert_allclose(got, truth, rtol=0, atol=ANGLE_TOL_DEG)
    assert abs(row["O4.q [deg]"] - (-139.6744)) < 1e-3  # the tester's fk value


def test_simulate_start_of_a_driver_start_is_the_estimates_mode(run_cli, tmp_path):
    """Offset slider-crank, motor start 200 deg: slide = cos t + sqrt(3.5^2 - (0.5 - sin t)^2)
    = 2.4575 m (main: -4.3369 m, the other mode)."""
    out = tmp_path / "s.csv"
    res = run_cli("simulate", DATA / "sc_start200.yaml", "--t-end", "0.001", "-o", out)
    assert res.exit_code == 0, res.stderr
    t = r(200)
    truth = math.cos(t) + math.sqrt(3.5 ** 2 - (0.5 - math.sin(t)) ** 2)
    assert abs(_first_row(out)["slide.q [m]"] - truth) < 1e-9  # (m; loop closure 1e-10)


def test_simulate_start_keeps_the_winding_of_the_motion(run_cli, tmp_path):
    """Triple rocker, --set crank_pin=-90: rocker 196.33 deg reached continuously from the
    estimate (O4 100 deg at crank 30), spring torque -10 (196.33 - 180) deg = -2.85 N m (main:
    A.q = -890494 deg, -103,612 N m, exit 0)."""
    out = tmp_path / "s.csv"
    res = run_cli("simulate", DATA / "trip_spr.yaml", "--set", "crank_pin=-90", "--t-end", "0.001", "-o", out)
    assert res.exit_code == 0, res.stderr
    row = _first_row(out)
    truth, _ = fourbar_crank_truth(2.5, 2, 3, 4, r(30), r([-20, 90, 100]), r(-90))
    got = [row["crank_pin.q [deg]"], row["A.q [deg]"], row["B.q [deg]"], row["O4.q [deg]"]]
    np.testing.assert_allclose(got, truth, rtol=0, atol=ANGLE_TOL_DEG)
    assert abs(truth[3] - 196.335) < 1e-3


def test_fk_and_jacobian_beyond_a_limit_reach_the_input_the_other_way_round(run_cli):
    """Triple rocker (crank range about +-97.9 deg on the estimate's branch): crank 270 deg is
    -90 deg reached the other way round; fk keeps the input 270 and the passive angles of
    crank -90 (main: O4 -492.3 deg, the other mode wound two turns), and jacobian at 270 is
    jacobian at -90 (commands agree)."""
    truth, _ = fourbar_crank_truth(2.5, 2, 3, 4, r(30), r([-20, 90, 100]), r(-90))
    res = run_cli("fk", DATA / "trip.yaml", "--set", "crank_pin=270", "-f", "json")
    assert res.exit_code == 0, res.stderr
    row = json.loads(res.stdout)
    got = [_col(row, "crank_pin.q [deg]"), _col(row, "A.q [deg]"), _col(row, "B.q [deg]"), _col(row, "O4.q [deg]")]
    np.testing.assert_allclose(got, [270, *truth[1:]], rtol=0, atol=ANGLE_TOL_DEG)
    j = {}
    for at in ("270", "-90"):
        out = run_cli("jacobian", DATA / "trip.yaml", "--set", f"crank_pin={at}", "-f", "json")
        assert out.exit_code == 0, out.stderr
        meta = json.loads(out.stdout)["metadata"]
        data = json.loads(out.stdout)["data"]  # every Jacobian column (crank_pin.dv_dq, .dw_dq ...)
        cols = sorted(k for k in data if k.startswith("crank_pin."))
        assert cols
        j[at] = (meta["configuration"], np.array([np.asarray(data[k], float) for k in cols]))
    np.testing.assert_allclose(j["270"][0]["O4"], truth[3], rtol=0, atol=ANGLE_TOL_DEG)
    np.testing.assert_allclose(j["-90"][0]["O4"], truth[3], rtol=0, atol=ANGLE_TOL_DEG)
    # the same configuration, so the same Jacobian (main: -90's entries at 270 by way of the
    # other mode wound); 1e-9 relative: the two solves converge to 1e-10 from different sides
    np.testing.assert_allclose(j["270"][1], j["-90"][1], rtol=1e-9, atol=1e-12)


def test_unreachable_input_is_a_named_failure_not_another_mode(run_cli, tmp_path):
    """Triple rocker at crank 120 deg: |O4 - A| = 5.68 > b + c = 5, so neither 120 nor -240 deg
    closes the loop; the estimate's branch stops where |O4 - A| = 5, cos t = (a^2 + d^2 - 25) /
    (2 a d), t = 97.9 deg. jacobian, draw and simulate fail (exit 1) naming the input and where
    the branch stops, never an ok in another mode."""
    limit = math.degrees(math.acos((2.5 ** 2 + 4 ** 2 - 5 ** 2) / (2 * 2.5 * 4)))
    assert 97 < limit < 99
    mech = _compiled(DATA / "trip.yaml")
    point = configuration_at(mech, np.array([r(120)]))
    assert point.status != Status.CONVERGED and point.route == ""
    # located by bisection to 1e-6 of a 10 deg step (the end of motion is a fold: the solver
    # decides existence to ~sqrt(1e-13) of the input, ~1e-6 rad, there)
    assert abs(math.degrees(point.reached[0]) - limit) < 1e-4
    for args in (["jacobian"], ["draw", "-o", str(tmp_path / "x.png")], ["simulate", "--t-end", "0.001"]):
        res = run_cli(args[0], DATA / "trip.yaml", "--set", "crank_pin=120", *args[1:])
        assert res.exit_code == 1, (args, res.stdout, res.stderr)
        assert "crank_pin = 120 deg" in res.stderr and "stops near crank_pin" in res.stderr, res.stderr
        assert "internal error" not in res.stderr


def test_configuration_at_equals_the_closed_form_in_both_modes():
    """configuration_at from either mode's estimate keeps that mode at a distant input (fourbar,
    the README's crossed-mode estimate included), angles continuous from the estimate."""
    mech = _compiled(MECH / "fourbar.yaml")
    for est in ([-5.36, 61.85, -101.49], [-108.88, -61.85, 125.73]):
        q0 = mech.q_init.copy()
        q0[1:] = r(est)
        for t in (200.0, -170.0, 400.0):
            point = configuration_at(mech, np.array([r(t)]), q0)
            assert point.status == Status.CONVERGED
            truth, _ = fourbar_crank_truth(1, 3.5, 3, 4, r(45), r(est), r(t), o4_sign=-1)
            np.testing.assert_allclose(np.degrees(point.q), truth, rtol=0, atol=ANGLE_TOL_DEG)


# --- item 2: whole turns of passive angles after (re)assembly ---------------------------------------
def test_forces_sweep_starting_beyond_a_limit_keeps_the_winding(run_cli, tmp_path):
    """fb_rock_spr (O4 input, crank spring free at 180 deg): a sweep starting beyond the
    rocker's limit (-150) and one starting inside (-140) give the same rows: crank 202.87 deg
    at O4 = -140 (continuous from the estimate's 45 deg), spring torque -2 (202.87 - 180) deg,
    O4 torque = dV/dq by virtual work (main: crank 1642.87 deg, O4 torque -212.78 N m)."""
    rows = {}
    for sweep in ("O4=-150:-90:10", "O4=-140:-100:10"):
        out = tmp_path / "f.csv"
        res = run_cli("forces", DATA / "fb_rock_spr.yaml", "--static", "--sweep", sweep, "-o", out)
        assert "internal error" not in res.stderr
        rows[sweep] = {round(row["O4.q [deg]"]): row for row in _rows(out)}
    phi = np.linspace(r(101.49), r(140), 2001)  # rocker angle; O4.q = -phi (rocker -> ground)
    s = 1 if abs(math.degrees(_from_rocker(np.array([r(101.49)]), 1, 3.5, 3, 4, 1)[0][0]) - 45) < 1 else -1
    t = _continuous(_from_rocker(phi, 1, 3.5, 3, 4, s)[0], r(45))[-1]

    def potential(p):  # gravity (crank cg at 0.5, rods at their middles) + crank spring, J
        tt, _, (ax, ay), (bx, by) = _from_rocker(np.array([p]), 1, 3.5, 3, 4, s)
        tt = tt[0] - 2 * np.pi * round((tt[0] - t) / (2 * np.pi))
        y = 1.0 * 0.5 * np.sin(tt) + 3.5 * (ay[0] + by[0]) / 2 + 3.0 * by[0] / 2
        return 9.81 * y + 0.5 * 2.0 * (tt - np.pi) ** 2

    h = 1e-6
    tau = -(potential(r(140) + h) - potential(r(140) - h)) / (2 * h)  # d/dq with q = -phi
    for got in (rows["O4=-150:-90:10"][-140], rows["O4=-140:-100:10"][-140]):
        assert abs(got["crank_pin.q [deg]"] - math.degrees(t)) < ANGLE_TOL_DEG
        assert abs(got["crank_return.torque [N m]"] - (-2.0 * (t - np.pi))) < 1e-8
        assert abs(got["O4.torque [N m]"] - tau) < 1e-5 * abs(tau)  # (central differences, ~1e-7)
    assert abs(tau - 255.171) < 1e-3  # the tester's virtual-work figure
    for o4 in (-140, -130, -120, -110):
        a, b = rows["O4=-150:-90:10"][o4], rows["O4=-140:-100:10"][o4]
        assert abs(a["crank_pin.q [deg]"] - b["crank_pin.q [deg]"]) < ANGLE_TOL_DEG


def test_limits_of_a_passive_joint_read_the_physical_winding(run_cli, tmp_path):
    """fb_rock_lim: crank limits [-360, 360]; the crank stays within 45 +- 180 deg on the
    reachable rows (closed form), so none is outside_limits (main: every reachable row was,
    the crank solved to 1655.1 deg)."""
    out = tmp_path / "s.csv"
    run_cli("solve", DATA / "fb_rock_lim.yaml", "-o", out)
    rows = _rows(out)
    solved = [row for row in rows if row["status"] not in ("no_configuration", "not_converged")]
    assert len(solved) == 80
    assert all(row["status"] == "ok" for row in solved)
    assert all(-360 <= row["crank_pin.q [deg]"] <= 360 for row in solved)


def test_static_forces_at_a_far_crank_value_equal_those_at_the_equivalent_value(run_cli):
    """motor_fourbar (rad): crank 1745 rad reached by 277.6 turns of the crank; the rocker's
    angle is the closed form's (a crank-rocker's rocker never winds), spring torque
    -5000 (phi - 2.119) (main: O4 = phi + 2 pi, -32966 N m)."""
    res = run_cli("forces", MECH / "motor_fourbar.yaml", "--static", "--set", "crank_pin=1745", "-f", "json")
    assert res.exit_code == 0, res.stderr
    row = json.loads(res.stdout)
    o4, spring = _col(row, "O4.q [rad]"), _col(row, "return_spring.torque [N m]")
    est = [-0.0936, 1.0795, 1.7713]
    truth, _ = fourbar_crank_truth(0.1, 0.35, 0.3, 0.4, 0.7854, est, 1745.0)
    assert abs(o4 - r(truth[3])) < 1e-9
    assert abs(spring - (-5000.0 * (r(truth[3]) - 2.119))) < 1e-5  # (N m: 5000 x 1e-9 rad)


def test_triple_rocker_sweeps_from_different_starts_agree(run_cli, tmp_path):
    """trip_spr, no gravity: sweeps 120:460:20 (starting where no configuration exists) and
    280:460:20 agree at every common row, O4 continuous from the estimate (crank 280 = -80 deg:
    190.76 deg; main: 190.76 vs -169.24)."""
    got = {}
    for sweep in ("crank_pin=120:460:20", "crank_pin=280:460:20"):
        out = tmp_path / "f.csv"
        run_cli("forces", DATA / "trip_spr.yaml", "--static", "--no-gravity", "--sweep", sweep, "-o", out)
        got[sweep] = {round(row["crank_pin.q [deg]"]): row for row in _rows(out)
                      if not math.isnan(row["O4.q [deg]"])}
    truth, _ = fourbar_crank_truth(2.5, 2, 3, 4, r(30), r([-20, 90, 100]), r(-80))
    for sweep in got:
        assert abs(got[sweep][280]["O4.q [deg]"] - truth[3]) < ANGLE_TOL_DEG
        assert abs(got[sweep][280]["tor.torque [N m]"] - (-10.0 * r(truth[3] - 180))) < 1e-8
    for k in got["crank_pin=280:460:20"]:
        assert abs(got["crank_pin=120:460:20"][k]["O4.q [deg]"] - got["crank_pin=280:460:20"][k]["O4.q [deg]"]) < 1e-6


def test_a_shift_by_whole_turns_changes_no_pose():
    """The rule's premise: the sweep's rows differ from an unshifted solve only by whole turns
    of passive angles, so poses, residuals and conditions are the solver's own."""
    mech = _compiled(DATA / "fb_rock_spr.yaml")
    Q = r(np.arange(-150.0, -89.0, 10.0))[:, None]
    res = solve_sweep(mech, Q, mech.q_init)
    ok = res.status == Status.CONVERGED
    assert res.reassembled is not None and res.reassembled[ok].sum() >= 1
    from linkcli.core.loop_closure import constraints

    assert np.abs(constraints(mech, res.q[ok]).r).max() < 1e-9


# --- item 3: rows after a reassembly into another mode -------------------------------------------
def _short_slide(t, s):
    """Short slider-crank (crank 1, rod 1.2, offset 0.5): slide (m) at crank t (deg), mode s."""
    t = r(t)
    return math.cos(t) + s * math.sqrt(1.2 ** 2 - (0.5 - math.sin(t)) ** 2)


def test_rows_reassembled_into_the_other_mode_are_solved_again_on_the_estimates(run_cli, tmp_path):
    """Short slider-crank (rod 1.2, offset 0.5: the crank rocks): after the failed points the
    solver reassembles at 316 deg in the left-hand mode, slide = cos t - sqrt(1.2^2 - (0.5 -
    sin t)^2) (row 360: -0.0909 m against row 0's 2.0909 m at the same crank angle). Those rows
    are solved again from the estimate's mode at 316 deg (its configuration_at): ok, slide on the
    + root (first main: ok in the other mode, exit 0; then other_branch, exit 1); the event names
    316 deg."""
    out = tmp_path / "s.csv"
    res = run_cli("solve", DATA / "sc_short.yaml", "-o", out)
    assert res.exit_code == 1, res.stderr  # (rows beyond the crank's limits: no_configuration)
    rows = _rows(out)
    assert "other_branch" not in {row["status"] for row in rows}
    for row in rows:
        if row["status"] == "ok":
            assert abs(row["slide.q [m]"] - _short_slide(row["crank_pin.q [deg]"], 1)) < 1e-9
    late = [row for row in rows if row["crank_pin.q [deg]"] >= 316]
    assert len(late) == 23 and all(row["status"] == "ok" for row in late)  # (316..360 at 2 deg)
    assert "crank_pin = 316 deg" in res.stderr and "solved again" in res.stderr, res.stderr


def test_rows_off_the_estimates_branch_not_solved_again_are_marked(run_cli, tmp_path, monkeypatch):
    """When the re-solving budget is spent (here set to none: MAX_RESOLVED_SWEEPS = 0), rows of a
    run reassembled into the other mode keep their values and are other_branch, never ok: the
    short slider-crank's 316..360 deg on the - root, the event names 316 deg as the first."""
    from linkcli.core import sweep

    monkeypatch.setattr(sweep, "MAX_RESOLVED_SWEEPS", 0)
    out = tmp_path / "s.csv"
    res = run_cli("solve", DATA / "sc_short.yaml", "-o", out)
    assert res.exit_code == 1, res.stderr
    rows = _rows(out)
    for row in rows:
        t = row["crank_pin.q [deg]"]
        if row["status"] == "ok":
            assert abs(row["slide.q [m]"] - _short_slide(t, 1)) < 1e-9
        elif row["status"] == "other_branch":
            assert abs(row["slide.q [m]"] - _short_slide(t, -1)) < 1e-9
    marked = [row["crank_pin.q [deg]"] for row in rows if row["status"] == "other_branch"]
    assert marked and marked[0] == 316 and marked[-1] == 360
    assert "crank_pin = 316 deg" in res.stderr and "other_branch" in res.stderr


def test_reassembled_event_names_the_first_row_of_the_run(run_cli, tmp_path):
    """trip.yaml over one turn: rows 98..262 cannot be assembled; the first row solved after
    them is 263 deg, where the event must point (main: 267, while 263..266 were already ok).
    Rows from 263 on are in the estimate's mode (closed form), so they stay ok."""
    out = tmp_path / "s.csv"
    res = run_cli("solve", DATA / "trip.yaml", "-o", out)
    rows = _rows(out)
    first = next(row["crank_pin.q [deg]"] for row in rows[100:] if row["status"] == "ok")
    assert first == 263
    assert "configuration at crank_pin = 263 deg was found again" in res.stderr, res.stderr
    for row in rows[263:]:
        assert row["status"] == "ok"
        truth, _ = fourbar_crank_truth(2.5, 2, 3, 4, r(30), r([-20, 90, 100]), r(row["crank_pin.q [deg]"] - 360))
        d = row["O4.q [deg]"] - truth[3]
        assert abs((d + 180) % 360 - 180) < ANGLE_TOL_DEG  # the same configuration (mode)


# --- helpers -----------------------------------------------------------------------------------
def _rows(path):
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        out = []
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            out.append({k: _num(v) for k, v in row.items()})
        return out


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def _first_row(path):
    return _rows(path)[0]


def _col(doc, name):
    """The first value of column ``name`` of a JSON table (linkcli.table/1)."""
    return float(doc["data"][name][0])


def test_assemble_returns_the_representatives_nearest_the_estimate():
    """assembly.assemble (Newton from the estimate, seeded restarts) at a far input: whatever
    mode it lands in, each passive angle is the representative within half a turn of the
    estimate's and the input keeps its value (main: the triple rocker at -90 deg came back with
    A.q = -890494 deg; the restarts' nearest_turn also moved the input by whole turns). Truth:
    the configuration is one of the two closed-form modes, modulo 2 pi."""
    from linkcli.core.assembly import assemble

    mech = _compiled(DATA / "trip.yaml")
    for t in (-90.0, 270.0, 80.0):
        res = assemble(mech, np.array([r(t)]), mech.q_init, tol=1e-10)
        assert res.status == Status.CONVERGED
        assert res.q[0] == r(t)  # the input as given
        assert np.all(np.abs(res.q[1:] - mech.q_init[1:]) <= np.pi + 1e-12)
        modes = []
        for s in (1, -1):
            beta, phi = _from_crank(np.array([r(t)]), 2.5, 2, 3, 4, s)
            modes.append(np.array([beta[0] - r(t), phi[0] - beta[0], phi[0]]))
        d = [np.abs((res.q[1:] - m + np.pi) % (2 * np.pi) - np.pi).max() for m in modes]
        assert min(d) < 1e-8


def test_a_winding_reached_by_continuous_motion_is_kept():
    """Double crank (ground 1, crank 3, coupler 3.5, output 3.2: Grashof, shortest link fixed):
    turning the input two turns turns the output two turns too. configuration_at and a sweep
    starting at 750 deg keep that winding (O4 = its closed-form value at 30 deg + 720 deg), and
    a sweep over two turns is continuous (the rule shifts only configurations found by
    reassembly)."""
    mech = _compiled(DATA / "double_crank.yaml")
    est = r([-103.0, 38.0, -35.0])
    truth, _ = fourbar_crank_truth(3, 3.5, 3.2, 1, r(30), est, r(750))
    at30, _ = fourbar_crank_truth(3, 3.5, 3.2, 1, r(30), est, r(30))
    assert abs(truth[3] - (at30[3] + 720)) < 1e-6  # the output turned with the input
    point = configuration_at(mech, np.array([r(750)]))
    assert point.status == Status.CONVERGED and point.route == "continuation"
    np.testing.assert_allclose(np.degrees(point.q), truth, rtol=0, atol=ANGLE_TOL_DEG)
    Q = r(np.arange(750.0, 1111.0, 5.0))[:, None]
    res = solve_sweep(mech, Q, mech.q_init)
    assert (res.status == Status.CONVERGED).all() and res.reassembled is not None and not res.reassembled.any()
    np.testing.assert_allclose(np.degrees(res.q[0]), truth, rtol=0, atol=ANGLE_TOL_DEG)
    end, _ = fourbar_crank_truth(3, 3.5, 3.2, 1, r(30), est, r(1110))
    np.testing.assert_allclose(np.degrees(res.q[-1]), end, rtol=0, atol=ANGLE_TOL_DEG)


def test_a_verified_run_takes_the_winding_of_the_estimates_branch():
    """A run started by reassembly and verified on the estimate's branch takes the winding
    configuration_at gives there (fk's, simulate's), not only the one nearest the last good row
    across a long failed gap: on the Chebyshev linkage swept over a whole turn of its input the
    row at the estimate's own input read B = 360 deg, A = -360 deg where fk reads 0, 0 (the same
    pose, but spring torques and limit checks read the angle)."""
    from linkcli.api import load

    m = load(MECH / "gallery" / "chebyshev.yaml").compiled
    q0 = np.asarray(m.q_init, float)
    a0 = q0[m.q_actuated]
    Q = np.tile(a0, (361, 1))
    Q[:, 0] = a0[0] + np.linspace(-np.pi, np.pi, 361)
    r = solve_sweep(m, Q, q0)
    assert r.other_branch is not None
    verified = np.flatnonzero((r.status == 0) & ~r.other_branch)
    assert 180 in verified  # the estimate's own input
    for i in (180, verified[0], verified[-1]):
        c = configuration_at(m, Q[i], q0)
        assert c.status == 0
        np.testing.assert_allclose(r.q[i], c.q, atol=1e-6)  # the same numbers, not only modulo 2 pi


def test_range_of_motion_counts_only_rows_on_the_estimates_branch(monkeypatch):
    """The batch figure range_of_motion never takes max - min over failed or other_branch rows.
    The reversed triple-rocker sweep (180 -> -180 deg) first reassembles at 97 deg in the other
    mode: its rows are now solved again on the estimate's branch, and the figure is the closed
    form's range of A over the crank's whole range on that branch, |t| <= acos(-0.1375) (main:
    every row other_branch, NaN; before: 276.76 deg from the other mode's rows). With no re-solving
    (budget 0) the rows stay other_branch and the figure says so instead of a number."""
    from linkcli.analyses.inputs import Sweep
    from linkcli.analyses.solve import SolveRequest, run_solve
    from linkcli.batch.figures import range_of_motion
    from linkcli.core import sweep

    m = _compiled(DATA / "trip.yaml")

    def figure():
        out = run_solve(m, SolveRequest(sweeps=[Sweep("crank_pin", 180.0, -180.0, step=-1.0)]))
        t = out.table
        h = next(h for h in t.headers() if h.startswith("A.q ["))
        return set(np.asarray(t["status"]).tolist()), range_of_motion(t, m, "A", h)

    statuses, (value, note) = figure()
    assert statuses == {"ok", "no_configuration"}
    limit = math.acos((2.5 ** 2 + 4 ** 2 - 25) / (2 * 2.5 * 4))
    tt = np.linspace(-limit, limit, 200001)  # (1e-3 deg apart)
    s = _estimate_mode(lambda s: [(_from_crank(np.array([r(30)]), 2.5, 2, 3, 4, s)[0] - r(30))[0]], [r(-20)])
    with np.errstate(invalid="ignore"):  # (arccos of 1 + rounding at the two limits: clipped below)
        ax, ay = 2.5 * np.cos(tt), 2.5 * np.sin(tt)
        e = np.hypot(4 - ax, -ay)
        beta = np.arctan2(-ay, 4 - ax) + s * np.arccos(np.clip((4 + e * e - 9) / (4 * e), -1, 1))
    rel = np.degrees(np.unwrap(beta - tt))
    # The closed form sampled at 1e-3 deg with both limits exact (its extremes here are at the
    # limits). The figure's limits are located to 6e-11 deg of the input (1e-12 rad), and at a fold
    # the passive angle moves as the square root of the distance to it: ~1e-6 rad = 6e-5 deg; 2e-4
    # deg leaves room for the coefficient (rows alone would miss by degrees: the last row is 97).
    assert abs(value - (rel.max() - rel.min())) < 2e-4, (value, rel.max() - rel.min(), note)
    monkeypatch.setattr(sweep, "MAX_RESOLVED_SWEEPS", 0)
    statuses, (value, note) = figure()
    assert "ok" not in statuses
    assert math.isnan(value) and "estimate's branch" in note


# --- a sweep starting outside the reachable range: rows re-solved on the estimate's branch -------
def _watt_truth(t):
    """Watt's linkage (mechanisms/gallery/watt.yaml: arms 2 about O1 = (0, 0) and O2 = (4, 1),
    coupler 1): (P, B) of the estimate's assembly mode at arm angle t (rad), or None where the
    loop cannot close (|O2 - A| > 3). B is the intersection of the circles (A, 1) and (O2, 2) on
    the side where (B - A) x (O2 - A) < 0 (the drawn pose: A = (2, 0), B = (2, 1), cross -2)."""
    A = 2 * np.array([np.cos(t), np.sin(t)])
    O2 = np.array([4.0, 1.0])
    v = O2 - A
    e = np.hypot(*v)
    if e > 3 or e < 1:
        return None
    along = (1 + e * e - 4) / (2 * e)  # distance from A to the chord's foot, towards O2
    h = np.sqrt(max(1 - along * along, 0.0))
    u = v / e
    n = np.array([-u[1], u[0]])  # u x n = 1
    B = A + along * u + h * n  # (B - A) x (O2 - A) = h e (n x u) = -h e < 0
    return (A + B) / 2, B


def test_watt_sweep_starting_beyond_its_limit_is_solved_on_the_estimates_branch(run_cli, tmp_path):
    """Watt's linkage swept 60 -> -60 deg (its arm reaches [-29.2776, 57.3501] deg: |O2 - A| = 3,
    4 cos t + sin t = 3): the first row solved, 57 deg, was reassembled in the other assembly mode
    and all 87 rows were other_branch (exit 1) although the estimate's mode exists at every one.
    Now those rows are solved on the estimate's branch: status ok, P and B the closed form's; the
    34 rows beyond the limits no_configuration; the reassembled event names 57 deg."""
    lo = math.degrees(math.atan2(1, 4) - math.acos(3 / math.sqrt(17)))
    hi = math.degrees(math.atan2(1, 4) + math.acos(3 / math.sqrt(17)))
    assert abs(lo + 29.2776) < 1e-4 and abs(hi - 57.3501) < 1e-4
    out = tmp_path / "w.csv"
    res = run_cli("solve", MECH / "gallery" / "watt.yaml", "--sweep", "pivot1=60:-60:-1", "-o", out)
    assert "internal error" not in res.stderr
    rows = _rows(out)
    assert len(rows) == 121
    for row in rows:
        t = row["pivot1.q [deg]"]
        truth = _watt_truth(r(t))
        if lo < t < hi:
            assert row["status"] == "ok", row
            assert truth is not None
            # (m; loops closed to 1e-10, conditioning below 1e3 away from the limits' 0.35 deg)
            assert abs(row["coupler.P.x [m]"] - truth[0][0]) < 1e-8
            assert abs(row["coupler.P.y [m]"] - truth[0][1]) < 1e-8
        else:
            assert row["status"] == "no_configuration" and truth is None
    assert sum(row["status"] == "ok" for row in rows) == 87
    assert "pivot1 = 57 deg" in res.stderr and "solved again" in res.stderr, res.stderr
    assert "other_branch" not in res.stderr


def _checked_sweep(mech, Q, q0, pk):
    """solve_sweep in kernel module pk (the compiled or the interpreted one), branch checks included."""
    from linkcli.core import sweep

    res = sweep._solve_sweep_kernel(mech, Q, q0, 1e-10, r(10.0), pk)
    if res.reassembled is not None and res.reassembled.any():
        res = sweep._check_branch(mech, res, Q, q0, 1e-10, r(10.0), pk)
    return res


def test_rerun_on_the_estimates_branch_is_the_same_in_both_kernels_and_fk():
    """The re-solved runs are the same in the compiled and the interpreted kernel (rows, statuses,
    events), and every ok row is configuration_at's configuration at that input (the estimate's
    branch, fk's), for Watt's linkage from either side beyond its limits and the slider-crank
    whose reassembly lands in the other mode."""
    from linkcli.core import sweep

    cases = [(MECH / "gallery" / "watt.yaml", np.arange(60.0, -34.0, -4.0)),  # (short: the interpreted
             (DATA / "sc_short.yaml", np.arange(180.0, 361.0, 6.0))]          # kernel's failed points cost)
    for path, deg in cases:
        mech = _compiled(path)
        Q = r(deg)[:, None]
        a = _checked_sweep(mech, Q, mech.q_init, sweep._compiled_kernel())
        b = _checked_sweep(mech, Q, mech.q_init, sweep._interpreted_kernel())
        np.testing.assert_array_equal(a.status, b.status)
        np.testing.assert_array_equal(a.other_branch, b.other_branch)
        ok = a.status == Status.CONVERGED
        np.testing.assert_allclose(a.q[ok], b.q[ok], rtol=0, atol=1e-9)  # (rounding of one algorithm)
        assert [(e.index, e.kind) for e in a.events] == [(e.index, e.kind) for e in b.events]
        assert a.branch_resolved is not None and a.branch_resolved.sum() == 1  # (the run was solved again)
        np.testing.assert_array_equal(a.branch_resolved, b.branch_resolved)
        assert not a.other_branch.any()
        good = np.flatnonzero(ok)
        for i in sorted({*good[::7].tolist(), *np.flatnonzero(a.branch_resolved).tolist(), good[-1]}):
            c = configuration_at(mech, Q[i])
            assert c.status == Status.CONVERGED
            np.testing.assert_allclose(a.q[i], c.q, rtol=0, atol=1e-7)  # (the same numbers, winding too)


# --- same configuration: where the links are, not how the joint angles are written ---------------
def _rssr():
    """mechanisms/rssr_spatial.yaml: crank 1 about world z at the origin, S-S coupler 3.2, rocker
    2.5 about world x through O4 = (0.5, 3, 1); joint A's z-y-x angles are q[1:4]."""
    return _compiled(MECH / "rssr_spatial.yaml")


def _rssr_rocker_roots(t):
    """The rocker ends B (2, 3) of both assembly modes at crank t (rad), closed form: A = (cos t,
    sin t, 0), B = O4 + 2.5 (0, cos p, sin p) with |B - A| = 3.2, i.e. u cos p + v sin p = w."""
    A = np.array([math.cos(t), math.sin(t), 0.0])
    O4 = np.array([0.5, 3.0, 1.0])
    d = O4 - A
    # |d + 2.5 (0, c, s)|^2 = 3.2^2  ->  5 (d_y c + d_z s) = 3.2^2 - |d|^2 - 2.5^2
    u, v, w = 5 * d[1], 5 * d[2], 3.2 ** 2 - d @ d - 2.5 ** 2
    base, half = math.atan2(v, u), math.acos(w / math.hypot(u, v))
    return [O4 + 2.5 * np.array([0.0, math.cos(p), math.sin(p)]) for p in (base + half, base - half)]


def _rocker_B(mech, q):
    from linkcli.core.forward import frame_poses, link_poses

    return frame_poses(mech, link_poses(mech, q))[mech.frame_index("rocker.B"), :3, 3]


def _euler_dual(q, k):
    q = np.array(q, float)
    q[k:k + 3] = [q[k] + np.pi, np.pi - q[k + 1], q[k + 2] + np.pi]
    return q


def test_same_configuration_compares_placements_not_joint_coordinates():
    """RSSR at crank 150 deg: (1) joint A's Euler dual (a + 180, 180 - b, c + 180) gives the same
    link poses (fk) and is the same configuration (main: not, so a reassembly landing there was a
    false other_branch); (2) the sweep's row and configuration_at's differ in the coupler's idle
    spin about A-B (joint coordinates 6e-4 rad apart, no joint frame moved): the same; (3) the
    other closed-form root of the rocker is not."""
    from linkcli.core.assembly import assemble
    from linkcli.core.forward import link_poses
    from linkcli.core.sweep import same_configuration

    mech = _rssr()
    Q = r(np.arange(0.0, 361.0, 5.0))[:, None]
    res = solve_sweep(mech, Q, mech.q_init)
    q = res.q[30]
    assert abs(math.degrees(q[0]) - 150) < 1e-12
    dual = _euler_dual(q, 1)
    assert np.abs(dual - q).max() > 3  # (other numbers)
    np.testing.assert_allclose(link_poses(mech, dual), link_poses(mech, q), rtol=0, atol=1e-12)
    assert same_configuration(mech, q, dual)
    c = configuration_at(mech, Q[30])
    assert 1e-5 < np.abs(c.q - q).max() < 1e-2  # the idle spin: a little apart
    assert same_configuration(mech, q, c.q)
    roots = _rssr_rocker_roots(r(150))
    mine = int(np.argmin([np.linalg.norm(b - _rocker_B(mech, q)) for b in roots]))
    assert np.linalg.norm(roots[mine] - _rocker_B(mech, q)) < 1e-9  # (m; the estimate's mode)
    other = None
    for shift in np.radians(np.arange(-180.0, 181.0, 20.0)):  # the other root, from nearby estimates
        est = q.copy()
        est[-1] += shift
        a = assemble(mech, Q[30], est, restarts=0)
        if a.status == Status.CONVERGED and np.linalg.norm(_rocker_B(mech, a.q) - roots[1 - mine]) < 1e-9:
            other = a.q
            break
    assert other is not None
    assert not same_configuration(mech, q, other)
    assert not same_configuration(mech, dual, other)


def test_a_run_reassembled_into_an_euler_dual_is_not_other_branch(monkeypatch):
    """A run whose rows are the estimate's configurations with joint A written as its Euler dual
    (what a reassembly by Newton may return) is on the estimate's branch: no row other_branch
    (main: all), and it takes fk's form of the angles (the rows as solved before). A run in the
    genuinely other mode (its rocker the closed form's other root) is still found off the branch:
    solved again (branch_resolved) to the estimate's rows, or, with no re-solving budget,
    other_branch."""
    from linkcli.core import sweep
    from linkcli.core.assembly import assemble

    mech = _rssr()
    Q = r(np.arange(0.0, 361.0, 5.0))[:, None]
    pk = sweep._compiled_kernel()
    base = solve_sweep(mech, Q, mech.q_init)
    assert (base.status == Status.CONVERGED).all() and not base.reassembled.any()
    s = 30
    restarts = np.zeros(len(Q), dtype=bool)
    restarts[s] = True
    q = base.q.copy()
    q[s:] = [_euler_dual(row, 1) for row in q[s:]]
    got = sweep._check_branch(mech, replace(base, q=q, reassembled=restarts), Q, mech.q_init, 1e-10, r(10.0), pk)
    assert not got.other_branch.any()
    np.testing.assert_allclose(got.q, base.q, rtol=0, atol=1e-12)  # (the dual undone: exact to rounding)
    # the other mode from row s on
    roots = _rssr_rocker_roots(r(150))
    far = roots[int(np.argmax([np.linalg.norm(b - _rocker_B(mech, base.q[s])) for b in roots]))]
    est = base.q[s].copy()
    other = None
    for shift in np.radians(np.arange(-180.0, 181.0, 20.0)):
        est[-1] = base.q[s, -1] + shift
        a = assemble(mech, Q[s], est, restarts=0)
        if a.status == Status.CONVERGED and np.linalg.norm(_rocker_B(mech, a.q) - far) < 1e-9:
            other = a.q
            break
    assert other is not None
    run = solve_sweep(mech, Q[s:], other)
    assert (run.status == Status.CONVERGED).all()
    q = base.q.copy()
    q[s:] = run.q
    crafted = replace(base, q=q, reassembled=restarts)
    got = sweep._check_branch(mech, crafted, Q, mech.q_init, 1e-10, r(10.0), pk)
    assert not got.other_branch.any() and got.branch_resolved is not None and got.branch_resolved[s]
    for i in range(s, len(Q), 7):
        np.testing.assert_allclose(_rocker_B(mech, got.q[i]), _rocker_B(mech, base.q[i]), rtol=0, atol=1e-8)
    monkeypatch.setattr(sweep, "MAX_RESOLVED_SWEEPS", 0)
    got = sweep._check_branch(mech, crafted, Q, mech.q_init, 1e-10, r(10.0), pk)
    assert got.other_branch[s:].all() and not got.other_branch[:s].any()


# --- the Chebyshev linkage: the CLI's grid and a script's linspace give one answer ------------------
def _chebyshev_truth(x):
    """mechanisms/gallery/chebyshev.yaml (left rocker 5 about (0, 0), right rocker 5 about (4, 0),
    coupler 2, drawn B = (3, 4), A = (1, 4)) at left_pivot x (rad): "I1" and P of the estimate's
    mode (A the intersection of the circles (B, 2) and (Q2, 5) with (A - B) x (Q2 - B) > 0, as
    drawn: 8) on the input interval of the estimate, "I2" on the other one (another circuit: no
    continuous motion joins it to the estimate), None where no configuration exists. The loop
    closes where 3 <= |Q2 - B| <= 7: 41 - 40 cos th in [9, 49], th = x + atan2(4, 3), so |th| in
    [acos 0.8, acos -0.2]: x in [-16.26, 48.41] (I1) and [-154.67, -90] (I2)."""
    th = x + math.atan2(4, 3)
    B = 5 * np.array([math.cos(th), math.sin(th)])
    Q2 = np.array([4.0, 0.0])
    e = float(np.hypot(*(Q2 - B)))
    if not 3 - 1e-12 <= e <= 7 + 1e-12:
        return None
    u = (Q2 - B) / e
    along = (4 + e * e - 25) / (2 * e)
    h = math.sqrt(max(4 - along * along, 0.0))
    n = np.array([-u[1], u[0]])  # u x n = 1, so (A - B) x (Q2 - B) = h e (n x u) = -h e for A = .. + h n
    A = B + along * u - h * n
    return ("I1" if math.sin(th) > 0 else "I2"), (A + B) / 2


def test_chebyshev_cli_and_api_and_a_scripts_sweep_agree_with_the_closed_form(run_cli, tmp_path):
    """The note 'CLI and API branch assignment differ on a Chebyshev sweep': over a whole turn the
    core sweep with inputs from np.linspace (a script, and this file's winding test) and the
    CLI/API's grid differ by 1 ulp at -16 deg, 0.26 deg from the fold at -16.26; there the
    reassembly after the failed rows landed in the estimate's mode for one and in the other for
    the other, so main wrote the 65 rows -16..48 ok in one and other_branch in the other. Now
    the run in the other mode is solved again on the estimate's branch: CLI, API and the linspace
    sweep give the same statuses, rows of the estimate's interval are ok with P the closed
    form's, rows of the other circuit's interval other_branch (or not solved next to its fold),
    and no row outside both has a configuration."""
    import linkcli

    path = MECH / "gallery" / "chebyshev.yaml"
    api = linkcli.load(path).solve(sweep={"left_pivot": (-180, 180, 1)})
    out = tmp_path / "c.csv"
    res = run_cli("solve", path, "--sweep", "left_pivot=-180:180:1", "-o", out)
    assert "internal error" not in res.stderr
    cli = _rows(out)
    m = _compiled(path)
    q0 = m.q_init
    Q = np.tile(q0[m.q_actuated], (361, 1))
    Q[:, 0] = q0[m.q_actuated][0] + np.linspace(-np.pi, np.pi, 361)
    core = solve_sweep(m, Q, q0)
    assert core.other_branch is not None
    core_status = ["other_branch" if core.other_branch[i] else ("ok" if core.status[i] == 0 else "failed")
                   for i in range(361)]
    api_status = [str(s) for s in api["status"]]
    assert api_status == [row["status"] for row in cli]
    assert [s if s in ("ok", "other_branch") else "failed" for s in api_status] == core_status
    for k, row in enumerate(cli):
        x = row["left_pivot.q [deg]"]
        assert x == k - 180
        truth = _chebyshev_truth(r(x))
        if truth is None:
            assert row["status"] == "no_configuration", row
        elif truth[0] == "I1":
            assert row["status"] == "ok", row
            # (m; loops closed to 1e-10, conditioning ~1e2 here: -16 is 0.26 deg from the fold)
            np.testing.assert_allclose([row["coupler.P.x [m]"], row["coupler.P.y [m]"]], truth[1], rtol=0, atol=1e-7)
        else:
            assert row["status"] in ("other_branch", "not_converged"), row
            if -151 <= x <= -91:
                assert row["status"] == "other_branch", row
    assert sum(row["status"] == "ok" for row in cli) == 65  # -16 .. 48
