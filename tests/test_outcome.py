"""One outcome type (issue 13): every analysis returns :class:`AnalysisOutcome`, its
``n_failed`` is the number of cases whose status is not ``ok``, and a failure is told by a typed
event (never found by parsing message text)."""

from pathlib import Path

import numpy as np
import pytest
from kin_helpers import fourbar_yaml, mech_from_yaml

import linkcli
from linkcli.analyses.forces import ForcesRequest, run_equilibrium, run_forces
from linkcli.analyses.ik import IKRequest, run_ik
from linkcli.analyses.inputs import Sweep
from linkcli.analyses.jacobian import run_jacobian
from linkcli.analyses.outcome import FAILURE_KINDS, AnalysisOutcome, Event
from linkcli.analyses.simulate import SimulateRequest, run_simulate
from linkcli.analyses.solve import SolveRequest, run_solve
from linkcli.batch.analyses import ANALYSES

REPO = Path(__file__).resolve().parents[1]
# links 4 (ground), 3 (crank), 2, 2: the crank reaches arccos(-7/24) = 67.9757 deg, no further
NON_GRASHOF = fourbar_yaml(4, 3, 2, 2, assembly="{crank_pin: 0.2, A: 1.0}").replace(
    "angle: rad", "angle: deg").replace("crank_pin: 0.2, A: 1.0", "crank_pin: 10, A: 60")


def _statuses(out: AnalysisOutcome) -> np.ndarray:
    return np.asarray(out.table["status"])


def _check(out: AnalysisOutcome) -> None:
    assert type(out) is AnalysisOutcome
    assert all(isinstance(e, Event) for e in out.events)
    assert out.ok == (out.n_failed == 0)
    assert out.messages == [e.message for e in out.events]
    if out.n_failed:  # a failure always has a text, from the first failure event when there is one
        first = next((e for e in out.events if e.kind in FAILURE_KINDS), None)
        assert out.failure == (first.message if first else "")
        assert out.failure_summary
    else:
        assert out.failure == out.failure_summary == ""


def test_solve_counts_every_non_ok_row_and_types_the_failure():
    mech = mech_from_yaml(NON_GRASHOF)
    out = run_solve(mech, SolveRequest(sweeps=[Sweep("crank_pin", 0, 90, step=1)]))
    _check(out)
    status = _statuses(out)
    # rows 68..90 deg lie beyond the limit of motion (67.98 deg): 23 rows, no configuration
    assert (out.n_cases, out.n_failed) == (91, int((status != "ok").sum())) == (91, 23)
    first = next(e for e in out.events if e.is_failure)
    assert first.kind == "no_assembly" and first.index == 68 and out.failure == first.message
    assert any(e.kind == "limit" for e in out.events)


def test_forces_and_equilibrium_count_non_ok_rows():
    mech = mech_from_yaml(NON_GRASHOF)
    out = run_forces(mech, ForcesRequest(sweeps=[Sweep("crank_pin", 60, 75, step=1)], static=True))
    _check(out)
    status = _statuses(out)
    assert out.n_cases == 16 and out.n_failed == int((status != "ok").sum()) == 8  # 68..75 deg
    assert out.events[[e.is_failure for e in out.events].index(True)].kind in ("no_assembly", "singular")
    motor = linkcli.load(REPO / "mechanisms" / "motor_fourbar.yaml")  # angle: rad
    eq = run_equilibrium(motor.compiled, ForcesRequest(sweeps=[Sweep("crank_pin", 0.0, 6.2, step=0.1)]))
    _check(eq)
    assert eq.n_cases == eq.table.n >= 1 and eq.n_failed == int((_statuses(eq) != "ok").sum())
    assert {e.kind for e in eq.events if e.is_failure} <= {"not_converged", "no_assembly"}


def test_ik_and_jacobian_count_failed_cases():
    arm = linkcli.load(REPO / "mechanisms" / "planar_3r.yaml")
    out = run_ik(arm.compiled, IKRequest([[3.0, 1.0], [1.0, 1.0], [9.0, 0.0]], "position"))
    _check(out)
    # ik's good status is `converged` (the solver's word, as in the ik table since its first version)
    assert (out.n_cases, out.n_failed) == (3, int((_statuses(out) != "converged").sum())) == (3, 2)
    assert [(e.kind, e.index) for e in out.events] == [("unreachable", 0), ("unreachable", 2)]
    # |(9, 0)| - 2.3 m: the distance of the closest pose (closed form), to the solver's tolerance
    assert out.events[1].data["position_error_m"] == pytest.approx(9.0 - 2.3, abs=1e-9)
    four = mech_from_yaml(NON_GRASHOF)
    good = run_jacobian(four, {"crank_pin": 30.0})
    bad = run_jacobian(four, {"crank_pin": 80.0})  # beyond the limit of motion: no configuration
    for jac in (good, bad):
        _check(jac)
        assert jac.n_cases == 1 and jac.n_failed == int(jac.table.metadata["status"] != "ok")
    assert (good.n_failed, bad.n_failed) == (0, 1) and bad.events[0].kind == "no_assembly"


def test_simulate_is_one_case_and_a_run_that_cannot_start_is_a_typed_failure():
    pend = linkcli.load(REPO / "mechanisms" / "double_pendulum.yaml")
    ok = run_simulate(pend.compiled, SimulateRequest(t_end=0.01, dt=1e-3), pend.loaded)
    _check(ok)
    assert (ok.n_cases, ok.n_failed) == (1, 0) and ok.table.n > 1
    bad = run_simulate(pend.compiled, SimulateRequest(t_end=0.01, dt=1e-3, rates={"nope": 1.0}), pend.loaded)
    _check(bad)
    assert (bad.n_cases, bad.n_failed, bad.table) == (1, 1, None)
    assert bad.events[-1].kind == "stopped" and bad.failure == bad.summary["message"]


def test_batch_and_api_return_the_same_type():
    from linkcli.model.mechanism import SolveDefaults

    m = linkcli.load(REPO / "mechanisms" / "fourbar.yaml")
    assert linkcli.Outcome is AnalysisOutcome and linkcli.Event is Event
    assert type(m.solve()) is AnalysisOutcome
    out = ANALYSES["solve"](m.compiled, m.loaded, SolveDefaults())
    _check(out)
    assert out.n_failed == int((_statuses(out) != "ok").sum())


def test_columns_are_found_by_entity_and_quantity_not_by_parsing_headers():
    m = linkcli.load(REPO / "mechanisms" / "fourbar.yaml")  # angle: deg, length: m
    t = m.solve(set={"crank_pin": 30}).table
    col = t.find("crank_pin", "q")
    assert col is not None and col.unit == "deg" and col.header == "crank_pin.q [deg]"
    np.testing.assert_array_equal(col.values, t["crank_pin.q [deg]"])
    assert t.find("crank_pin", "no_such_quantity") is None
