"""A failing or doubtful simulation tells the truth about where and why (tryout 6):

* a motion driver whose prescribed rate jumps (a table ending while moving, a linear ramp) is
  warned of in the file (driver, time, rates) and named as the cause of the energy jump at that
  time, not the step (a smaller dt cannot remove an impulsive stop);
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from linkcli.io.loader import load_mechanism

TABLE_T = [0, 0.3, 0.7, 1.0, 1.6]
TABLE_MOVING = [-90, -80, -95, -70, -90]  # tryout6/pend_table.yaml: ends at -305.8 deg/s


def pendulum(tmp_path: Path, driver: str, name: str = "p.yaml") -> Path:
    """A 1 kg, 1 m rod pendulum about a driven pin (gravity 9.81 m/s^2), the driver's YAML given."""
    path = tmp_path / name
    path.write_text(f"""name: driven pendulum
kind: planar
units: {{length: m, angle: deg}}
gravity: [0, -9.81]
links:
  ground:
    frames: {{O: [0, 0]}}
  arm:
    shape: {{type: rod, between: [O, tip], mass: 1.0}}
    frames: {{O: [0, 0], tip: [1, 0]}}
joints:
  pin: {{type: revolute, parent: ground.O, child: arm.O, actuated: true}}
base: ground
effector: arm.tip
assembly: {{pin: -90}}
drivers:
  wave: {driver}
analysis:
  simulate: {{t_end: 1.0, dt: 1.0e-3}}
""", encoding="utf-8")
    return path


def table(t, values) -> str:
    return f"{{joint: pin, type: table, t: {list(t)}, values: {list(values)}}}"


def driver_warnings(path: Path) -> list:
    return [w for w in load_mechanism(path).warnings if w.key_path[:1] == ("drivers",)]


# -- driver rate jumps -------------------------------------------------------------------------
def test_a_table_ending_while_moving_is_warned_with_its_end_rate(tmp_path):
    path = pendulum(tmp_path, table(TABLE_T, TABLE_MOVING))
    # independent truth: the end slope of the not-a-knot spline by a one-sided difference
    # (error ~ |v''| h / 2 = 1e-4 deg/s at h = 1e-7 s; the message prints 4 digits)
    spline, h = CubicSpline(TABLE_T, TABLE_MOVING), 1e-7
    end_rate = (spline(1.6) - spline(1.6 - h)) / h
    (w,) = driver_warnings(path)
    assert w.severity == "warning" and w.key_path == ("drivers", "wave", "t") and w.line == 17  # the driver's line in the file
    assert f"rate jumps at t = 1.6 s (end) from {end_rate:.4g} to 0 deg/s" in w.message
    assert "-305.8" in w.message and "no smaller dt fixes them" in w.message


def test_a_table_ending_at_rest_and_a_cycloidal_ramp_are_not_warned(tmp_path):
    # a cubic through the knots is reproduced exactly by the not-a-knot spline: p(t) = -90 + 30 (3u^2 - 2u^3),
    # u = t / 1.6, has zero slope at both ends (the run starts at rest, the table ends at rest)
    t = np.linspace(0, 1.6, 6)
    u = t / 1.6
    values = -90 + 30 * (3 * u**2 - 2 * u**3)
    assert driver_warnings(pendulum(tmp_path, table(t.round(6).tolist(), values.round(12).tolist()))) == []
    ramp = "{joint: pin, type: ramp, end: -45, t_start: 0.2, t_end: 0.5, shape: cycloidal}"
    assert driver_warnings(pendulum(tmp_path, ramp, "c.yaml")) == []


def test_a_linear_ramp_and_a_linear_table_are_warned_at_each_kink(tmp_path):
    (w,) = driver_warnings(pendulum(tmp_path, "{joint: pin, type: ramp, end: -45, t_start: 0.2, t_end: 0.5, "
                                                 "shape: linear}"))
    rate = 45 / 0.3  # deg/s, (end - start) / duration
    assert f"at t = 0.2 s (start) from 0 to {rate:.4g} deg/s; at t = 0.5 s (end) from {rate:.4g} to 0" in w.message
    assert "shape: cycloidal" in w.hint
    lin = "{joint: pin, type: table, t: [0, 1, 2], values: [-90, -80, -80], interpolation: linear}"
    (w,) = driver_warnings(pendulum(tmp_path, lin, "l.yaml"))
    assert "at t = 1 s (knot) from 10 to 0 deg/s" in w.message  # the last segment is flat: no end jump
    assert "t = 2 s" not in w.message


@pytest.mark.parametrize("moving", [True, False])
def test_the_energy_jump_of_an_impulsive_stop_is_blamed_on_the_driver(run_cli, tmp_path, moving):
    t = np.linspace(0, 1.6, 6)
    u = t / 1.6
    at_rest = (-90 + 30 * (3 * u**2 - 2 * u**3)).round(12).tolist()
    path = pendulum(tmp_path, table(TABLE_T, TABLE_MOVING) if moving else table(t.round(6).tolist(), at_rest))
    r = run_cli("simulate", path, "--t-end", "1.7", "-o", tmp_path / "o.csv")
    if not moving:  # the same motion brought to rest: exact to the end (no step can be blamed)
        assert r.exit_code == 0, r.stderr
        return
    assert r.exit_code == 1
    m = re.search(r"more than 10 % from t = ([\d.]+) s on\): motion driver 'wave' changes its prescribed rate by "
                  r"([\d.]+) deg/s at t = 1.6 s", r.stderr)
    assert m, r.stderr
    assert 1.6 <= float(m.group(1)) <= 1.6 + 2e-3  # the step after the table's end
    assert float(m.group(2)) == pytest.approx(305.8, abs=0.05)
    assert "A smaller dt does not fix it" in r.stderr and "try a smaller dt" not in r.stderr
