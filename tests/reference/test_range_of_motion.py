"""The range_of_motion figure against closed forms: exact extremes, not the sampled rows'.

Provenance:
* crank-rocker four-bar (ground d, crank a, coupler b, rocker c): the rocker is at an extreme
  where coupler and crank are collinear, i.e. the rocker pin B is b + a or b - a from the crank
  pivot O2; in triangle O2-O4-B the rocker's angle at O4 is then
  acos((d^2 + c^2 - (b +- a)^2) / (2 d c)) from the ground line, and the range is the difference
  of the two (law of cosines);
* non-Grashof 4/3/2/2 (issue #13's): the input stops at theta = acos(9/24) (coupler and rocker
  collinear); the rocker's absolute angle on a branch is atan2(A - O4) +- acos((c^2 + L^2 - b^2)
  / (2 c L)), L = |A - O4| (kin_helpers.fourbar_closed_form's triangle). On the branch the
  assembly picks, its largest value is at the limit of motion and its smallest at an interior
  stationary point (both found by a dense evaluation of that formula and a bounded scalar
  minimisation, independent of the code under test).

Tolerances: stationary points are located by Brent's method to 1e-9 rad of the input and their
configurations solved to 1e-13 (relative residual); the value error enters quadratically in the
location (f'' ~ 1 rad/rad^2 here: ~1e-18 rad) and linearly in the residual (~1e-13 rad), so
1e-9 deg (1.7e-11 rad) has two decades of margin. At a limit of motion the configuration is the one at
the located input (bisected to 1e-10 deg on the solved side): there the rocker moves like the
square root of the input's distance to the fold, which the test bounds by comparing with the
true extreme (the closed form at the fold) with 10 sqrt(fold - located input) rad, ~7e-4 deg:
what locating the limit to 1e-10 deg of the input allows (an exact fold value would need the
fold's augmented system solved, which the limit finder does not do).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from kin_helpers import fourbar_yaml, mech_from_yaml

from linkcli.analyses.inputs import Sweep
from linkcli.analyses.solve import SolveRequest, run_solve
from linkcli.batch.figures import SAMPLED, evaluate_figure
from linkcli.model.jobs import Figure

REPO = Path(__file__).resolve().parents[2]
FIG = Figure(range_of_motion="O4")


def _deg_yaml(d, a, b, c, assembly):
    return fourbar_yaml(d, a, b, c, assembly=assembly).replace("angle: rad", "angle: deg")


def rocker_range_closed_form(d, a, b, c):
    """deg: the crank-rocker's rocker range from the two collinear positions of crank and coupler."""
    def phi(diag):
        return math.degrees(math.acos((d * d + c * c - diag * diag) / (2 * d * c)))
    return phi(b + a) - phi(b - a)


def _range(mech, step, start=0.0, stop=360.0):
    out = run_solve(mech, SolveRequest(sweeps=[Sweep("crank_pin", start, stop, step=step)]))
    t = out.table
    fv = evaluate_figure(FIG, t, mech)
    sampled = float(np.nanmax(t["O4.q [deg]"]) - np.nanmin(t["O4.q [deg]"]))
    return fv, sampled, t


@pytest.mark.parametrize("step", [10.0, 30.0])
@pytest.mark.parametrize("lengths", [(4.0, 1.0, 3.5, 3.0), (4.0, 1.0, 3.6, 2.9), (5.0, 1.5, 4.0, 3.0)])
def test_crank_rocker_range_is_exact_at_a_coarse_step(lengths, step):
    mech = mech_from_yaml(_deg_yaml(*lengths, assembly="{crank_pin: 45, A: -5, B: 60}"))
    fv, sampled, _ = _range(mech, step)
    truth = rocker_range_closed_form(*lengths)
    assert fv.unit == "deg" and fv.note == ""
    assert abs(fv.value - truth) < 1e-9
    # the planted bug (no refinement: the rows' max - min) is far outside the tolerance here,
    # so this test fails if the refinement is skipped
    assert truth - sampled > 1e-4


def test_tester_variant_re_derived():
    """The tester's study variant (mm file: ground 400, crank 100, coupler 360, rocker 290) as a
    metre four-bar: the closed form is 81.94717 - 40.46736 = 41.47981 deg (the tester's 41.477
    came from a mistyped 40.4705); the 10 deg sweep's rows gave 41.443."""
    truth = rocker_range_closed_form(4.0, 1.0, 3.6, 2.9)
    assert truth == pytest.approx(41.4798093, abs=1e-7)
    mech = mech_from_yaml(_deg_yaml(4.0, 1.0, 3.6, 2.9, "{crank_pin: 45, A: -5, B: 60}"))
    fv, sampled, _ = _range(mech, 10.0)
    assert abs(fv.value - truth) < 1e-9
    assert sampled == pytest.approx(41.443, abs=1e-3)


def _branch_angle(theta, sign, d=4.0, a=3.0, b=2.0, c=2.0):
    """Absolute rocker angle (rad) at crank angles theta (rad) on one branch (module docstring)."""
    A = np.stack([a * np.cos(theta), a * np.sin(theta)], -1)
    v = A - np.array([d, 0.0])
    L = np.linalg.norm(v, axis=-1)
    cosine = np.clip((c * c + L * L - b * b) / (2 * c * L), -1.0, 1.0)
    return np.arctan2(v[..., 1], v[..., 0]) + sign * np.arccos(cosine)


def test_extreme_at_a_located_limit_of_motion_and_at_an_interior_stationary_point():
    from scipy.optimize import minimize_scalar

    mech = mech_from_yaml(_deg_yaml(4, 3, 2, 2, "{crank_pin: 10, A: 60}"))
    fv, sampled, t = _range(mech, 10.0, 0.0, 90.0)
    (lim,) = t.metadata["limits"]
    assert lim["kind"] == "end_of_range" and lim["rows"] == [6, 7]
    ok = t["status"] == "ok"
    theta = np.radians(t["crank_pin.q [deg]"][ok])
    rows = np.radians(t["O4.q [deg]"][ok])
    # the joint variable is the ground's angle on the rocker: -(rocker angle) + a constant; the
    # branch is the one whose closed form follows the rows
    sign = min((1, -1), key=lambda s: np.ptp(rows + _branch_angle(theta, s)))
    assert np.ptp(rows + _branch_angle(theta, sign)) < 1e-9
    at = math.radians(lim["inputs"]["crank_pin"])
    fold = math.acos(9 / 24)
    assert 0 <= fold - at <= 1e-9  # located on the solved side
    dense = _branch_angle(np.linspace(0.0, at, 200_001), sign)
    i_lo, i_hi = int(np.argmin(dense)), int(np.argmax(dense))
    # on this branch one extreme is at the limit of motion and the other inside (between rows)
    assert {i_lo, i_hi} & {len(dense) - 1} and not {i_lo, i_hi} & {0}
    inner = i_lo if i_hi == len(dense) - 1 else i_hi
    s = 1.0 if inner == i_lo else -1.0
    grid = np.linspace(0.0, at, 200_001)
    found = minimize_scalar(lambda x: s * _branch_angle(np.array(x), sign), bounds=(grid[inner - 1], grid[inner + 1]),
                            method="bounded", options={"xatol": 1e-12})
    interior = float(_branch_angle(np.array(found.x), sign))
    at_fold = float(_branch_angle(np.array(fold), sign))
    truth = math.degrees(abs(at_fold - interior))
    # the true extreme is the fold's; the figure takes the configuration at the located input,
    # fold - at <= 1e-9 rad away, where the rocker differs from the fold's like the square root
    # of that distance (d psi ~ sqrt(2 dtheta) here): 10 sqrt(fold - at) rad bounds it
    bound = math.degrees(10 * math.sqrt(fold - at) + 1e-11)
    assert abs(fv.value - truth) < bound < 1e-3
    # the rows alone miss both extremes: far outside that bound
    assert truth - sampled > 1.0


def test_tables_that_are_not_a_one_input_sweep_keep_the_sampled_range_and_say_so():
    mech = mech_from_yaml(_deg_yaml(4.0, 1.0, 3.5, 3.0, "{crank_pin: 45, A: -5, B: 60}"))
    out = run_solve(mech, SolveRequest(sweeps=[Sweep("crank_pin", 0, 360, step=30)]))
    t = out.table
    t.metadata["analysis"] = "simulate"  # a time series: its rows are what it has
    fv = evaluate_figure(FIG, t, mech)
    assert fv.value == pytest.approx(float(np.ptp(t["O4.q [deg]"])), abs=0)
    assert fv.note.startswith(SAMPLED) and "simulate" in fv.note
    # a grid of the five-bar's two cranks: rows of a surface, not a path
    from linkcli.compile import compile_mechanism
    from linkcli.io.loader import load_mechanism

    five = compile_mechanism(load_mechanism(REPO / "mechanisms" / "fivebar.yaml").model)
    base = np.degrees(five.q_init[five.q_actuated])
    grid = run_solve(five, SolveRequest(sweeps=[Sweep("O1", base[0] - 10, base[0] + 10, step=10),
                                                Sweep("O5", base[1] - 10, base[1] + 10, step=10)]))
    fv = evaluate_figure(Figure(range_of_motion="A"), grid.table, five)
    header = next(h for h in grid.table.headers() if h.startswith("A.q ["))
    assert fv.value == float(np.nanmax(grid.table[header]) - np.nanmin(grid.table[header]))
    assert fv.note.startswith(SAMPLED) and "2 inputs vary" in fv.note
    # one row: the range is 0 and nothing to say
    one = run_solve(mech, SolveRequest(set={"crank_pin": 10.0}))
    fv = evaluate_figure(FIG, one.table, mech)
    assert fv.value == 0.0 and fv.note == ""


def test_study_fast_and_per_variant_paths_use_the_variants_geometry(run_cli, tmp_path, monkeypatch):
    """Grid study on mechanisms/fourbar.yaml (ground 4, crank 1): each variant's O4.range equals
    its own closed form (not the nominal's), on the fast path and on the per-variant one."""
    import csv
    import io
    import json

    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f"""jobs:
  s:
    files: {REPO / 'mechanisms' / 'fourbar.yaml'}
    options: {{sweep: {{crank_pin: {{from: 0, to: 360, step: 10}}}}}}
    figures: [{{range_of_motion: O4}}]
    study:
      method: grid
      parameters:
        links.coupler.frames.B[0]: {{values: [3.5, 3.6]}}
        links.rocker.frames.B[0]: {{values: [2.9, 3.0]}}
""", encoding="utf-8")
    tables = {}
    for path in ("fast", "per-variant"):
        monkeypatch.setenv("LINKCLI_STUDY_PATH", path)
        r = run_cli("batch", jobs, "--jobs", "1", "--out-dir", tmp_path / path)
        assert r.exit_code == 0, r.output
        rows = list(csv.DictReader(io.StringIO((tmp_path / path / "s.csv").read_text(encoding="utf-8"))))
        tables[path] = rows
        (job,) = json.loads((tmp_path / path / "summary.json").read_text(encoding="utf-8"))["jobs"]
        evaluation = job["study"]["evaluation"]
        assert evaluation["fast" if path == "fast" else "per_variant"] == 4, evaluation
        for row in rows:
            b, c = float(row["links.coupler.frames.B[0] [m]"]), float(row["links.rocker.frames.B[0] [m]"])
            key = next(k for k in row if k.startswith("O4.range"))
            assert abs(float(row[key]) - rocker_range_closed_form(4.0, 1.0, b, c)) < 1e-9, (path, b, c)
    assert {row["variant"] for row in tables["fast"]} == {"0", "1", "2", "3"}


@pytest.mark.parametrize("name", ["fourbar", "watt_sixbar", "planar_fourbar_as_spatial", "rssr_spatial"])
def test_kernel_input_rates_equal_the_tangent_map(name):
    """KernelPoints' rates (computed in the sweep kernel) are loop_closure.tangent_map's column
    (square, tall and wide J_p): 1e-10 relative, the two linear solves' rounding at condition
    numbers up to ~1e3 along these sweeps."""
    from linkcli.compile import compile_mechanism
    from linkcli.core.loop_closure import constraints, tangent_map
    from linkcli.core.sweep import kernel_points, solve_sweep
    from linkcli.io.loader import load_mechanism

    mech = compile_mechanism(load_mechanism(REPO / "mechanisms" / f"{name}.yaml").model)
    a0 = mech.q_init[mech.q_actuated]
    path = a0 + np.linspace(0.0, 0.5, 6)[:, None] * np.ones(mech.n_actuated)
    res = solve_sweep(mech, path, mech.q_init)
    kp = kernel_points(mech)
    for k in np.flatnonzero(res.status == 0):
        N = tangent_map(mech, constraints(mech, res.q[k]).J)
        for col in range(mech.n_actuated):
            np.testing.assert_allclose(kp.rates(res.q[k], col), N[:, col], rtol=1e-10, atol=1e-10)
        # solve_between at a segment's start (t = 0: the guess is the row itself) re-solves the row
        row = np.ascontiguousarray(res.q[k])
        zero = np.zeros(mech.n_q)
        q2, r2, st = kp.between(np.ascontiguousarray(path[k]), (row, row, zero, zero), 0.0, 1e-13, 0)
        assert st == 0 and np.abs(q2 - row).max() < 1e-9
        np.testing.assert_allclose(r2, N[:, 0], rtol=1e-8, atol=1e-8)  # at q2, within 1e-9 of q


def test_the_interpreted_kernel_gives_the_same_range():
    """The refinement's kernel functions run as plain Python (LINKCLI_JIT=never, no numba, a
    cold numba cache) as compiled: the same closed form to 1e-9 deg."""
    from linkcli.core import sweep as sw
    from linkcli.core.extremes import KernelPoints

    mech = mech_from_yaml(_deg_yaml(4.0, 1.0, 3.6, 2.9, "{crank_pin: 45, A: -5, B: 60}"))
    t = run_solve(mech, SolveRequest(sweeps=[Sweep("crank_pin", 0, 360, step=30)])).table
    pk = sw._interpreted_kernel()
    mi, mf, n_wf, n_wi = sw._packed(mech, pk)
    fv = evaluate_figure(FIG, t, mech, points=lambda: KernelPoints(mech, pk, mi, mf, n_wf, n_wi))
    assert abs(fv.value - rocker_range_closed_form(4.0, 1.0, 3.6, 2.9)) < 1e-9


@pytest.mark.parametrize("start, stop", [(100.0, 250.0), (-170.0, 20.0), (10.0, 700.0)])
def test_partial_and_multi_turn_sweeps_against_a_dense_closed_form(start, stop):
    """Sweeps that end inside the motion (an extreme at a sweep's end, or one inside) and one of
    almost two turns: the range against the closed form on 2,000,001 points of the swept
    interval (its grid error 0.5 |psi''| (interval / 4e6)^2 < 1e-12 rad with |psi''| < 2 here)."""
    lengths = (4.0, 1.0, 3.5, 3.0)
    mech = mech_from_yaml(_deg_yaml(*lengths, assembly="{crank_pin: 45, A: -5, B: 60}"))
    fv, sampled, t = _range(mech, 30.0, start, stop)
    theta = np.radians(t["crank_pin.q [deg]"])
    rows = np.radians(t["O4.q [deg]"])
    d, a, b, c = lengths
    def psi(th, s):  # the closed form unwrapped along the sweep (atan2 jumps by 2 pi)
        return np.unwrap(_branch_angle(th, s, d, a, b, c))

    sign = min((1, -1), key=lambda s: np.ptp(rows + psi(theta, s)))
    assert np.ptp(rows + psi(theta, sign)) < 1e-9
    # (the swept inputs are the rows': a step that does not divide the interval stops short)
    dense = psi(np.linspace(theta[0], theta[-1], 2_000_001), sign)
    truth = math.degrees(float(np.ptp(dense)))
    assert abs(fv.value - truth) < 1e-9
    assert fv.value >= sampled
