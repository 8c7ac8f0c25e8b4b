"""Study parameters written with a unit become numeric columns in the path's unit (tryout 6,
item 9: "0.5 lbf*in/deg" was a text column without a unit). Truth: the conversion factors
written out by hand (1 lbf = 4.4482216152605 N exactly, 1 in = 0.0254 m, 1 deg = pi/180 rad, 1 lb =
0.45359237 kg), not through pint."""

from __future__ import annotations

import math

import pytest

from linkcli.batch.paths import parameter_number, parameter_unit

LBF, INCH, DEG, LB = 4.4482216152605, 0.0254, math.pi / 180, 0.45359237
DATA = {"name": "p", "kind": "planar", "units": {"length": "in", "angle": "deg"},
        "links": {"ground": {"frames": {"O": [0, 0]}}, "arm": {"mass": "2 lb", "cg": [10, 0], "frames": {"O": [0, 0]}}},
        "joints": {"pin": {"type": "revolute", "parent": "ground.O", "child": "arm.O"}},
        "springs": {"tw": {"type": "torsional", "joint": "pin", "stiffness": "0.5 lbf*in/deg", "free_angle": -90}},
        "base": "ground", "effector": "arm.O"}


@pytest.mark.parametrize("path, text, unit, value", [
    (("springs", "tw", "stiffness"), "0.5 lbf*in/deg", "N m/rad", 0.5 * LBF * INCH / DEG),
    (("springs", "tw", "free_angle"), "1 rad", "deg", 1 / DEG),  # angles in the file's angle unit
    (("links", "arm", "cg", 0), "1 ft", "in", 12.0),  # lengths in the file's length unit
    (("links", "arm", "mass"), "2 lb", "kg", 2 * LB),
])
def test_values_with_units_convert_to_the_columns_unit(path, text, unit, value):
    assert parameter_unit(DATA, path) == unit
    assert parameter_number(DATA, path, text) == pytest.approx(value, rel=1e-12)  # exact factors: round-off


@pytest.mark.parametrize("path, text", [
    (("links", "arm", "cg", 0), "2 kg"),  # a mass where a length goes: stays text (the variant is invalid)
    (("links", "arm", "cg", 0), "long"),
    (("name",), "other"),  # a path without a unit
])
def test_text_that_is_no_quantity_of_the_path_stays_text(path, text):
    assert parameter_number(DATA, path, text) is None


def test_plain_numbers_pass_through():
    assert parameter_number(DATA, ("springs", "tw", "stiffness"), 3) == 3.0
