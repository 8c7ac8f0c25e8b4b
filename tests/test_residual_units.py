"""Residual columns carry one honest unit, the file's length unit: a loop's (or the joints')
largest misfit, angular components times the mechanism size. Checked against a closed-form gap
in a metre and a millimetre file (a planted x1000 error shows) and, for the integrator's
constraint residual, against a planted gap of known size."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from kin_helpers import open_fourbar_yaml

from linkcli.cli.app import app  # noqa: F401 - the CLI fixture imports it too

MECH = Path(__file__).resolve().parent.parent / "mechanisms"



def solve_rows(run_cli, tmp_path, unit: str, scale: float) -> tuple[list[str], list[dict]]:
    path = tmp_path / f"open_{unit}.yaml"
    path.write_text(open_fourbar_yaml(unit, scale))
    out = tmp_path / f"open_{unit}.csv"
    r = run_cli("solve", path, "--sweep", "crank_pin=0:0:1", "-o", out)
    assert r.exit_code == 1, r.output  # the point cannot be assembled
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    return list(rows[0]), rows


def test_a_loop_residual_is_a_length_in_the_files_unit(run_cli, tmp_path):
    """Ground 10, three links of 1: at crank 0 the coupler end and the rocker end are at least
    |O4 - A| - 2 = 9 - 2 = 7 m apart (triangle inequality), whatever the solver's least-squares
    pose; the same mechanism in mm must read 1000 times the metre file's value."""
    head_m, rows_m = solve_rows(run_cli, tmp_path, "m", 1.0)
    head_mm, rows_mm = solve_rows(run_cli, tmp_path, "mm", 1000.0)
    assert "loop_B.residual [m]" in head_m and "loop_B.residual [mm]" in head_mm
    gap_m = float(rows_m[0]["loop_B.residual [m]"])
    gap_mm = float(rows_mm[0]["loop_B.residual [mm]"])
    assert gap_m >= 7.0 - 1e-12  # the position gap alone; angular misfits only add to it
    assert gap_m < 7.0 + 10 * np.pi  # at most the size (10 m) times an angle of pi
    assert gap_mm == pytest.approx(1000.0 * gap_m, rel=1e-9)  # same SI numbers, shown in mm


def test_a_solved_loop_residual_is_within_the_tolerance_in_the_files_unit(run_cli, tmp_path):
    out = tmp_path / "shaker.csv"
    r = run_cli("solve", MECH / "fourbar.yaml", "--sweep", "crank_pin=0:90:30", "-o", out)
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    values = [float(row["loop_B.residual [m]"]) for row in rows]
    assert max(values) <= 1e-10 * 4.0  # tol 1e-10 of the mechanism size (4 m)


def test_the_integrators_constraint_residual_measures_a_planted_gap():
    """The shaker pendulum (a mm file; its arm driven by a harmonic motion driver: a DRV_ANGLE
    row) at its start, with the driver's prescribed value offset by delta rad: the residual
    must read delta times the mechanism size (m); a joint opened by d m must read d."""
    from linkcli.compile import compile_mechanism
    from linkcli.core.assembly import assemble
    from linkcli.core.dynamics.kinematics import joint_geometry
    from linkcli.core.dynamics.layout import N_GEOMETRY
    from linkcli.core.dynamics.reactions import joint_wrenches
    from linkcli.core.dynamics.setup import prepare
    from linkcli.core.loop_closure import mechanism_size
    from linkcli.core.profiles import evaluate_profile
    from linkcli.io.loader import load_mechanism

    mech = compile_mechanism(load_mechanism(MECH / "shaker_pendulum.yaml").model)
    a0 = np.array([float(evaluate_profile(mech.driver_profile[0], 0.0)[0])])
    start = assemble(mech, a0, mech.q_init)
    setup, w, _ = prepare(mech, start.q, np.zeros(mech.n_q), 0.01, 1e-3)
    km, nj = setup.km, mech.n_joints
    JW = np.zeros((nj, N_GEOMETRY, 3))
    force, moment, fa, ma = (np.zeros((nj, 3)) for _ in range(4))
    lam = np.zeros(setup.model.row_index.shape[0])
    drv = setup.drv[1].copy()

    def residual(pos, rot, drv_val) -> float:
        joint_geometry(km, pos, rot, JW)
        return joint_wrenches(km, rot, JW, drv_val, lam, force, moment, fa, ma)

    assert residual(w.pos, w.rot, drv) < 1e-12  # assembled
    size = mechanism_size(mech)
    assert size == pytest.approx(0.4)  # the largest frame coordinate: ground.S at y = -400 mm
    delta = 1e-4
    assert residual(w.pos, w.rot, drv + delta) == pytest.approx(delta * size, rel=1e-6)
    d = 3e-4
    pos = w.pos.copy()
    pos[1, 0] += d  # the bob's CG moved along x: its hinge opens by d
    assert residual(pos, w.rot, drv) == pytest.approx(d, rel=1e-9)


def test_simulate_writes_the_constraint_residual_in_the_files_length_unit(run_cli, tmp_path):
    out = tmp_path / "sim.csv"
    r = run_cli("simulate", MECH / "shaker_pendulum.yaml", "--t-end", "0.01", "-o", out)
    assert r.exit_code == 0, r.output
    header = out.read_text().splitlines()[0].split(",")
    assert "constraint_residual [mm]" in header and "constraint_residual" not in header


@pytest.mark.parametrize("name", ["fourbar.yaml", "planar_fourbar_as_spatial.yaml"])
@pytest.mark.parametrize("unit, scale", [("m", 1.0), ("mm", 1e-3)])
def test_an_angular_misfit_counts_times_the_mechanism_size(name, unit, scale, tmp_path):
    """A loop closed in position but turned by delta at its closing joint (its revolute
    variable moved by delta rotates the frame about the joint's origin, which stays put): the
    gap is delta times the mechanism size -- the largest frame coordinate of the file, read
    here from the YAML, in m (the mm file is the same numbers read as mm: 1000 x smaller)."""
    from linkcli.compile import compile_mechanism
    from linkcli.core.assembly import assemble
    from linkcli.core.loop_closure import Status, loop_gaps
    from linkcli.io.loader import load_mechanism

    text = (MECH / name).read_text(encoding="utf-8").replace("length: m,", f"length: {unit},")
    path = tmp_path / f"{unit}_{name}"
    path.write_text(text, encoding="utf-8")
    model = load_mechanism(path).model
    mech = compile_mechanism(model)
    size = scale * max(abs(c) for link in model.links.values() for f in link.frames.values()
                       for c in (f.origin or [])[:3])  # m
    assert size > 2e-3  # the mechanism_size floor (1e-3 m) is not what is measured
    start = assemble(mech, mech.q_init[mech.q_actuated], mech.q_init)
    assert start.status == Status.CONVERGED
    assert loop_gaps(mech, start.q).max() < 1e-9 * size  # closed
    [k] = mech.loop_joint
    delta = 1e-3  # rad
    q = start.q.copy()
    q[mech.joint_q_start[k]] += delta
    # 1e-6 relative: the rotation vector of a 1e-3 rad turn is delta up to round-off (O(1e-16)/1e-3)
    assert loop_gaps(mech, q).max() == pytest.approx(delta * size, rel=1e-6)
