"""The Python API (README "Python API"): the README's example runs as printed, and the API
returns what the command line writes (same table, SI conversion by the file's unit factors)."""

import math
import re
from pathlib import Path

import numpy as np
import pytest

import linkcli
from linkcli.analyses.solve import request_from_defaults, run_solve
from linkcli.errors import AnalysisInputError, MechanismFileError

REPO = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs(monkeypatch, capsys):
    text = (REPO / "README.md").read_text()
    section = text.split("## Python API", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    monkeypatch.chdir(REPO)
    exec(compile(code, "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["361", "0"]
    # numpy prints 8 significant digits: 1 deg = 0.01745329 rad
    np.testing.assert_allclose([float(v) for v in lines[1].strip("[]").split()], [0.0, np.radians(1.0)], atol=1e-8)
    assert lines[3].startswith("unreachable 0.86227766")  # 3R: |(3, 1)| - 2.3 (closed form)
    assert lines[4].split()[0] == "True"


def test_api_matches_the_command_line_table_and_units():
    m = linkcli.load(REPO / "mechanisms" / "fourbar.yaml")
    out = m.solve()  # the file's analysis.solve block, as `linkcli solve FILE`
    ref = run_solve(m.compiled, request_from_defaults(m.model.analysis.solve)).table
    assert out.columns == ref.headers()
    np.testing.assert_array_equal(out["coupler.P.y [m]"], ref["coupler.P.y [m]"])
    np.testing.assert_allclose(out.si("crank_pin.q [deg]"), np.radians(out["crank_pin.q [deg]"]), rtol=1e-15)
    rates = m.solve(set={"crank_pin": 30}, rates={"crank_pin": 360})
    # deg/s -> rad/s by the same factor; m/s unchanged
    np.testing.assert_allclose(rates.si("A.qd [deg/s]"), np.radians(rates["A.qd [deg/s]"]), rtol=1e-15)
    np.testing.assert_array_equal(rates.si("coupler.P.vx [m/s]"), rates["coupler.P.vx [m/s]"])
    assert all(isinstance(e, linkcli.Event) for e in out.events)


def test_api_failures_are_typed_and_counted():
    ng = linkcli.load(REPO / "mechanisms" / "fourbar.yaml")
    with pytest.raises(AnalysisInputError):
        ng.solve(sweep={"crank_pin": (0, 1, 1e-300)})  # refused up front, as on the command line
    # what no sweep means is named as such (was: "has inf points" for nan/inf, ZeroDivisionError
    # for a zero step)
    for spec in [(0, 10, 0), (0, math.inf, 1), (math.nan, 10, 1), (0, 10, math.nan)]:
        with pytest.raises(AnalysisInputError, match="from and to must be finite numbers and step a nonzero finite"):
            ng.solve(sweep={"crank_pin": spec})
    with pytest.raises(MechanismFileError):
        bad = REPO / "tests" / "data" / "bad"
        linkcli.load(bad / next(p.name for p in bad.glob("*.yaml")))
    limited = linkcli.load(REPO / "mechanisms" / "planar_3r.yaml").ik([[3.0, 1.0], [1.0, 1.0]])
    assert (limited.n_cases, limited.n_failed, limited.ok) == (2, 1, False)
    assert [(e.kind, e.index) for e in limited.events] == [("unreachable", 0)]  # typed, with the target
    assert limited.failure == limited.events[0].message
