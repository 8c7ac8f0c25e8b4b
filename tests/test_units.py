"""The units rule (linkcli/model/units.py, README "Units"): one declaration per field from which
the schema descriptions, the README table and the conversions derive; unit strings through
pint with dimension checks at line:col; bare numbers in non-metre files; the warnings for
likely unit mistakes (each at its line, key path and hint) and --strict; SI values in `info`;
unit-independent Jacobian metrics.

Truths: unit factors from their definitions (1 in = 25.4 mm, 1 rpm = 2 pi/60 rad/s, exact);
the planar 2R Jacobian in closed form; Stoermer-Verlet's stability bound omega*dt < 2 for
the spring warning; m R^2 for the inertia of a mass at distance R.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from linkcli.cli.commands.schema import mechanism_schema
from linkcli.compile import compile_mechanism
from linkcli.errors import MechanismFileError
from linkcli.io.loader import load_mechanism
from linkcli.model.mechanism import Mechanism
from linkcli.model.units import TABLE_END, TABLE_START, declared_fields, replace_table, units_table

REPO = Path(__file__).resolve().parent.parent

PENDULUM = """name: pendulum
kind: planar
units: {length: LEN, angle: deg}
gravity: [0, -9.81]
links:
  ground: {frames: {O: [0, 0]}}
  arm:
    mass: 2.0
    cg: [CG, 0]
    inertia: 0.1
    frames: {O: [0, 0], tip: [TIP, 0]}
joints:
  pin: {type: revolute, parent: ground.O, child: arm.O, actuated: true}
base: ground
"""


def pendulum(length: str = "mm", cg: float = 500, tip: float = 1000) -> str:
    """A 2 kg arm, cg ``cg`` and tip ``tip`` (file length unit) from the pin, Izz 0.1 kg m^2."""
    return PENDULUM.replace("LEN", length).replace("CG", repr(cg)).replace("TIP", repr(tip))


MASS_LINES = "    mass: 2.0\n    cg: [500, 0]\n    inertia: 0.1\n"


def load(tmp_path: Path, text: str, name: str = "m.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_mechanism(path)


def errors(tmp_path: Path, text: str):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(MechanismFileError) as info:
        load_mechanism(path)
    return info.value.diagnostics


def line_of(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


# -- one declaration -> schema, README ------------------------------------------------------------
def _schema_unit_descriptions(schema: dict) -> int:
    """Properties (of every model in the schema) whose description states a unit."""
    count = 0
    for model in [schema, *schema.get("$defs", {}).values()]:
        props = dict(model.get("properties", {}))
        for member in model.get("anyOf", []):  # Frame: list form or mapping
            props.update(member.get("properties", {}))
        count += sum("Unit: " in p.get("description", "") for p in props.values())
    return count


def test_every_field_with_a_unit_has_a_schema_description_carrying_it():
    declared = {(model_key, q.dim.key) for model_key, q in declared_fields(Mechanism)}
    # distinct (model, field) pairs: the walk visits shared models (Frame, Serial rows) once per use
    fields = set()
    from pydantic import BaseModel

    def walk(model: type[BaseModel], seen: set) -> None:
        if model in seen:
            return
        seen.add(model)
        from linkcli.model.units import _models_in, quantity_of

        for name, f in model.model_fields.items():
            if quantity_of(f.annotation, f.metadata) is not None:
                fields.add((model.__name__, name))
            else:
                for sub, _ in _models_in(f.annotation, ""):
                    walk(sub, seen)

    walk(Mechanism, set())
    assert len(fields) >= 45 and len(declared) >= 18  # every numeric field with a unit (51 today)
    assert _schema_unit_descriptions(mechanism_schema()) == len(fields)
    props = mechanism_schema()["$defs"]
    assert "N/m" in props["LinearSpring"]["properties"]["stiffness"]["description"]
    assert "N m/rad" in props["TorsionalSpring"]["properties"]["stiffness"]["description"]
    assert "kg m^2" in props["Link"]["properties"]["inertia"]["description"]
    assert "m/s^2" in mechanism_schema()["properties"]["gravity"]["description"]
    assert "file length unit" in props["LinearSpring"]["properties"]["free_length"]["description"]


def test_readme_units_table_is_generated_from_the_declarations():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert TABLE_START in readme and TABLE_END in readme
    fresh = replace_table(readme, units_table(Mechanism))
    assert readme == fresh, "README units table is stale: run `python -m linkcli.model.units README.md`"
    for text in ("| moment of inertia | kg m^2 |", "| acceleration | m/s^2 |", "`springs.* (type: linear).stiffness`"):
        assert text in readme


# -- bare numbers follow the rule -----------------------------------------------------------------
@pytest.mark.parametrize("length", ["m", "cm", "mm", "in", "ft"])
def test_bare_gravity_inertia_stiffness_damping_are_si_in_every_file(tmp_path, length):
    scale = {"m": 1.0, "cm": 0.01, "mm": 1e-3, "in": 0.0254, "ft": 0.3048}[length]
    text = pendulum(length, cg=0.5 / scale, tip=1.0 / scale) + (
        "springs:\n  s: {type: torsional, joint: pin, stiffness: 3.0, free_angle: 90}\n"
        "  l: {between: [ground.O, arm.tip], stiffness: 40.0, free_length: FREE}\n"
        "dampers:\n  d: {type: torsional, joint: pin, damping: 0.02}\n"
        "  e: {between: [ground.O, arm.tip], damping: 5.0}\n"
        "loads:\n  f: {link: arm.tip, force: [1.5, 0], torque: 2.5}\n").replace("FREE", repr(0.8 / scale))
    mech = compile_mechanism(load(tmp_path, text).model)
    assert mech.gravity[1] == -9.81
    assert mech.link_inertia[1][2, 2] == 0.1 and mech.link_mass[1] == 2.0
    assert math.isclose(mech.link_cg[1][0], 0.5, rel_tol=1e-12)
    # springs then dampers; per radian
    assert list(mech.torsional_stiffness) == [3.0, 0.0] and list(mech.torsional_damping) == [0.0, 0.02]
    assert math.isclose(mech.torsional_free_angle[0], math.pi / 2, rel_tol=1e-15)
    assert list(mech.axial_stiffness) == [40.0, 0.0] and list(mech.axial_damping) == [0.0, 5.0]
    assert math.isclose(mech.axial_free_length[0], 0.8, rel_tol=1e-12)
    assert list(mech.load_force[0]) == [1.5, 0.0, 0.0] and mech.load_torque[0][2] == 2.5


def test_drivers_convert_positions_rates_and_phase_but_not_times_or_torques(tmp_path):
    harmonic = "  h: {joint: pin, type: harmonic, offset: 10, amplitude: 30, frequency: 2, phase: 90}\n"
    text = pendulum("mm").replace("base: ground", "base: ground\ndrivers:\n" + harmonic)
    p = compile_mechanism(load(tmp_path, text).model).driver_profile[0].params
    deg = math.pi / 180
    assert (p["offset"], p["amplitude"], p["frequency"], p["phase"]) == (10 * deg, 30 * deg, 2.0, 90 * deg)
    torque = pendulum("mm").replace("base: ground", "base: ground\ndrivers:\n"
                                    "  t: {joint: pin, kind: torque, type: constant_speed, start: 1.5, speed: 2}\n")
    p = compile_mechanism(load(tmp_path, torque, "t.yaml").model).driver_profile[0].params
    assert (p["start"], p["speed"]) == (1.5, 2.0)  # N m, N m/s: not angles
    with_units = torque.replace("start: 1.5, speed: 2", "start: 1500 N*mm, speed: 2 N*m/s")
    p = compile_mechanism(load(tmp_path, with_units, "u.yaml").model).driver_profile[0].params
    assert (p["start"], p["speed"]) == (1.5, 2.0)


# -- unit strings ---------------------------------------------------------------------------------
def test_unit_strings_convert_to_the_unit_of_a_bare_number(tmp_path):
    text = pendulum("m", cg=0.5, tip=1.0).replace("inertia: 0.1", "inertia: 1250 kg*mm^2").replace(
        "mass: 2.0", "mass: 2000 g").replace("gravity: [0, -9.81]", "gravity: '[0, -9810] mm/s^2'").replace(
        "cg: [0.5, 0]", "cg: [500 mm, 0 in]") + (
        "springs:\n  l: {between: [ground.O, arm.tip], stiffness: 20 N/mm, free_length: 1 ft}\n"
        "  s: {type: torsional, joint: pin, stiffness: 2 N*m/deg}\n"
        "drivers:\n  c: {joint: pin, type: constant_speed, speed: 60 rpm}\n"
        "analysis:\n  simulate: {t_end: 250 ms, dt: 0.5 ms}\n")
    loaded = load(tmp_path, text)
    mech = compile_mechanism(loaded.model)
    assert mech.link_mass[1] == 2.0
    assert math.isclose(mech.link_inertia[1][2, 2], 1.25e-3, rel_tol=1e-12)
    assert math.isclose(mech.gravity[1], -9.81, rel_tol=1e-12) and mech.gravity[0] == 0
    assert math.isclose(mech.link_cg[1][0], 0.5, rel_tol=1e-12)
    assert math.isclose(mech.axial_stiffness[0], 2e4, rel_tol=1e-12)
    assert math.isclose(mech.axial_free_length[0], 0.3048, rel_tol=1e-12)  # 1 ft, exact
    assert math.isclose(mech.torsional_stiffness[0], 2 * 180 / math.pi, rel_tol=1e-12)
    assert math.isclose(mech.driver_profile[0].params["speed"], 2 * math.pi, rel_tol=1e-12)  # 60 rpm
    assert (loaded.model.analysis.simulate.t_end, loaded.model.analysis.simulate.dt) == (0.25, 5e-4)


def test_a_unit_of_the_wrong_dimension_is_an_error_at_its_line_naming_the_expected_dimension(tmp_path):
    text = pendulum("m", cg=0.5, tip=1.0) + "springs:\n  l: {between: [ground.O, arm.tip], stiffness: 20 N*m,\n" \
                                            "      free_length: 1}\n"
    [d] = errors(tmp_path, text)
    assert (d.line, d.key) == (line_of(text, "stiffness: 20 N*m"), "springs.l.stiffness")
    assert d.col == text.splitlines()[d.line - 1].index("stiffness: 20") + 1
    assert "expected a translational stiffness (N/m)" in d.message and "'20 N/mm'" in d.hint


@pytest.mark.parametrize("field, value, expected", [
    ("mass: 2.0", "mass: 2 m", "expected a mass (kg)"),
    ("inertia: 0.1", "inertia: 0.1 kg*m", "expected a moment of inertia (kg m^2)"),
    ("cg: [0.5, 0]", "cg: [0.5 s, 0]", "expected a length"),
])
def test_wrong_dimensions_name_what_was_expected(tmp_path, field, value, expected):
    text = pendulum("m", cg=0.5, tip=1.0).replace(field, value)
    d = errors(tmp_path, text)[0]
    assert d.line == line_of(text, value) and expected in d.message


def test_unknown_units_and_unitless_strings_are_errors_with_a_hint(tmp_path):
    text = pendulum("m", cg=0.5, tip=1.0).replace("mass: 2.0", "mass: 2 kgg")
    d = errors(tmp_path, text)[0]
    assert d.key == "links.arm.mass" and "'2 kgg'" in d.message and "pint's unit names" in d.hint


def test_a_length_for_a_revolute_joint_is_an_error(tmp_path):
    text = pendulum("m", cg=0.5, tip=1.0).replace("base: ground", "base: ground\ndrivers:\n"
                                                   "  c: {joint: pin, type: constant, value: 30 mm}\n")
    d = errors(tmp_path, text)[0]
    assert (d.line, d.key) == (line_of(text, "value: 30 mm"), "drivers.c.value")
    assert "a length given for revolute joint 'pin', which takes an angle" in d.message


def test_files_without_unit_strings_do_not_import_pint():
    code = ("import sys; from linkcli.io.loader import load_mechanism; load_mechanism('mechanisms/fourbar.yaml'); "
            "print('pint' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


# -- warnings: line, key path, hint ----------------------------------------------------------------
@pytest.mark.parametrize("length, g", [("mm", 9810), ("cm", 981), ("in", 386.1), ("ft", 32.2), ("m", 9810)])
def test_gravity_in_the_length_unit_warns(tmp_path, length, g):
    scale = {"m": 1.0, "cm": 0.01, "mm": 1e-3, "in": 0.0254, "ft": 0.3048}[length]
    text = pendulum(length, 0.5 / scale, 1.0 / scale).replace("gravity: [0, -9.81]", f"gravity: [0, {-g}]")
    [w] = load(tmp_path, text).warnings
    assert (w.line, w.key, w.severity) == (line_of(text, "gravity:"), "gravity", "warning")
    assert "m/s^2 whatever the file's length unit" in w.hint and "write 9.81" in w.hint


def test_plausible_gravity_does_not_warn(tmp_path):
    for g in (9.81, 1.62, 24.8, 0):  # Earth, Moon, Jupiter, none
        assert load(tmp_path, pendulum("mm").replace("-9.81", str(-g))).warnings == []


@pytest.mark.parametrize("keep, assumed", [("", "cg at the link frame origin and zero inertia"),
                                           ("    cg: [500, 0]\n", "zero inertia about the cg")])
def test_mass_without_cg_or_inertia_warns_with_what_was_assumed(tmp_path, keep, assumed):
    text = pendulum("mm").replace(MASS_LINES, "    mass: 2.0\n" + keep)
    [w] = load(tmp_path, text).warnings
    assert (w.line, w.key) == (line_of(text, "mass: 2.0"), "links.arm.mass")
    assert assumed in w.message and "shape" in w.hint


@pytest.mark.parametrize("inertia, word", [(5e4, "large"), (1e-7, "small")])
def test_implausible_inertia_warns(tmp_path, inertia, word):
    # m = 2 kg, cg 0.5 m from the farthest frame: m R^2 = 0.5 kg m^2; a plausible Izz is 0.1
    text = pendulum("mm").replace("inertia: 0.1", f"inertia: {inertia}")
    [w] = load(tmp_path, text).warnings
    assert (w.line, w.key) == (line_of(text, "inertia:"), "links.arm.inertia")
    assert f"implausibly {word}" in w.message and "kg m^2 whatever the file's length unit" in w.hint
    assert f"{inertia / 0.5:.3g} m R^2" in w.message


def test_a_spring_too_stiff_for_the_step_warns_and_a_softer_one_does_not(tmp_path):
    # inertia about the pin: Izz + m d^2 = 0.1 + 2 * 0.5^2 = 0.6 kg m^2; omega*dt < 2 needs
    # k < (2/dt)^2 * 0.6 = 2.4e6 N m/rad at dt = 1e-3 s
    spring = "springs:\n  s: {type: torsional, joint: pin, stiffness: K}\nanalysis:\n  simulate: {dt: 1.0e-3}\n"
    stiff = pendulum("mm") + spring.replace("K", "2.5e6")
    [w] = load(tmp_path, stiff).warnings
    assert (w.line, w.key) == (line_of(stiff, "stiffness: 2.5e6"), "springs.s.stiffness")
    omega = math.sqrt(2.5e6 / 0.6)
    assert f"omega*dt = {omega * 1e-3:.3g} > 2" in w.message and "Use dt <" in w.hint
    assert load(tmp_path, pendulum("mm") + spring.replace("K", "2.3e6"), "soft.yaml").warnings == []


def test_linear_spring_too_stiff_warns(tmp_path):
    text = pendulum("mm") + "springs:\n  l: {between: [ground.O, arm.tip], stiffness: 5.0e+7, free_length: 900}\n"
    [w] = load(tmp_path, text).warnings  # omega = sqrt(5e7 N/m / 2 kg) = 5000 rad/s, dt 1e-3 s (default)
    assert (w.line, w.key) == (line_of(text, "stiffness: 5.0e+7"), "springs.l.stiffness")
    assert "omega*dt = 5 > 2" in w.message and "the default dt" in w.message


def test_strict_validate_turns_warnings_into_errors(tmp_path, runner):
    from linkcli.cli.app import app

    path = tmp_path / "g.yaml"
    path.write_text(pendulum("mm").replace("-9.81", "-9810"), encoding="utf-8")
    ok = runner.invoke(app, ["validate", str(path)])
    assert ok.exit_code == 0 and "warning: gravity" in ok.stderr
    strict = runner.invoke(app, ["validate", "--strict", str(path)])
    assert strict.exit_code == 3 and f"{path}:4:1: error: gravity:" in strict.stderr
    as_json = runner.invoke(app, ["validate", "--strict", "--format", "json", str(path)])
    [entry] = json.loads(as_json.stdout)
    assert entry["valid"] is False and entry["diagnostics"][0]["severity"] == "error"


def test_batch_strict_job_reports_the_file_invalid(tmp_path, runner):
    from linkcli.cli.app import app

    (tmp_path / "g.yaml").write_text(pendulum("mm").replace("-9.81", "-9810"), encoding="utf-8")
    jobs = ("jobs:\n  loose: {files: g.yaml, analysis: jacobian}\n"
            "  strict: {files: g.yaml, analysis: jacobian, strict: true}\n")
    (tmp_path / "jobs.yaml").write_text(jobs, encoding="utf-8")
    runner.invoke(app, ["batch", str(tmp_path / "jobs.yaml"), "--out-dir", str(tmp_path / "out")])
    report = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    status = {r["job"]: r for r in report["jobs"]}
    assert status["loose"]["status"] == "passed", report
    assert status["strict"]["status"] == "invalid" and "strict: " in status["strict"]["message"]
    assert status["strict"]["diagnostics"][0]["key"] == "gravity"


# -- info and Jacobian metrics -------------------------------------------------------------------
def test_info_lists_si_values_of_every_physical_parameter(tmp_path, runner):
    from linkcli.cli.app import app

    path = tmp_path / "p.yaml"
    path.write_text(pendulum("mm") + "springs:\n  s: {type: torsional, joint: pin, stiffness: 2 N*m/deg}\n",
                    encoding="utf-8")
    res = runner.invoke(app, ["info", "--format", "json", str(path)])
    rows = {r["parameter"]: (r["value"], r["unit"]) for r in json.loads(res.stdout)["si_parameters"]}
    assert rows["gravity"] == ([0.0, -9.81], "m/s^2")
    assert rows["links.arm.mass"] == (2.0, "kg") and rows["links.arm.inertia"] == (0.1, "kg m^2")
    assert rows["links.arm.cg"] == ([0.5, 0.0], "m")
    assert math.isclose(rows["springs.s.stiffness"][0], 360 / math.pi) and rows["springs.s.stiffness"][1] == "N m/rad"


def test_info_names_each_spring_and_damper_whatever_order_compile_keeps(monkeypatch, tmp_path):
    """Which compiled element is which spring or damper comes from compile's own order
    (linkcli.compile.force_elements), not from an assumption in info: with the order reversed
    (dampers first, each section reversed) every listed value is still the file's own (SI by
    hand: mm -> m, deg -> rad), also where a spring and a damper share a name."""
    import linkcli.compile as compile_module
    from linkcli.cli.commands.info import compiled_parameters

    text = (REPO / "mechanisms" / "motor_fourbar.yaml").read_text(encoding="utf-8")
    text = text.replace("units: {length: m, angle: rad}", "units: {length: mm, angle: deg}")
    text = text.split("springs:")[0] + """springs:
  tie: {type: linear, between: [ground.O2, rocker.B], stiffness: 100, free_length: 250}
  rest: {type: torsional, joint: O4, stiffness: 5.0e+3, free_angle: 120}
  pull: {type: linear, between: [crank.A, ground.O4], stiffness: 300, free_length: 400}
dampers:
  tie: {type: linear, between: [ground.O2, rocker.B], damping: 7}
  rest: {type: torsional, joint: O4, damping: 150}
"""
    text = text.replace("O2: [0, 0], O4: [0.4, 0]", "O2: [0, 0], O4: [400, 0]")
    path = tmp_path / "elements.yaml"
    path.write_text(text, encoding="utf-8")
    loaded = load_mechanism(path)
    expected = {"springs.tie.stiffness": 100.0, "springs.tie.free_length": 0.25, "springs.pull.stiffness": 300.0,
                "springs.pull.free_length": 0.4, "springs.rest.stiffness": 5e3,
                "springs.rest.free_angle": math.radians(120), "dampers.tie.damping": 7.0,
                "dampers.rest.damping": 150.0}
    original = compile_module.force_elements
    for reverse in (False, True):
        if reverse:
            monkeypatch.setattr(compile_module, "force_elements",
                                lambda m: tuple(e[::-1] for e in original(m)))  # dampers first
        mech = compile_module.compile_mechanism(loaded.model)
        names = ("tie", "pull", "tie")  # springs, then dampers
        assert mech.axial_names == (names[::-1] if reverse else names)
        rows = {r["parameter"]: r["value"] for r in compiled_parameters(mech, loaded.model)}
        listed = {k: v for k, v in rows.items() if k.startswith(("springs.", "dampers."))}
        assert listed.keys() == expected.keys()
        for key, value in expected.items():
            assert math.isclose(listed[key], value, rel_tol=1e-12), (reverse, key, listed[key])

def two_r(length: str, angle: str) -> str:
    s = {"m": 1.0, "mm": 1e3, "in": 1 / 0.0254}[length]
    a = {"deg": 1.0, "rad": math.pi / 180}[angle]
    return f"""name: 2R
units: {{length: {length}, angle: {angle}}}
links:
  base: {{}}
serial:
  rows:
    - {{a: {0.9 * s!r}}}
    - {{a: {0.6 * s!r}}}
base: base
assembly: {{joint1: {30 * a!r}, joint2: {70 * a!r}}}
"""


@pytest.mark.parametrize("length, angle", [("m", "rad"), ("mm", "deg"), ("in", "rad")])
def test_jacobian_metrics_are_those_of_the_dimensionless_jacobian(tmp_path, length, angle):
    from linkcli.analyses.jacobian import run_jacobian

    loaded = load(tmp_path, two_r(length, angle))
    out = run_jacobian(compile_mechanism(loaded.model), {})
    table = out.table
    assert out.n_failed == 0
    # closed form of the planar 2R tool Jacobian (SI), rows vx, vy, wz; L = largest link = 0.9 m
    a1, a2, t1, t12 = 0.9, 0.6, math.radians(30), math.radians(100)
    J = np.array([[-a1 * math.sin(t1) - a2 * math.sin(t12), -a2 * math.sin(t12)],
                  [a1 * math.cos(t1) + a2 * math.cos(t12), a2 * math.cos(t12)], [1.0, 1.0]])
    J[:2] /= 0.9
    s = np.linalg.svd(J, compute_uv=False)
    meta = table.metadata
    assert math.isclose(meta["characteristic_length_m"], 0.9, rel_tol=1e-12)
    # rel 1e-9: the pose is assembled to 1e-10 rad from the estimate; the SVD is exact to round-off
    assert np.allclose(meta["singular_values"], s, rtol=1e-9)
    assert math.isclose(float(meta["condition"]), s[0] / s[1], rel_tol=1e-9)
    assert math.isclose(float(meta["manipulability"]), s[0] * s[1], rel_tol=1e-9)


@pytest.mark.parametrize("text, hz", [("2 Hz", 2.0), ("120 / minute", 2.0), ("60 rpm", 1.0), ("1 turn/s", 1.0),
                                      ("720 deg/s", 2.0)])
def test_a_frequency_given_as_an_angular_rate_counts_turns(tmp_path, text, hz):
    drv = pendulum("mm").replace("base: ground", "base: ground\ndrivers:\n"
                                 f"  h: {{joint: pin, type: harmonic, amplitude: 30, frequency: {text}}}\n")
    p = compile_mechanism(load(tmp_path, drv).model).driver_profile[0].params
    assert math.isclose(p["frequency"], hz, rel_tol=1e-12)  # pint alone would read 60 rpm as 2 pi Hz


def test_an_angular_rate_needs_an_angle_unit(tmp_path):
    text = pendulum("mm").replace("base: ground", "base: ground\ndrivers:\n"
                                  "  c: {joint: pin, type: constant_speed, speed: 1 Hz}\n")
    d = errors(tmp_path, text)[0]
    assert d.key == "drivers.c.speed" and "no angle unit" in d.message and "'60 rpm'" in d.hint


def test_implausible_inertia_of_a_dh_row_uses_its_joint_distance(tmp_path):
    # standard DH: the row's link frame is at the distal joint, the proximal joint 0.9 m away
    # (-a, 0, 0); cg in the middle: R = 0.45 m, m R^2 = 0.405 kg m^2
    text = two_r("m", "rad").replace("- {a: 0.9}", "- {a: 0.9, mass: 2, cg: [-0.45, 0], inertia: 50}")
    [w] = load(tmp_path, text).warnings
    assert (w.line, w.key) == (line_of(text, "inertia: 50"), "serial.rows[0].inertia")
    assert f"{50 / (2 * 0.45**2):.3g} m R^2" in w.message and "R = 0.45 m" in w.message
    plausible = text.replace("inertia: 50", "inertia: 0.135")  # m L^2 / 12 of a 0.9 m rod
    assert load(tmp_path, plausible, "ok.yaml").warnings == []


# -- unit kinds of every joint variable (review finding 3) ----------------------------------------
ONE_JOINT = """name: one joint
kind: spatial
units: {length: mm, angle: deg}
links:
  ground: {frames: {O: [0, 0, 0]}}
  body: {frames: {O: [0, 0, 0]}}
joints:
  J: {type: TYPE, parent: ground.O, child: body.O, actuated: true LIMITS}
base: ground
"""

# (joint type, each variable's kind in order): docs/format.md "Joint variables"
VARIABLE_KINDS = [("revolute", ["angle"]), ("prismatic", ["length"]), ("cylindrical", ["angle", "length"]),
                  ("universal", ["angle", "angle"]), ("spherical", ["angle", "angle", "angle"]),
                  ("planar", ["length", "length", "angle"])]
GOOD = {"angle": "'5 deg'", "length": "'5 mm'"}
WRONG = {"angle": "'7 mm'", "length": "'7 deg'"}  # differs from GOOD: the column is found


def one_joint(jtype: str, limits: str = "", extra: str = "") -> str:
    return ONE_JOINT.replace("TYPE", jtype).replace(" LIMITS", f", limits: {limits}" if limits else "") + extra


def _names(jtype: str, n: int) -> list[str]:
    return ["J"] if n == 1 else [f"J.q{i + 1}" for i in range(n)]


def test_variable_kinds_are_the_documented_ones():
    """The checker's table is the one docs/format.md states ("Joint variables": `J.q1` angle, ...)."""
    import re

    from linkcli.model.checks import JOINT_VARIABLE_KINDS
    doc = (REPO / "docs" / "format.md").read_text(encoding="utf-8")
    documented = {}
    for jtype, _ in VARIABLE_KINDS:
        cell = re.search(rf"^\| `{jtype}` \| ([^|]*) \|", doc, re.M).group(1)
        documented[jtype] = [kind for names, kind in re.findall(r"((?:`J[.q0-9]*`(?:, )?)+) (angle|length)", cell)
                             for _ in range(names.count("`") // 2)]
    assert documented == dict(VARIABLE_KINDS)
    assert {t: list(k) for t, k in JOINT_VARIABLE_KINDS.items() if k} == dict(VARIABLE_KINDS)


@pytest.mark.parametrize("jtype, kinds", VARIABLE_KINDS)
def test_right_kinds_on_every_variable_pass(tmp_path, jtype, kinds):
    names = _names(jtype, len(kinds))
    lim = ", ".join(f"[-{GOOD[k]}, {GOOD[k]}]".replace("-'", "'-") for k in kinds)
    limits = lim if len(kinds) == 1 else f"[{lim}]"
    assembly = GOOD[kinds[0]] if len(kinds) == 1 else "[" + ", ".join(GOOD[k] for k in kinds) + "]"
    sets = ", ".join(f"{n}: {GOOD[k]}" for n, k in zip(names, kinds, strict=True))
    text = one_joint(jtype, limits, f"assembly: {{J: {assembly}}}\nanalysis: {{solve: {{set: {{{sets}}}}}}}\n")
    m = load(tmp_path, text)
    lo = m.model.joints["J"].limits
    pairs = lo if isinstance(lo[0], list) else [lo]
    for (a, b), k in zip(pairs, kinds, strict=True):  # file units: 5 mm -> 5, 5 deg -> 5
        assert (a, b) == (-5.0, 5.0), (jtype, k)


@pytest.mark.parametrize("jtype, kinds", VARIABLE_KINDS)
@pytest.mark.parametrize("where", ["limits", "assembly", "solve.set", "sweep.from"])
def test_wrong_kind_on_any_variable_is_an_error_at_its_line(tmp_path, jtype, kinds, where):
    """Each variable in turn gets the other kind; the error names that variable and the kind it takes."""
    names = _names(jtype, len(kinds))
    for bad in range(len(kinds)):
        vals = [WRONG[k] if i == bad else GOOD[k] for i, k in enumerate(kinds)]
        # the column: a list element's own, a mapping value's key (the loader's convention)
        limits, extra, fragment = "", "", vals[bad]
        if where == "limits":
            pairs = [f"[{v}, null]" for v in vals]
            limits = pairs[0] if len(kinds) == 1 else "[" + ", ".join(pairs) + "]"
            key = "joints.J.limits" + ("" if len(kinds) == 1 else f"[{bad}]") + "[0]"
        elif where == "assembly":
            extra = "assembly:\n  J: " + (vals[0] if len(kinds) == 1 else "[" + ", ".join(vals) + "]") + "\n"
            key = "assembly.J" + ("" if len(kinds) == 1 else f"[{bad}]")
            fragment = f"J: {vals[bad]}" if len(kinds) == 1 else vals[bad]
        elif where == "solve.set":
            extra = "analysis:\n  solve:\n    set:\n" + "".join(f"      {n}: {v}\n" for n, v in zip(names, vals,
                                                                                                    strict=True))
            key, fragment = f"analysis.solve.set.{names[bad]}", f"{names[bad]}: {vals[bad]}"
        else:
            extra = (f"analysis:\n  solve:\n    sweep:\n      {names[bad]}:\n        from: {vals[bad]}\n"
                     f"        to: {GOOD[kinds[bad]]}\n        num: 3\n")
            key, fragment = f"analysis.solve.sweep.{names[bad]}.from", f"from: {vals[bad]}"
        text = one_joint(jtype, limits, extra)
        diags = errors(tmp_path, text)
        assert len(diags) == 1, (jtype, where, bad, [d.message for d in diags])
        [d] = diags
        want = kinds[bad]
        assert d.key == key, (jtype, where, bad, d.key)
        line = line_of(text, fragment)
        assert d.line == line
        assert d.col == text.splitlines()[line - 1].index(fragment) + 1, (jtype, where, bad)
        other = "length" if want == "angle" else "angle"
        assert f"Write {'an' if want == 'angle' else 'a'} {want}" in d.hint
        assert f"a {other} given for" in d.message and f"which takes {'an' if want == 'angle' else 'a'} {want}" \
            in d.message, d.message
        if len(kinds) > 1:
            assert f"variable '{names[bad]}' of {jtype} joint 'J'" in d.message


def test_spherical_limits_in_mm_rejected_on_rssr(tmp_path):
    """The reviewer's case: millimetre limits on a ball joint were used as degrees."""
    text = (REPO / "mechanisms" / "rssr_spatial.yaml").read_text(encoding="utf-8").replace(
        "A: {type: spherical, parent: crank.A, child: coupler.A}",
        "A: {type: spherical, parent: crank.A, child: coupler.A, "
        "limits: [['-5 mm', '5 mm'], [-90, 90], [-90, 90]]}")
    diags = errors(tmp_path, text)
    assert [d.key for d in diags] == ["joints.A.limits[0][0]", "joints.A.limits[0][1]"]
    assert all("variable 'A.q1' of spherical joint 'A', which takes an angle" in d.message for d in diags)


# -- the rule as the examples and docs state it (review finding 12) --------------------------------
OLD_RULE = [r"per unit of the file's angle", r"times stiffer", r"stiffness (and damping )?(are|is) per",
            r"per file (angle |length )?unit", r"in a degree file would"]


def test_no_example_or_doc_states_the_old_per_file_unit_rule():
    """Stiffness and damping never follow the file's units; no comment or page may say they do."""
    import re
    files = [*sorted((REPO / "mechanisms").rglob("*.yaml")), *sorted((REPO / "docs").glob("*.md")),
             REPO / "README.md"]
    found = [(f.name, i, line.strip()) for f in files
             for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
             if any(re.search(p, line, re.I) for p in OLD_RULE)]
    assert not found, found


def test_motor_fourbar_comment_numbers_are_the_si_values():
    """The comment's '87.27 N*m/deg' and '2.618 N*m*s/deg' are the file's 5e3 N m/rad and 150 N m s/rad
    (tolerance: the comment rounds to 4 significant digits, i.e. 1e-4 relative)."""
    from linkcli.model.units import TORSIONAL_DAMPING, TORSIONAL_STIFFNESS, convert
    text = (REPO / "mechanisms" / "motor_fourbar.yaml").read_text(encoding="utf-8")
    assert "'87.27 N*m/deg'" in text and "'2.618 N*m*s/deg'" in text
    m = load_mechanism(REPO / "mechanisms" / "motor_fourbar.yaml").model
    k, c = m.springs["return_spring"].stiffness, m.dampers["rocker_damper"].damping
    assert convert("87.27 N*m/deg", TORSIONAL_STIFFNESS, {"angle": "rad"}) == pytest.approx(k, rel=1e-4)
    assert convert("87.27 N*m/deg", TORSIONAL_STIFFNESS, {"angle": "deg"}) == pytest.approx(k, rel=1e-4)
    assert convert("2.618 N*m*s/deg", TORSIONAL_DAMPING, {"angle": "deg"}) == pytest.approx(c, rel=1e-4)


def test_file_unit_scale_of_column_units():
    """The one parser of column units that depend on a file's units (used by Outcome.si and by
    batch checks written in another unit). Truth: the definitions 1 in = 0.0254 m, 1 deg =
    pi/180 rad; rates and accelerations keep their kind; SI-only units are not file units."""
    import math

    from linkcli.analyses.outcome import si_factor
    from linkcli.batch.figures import unit_factor
    from linkcli.model.units import file_unit_scale

    assert file_unit_scale("in/s") == (0.0254, ("length", "/s"))
    assert file_unit_scale("deg/s^2") == (math.pi / 180, ("angle", "/s^2"))
    assert file_unit_scale("deg / s**2")[1] == ("angle", "/s^2")
    for si_only in ("N m", "kg m^2", "N", "s", "1/s", ""):
        assert file_unit_scale(si_only) is None and si_factor(si_only) == 1.0
    assert si_factor("mm") == 0.001
    assert unit_factor("rad", "deg") == pytest.approx(180 / math.pi, rel=1e-15)
    assert unit_factor("mm/s", "m/s") == 0.001
    assert unit_factor("mm/s", "m") is None and unit_factor("deg", "mm") is None
