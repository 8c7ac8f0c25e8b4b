"""Unit invariance: every example in mechanisms/, rewritten in other length and angle units
(mm, cm, in, ft, m with deg or rad) and with explicit unit strings (every number with a unit
written as a string in another unit, e.g. stiffness '0.2 N/mm', mass '1000 g'), gives the same
SI results for solve, the Jacobian metrics and a short simulation.

The rewriting walks the file with the model's unit declarations (linkcli/model/units.py):
a number that follows the file's length (angle) unit is rescaled by the ratio of the unit
sizes, a fixed-SI number is left alone (or, in the unit-string variant, written in another
unit through pint). compile.py converts independently of those declarations, so a field whose
declaration and conversion disagree -- a driver phase not converted from degrees, a stiffness
scaled by the length unit, a free length not converted -- changes the SI results and fails here
(each was planted and caught when this test was written).

Truth: the SI results of the file as written. Every analysis runs in SI on inputs that differ
only by round-off (a unit factor times a number, ~1e-16 relative), so the results agree to the
solvers' own tolerances; the tolerances below are justified next to them.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args, get_origin

import numpy as np
import pytest
from pydantic import BaseModel

from linkcli.analyses.jacobian import run_jacobian
from linkcli.analyses.simulate import request_from_defaults as simulate_request
from linkcli.analyses.simulate import run_simulate
from linkcli.analyses.solve import request_from_defaults as solve_request
from linkcli.analyses.solve import run_solve
from linkcli.compile import compile_mechanism
from linkcli.io.loader import validate_document
from linkcli.io.yaml_source import read_yaml_file
from linkcli.model.mechanism import Frame, Mechanism
from linkcli.model.units import ANGLE_SCALE, LENGTH_SCALE, Q, quantity_of, registry

MECHANISMS = Path(__file__).resolve().parents[1] / "mechanisms"
EXAMPLES = sorted(MECHANISMS.glob("*.yaml")) + sorted((MECHANISMS / "gallery").glob("*.yaml"))
VARIANTS = [("mm", "rad"), ("cm", "deg"), ("in", "rad"), ("ft", "deg"), ("m", "other"), ("strings", "")]
JOINT_KINDS = {"fixed": [], "revolute": ["angle"], "prismatic": ["length"], "cylindrical": ["angle", "length"],
               "universal": ["angle", "angle"], "spherical": ["angle"] * 3, "planar": ["length", "length", "angle"]}
#: another unit for each fixed-SI dimension (unit-string variant), as pint spells it
OTHER_UNIT = {"mass": "gram", "inertia": "kilogram * millimeter ** 2", "acceleration": "millimeter / second ** 2",
              "force": "millinewton", "torque": "newton * millimeter", "linear_stiffness": "newton / millimeter",
              "torsional_stiffness": "newton * meter / degree", "linear_damping": "newton * second / millimeter",
              "torsional_damping": "newton * meter * second / degree", "time": "millisecond",
              "frequency": "1 / minute"}
SI_UNIT = {"length": "meter", "angle": "radian", "torque": "newton * meter", "force": "newton"}
OTHER_FOLLOWING = {"length": "inch", "angle": "turn", "torque": "newton * millimeter", "force": "millinewton"}


# -- walking a file with the model's declarations -----------------------------------------------
def _variable_kinds(data: dict) -> dict[str, list[str]]:
    """Joint name and variable name -> kinds of its variables (length/angle)."""
    out: dict[str, list[str]] = {}
    for name, j in (data.get("joints") or {}).items():
        out[name] = JOINT_KINDS[j["type"]]
    for i, row in enumerate((data.get("serial") or {}).get("rows", [])):
        out[row.get("joint_name", f"joint{i + 1}")] = JOINT_KINDS[row.get("type", "revolute")]
    for name, kinds in list(out.items()):
        if len(kinds) > 1:
            out.update({f"{name}.q{k + 1}": [kind] for k, kind in enumerate(kinds)})
    return out


def _kind_of(q: Q, path: tuple, data: dict) -> str:
    """length, angle, torque, force, or a fixed-SI dimension key."""
    if not q.dim.follows:
        return q.dim.key
    if len(q.dim.follows) == 1:
        return q.dim.follows[0]
    kinds = _variable_kinds(data)
    idx = [p for p in path if isinstance(p, int)]
    if path[0] == "assembly":
        return kinds[path[1]][idx[0] if idx else 0]
    if path[0] == "analysis":
        return kinds[path[3]][0]
    if path[0] == "joints":
        nested = isinstance(data["joints"][path[1]]["limits"][0], list)
        return kinds[path[1]][idx[0] if nested else 0]
    if path[0] == "serial":
        return JOINT_KINDS[data["serial"]["rows"][path[2]].get("type", "revolute")][0]
    if path[0] == "drivers":
        d = data["drivers"][path[1]]
        kind = kinds[d["joint"]][0]
        if d.get("kind") == "torque":
            return "torque" if kind == "angle" else "force"
        return kind
    raise AssertionError(f"no rule for {path}")


def _leaves(value: Any, fn: Callable[[Any, tuple], Any], idx: tuple = ()) -> Any:
    if isinstance(value, list):
        return [_leaves(v, fn, idx + (i,)) for i, v in enumerate(value)]
    if isinstance(value, dict):  # dict[str, quantity]: the key is part of the path
        return {k: _leaves(v, fn, idx + (k,)) for k, v in value.items()}
    return None if value is None else fn(value, idx)


def _models(tp: Any) -> list:
    while get_origin(tp) is not None and hasattr(tp, "__metadata__"):
        tp = get_args(tp)[0]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return [m for arg in get_args(tp) for m in _models(arg)]


def _type_of(model: type[BaseModel]) -> str | None:
    f = model.model_fields.get("type")
    args = get_args(f.annotation) if f is not None else ()
    return args[0] if len(args) == 1 else None


def rewrite(data: dict, fn: Callable[[float, Q, str, tuple], Any]) -> dict:
    """A copy of ``data`` with every number that has a unit replaced by ``fn(value, q, kind, path)``."""
    out = copy.deepcopy(data)
    planar = data.get("kind", "planar") == "planar"

    def node(value: Any, tp: Any, path: tuple) -> Any:
        origin = get_origin(tp)
        if origin is dict and isinstance(value, dict):
            return {k: node(v, get_args(tp)[1], path + (k,)) for k, v in value.items()}
        if origin is list and isinstance(value, list) and _models(get_args(tp)[0]):
            return [node(v, get_args(tp)[0], path + (i,)) for i, v in enumerate(value)]
        models = _models(tp)
        if not models or not isinstance(value, (dict, list)):
            for arg in get_args(tp):  # Optional[dict[...]] and friends
                if get_origin(arg) in (dict, list):
                    return node(value, arg, path)
            return value
        if len(models) > 1 and isinstance(value, dict):
            tag = value.get("type", "linear")
            models = [m for m in models if _type_of(m) == tag] or models
        return model_node(value, models[0], path)

    def model_node(value: Any, model: type[BaseModel], path: tuple) -> Any:
        if model is Frame and isinstance(value, list):  # [x, y], [x, y, angle] (planar), [x, y, z]
            fields = Frame.model_fields
            length = quantity_of(fields["origin"].annotation, fields["origin"].metadata)
            angle = quantity_of(fields["angle"].annotation, fields["angle"].metadata)
            return [fn(v, angle if (planar and i == 2) else length, "angle" if (planar and i == 2) else "length",
                       path + (i,)) for i, v in enumerate(value)]
        if not isinstance(value, dict):
            return value
        value = dict(value)
        for name, f in model.model_fields.items():
            key = f.alias or name
            if key not in value or key == "study":
                continue
            q = quantity_of(f.annotation, f.metadata)
            here = path + (key,)
            if q is not None:
                value[key] = _leaves(value[key], lambda v, idx, q=q, here=here:
                                     fn(v, q, _kind_of(q, here + idx, data), here + idx))
            else:
                value[key] = node(value[key], f.annotation, here)
        return value

    return model_node(out, Mechanism, ())


def in_units(data: dict, length: str, angle: str) -> dict:
    """The same mechanism written in other length/angle units (rates and accelerations too)."""
    old_l, old_a = data.get("units", {}).get("length", "m"), data.get("units", {}).get("angle", "deg")
    angle = {"deg": "rad", "rad": "deg"}[old_a] if angle == "other" else angle
    factor = {"length": LENGTH_SCALE[old_l] / LENGTH_SCALE[length], "angle": ANGLE_SCALE[old_a] / ANGLE_SCALE[angle]}

    def fn(v: float, q: Q, kind: str, path: tuple) -> float:
        return v * factor.get(kind, 1.0)

    out = rewrite(data, fn)
    out["units"] = {"length": length, "angle": angle}
    return out


def with_unit_strings(data: dict) -> dict:
    """Every number with a unit written as a string in another unit (gravity as one vector
    string), converted by pint."""
    ureg = registry()
    units = {"length": data.get("units", {}).get("length", "m"), "angle": data.get("units", {}).get("angle", "deg")}
    file_unit = {"length": {"in": "inch", "ft": "foot"}.get(units["length"], units["length"]),
                 "angle": {"deg": "degree", "rad": "radian"}[units["angle"]], "torque": "newton * meter",
                 "force": "newton"}

    def fn(v: float, q: Q, kind: str, path: tuple) -> str:
        per = {0: "", 1: " / second", 2: " / second ** 2"}[q.dim.per_s]
        if kind in file_unit:
            src, dst = file_unit[kind] + per, OTHER_FOLLOWING[kind] + per
        else:
            src, dst = q.dim.si, OTHER_UNIT[kind]
        return f"{ureg.Quantity(v, src).to(dst).magnitude!r} {dst}"

    out = rewrite(data, fn)
    if out.get("gravity"):
        g = [float(ureg.Quantity(x).to("mm/s^2").magnitude) for x in out["gravity"]]
        out["gravity"] = "[" + ", ".join(repr(x) for x in g) + "] mm/s^2"
    return out


# -- running the analyses ---------------------------------------------------------------------------
def shortened(data: dict) -> dict:
    """Short sweeps (4 points between the file's ends) and 20 steps of simulation."""
    data = copy.deepcopy(data)
    solve = (data.get("analysis") or {}).get("solve") or {}
    for r in (solve.get("sweep") or {}).values():
        r.pop("step", None)
        r["num"] = 4
    links = (data.get("links") or {}).values()
    if any(isinstance(v, dict) and ({"mass", "shape", "masses"} & set(v)) for v in links) or \
            any("mass" in r for r in (data.get("serial") or {}).get("rows", [])):
        data.setdefault("analysis", {})["simulate"] = {"t_end": 0.02, "dt": 1e-3, "every": 1}
    else:
        (data.get("analysis") or {}).pop("simulate", None)
    return data


def si_columns(table) -> dict[str, np.ndarray]:
    """Float columns in SI, keyed by entity.quantity (units stripped)."""
    ls, as_ = table.units.length_scale, table.units.angle_scale
    out = {}
    for col in table.columns:
        if col.kind != "float":
            continue
        head = col.unit.split("/")[0].strip()
        factor = ls if head == table.units.length else as_ if head == table.units.angle else 1.0
        out[f"{col.entity}.{col.quantity}"] = np.asarray(col.values, float) * factor
    return out


def results(data: dict, path: str) -> dict[str, Any]:
    loaded = validate_document(copy.deepcopy(data), _SMAP[path], path)
    assert not [w for w in loaded.warnings], [w.format() for w in loaded.warnings]
    mech = compile_mechanism(loaded.model, file=path)
    out: dict[str, Any] = {"solve": si_columns(run_solve(mech, solve_request(loaded.model.analysis.solve)).table)}
    out["jacobian"] = {}
    if mech.n_actuated:  # (no inputs, no Jacobian: the double pendulum)
        jac = run_jacobian(mech, {}).table
        out["jacobian"] = {k: np.atleast_1d(np.asarray(jac.metadata[k], float))
                           for k in ("singular_values", "condition", "manipulability")}
    if loaded.model.analysis.simulate is not None:
        sim = run_simulate(mech, simulate_request(loaded.model.analysis.simulate))
        assert sim.ok, sim.messages
        out["simulate"] = si_columns(sim.table)
    return out


_SMAP: dict[str, Any] = {}


def _read(path: Path) -> dict:
    data, smap = read_yaml_file(str(path))
    _SMAP[str(path)] = smap
    return shortened(data)


#: SI results agree to: positions 1e-9 m/rad (the Newton corrector stops at residuals of 1e-10
#: and both runs start from inputs equal to round-off, so they stop within a few 1e-10 of each
#: other); rates and forces relative 1e-7 (a position difference of 1e-10 over dt = 1e-3 s
#: gives rate differences of 1e-7 per unit scale); Jacobian metrics relative 1e-9 (an SVD of a
#: matrix equal to round-off, at a pose equal to 1e-10).
POSITION_ATOL = 1e-9
REL = 1e-7


def _close(a: np.ndarray, b: np.ndarray, scale: float) -> bool:
    return bool(np.allclose(a, b, rtol=REL, atol=max(POSITION_ATOL, REL * scale), equal_nan=True))


def compare(base: dict, other: dict, label: str) -> list[str]:
    bad = []
    for key in base["jacobian"]:
        a, b = base["jacobian"][key], other["jacobian"][key]
        if not np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True):
            bad.append(f"{label}: jacobian {key} {a} != {b}")
    for analysis in ("solve", "simulate"):
        if analysis not in base:
            continue
        assert list(base[analysis]) == list(other[analysis]), f"{label}: {analysis} columns differ"
        for col, a in base[analysis].items():
            b = other[analysis][col]
            if col.endswith(".condition"):  # a numerically singular matrix's condition (> 1e12) is noise
                a, b = np.where(a > 1e12, np.inf, a), np.where(b > 1e12, np.inf, b)
            scale = float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0))
            if not _close(a, b, scale):
                err = float(np.nanmax(np.abs(a - b)))
                bad.append(f"{label}: {analysis} {col}: max difference {err:.3g} (scale {scale:.3g})")
    return bad


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_examples_give_the_same_si_results_in_any_units(path):
    data = _read(path)
    base = results(data, str(path))
    problems = []
    for length, angle in VARIANTS:
        variant = with_unit_strings(data) if length == "strings" else in_units(data, length, angle)
        problems += compare(base, results(variant, str(path)), f"{path.stem} [{length} {angle}]")
    assert problems == [], "\n".join(problems[:20])


def test_the_rewriting_reaches_every_kind_of_number():
    """The shaker example has a spring, a damper, a load and a harmonic driver with a phase: the
    rewriting (and so the invariance test) covers them, in a non-metre file."""
    data = _read(MECHANISMS / "shaker_pendulum.yaml")
    seen: dict[str, set] = {}

    def fn(v, q, kind, path):
        seen.setdefault(kind, set()).add(".".join(str(p) for p in path if not isinstance(p, int)))
        return v

    rewrite(data, fn)
    assert data["units"]["length"] == "mm"
    for key in ("springs.tie.stiffness", "springs.tie.free_length", "dampers.drag.damping", "loads.push.force",
                "drivers.rock.phase", "drivers.rock.amplitude", "drivers.rock.frequency", "gravity",
                "links.bob.inertia", "links.bob.mass"):
        assert any(key in s for s in seen.values()), key
    assert "drivers.rock.phase" in seen["angle"] and "springs.tie.free_length" in seen["length"]
    assert math.isclose(in_units(data, "m", "deg")["springs"]["tie"]["free_length"], 0.25)
