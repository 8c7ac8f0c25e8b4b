"""What analyses/solve.py does after the sweep, kept equal while made cheaper (issue 11, W1).

The status column is computed once per row (solve_stream's whole-run pass keeps it as 1-byte
codes for the table's blocks). Truth: limits.row_status and limits.limit_violations applied
to the solved rows directly, on runs with every status that matters here (ok,
no_configuration, outside_limits), in solve order and in a permuted output order.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kin_helpers import fourbar_yaml, mech_from_yaml

from linkcli.analyses.inputs import Sweep, input_grid
from linkcli.analyses.solve import SolveRequest, run_solve
from linkcli.compile import compile_mechanism
from linkcli.core.limits import OK, OUTSIDE_LIMITS, limit_violations, row_status
from linkcli.core.sweep import solve_sweep
from linkcli.io.loader import load_mechanism

REPO = Path(__file__).resolve().parent.parent


def _cases():
    nonturning = mech_from_yaml(fourbar_yaml(4, 3.2, 3.5, 3, "{crank_pin: 0.5}"))  # the crank cannot turn fully
    arm = compile_mechanism(load_mechanism(str(REPO / "mechanisms" / "planar_3r.yaml")).model)
    return [
        pytest.param(nonturning, SolveRequest(sweeps=[Sweep("crank_pin", -3.0, 3.0, num=201)]), id="no_configuration"),
        pytest.param(arm, SolveRequest(sweeps=[Sweep("elbow", 100, 200, num=41)]), id="outside_limits"),
        pytest.param(arm, SolveRequest(sweeps=[Sweep("elbow", 200, 100, num=9), Sweep("wrist", 0, 150, num=7)],
                                       mode="grid"), id="grid"),
    ]


@pytest.mark.parametrize("mech, req", _cases())
def test_status_column_equals_the_statuses_of_the_rows(mech, req):
    table = run_solve(mech, req).table
    grid = input_grid(mech, req.set, req.sweeps, req.mode)
    path, order = grid.path, grid.order
    res = solve_sweep(mech, path, mech.q_init, tol=req.tol)
    ok = res.status == 0
    want = row_status(mech, path, res.status)
    want[(want == OK) & limit_violations(mech, path, res.q, ok, req.tol).any(axis=1)] = OUTSIDE_LIMITS
    got = table["status"]
    np.testing.assert_array_equal(got, want[order])
    assert got.dtype == want.dtype
    assert len(set(got.tolist())) > 1  # the case has more than one status
