"""Over-constrained loops sharing a joint solve (mobility by rank, redundant rows dropped).

Provenance:
* locomotive coupling rod over three wheels (mechanisms/coupling_rod.yaml): two parallelogram
  loops sharing the pin P2. Closed form: every wheel turns by the driven angle, the rod
  translates without turning, P1 = 0.4 (cos t, sin t) about axle 1; pin angles (rod relative to
  wheel) are -t. Gruebler counts 0, the rank of the constraint Jacobian gives mobility 1 with
  one redundant equation.
* a four-bar whose crank-coupler pin is modelled twice (two revolutes on the same axis): the
  motion is the plain four-bar's (circle intersection, kin_helpers.fourbar_closed_form) and the
  two pin angles are equal.
Tolerance 1e-8 (deg or m): the solver's residual is 1e-10 relative and the conditioning is
moderate away from the change points at 0 and 180 deg (see test_fourbar_closed_form.py).
"""

from pathlib import Path

import numpy as np
from kin_helpers import fourbar_closed_form

from linkcli.analyses.inputs import Sweep
from linkcli.analyses.solve import SolveRequest, run_solve
from linkcli.cli.app import app
from linkcli.compile import compile_mechanism
from linkcli.core.mobility import mobility_report
from linkcli.io.loader import load_mechanism

MECHANISMS = Path(__file__).resolve().parents[2] / "mechanisms"
COUPLING_ROD = str(MECHANISMS / "coupling_rod.yaml")


def test_coupling_rod_translates_and_wheels_turn_equally():
    mech = compile_mechanism(load_mechanism(COUPLING_ROD).model)
    rep = mobility_report(mech, mech.q_init)
    assert (rep.gruebler, rep.mobility, rep.redundant) == (0, 1, 1)
    t = run_solve(mech, SolveRequest(sweeps=[Sweep("axle1", 5, 355, step=5)])).table
    assert set(t["status"]) == {"ok"}
    th = t["axle1.q [deg]"]
    for name in ("axle2", "axle3"):
        np.testing.assert_allclose(t[f"{name}.q [deg]"], th, atol=1e-8)
    for name in ("pin1", "pin2", "pin3"):
        np.testing.assert_allclose(t[f"{name}.q [deg]"], -th, atol=1e-8)
    np.testing.assert_allclose(t["effector.angle [deg]"], 0.0, atol=1e-8)  # the rod does not turn
    np.testing.assert_allclose(t["effector.x [m]"], 0.4 * np.cos(np.radians(th)), atol=1e-8)
    np.testing.assert_allclose(t["effector.y [m]"], 0.4 * np.sin(np.radians(th)), atol=1e-8)
    # three four-bar rings share the pin P3's coupler-output role: each has its own column
    names = [c for c in t.headers() if c.endswith("transmission [deg]")]
    assert len(names) == len(set(names)) == 3


DOUBLED = (MECHANISMS / "fourbar.yaml").read_text().replace(
    "  A: {type: revolute, parent: crank.A, child: coupler.A}",
    "  A: {type: revolute, parent: crank.A, child: coupler.A}\n"
    "  A2: {type: revolute, parent: crank.A, child: coupler.A}",
).replace("assembly: {crank_pin: 45, A: -5.36,", "assembly: {crank_pin: 45, A: -5.36, A2: -5.36,")


def test_fourbar_with_a_doubled_pin_moves_like_the_fourbar(tmp_path, runner):
    assert "A2:" in DOUBLED
    path = tmp_path / "doubled.yaml"
    path.write_text(DOUBLED)
    for command in (["solve", str(path), "--format", "csv"],
                    ["fk", str(path), "--set", "crank_pin=30", "--format", "csv"]):
        r = runner.invoke(app, command)
        assert r.exit_code == 0, r.stderr
        assert "internal error" not in r.stderr
    mech = compile_mechanism(load_mechanism(path).model)
    t = run_solve(mech, SolveRequest(sweeps=[Sweep("crank_pin", 0, 360, step=15)])).table
    th = np.radians(t["crank_pin.q [deg]"])
    np.testing.assert_allclose(t["A.q [deg]"], t["A2.q [deg]"], atol=1e-8)
    B = np.stack([t["rocker.B.x [m]"], t["rocker.B.y [m]"]], axis=1)
    np.testing.assert_allclose(B, fourbar_closed_form(4, 1, 3.5, 3, th, +1), atol=1e-8)


def test_coupling_rod_cli_commands_do_not_fail(runner, tmp_path):
    for command in (["solve", COUPLING_ROD, "--format", "csv"],
                    ["fk", COUPLING_ROD, "--set", "axle1=40", "--format", "csv"],
                    ["jacobian", COUPLING_ROD, "--set", "axle1=40"]):
        r = runner.invoke(app, command)
        assert r.exit_code == 0, r.stderr
    r = runner.invoke(app, ["fk", COUPLING_ROD, "--set", "axle1=40", "--format", "csv"])
    header, row = r.stdout.strip().splitlines()[-2:]
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert abs(float(values["axle3.q [deg]"]) - 40) < 1e-8 and values["status"] == "ok"
