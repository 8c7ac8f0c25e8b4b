"""Non-finite, absurd and oversized numbers end in clear errors (exit 2 for options, 3 for
files) before anything is computed, never in an internal error or a run until memory runs out;
a joint value outside its limits is warned about, naming the joint (issue #13)."""

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
    assert r.exit_code == 0
    assert "elbow is given 160 deg, outside its limits [-150, 150] deg" in r.stderr
    r = runner.invoke(app, ["fk", str(MECH / "planar_3r.yaml"), "--set", "elbow=140", "--format", "csv"])
    assert "outside its limits" not in r.stderr
