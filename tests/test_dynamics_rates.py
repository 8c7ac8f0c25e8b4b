"""Initial rates of any joint variable (``analysis.simulate.rates``, ``--rate``): made
consistent with the loop closures and motion drivers, with a note when they were projected;
``--tol`` on the command line.

Truths: the loop-closure Jacobian (independent of the dynamics) must annihilate the start
rates; the requested rate is kept exactly when it is consistent.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from linkcli.analyses.simulate import SimulateRequest, run_simulate
from linkcli.cli.app import app
from linkcli.compile import compile_mechanism
from linkcli.core.loop_closure import constraints
from linkcli.io.loader import load_mechanism

ROOT = Path(__file__).parent.parent
FOURBAR = ROOT / "mechanisms" / "fourbar.yaml"  # crank_pin actuated; A, B, O4 passive; degrees
PENDULUM = ROOT / "tests" / "data" / "dynamics" / "pendulum.yaml"  # pivot not actuated; rad


def run(path, rates):
    loaded = load_mechanism(path)
    mech = compile_mechanism(loaded.model)
    return mech, run_simulate(mech, SimulateRequest(t_end=0.01, dt=1e-3, rates=rates), loaded)


def test_a_free_joint_that_is_not_actuated_starts_moving():
    mech, out = run(PENDULUM, {"pivot": 2.0})
    assert out.ok and not out.messages
    assert out.result.qd[0, 0] == pytest.approx(2.0, rel=1e-12)


def test_a_passive_rate_drives_the_loop_and_the_crank_follows():
    mech, out = run(FOURBAR, {"O4": 30.0})  # deg/s
    assert out.ok and not out.messages
    qd0 = out.result.qd[0]
    assert np.degrees(qd0[3]) == pytest.approx(30.0, rel=1e-9)
    # consistent with the loop closure (round-off of the rates, ~1e-14 rad/s)
    assert np.abs(constraints(mech, out.result.q[0]).J @ qd0).max() < 1e-12
    assert abs(qd0[0]) > 1.0  # the crank moves too


def test_contradicting_rates_are_projected_with_a_note():
    mech, out = run(FOURBAR, {"crank_pin": 10.0, "O4": 30.0})
    assert out.ok
    assert any("projected" in m and "O4" in m for m in out.messages)
    assert np.abs(constraints(mech, out.result.q[0]).J @ out.result.qd[0]).max() < 1e-12


def test_unknown_rate_name_is_a_clear_error():
    _, out = run(FOURBAR, {"O5": 1.0})
    assert not out.ok and "'O5' is not a joint variable" in out.summary["message"] and "O4" in out.summary["message"]


def test_cli_rate_for_a_passive_joint_and_tol(runner, tmp_path):
    out = tmp_path / "run.json"
    r = runner.invoke(app, ["simulate", str(FOURBAR), "--t-end", "0.01", "--rate", "O4=30", "--tol", "1e-8",
                            "-o", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    assert data["metadata"]["solver"]["tol"] == 1e-8
    bad = runner.invoke(app, ["simulate", str(FOURBAR), "--t-end", "0.01", "--tol", "0.5"])
    assert bad.exit_code != 0 and "--tol" in bad.output


def test_rates_of_passive_variables_are_valid_in_the_file(tmp_path):
    text = FOURBAR.read_text()
    assert "analysis:" in text
    f = tmp_path / "fb.yaml"
    f.write_text(text.split("analysis:")[0] + "analysis:\n  simulate: {t_end: 0.01, rates: {O4: 30}, tol: 1e-9}\n")
    loaded = load_mechanism(f)
    assert loaded.model.analysis.simulate.rates == {"O4": 30} and loaded.model.analysis.simulate.tol == 1e-9
