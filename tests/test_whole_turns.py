"""The whole-turn rule where configurations are found outside a sweep's continuation: the first
point assembled at the estimate's own inputs (solve, fk, forces, a study's fast path) and the
equilibrium's Newton iterates (``forces --equilibrium``).

The rule (README, sweep.py's docstring): continuation keeps angles continuous; a configuration
found by (re)assembly takes for each passive angle the representative (+- whole turns) nearest
the last good point, else nearest the estimate. A winding changes no pose but changes spring
torques and limit checks, which read the angle.

Truths, written here without linkcli's solver:

* triple rocker (ground 4, crank 2.5, coupler 2, rocker 3; crank input t): the coupler's
  absolute angle beta = atan2(-A_y, d - A_x) +- acos((b^2 + e^2 - c^2) / (2 b e)) with A = a
  (cos t, sin t) and e = |O4 - A|; the rocker's phi from B = A + b (cos beta, sin beta); the
  relative angles (A, B, O4) = (beta - t, phi - beta, phi).
* double crank (ground 1, crank 3, coupler 3.5, output 3.2; Grashof, shortest link fixed): the
  same formulas; the output turns a whole turn with each turn of the input, so the angles at an
  input are the closed form unwrapped along a fine path (2001 points) from the estimate.
* holding torque by virtual work: tau = dV/dt (V = gravity + spring potential of the
  closed-form configuration), central differences h = 1e-6 rad (truncation ~1e-10 of V''').

Tolerances: the solver closes loops to 1e-10 and the closed forms are exact to rounding, so
angles agree to ~1e-9 rad; 1e-6 deg leaves room for the passive Jacobian's conditioning
(below 1e3 here). The wrong answers found were 360 deg (a whole turn) or a mode (tens of
degrees) off, and torques tens of N m off.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

r = np.radians
ANGLE_TOL_DEG = 1e-6

TRIPLE = """name: triple rocker, a poor estimate
kind: planar
units: {{length: m, angle: deg}}
gravity: [0, 0]
links:
  ground:
    frames: {{O2: [0, 0], O4: [4, 0]}}
  crank:
    shape: {{type: rod, between: [O2, A], mass: 1.0}}
    frames: {{O2: [0, 0], A: [2.5, 0]}}
  coupler:
    shape: {{type: rod, between: [A, B], mass: 1.0}}
    frames: {{A: [0, 0], B: [2, 0]}}
  rocker:
    shape: {{type: rod, between: [O4, B], mass: 1.0}}
    frames: {{O4: [0, 0], B: [3, 0]}}
joints:
  crank_pin: {{type: revolute, parent: ground.O2, child: crank.O2, actuated: true}}
  A: {{type: revolute, parent: crank.A, child: coupler.A}}
  B: {{type: revolute, parent: coupler.B, child: rocker.B{limits}}}
  O4: {{type: revolute, parent: ground.O4, child: rocker.O4}}
base: ground
effector: coupler.B
assembly: {{crank_pin: 30, A: -194, B: 203, O4: 249}}
springs:
  tor: {{type: torsional, joint: B, stiffness: 10, free_angle: 300}}
"""
#: the estimate's relative angles (A, B, O4), deg: Newton from it converges with B near -47.7 deg
#: (the kernel's and the numpy solver's); the rule's representative nearest 203 is 312.26 deg
ESTIMATE = (-194.0, 203.0, 249.0)


def _triple(tmp_path: Path, limits: str = "") -> Path:
    path = tmp_path / "triple.yaml"
    path.write_text(TRIPLE.format(limits=limits), encoding="utf-8")
    return path


def _from_crank(t, a, b, c, d, s):
    """Relative angles (A, B, O4) rad of the four-bar (crank a at t from O2 = 0, coupler b,
    rocker c about O4 = (d, 0)) in mode s = +-1."""
    ax, ay = a * np.cos(t), a * np.sin(t)
    e = np.hypot(d - ax, -ay)
    beta = np.arctan2(-ay, d - ax) + s * np.arccos((b * b + e * e - c * c) / (2 * b * e))
    bx, by = ax + b * np.cos(beta), ay + b * np.sin(beta)
    phi = np.arctan2(by, bx - d)
    return np.array([beta - t, phi - beta, phi])


def _nearest(values, reference):
    """Each angle (rad) the representative + 2 pi k nearest its reference."""
    values, reference = np.asarray(values, float), np.asarray(reference, float)
    return values - 2 * np.pi * np.round((values - reference) / (2 * np.pi))


def _wrapped(d):
    return (np.asarray(d) + np.pi) % (2 * np.pi) - np.pi


def _triple_truth_at_estimate(got_rad):
    """The closed-form configuration at crank 30 deg in the mode ``got_rad`` (A, B, O4) is in
    (modulo 2 pi), each angle nearest the estimate's; asserts that some mode matches."""
    modes = [_from_crank(r(30.0), 2.5, 2.0, 3.0, 4.0, s) for s in (1, -1)]
    mode = min(modes, key=lambda m: np.abs(_wrapped(np.asarray(got_rad) - m)).max())
    assert np.abs(_wrapped(np.asarray(got_rad) - mode)).max() < 1e-8  # one of the two closed-form modes
    return np.degrees(_nearest(mode, r(ESTIMATE)))


def _table(res) -> dict:
    assert "internal error" not in res.stderr, res.stderr
    return json.loads(res.stdout)["data"]


def test_the_first_point_assembled_at_the_estimate_takes_the_turns_nearest_it(run_cli, tmp_path):
    """fk and forces at the estimate's own input: Newton from the poor estimate converged with B
    at -47.74 deg (main: the sweep took it as it came, while simulate, jacobian and info, through
    assemble, gave 312.26 deg): the spring torque read -10 (-47.74 - 300) deg = +60.69 N m instead
    of -2.14 N m, and a B limit [0, 360] failed the row as outside_limits."""
    path = _triple(tmp_path, ", limits: [0, 360]")
    fk = run_cli("fk", path, "-f", "json")
    assert fk.exit_code == 0, fk.stderr  # (main: exit 1, outside_limits)
    data = _table(fk)
    got = [data[f"{j}.q [deg]"][0] for j in ("A", "B", "O4")]
    truth = _triple_truth_at_estimate(r(got))
    np.testing.assert_allclose(got, truth, rtol=0, atol=ANGLE_TOL_DEG)
    assert abs(truth[1] - 312.264) < 1e-3 and data["status"] == ["ok"]
    static = _table(run_cli("forces", path, "--static", "--set", "crank_pin=30", "-f", "json"))
    assert abs(static["B.q [deg]"][0] - truth[1]) < ANGLE_TOL_DEG
    # the spring's torque reads the angle: -k (B - free angle), N m (k 10 N m/rad)
    assert abs(static["tor.torque [N m]"][0] - (-10.0 * r(truth[1] - 300.0))) < 1e-8
    # every command gives that one configuration (simulate's start, jacobian's: through configuration_at)
    sim = run_cli("simulate", path, "--t-end", "0.001", "-f", "csv")
    assert sim.exit_code == 0, sim.stderr
    first = next(csv.DictReader(line for line in io.StringIO(sim.stdout) if not line.startswith("#")))
    np.testing.assert_allclose([float(first[f"{j}.q [deg]"]) for j in ("A", "B", "O4")], truth, rtol=0,
                               atol=ANGLE_TOL_DEG)
    jac = run_cli("jacobian", path, "-f", "json")
    assert jac.exit_code == 0, jac.stderr
    conf = json.loads(jac.stdout)["metadata"]["configuration"]
    np.testing.assert_allclose([conf[j] for j in ("A", "B", "O4")], truth, rtol=0, atol=ANGLE_TOL_DEG)


def test_a_sweep_from_the_poor_estimate_keeps_those_turns_along_it(tmp_path):
    """solve_sweep from the poor estimate to -60..60 deg: its rows are continuous (continuation),
    the row at 30 deg is the rule's configuration and every row equals configuration_at's (the
    closed form continued from there)."""
    from linkcli.api import load
    from linkcli.core.loop_closure import Status
    from linkcli.core.sweep import configuration_at, solve_sweep

    mech = load(_triple(tmp_path)).compiled
    Q = r(np.arange(-60.0, 61.0, 10.0))[:, None]
    res = solve_sweep(mech, Q, mech.q_init)
    assert (res.status == Status.CONVERGED).all()
    assert res.reassembled is not None and not res.reassembled.any()
    truth = _triple_truth_at_estimate(res.q[9, 1:])
    np.testing.assert_allclose(np.degrees(res.q[9, 1:]), truth, rtol=0, atol=ANGLE_TOL_DEG)
    assert np.abs(np.diff(np.degrees(res.q[:, 1:]), axis=0)).max() < 90  # continuous, no whole turn between rows
    for i in (0, 5, 12):
        point = configuration_at(mech, Q[i])
        assert point.status == Status.CONVERGED
        np.testing.assert_allclose(res.q[i], point.q, rtol=0, atol=1e-9)


# --- a study: the fast path and the per-variant path -------------------------------------------------------
def _study(runner, tmp_path: Path, name: str, mech: Path, sweep: str, figures: str,
           values: str = "[2.0, 2.01, 1.99, 2.02, 1.98, 2.0]") -> tuple[list[dict], dict]:
    from linkcli.cli.app import app

    text = f"""jobs:
  s:
    files: {mech}
    options: {{sweep: {{crank_pin: {sweep}}}}}
    figures: [{figures}]
    study:
      method: list
      parameters:
        links.coupler.frames.B[0]: {{values: {values}}}
"""
    jobs = tmp_path / f"{name}.yaml"
    jobs.write_text(text, encoding="utf-8")
    res = runner.invoke(app, ["batch", str(jobs), "--jobs", "1", "--out-dir", str(tmp_path / name), "-q"])
    assert res.exit_code in (0, 1), res.output
    rows = list(csv.DictReader(io.StringIO((tmp_path / name / "s.csv").read_text(encoding="utf-8"))))
    summary = json.loads((tmp_path / name / "summary.json").read_text(encoding="utf-8"))
    return rows, summary["jobs"][0]["study"]


def _same_study(fast: list[dict], ref: list[dict]) -> None:
    assert len(fast) == len(ref)
    for a, b in zip(fast, ref, strict=True):
        for key in b:
            if key.endswith("[deg]") and b[key] not in ("", "nan"):
                # angles of the same sweep on both paths: to ~1e-9 rad (x the condition number,
                # < 1e3 here); 1e-6 deg leaves margin. A whole turn is 360 deg.
                assert math.isclose(float(a[key]), float(b[key]), rel_tol=0, abs_tol=1e-6), (key, a[key], b[key])
            else:
                assert a[key] == b[key], key


def test_study_fast_path_takes_the_same_turns_as_the_per_variant_path(runner, tmp_path, monkeypatch):
    """Every variant of the poor-estimate triple rocker is assembled at the estimate's inputs by
    Newton landing whole turns away from it: the fast path (the kernel's own first point) shifts
    its rows by the turns the per-variant path's first point takes (solve_sweep), so both give
    the same table, and the nominal's largest B is the closed form's (the rule's winding at 30
    deg, continued: B grows with the crank here) -- main's fast path and per-variant path agreed
    on B = -47.74 deg, off by a turn."""
    pytest.importorskip("numba")
    for var in ("LINKCLI_NO_JIT", "LINKCLI_STUDY_PATH"):
        monkeypatch.delenv(var, raising=False)
    mech = _triple(tmp_path)
    figures = '{column: "B.q [deg]", stat: max}, {column: "A.q [deg]", stat: min}, {range_of_motion: B}'
    fast, how = _study(runner, tmp_path, "fast", mech, "{from: -60, to: 60, step: 10}", figures)
    monkeypatch.setenv("LINKCLI_STUDY_PATH", "per-variant")
    ref, _ = _study(runner, tmp_path, "ref", mech, "{from: -60, to: 60, step: 10}", figures)
    assert how["evaluation"]["fast"] == 6, how["evaluation"]
    _same_study(fast, ref)
    # the nominal (variants 0 and 5): B over -60..60 deg, in the rule's winding (nearest 203 deg at 30)
    t = r(np.linspace(-60.0, 60.0, 121))
    at30 = _triple_truth_at_estimate(np.array([r(v) for v in (-154.71845961, 312.26358834, 187.54512873)]))
    s = 1 if np.abs(_wrapped(_from_crank(r(30.0), 2.5, 2.0, 3.0, 4.0, 1) - r(at30))).max() < 1e-6 else -1
    B = np.unwrap(_from_crank(t, 2.5, 2.0, 3.0, 4.0, s)[1])
    B = B - 2 * np.pi * np.round((B[90] - r(at30[1])) / (2 * np.pi))
    for row in (fast[0], fast[5]):
        # the rows are the 13 sweep points (every 10 deg): their largest B
        rows_B = B[::10]
        assert abs(float(row["max(B.q) [deg]"]) - np.degrees(rows_B.max())) < ANGLE_TOL_DEG, row


def test_study_variants_whose_sweep_restarts_take_the_per_variant_path_and_equal_it(runner, tmp_path, monkeypatch):
    """The sweep -97.5..97.5 deg reaches the nominal's limits of motion (acos((a^2 + d^2 - (b +
    c)^2) / (2 a d)) = +-97.90 deg) but not a coupler of 1.98 (+-97.33 deg): that variant's first
    point fails and its run starts by a reassembly (whose turns the rule decides), so the fast
    path hands it to the per-variant path; 1.99 (+-97.61 deg) and the others stay fast, and the
    table equals the per-variant path's."""
    pytest.importorskip("numba")
    for var in ("LINKCLI_NO_JIT", "LINKCLI_STUDY_PATH"):
        monkeypatch.delenv(var, raising=False)
    for b, limit in ((2.0, 97.90), (1.98, 97.33), (1.99, 97.61)):
        assert abs(math.degrees(math.acos((2.5 ** 2 + 16 - (b + 3) ** 2) / 20)) - limit) < 0.01
    mech = _triple(tmp_path)
    figures = '{column: "B.q [deg]", stat: max}, {column: "O4.q [deg]", stat: min}'
    sweep, values = "{from: -97.5, to: 97.5, step: 2.5}", "[2.0, 2.01, 1.99, 1.98, 2.0]"
    fast, how = _study(runner, tmp_path, "fast", mech, sweep, figures, values)
    monkeypatch.setenv("LINKCLI_STUDY_PATH", "per-variant")
    ref, _ = _study(runner, tmp_path, "ref", mech, sweep, figures, values)
    _same_study(fast, ref)
    assert [row["status"] for row in ref] == ["passed", "passed", "passed", "failed", "passed"]
    ev = how["evaluation"]
    assert ev["fast"] == 4 and ev["per_variant"] == 1, ev
    assert ev["per_variant_reasons"] == {
        "its sweep met a point that did not converge, a restart or a singular configuration": 1}


# --- the equilibrium's Newton iterates ----------------------------------------------------------------------
DOUBLE_CRANK = """name: double crank with a spring on the output
kind: planar
units: {length: m, angle: deg}
gravity: [0, -9.81]
links:
  ground:
    frames: {O2: [0, 0], O4: [1, 0]}
  crank:
    shape: {type: rod, between: [O2, A], mass: 1.0}
    frames: {O2: [0, 0], A: [3, 0]}
  coupler:
    shape: {type: rod, between: [A, B], mass: 1.0}
    frames: {A: [0, 0], B: [3.5, 0]}
  rocker:
    shape: {type: rod, between: [O4, B], mass: 1.0}
    frames: {O4: [0, 0], B: [3.2, 0]}
joints:
  crank_pin: {type: revolute, parent: ground.O2, child: crank.O2, actuated: true}
  A: {type: revolute, parent: crank.A, child: coupler.A}
  B: {type: revolute, parent: coupler.B, child: rocker.B}
  O4: {type: revolute, parent: ground.O4, child: rocker.O4}
base: ground
assembly: {crank_pin: 30, A: -103, B: 38, O4: -35}
springs:
  tor: {type: torsional, joint: O4, stiffness: 10, free_angle: 0}
"""


class _FourBarTruth:
    """A four-bar (crank a from O2 = 0 at input t, coupler b, rocker c about O4 = (d, 0); rods of
    1 kg, g = 9.81; a torsional spring k on O4 = phi, free at phi0) in the mode of the estimate
    ``est`` (A, B, O4) rad at t_est, angles continuous from it along the input."""

    def __init__(self, a, b, c, d, k, phi0, t_est, est):
        self.a, self.b, self.c, self.d, self.k, self.phi0, self.t_est = a, b, c, d, k, phi0, t_est
        self.s = min((1, -1), key=lambda s: np.abs(_wrapped(_from_crank(t_est, a, b, c, d, s) - est)).max())
        self.start = _nearest(_from_crank(t_est, a, b, c, d, self.s), est)

    def angles(self, t):
        """(A, B, O4) rad at input t, continuous from the estimate (a fine path of 2001 points)."""
        path = np.linspace(self.t_est, t, 2001)
        rel = np.unwrap(_from_crank(path, self.a, self.b, self.c, self.d, self.s), axis=1)
        return rel[:, -1] - (rel[:, 0] - self.start)

    def potential(self, t):  # J: the rods' weights (centres halfway) and the spring
        A_rel, _, phi = self.angles(t)
        ay = self.a * np.sin(t)
        by = ay + self.b * np.sin(A_rel + t)
        return 9.81 * (ay / 2 + (ay + by) / 2 + by / 2) + 0.5 * self.k * (phi - self.phi0) ** 2

    def holding(self, t, h=1e-6):  # N m: dV/dt by central differences
        return (self.potential(t + h) - self.potential(t - h)) / (2 * h)

    def rest(self, lo_deg, hi_deg):
        from scipy.optimize import brentq

        return brentq(self.holding, r(lo_deg), r(hi_deg), xtol=1e-13)


def _equilibria(run_cli, path, sweep):
    res = run_cli("forces", path, "--equilibrium", "--sweep", f"crank_pin={sweep}", "-f", "json")
    assert "internal error" not in res.stderr, res.stderr
    return res, json.loads(res.stdout)["data"] if res.stdout.strip() else {}


def test_equilibrium_iterates_keep_the_turns_of_the_path(run_cli, tmp_path):
    """Double crank, spring on the output (which turns a whole turn with each turn of the input):
    --sweep crank_pin=-360:1080:480. In the bracket -360..120 deg, main's bisection solved the
    midpoint -120 deg by Newton from the row at 120 deg, whole turns from where the output is
    there by continuous motion (O4 164.5 deg instead of -195.5), and reported a stable rest
    position at -91.10 deg (O4 184.04 deg, holding torque 4e-11 N m, status ok) where the
    mechanism's holding torque is -44.16 N m (forces --static there), missing the rest position
    at -10.70 deg. Truth: the root of dV/dt in that bracket (closed form, continuous from the
    estimate)."""
    path = tmp_path / "double_crank.yaml"
    path.write_text(DOUBLE_CRANK, encoding="utf-8")
    truth = _FourBarTruth(3.0, 3.5, 3.2, 1.0, 10.0, 0.0, r(30.0), r([-103.0, 38.0, -35.0]))
    root = truth.rest(-360.0, 120.0)
    assert abs(math.degrees(root) - (-10.7002)) < 1e-3
    # (a single root there: dV/dt changes sign once on a fine grid)
    grid = [truth.holding(t) for t in r(np.arange(-360.0, 120.5, 0.5))]
    assert np.sum(np.diff(np.sign(grid)) != 0) == 1
    # the other brackets (120..600, 600..1080) keep the sign of dV/dt at their ends
    assert truth.holding(r(120.0)) * truth.holding(r(600.0)) > 0 and truth.holding(r(600.0)) * truth.holding(
        r(1080.0)) > 0
    res, data = _equilibria(run_cli, path, "-360:1080:480")
    assert res.exit_code == 0, res.stderr
    assert len(data["status"]) == 1 and data["status"] == ["ok"] and data["stability"] == ["stable"]
    # root to ~1e-12 rad (brentq on differences exact to ~1e-9 N m; stiffness 75 N m/rad)
    assert abs(data["crank_pin.q [deg]"][0] - math.degrees(root)) < ANGLE_TOL_DEG
    np.testing.assert_allclose([data[f"{j}.q [deg]"][0] for j in ("A", "B", "O4")], np.degrees(truth.angles(root)),
                               rtol=0, atol=ANGLE_TOL_DEG)


def test_equilibrium_iterates_keep_the_assembly_mode_of_the_path(run_cli):
    """Triple rocker (tests/data/branch/trip_spr.yaml), --sweep crank_pin=-97:97:97: main's
    bisection solved the midpoint 48.5 deg by Newton from the row at 0 deg into the other mode,
    followed it to 97 deg and, when the bracket collapsed there, reported a stable rest position
    at 97 deg with status ok and a holding torque of 77.9 N m. Truth: the root of dV/dt in 0..97
    deg in the sweep's mode (61.0463 deg, unstable)."""
    truth = _FourBarTruth(2.5, 2.0, 3.0, 4.0, 10.0, math.pi, r(30.0), r([-20.0, 90.0, 100.0]))
    root = truth.rest(0.0, 97.0)
    assert abs(math.degrees(root) - 61.0463) < 1e-3
    res, data = _equilibria(run_cli, Path(__file__).parent / "data" / "branch" / "trip_spr.yaml", "-97:97:97")
    assert res.exit_code == 0, res.stderr
    assert data["status"] == ["ok"] and data["stability"] == ["unstable"]
    assert abs(data["crank_pin.q [deg]"][0] - math.degrees(root)) < ANGLE_TOL_DEG
    np.testing.assert_allclose([data[f"{j}.q [deg]"][0] for j in ("A", "B", "O4")], np.degrees(truth.angles(root)),
                               rtol=0, atol=ANGLE_TOL_DEG)


def test_a_sign_change_across_two_modes_is_no_rest_position():
    """find_equilibria given rows at 60 deg (one mode, holding torque +22.0 N m) and 97 deg (the
    other mode, -99.9 N m): the branch of the row it starts from (the smaller torque) keeps its
    sign up to 97 deg (+77.9 N m there), so its bracket collapses on 97 deg with that torque.
    main reported it converged; it is not (the holding torque is not zero)."""
    from linkcli.api import load
    from linkcli.core import kinetostatics as ks

    mech = load(Path(__file__).parent / "data" / "branch" / "trip_spr.yaml").compiled

    def row(t_deg, s):
        return np.r_[r(t_deg), _from_crank(r(t_deg), 2.5, 2.0, 3.0, 4.0, s)]

    truth = _FourBarTruth(2.5, 2.0, 3.0, 4.0, 10.0, math.pi, r(60.0), row(60.0, -1)[1:])
    assert truth.s == -1 and all(truth.holding(t) > 0 for t in r(np.linspace(60.0, 97.0, 75)))
    rows = np.array([row(60.0, -1), row(97.0, 1)])
    tau = ks.reduced_stiffness(mech, rows).holding[:, 0]
    assert tau[0] > 0 > tau[1] and abs(tau[0]) < abs(tau[1])
    for eq in ks.find_equilibria(mech, rows[:, :1], rows, np.ones(2, dtype=bool)):
        # a rest position reported converged holds nothing: 1e-8 of the torques along the path
        assert not eq.converged or abs(eq.holding[0]) < 1e-8 * np.abs(tau).max(), eq


def test_equilibrium_searches_only_rows_on_the_estimates_branch(run_cli):
    """fb_rock_spr (rocker input; reachable O4 -141.4..-101.5 deg): --sweep O4=-150:-100:5 starts
    beyond the limit, and the rows reassembled after it are in the other mode (other_branch).
    main searched them and reported a stable rest position at O4 = -138.473 deg, status ok, exit
    0: a rest position of the other mode. The file's mode has one rest position in that range,
    at -104.169 deg (unstable: a sweep starting inside finds it). Truth: the holding torque dV/dq
    by virtual work in the file's mode (crank 1 m, 1 kg, CG at 0.5 m; coupler 3.5 m, 3.5 kg;
    rocker 3 m, 3 kg; crank spring 2 N m/rad free at 180 deg; q = -phi, the rocker angle): its
    root in -141..-102 deg, and its value at -138.473 deg (not zero)."""
    from scipy.optimize import brentq

    def crank(phi):  # crank angle (rad) at rocker angle phi, continuous from the estimate (45 deg at 101.49)
        path_phi = np.linspace(r(101.49), phi, 2001)
        bx, by = 4 + 3 * np.cos(path_phi), 3 * np.sin(path_phi)
        e = np.hypot(bx, by)
        t = np.unwrap(np.arctan2(by, bx) + np.arccos((1 + e * e - 3.5 ** 2) / (2 * e)))
        assert abs(t[0] - r(45.0)) < r(1.0)  # the estimate's mode
        return t[-1], by[-1]

    def holding(q):  # N m on O4 (q = -phi): dV/dq, central differences h = 1e-6 rad
        def V(phi):
            t, by = crank(phi)
            return 9.81 * (0.5 * np.sin(t) + 3.5 * (np.sin(t) + by) / 2 + 3.0 * by / 2) + 0.5 * 2.0 * (t - np.pi) ** 2
        return -(V(-q + 1e-6) - V(-q - 1e-6)) / 2e-6

    rest = math.degrees(brentq(holding, r(-141.0), r(-102.0), xtol=1e-13))
    assert abs(holding(r(-138.473))) > 1.0
    path = Path(__file__).parent / "data" / "branch" / "fb_rock_spr.yaml"
    res = run_cli("forces", path, "--equilibrium", "--sweep", "O4=-150:-100:5", "-f", "json")
    assert "internal error" not in res.stderr
    data = json.loads(res.stdout)["data"]
    assert data["status"] == [], data  # (main: one row, O4 -138.473 deg, ok)
    # the rows reassembled in the other mode are solved again in the file's mode (sweep.py's
    # _check_branch), where the holding torque keeps its sign over the solved rows -140..-105
    # (its root, -104.169, lies past the last one): no rest position, and none of the other mode
    assert holding(r(-140.0)) * holding(r(-105.0)) > 0 and rest > -105.0
    assert "no rest position found" in res.stderr and "keeps its sign" in res.stderr, res.stderr
    inside = run_cli("forces", path, "--equilibrium", "--sweep", "O4=-141:-102:1", "-f", "json")
    rows = json.loads(inside.stdout)["data"]
    assert rows["status"] == ["ok"] and abs(rows["O4.q [deg]"][0] - rest) < ANGLE_TOL_DEG
