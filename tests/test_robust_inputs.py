"""Non-finite, absurd and oversized numbers end in clear errors (exit 2 for options, 3 for
files) before anything is computed, never in an internal error or a run until memory runs out;
a joint value outside its limits is warned about, naming the joint (issue #13)."""

import math
from pathlib import Path

import pytest

from linkcli.cli.app import app

MECH = Path(__file__).resolve().parents[1] / "mechanisms"
FOURBAR = str(MECH / "fourbar.yaml")


@pytest.mark.parametrize("args, words", [
    (["fk", FOURBAR, "--set", "crank_pin=nan"], ["--set", "finite"]),
    (["fk", FOURBAR, "--set", "crank_pin=inf"], ["--set", "finite"]),
    (["fk", FOURBAR, "--set", "crank_pin=1e308"], ["crank_pin", "16,000 turns", "modulo 360"]),
    (["solve", FOURBAR, "--sweep", "crank_pin=0:inf:1"], ["--sweep", "finite"]),
    (["solve", FOURBAR, "--sweep", "crank_pin=0:1:1e-300"], ["1e+300 points", "2,000,000", "coarser step"]),
    (["solve", FOURBAR, "--sweep", "crank_pin=0:1e8:1"], ["1e+08 points", "coarser step"]),
    (["solve", FOURBAR, "--sweep", "crank_pin=0:360:n100000000"], ["1e+08 points"]),
    (["simulate", FOURBAR, "--dt", "nan"], ["--dt", "finite"]),
    (["simulate", FOURBAR, "--dt", "1e-320"], ["time steps", "larger dt"]),
    (["simulate", FOURBAR, "--t-end", "1e9"], ["1e+12 time steps", "shorter t_end"]),
    (["simulate", FOURBAR, "--t-end", "1e4"], ["1e+07 samples", "--every 6"]),
    (["ik", str(MECH / "planar_3r.yaml"), "--target", "nan,1"], ["--target", "finite"]),
    (["jacobian", str(MECH / "double_pendulum.yaml")], ["no joint is actuated", "actuated: true"]),
])
def test_bad_option_numbers_are_usage_errors(runner, args, words):
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.stderr
    assert "internal error" not in r.stderr
    for w in words:
        assert w in r.stderr


@pytest.mark.parametrize("old, new, words", [
    ("sweep: {crank_pin: {from: 0, to: 360, step: 1}}", "sweep: {crank_pin: {from: 0, to: 360, step: 1.0e-9}}",
     [":55:", "analysis.solve.sweep.crank_pin", "3.6e+11 points"]),
    ("dt: 1.0e-3}", "dt: 1.0e-320}", [":56:", "analysis.simulate.dt", "time steps"]),
    ("assembly: {crank_pin: 45,", "assembly: {crank_pin: 1.0e+308,", [":52:", "assembly.crank_pin", "16,000 turns"]),
])
def test_absurd_file_numbers_are_file_errors_at_their_line(runner, tmp_path, old, new, words):
    text = Path(FOURBAR).read_text()
    assert old in text
    path = tmp_path / "bad.yaml"
    path.write_text(text.replace(old, new))
    r = runner.invoke(app, ["solve", str(path)])
    assert r.exit_code == 3, r.stderr
    for w in words:
        assert w in r.stderr


def test_joint_value_outside_its_limits_is_warned_naming_the_joint(runner):
    r = runner.invoke(app, ["fk", str(MECH / "planar_3r.yaml"), "--set", "elbow=160", "--format", "csv"])
    assert r.exit_code == 1  # a row outside the limits is a failed row (review finding 7)
    assert "elbow is given 160 deg, outside its limits [-150, 150] deg" in r.stderr
    assert _rows(r.stdout)[0]["status"] == "outside_limits"
    r = runner.invoke(app, ["fk", str(MECH / "planar_3r.yaml"), "--set", "elbow=140", "--format", "csv"])
    assert r.exit_code == 0
    assert "outside its limits" not in r.stderr


def _rows(csv_text: str) -> list[dict]:
    import csv
    import io
    return list(csv.DictReader(io.StringIO(csv_text)))


def test_actuated_input_beyond_its_limits_is_an_outside_limits_row(runner):
    """planar_3r: wrist limits +-120 deg. Rows at 130 and 140 deg are outside_limits and keep their
    values (the input and the solved pose); the run exits 1 like any failed row."""
    r = runner.invoke(app, ["solve", str(MECH / "planar_3r.yaml"), "--sweep", "wrist=100:140:10", "--format", "csv"])
    assert r.exit_code == 1, r.stderr
    rows = _rows(r.stdout)
    assert [row["status"] for row in rows] == ["ok", "ok", "ok", "outside_limits", "outside_limits"]
    # 1e-9 deg: the inputs are grid values, written to full precision
    assert [float(row["wrist.q [deg]"]) for row in rows[3:]] == pytest.approx([130, 140], abs=1e-9)
    assert all(math.isfinite(float(v)) for row in rows[3:] for k, v in row.items() if k != "status")
    assert "2 of 5 points failed" in r.stderr and "wrist is given 130 deg" in r.stderr


def test_passive_joint_solved_beyond_its_limits_is_an_outside_limits_row(runner, tmp_path):
    """fourbar: the passive rocker joint O4 limited to [-135, -100] deg. Truth: the rows whose
    written O4 angle is outside those limits (the rocker swings -101.9 .. -141.1 deg over a crank
    turn, no row within 1 deg of a limit) and only those are outside_limits."""
    text = Path(FOURBAR).read_text(encoding="utf-8")
    old = "O4: {type: revolute, parent: rocker.O4, child: ground.O4}"
    assert old in text
    path = tmp_path / "limited.yaml"
    path.write_text(text.replace(old, old[:-1] + ", limits: [-135, -100]}"), encoding="utf-8")
    r = runner.invoke(app, ["solve", str(path), "--sweep", "crank_pin=0:330:30", "--format", "csv"])
    assert r.exit_code == 1, r.stderr
    rows = _rows(r.stdout)
    o4 = [float(row["O4.q [deg]"]) for row in rows]
    assert all(min(abs(v + 135), abs(v + 100)) > 1 for v in o4)
    expected = ["outside_limits" if not -135 <= v <= -100 else "ok" for v in o4]
    assert [row["status"] for row in rows] == expected and expected.count("outside_limits") == 4
    assert "O4 is solved to" in r.stderr and f"{expected.count('outside_limits')} of 12 points failed" in r.stderr


@pytest.mark.parametrize("args", [["--sweep", "wrist=-120:120:0.1"], ["--set", "wrist=120"], ["--set", "wrist=-120"]])
def test_inputs_on_the_limit_itself_are_ok(runner, args):
    """An input on the limit itself (a grid's end, or given) is inside."""
    r = runner.invoke(app, ["solve", str(MECH / "planar_3r.yaml"), *args, "--format", "csv"])
    assert r.exit_code == 0, r.stderr
    rows = _rows(r.stdout)
    assert {row["status"] for row in rows} == {"ok"} and "outside its limits" not in r.stderr
    assert float(rows[-1]["wrist.q [deg]"]) == pytest.approx(120 if args[1] != "wrist=-120" else -120, abs=1e-9)


def test_passive_joint_resting_on_its_limit_is_ok_and_just_beyond_is_not(runner, tmp_path):
    """The solved value carries the solver's tolerance (1e-10 rad), so the check allows 10 x tol
    (1e-9 rad): a limit 1e-8 deg (1.7e-10 rad) inside the written value is still "on" it (ok);
    1e-6 deg (1.7e-8 rad, 17x the allowance) inside is outside_limits."""
    text = Path(FOURBAR).read_text(encoding="utf-8")
    old = "O4: {type: revolute, parent: rocker.O4, child: ground.O4}"
    r = runner.invoke(app, ["solve", FOURBAR, "--set", "crank_pin=0", "--format", "csv"])
    rest = float(_rows(r.stdout)[0]["O4.q [deg]"])
    for upper, status, code in [(rest, "ok", 0), (rest - 1e-8, "ok", 0), (rest - 1e-6, "outside_limits", 1)]:
        path = tmp_path / "limited.yaml"
        path.write_text(text.replace(old, old[:-1] + f", limits: [-170, {upper!r}]}}"), encoding="utf-8")
        r = runner.invoke(app, ["solve", str(path), "--set", "crank_pin=0", "--format", "csv"])
        assert (r.exit_code, _rows(r.stdout)[0]["status"]) == (code, status), (upper, r.stderr)
