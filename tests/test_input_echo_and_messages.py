"""What a new user meets first: option values with units, error messages that name the option,
its value and the fix, sweeps that go where asked, input columns that echo the request exactly,
and the mechanical advantage at a dead centre."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import pytest

from linkcli.cli.common import ExitCode

MECH = Path(__file__).resolve().parent.parent / "mechanisms"
FOURBAR = MECH / "fourbar.yaml"


def table(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def column(path: Path, name: str) -> list[str]:
    """A CSV column as written (text: the exact digits)."""
    return [row[name] for row in table(path.read_text())]


# -- values with units in --set and friends -------------------------------------------------------
def test_set_accepts_units_converted_to_the_files(run_cli, tmp_path):
    plain, deg, rad = (tmp_path / f"{n}.csv" for n in ("plain", "deg", "rad"))
    assert run_cli("solve", FOURBAR, "--set", "crank_pin=30", "-o", plain).exit_code == 0
    assert run_cli("solve", FOURBAR, "--set", "crank_pin=30deg", "-o", deg).exit_code == 0
    r = run_cli("solve", FOURBAR, "--set", f"crank_pin={math.pi / 6!r} rad", "-o", rad)
    assert r.exit_code == 0, r.output
    assert plain.read_text() == deg.read_text()  # 30deg is the file's 30 (deg) exactly
    a, b = (np.array([float(v) for v in table(p.read_text())[0].values() if _number(v)]) for p in (plain, rad))
    assert np.allclose(a, b, rtol=1e-12, atol=1e-12)  # pi/6 rad = 30 deg up to the last digit


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_set_in_a_millimetre_file_takes_lengths_in_any_unit(run_cli, tmp_path):
    # the shaker pendulum is a mm file; its inputs are angles: a length is refused with the fix
    path = MECH / "shaker_pendulum.yaml"
    r = run_cli("solve", path, "--set", "pin=25mm")
    assert r.exit_code == ExitCode.USAGE
    assert "'pin' is an angle, '25mm' is a length" in r.stderr and "pin=30 (deg) or pin=30deg" in r.stderr


@pytest.mark.parametrize("value, words", [
    ("crank_pin=30foo", ["'30foo'", "file's units (deg for angles, m for lengths)", "crank_pin=30deg"]),
    ("crank_pin", ["write NAME=VALUE", "crank_pin=30 (deg) or crank_pin=30deg"]),
    ("crank_pn=30deg", ["'crank_pn' is not a joint variable", "Did you mean 'crank_pin'"]),
    ("crank_pin=nan", ["finite number", "crank_pin=30"]),
    ("crank_pin=nan deg", ["'nan deg' is not a finite number"]),
    ("crank_pin=nan mm", ["'nan mm' is not a finite number"]),
    ("crank_pin=3 kg", ["dimension [mass], expected an angle or length"]),
])
def test_bad_set_values_name_the_files_units_and_a_real_joint(run_cli, value, words):
    r = run_cli("solve", FOURBAR, "--set", value)
    assert r.exit_code == ExitCode.USAGE, r.output
    assert "internal error" not in r.stderr
    for w in words:
        assert w in r.stderr
    assert "crank=30" not in r.stderr  # the old example named a joint this file does not have


@pytest.mark.parametrize("value, words", [
    ("crank_pin=30deg", "'crank_pin' takes an angle per second, '30deg' is an angle; e.g. crank_pin=30deg/s"),
    ("crank_pin=2 mm", "'crank_pin' takes an angle per second, '2 mm' is a length; e.g. crank_pin=30deg/s"),
])
def test_a_value_given_for_a_rate_says_a_rate_is_expected(run_cli, value, words):
    r = run_cli("simulate", FOURBAR, "--t-end", "0.01", "--rate", value)
    assert r.exit_code == ExitCode.USAGE, r.output
    assert words in r.stderr and "dimensionless" not in r.stderr and " a angle" not in r.stderr


def test_a_rate_without_an_angle_unit_reads_well(run_cli):
    r = run_cli("forces", FOURBAR, "--speed", "crank_pin=1Hz")
    assert r.exit_code == ExitCode.USAGE
    assert "per second? Write the angle" in r.stderr and "?." not in r.stderr


@pytest.mark.parametrize("option, value", [("--dt", "0"), ("--t-end", "-1"), ("--tol", "0"), ("--every", "0")])
def test_simulate_names_the_bad_option_and_its_value(run_cli, option, value):
    r = run_cli("simulate", FOURBAR, option, value)
    assert r.exit_code == ExitCode.USAGE, r.output
    assert f"{option} {float(value):g}: {option} must be a positive finite number" in r.stderr


def test_zipped_sweeps_of_unequal_counts_are_named_in_option_order(run_cli):
    r = run_cli("solve", MECH / "fivebar.yaml", "--sweep", "O5=0:6:1", "--sweep", "O1=0:30:10", "--zip")
    assert r.exit_code == ExitCode.USAGE
    assert "O5 0:6:1 has 7, O1 0:30:10 has 4" in r.stderr


# -- sweeps go where asked and echo it ------------------------------------------------------------
@pytest.mark.parametrize("spec, fix", [("0:10:-1", "crank_pin=0:10:1"), ("10:0:2", "crank_pin=10:0:-2")])
def test_a_step_against_the_sweeps_direction_is_refused_with_the_fix(run_cli, spec, fix):
    r = run_cli("solve", FOURBAR, "--sweep", f"crank_pin={spec}")
    assert r.exit_code == ExitCode.USAGE
    assert "runs away from TO" in r.stderr and fix in r.stderr


def test_a_downward_sweep_with_a_negative_step_runs_down(run_cli, tmp_path):
    out = tmp_path / "down.csv"
    assert run_cli("solve", FOURBAR, "--sweep", "crank_pin=10:0:-5", "-o", out).exit_code == 0
    assert column(out, "crank_pin.q [deg]") == ["10.0", "5.0", "0.0"]


@pytest.mark.parametrize("command", ["solve", "forces"])
def test_the_input_column_echoes_the_requested_grid_exactly(run_cli, tmp_path, command):
    # 30 deg and 60 deg used to come back as 29.999999999999996 and 59.99999999999999 after the
    # round trip through radians; the written grid is the one computed in the file's units
    out = tmp_path / f"{command}.csv"
    r = run_cli(command, FOURBAR, "--sweep", "crank_pin=0:90:30", "-o", out)
    assert r.exit_code == 0, r.output
    assert column(out, "crank_pin.q [deg]") == ["0.0", "30.0", "60.0", "90.0"]
    out1 = tmp_path / f"{command}1.csv"
    assert run_cli(command, FOURBAR, "--sweep", "crank_pin=30:30:1", "-o", out1).exit_code == 0
    assert column(out1, "crank_pin.q [deg]") == ["30.0"]
    out2 = tmp_path / f"{command}2.csv"
    assert run_cli(command, FOURBAR, "--set", "crank_pin=30", "-o", out2).exit_code == 0
    assert column(out2, "crank_pin.q [deg]") == ["30.0"]


# -- mechanical advantage at a dead centre ----------------------------------------------------------
def test_mechanical_advantage_is_inf_at_dead_centres_and_the_closed_form_elsewhere(run_cli, tmp_path):
    """Centred slider-crank (crank r = 1 m, rod l = 3.5 m): by virtual work the torque holding a
    slider force F is F dx/dtheta, x = r cos t + sqrt(l^2 - r^2 sin^2 t), so the advantage is
    1 / |dx/dtheta| (1/m), infinite at the dead centres t = 0 and 180 deg."""
    text = (MECH / "slider_crank.yaml").read_text()
    assert "rail: [0, 0.5]" in text
    path = tmp_path / "centred.yaml"
    path.write_text(text.replace("rail: [0, 0.5]", "rail: [0, 0]"))
    out = tmp_path / "ma.csv"
    r = run_cli("forces", path, "--static", "--load", "slider.B=-100,0", "--sweep", "crank_pin=0:180:45", "-o", out)
    assert r.exit_code == 0, r.output
    rows = table(out.read_text())
    rr, ll = 1.0, 3.5
    for row in rows:
        t = math.radians(float(row["crank_pin.q [deg]"]))
        dx = -rr * math.sin(t) - rr**2 * math.sin(t) * math.cos(t) / math.sqrt(ll**2 - rr**2 * math.sin(t) ** 2)
        ma = float(row["mechanical_advantage [N/(N m)]"])
        if abs(dx) < 1e-12:
            assert ma == math.inf, row
        else:
            # kinetostatics solved to round-off (the holding torque from a linear solve)
            assert ma == pytest.approx(1 / abs(dx), rel=1e-9)
    assert [row["mechanical_advantage [N/(N m)]"] for row in rows].count("inf") == 2
