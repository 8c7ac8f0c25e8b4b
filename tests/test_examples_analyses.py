"""Every example in mechanisms/ runs its analyses: the file's `analysis.solve` sweep assembles
at every point, and every example with masses simulates briefly with its joints closed.

Tolerances: the kinematic solver converges to 1e-10 relative loop residual (loop residual
columns are max |r| in m or rad, so 1e-9 for these metre-sized mechanisms); the integrator keeps
constraints at its Newton tolerance 1e-10 (1e-9 allows rounding on long links).
"""

from pathlib import Path

import numpy as np
import pytest

from linkcli.analyses.simulate import SimulateRequest, run_simulate
from linkcli.analyses.simulate import request_from_defaults as sim_defaults
from linkcli.analyses.solve import request_from_defaults, run_solve
from linkcli.cli.common import load_and_compile

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "mechanisms").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_solves_along_its_sweep(path):
    loaded, mech = load_and_compile(path)
    outcome = run_solve(mech, request_from_defaults(loaded.model.analysis.solve), loaded)
    table = outcome.table
    assert outcome.n_failed == 0 and set(table["status"]) == {"ok"}
    for header in table.headers():
        if header.endswith(".residual"):
            assert np.max(table[header]) < 1e-9
    assert np.all(np.isfinite(table["effector.x [" + mech.length_unit + "]"]))


@pytest.mark.parametrize("path", [p for p in EXAMPLES if "mass" in p.read_text() or "shape" in p.read_text()],
                         ids=lambda p: p.stem)
def test_example_with_masses_simulates(path):
    loaded, mech = load_and_compile(path)
    req = sim_defaults(loaded.model.analysis.simulate)
    req = SimulateRequest(t_end=0.05, dt=req.dt, every=1, set=req.set, rates=req.rates)
    outcome = run_simulate(mech, req, loaded)
    assert outcome.ok, outcome.messages
    assert outcome.summary["max_constraint_residual_m"] < 1e-9
    assert np.all(np.isfinite(outcome.table["energy.total [J]"]))
