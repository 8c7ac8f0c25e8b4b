"""docs/format.md, the format reference, covers every field of the mechanism-file schema.

Truth: the JSON Schema written by ``linkcli schema`` (schemas/mechanism.schema.json, itself
tested to equal the pydantic models in tests/test_schema.py). Every property name at any depth
(including the members of ``anyOf``/``oneOf`` unions and every ``$defs`` entry) must appear in
the reference as a code span, e.g. `free_length`. A field added to the models without a line in
the reference fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _property_names(node, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items():
            out.add(key)
            _property_names(value, out)
        for key, value in node.items():
            if key != "properties":
                _property_names(value, out)
    elif isinstance(node, list):
        for item in node:
            _property_names(item, out)
    return out


def test_every_schema_field_is_in_the_format_reference():
    schema = json.loads((REPO / "schemas" / "mechanism.schema.json").read_text(encoding="utf-8"))
    fields = _property_names(schema, set())
    assert {"rpy", "free_length", "convention", "pass_fraction", "interpolation"} <= fields  # the walk works
    text = (REPO / "docs" / "format.md").read_text(encoding="utf-8")
    spans = set(re.findall(r"`([^`\n]+)`", text))
    words = {w for span in spans for w in re.findall(r"[A-Za-z_$][A-Za-z0-9_]*", span)}
    missing = sorted(f for f in fields if f not in words)
    assert missing == [], f"docs/format.md does not mention these schema fields: {missing}"


def test_format_reference_is_linked_and_its_pictures_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "docs/format.md" in readme
    text = (REPO / "docs" / "format.md").read_text(encoding="utf-8")
    for picture in re.findall(r"\]\((img/[^)]+)\)", text):
        assert (REPO / "docs" / picture).is_file(), f"docs/format.md shows a missing picture {picture}"


# -- the conventions docs/format.md states, checked against the code ---------------------------
# Truth: rotation matrices written out here from their textbook definitions (not linkcli's).
import numpy as np  # noqa: E402
import pytest  # noqa: E402


def _Rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _Ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _Rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _one_joint(joint_type, frame="[0, 0, 0]"):
    from kin_helpers import mech_from_yaml

    return mech_from_yaml(f"""
    name: one joint
    kind: spatial
    units: {{length: m, angle: rad}}
    links:
      ground: {{frames: {{P: {frame}}}}}
      body: {{frames: {{C: [0, 0, 0]}}}}
    joints:
      J: {{type: {joint_type}, parent: ground.P, child: body.C}}
    base: ground
    """)


def test_rpy_is_fixed_x_then_y_then_z():
    from linkcli.core.forward import link_poses

    r, p, y = 0.3, -0.5, 1.1
    mech = _one_joint("fixed", f"{{origin: [0, 0, 0], rpy: [{r}, {p}, {y}]}}")
    T = link_poses(mech, np.zeros(0))[1]
    np.testing.assert_allclose(T[:3, :3], _Rz(y) @ _Ry(p) @ _Rx(r), atol=1e-14)
    mech = _one_joint("fixed", "{origin: [0, 0, 0], rpy: [0, 1.5707963267948966, 0]}")
    R = link_poses(mech, np.zeros(0))[1][:3, :3]
    np.testing.assert_allclose(R[:, 2], [1, 0, 0], atol=1e-14)  # the doc's example: z onto x
    np.testing.assert_allclose(R[:, 0], [0, 0, -1], atol=1e-14)  # and x onto -z


@pytest.mark.parametrize("joint_type, motion", [
    ("universal", lambda q: _Rx(q[0]) @ _Ry(q[1])),
    ("spherical", lambda q: _Rz(q[0]) @ _Ry(q[1]) @ _Rx(q[2])),
])
def test_multi_variable_joint_axis_order(joint_type, motion):
    from linkcli.core.forward import link_poses

    mech = _one_joint(joint_type)
    q = np.array([0.4, -0.7, 0.9])[: mech.n_q]
    np.testing.assert_allclose(link_poses(mech, q)[1][:3, :3], motion(q), atol=1e-14)


def test_planar_joint_translates_x_then_y_then_turns_about_z():
    from linkcli.core.forward import link_poses

    mech = _one_joint("planar")
    T = link_poses(mech, np.array([0.5, 0.3, 0.7]))[1]
    np.testing.assert_allclose(T[:3, 3], [0.5, 0.3, 0.0], atol=1e-14)
    np.testing.assert_allclose(T[:3, :3], _Rz(0.7), atol=1e-14)


@pytest.mark.parametrize("convention, origin", [("standard", [0, 0.4318, 0]), ("modified", [0.4318, 0, 0])])
def test_the_worked_dh_row(convention, origin):
    """docs/format.md: the row {a: 0.4318} at q = 90 deg puts frame i at (0, 0.4318, 0)
    (standard) or (0.4318, 0, 0) (modified) in frame i-1."""
    from kin_helpers import mech_from_yaml

    from linkcli.core.forward import link_poses

    mech = mech_from_yaml(f"""
    name: one row
    kind: spatial
    units: {{length: m, angle: deg}}
    links: {{base: {{}}}}
    serial: {{convention: {convention}, rows: [{{a: 0.4318, alpha: 0, d: 0, theta: 0}}]}}
    base: base
    """)
    T = link_poses(mech, np.array([np.pi / 2]))[1]
    np.testing.assert_allclose(T[:3, 3], origin, atol=1e-14)
    np.testing.assert_allclose(T[:3, :3], _Rz(np.pi / 2), atol=1e-14)


def test_every_status_the_code_can_report_is_in_the_format_reference():
    """Truth: the status vocabularies of the analyses, read from the code."""
    import re as _re

    from linkcli.batch.worker import STATUSES
    from linkcli.core import kinetostatics, limits
    from linkcli.core.dynamics import integrator
    from linkcli.core.inverse import IKStatus
    from linkcli.core.loop_closure import STATUS_TEXT

    text = (REPO / "docs" / "format.md").read_text(encoding="utf-8")
    spans = set(_re.findall(r"`([^`\n]+)`", text))
    words = {w for span in spans for w in _re.findall(r"[A-Za-z_]+", span)}
    names = (set(limits.ROW_STATUS) | set(STATUS_TEXT.values()) | {s.name.lower() for s in IKStatus}
             | set(integrator.STATUS_NAMES) | set(kinetostatics.STATUS_NAMES) | set(STATUSES)
             | {"singular_crossing", "singular_point", "reassembled", "end_of_range", "solver_limit"})
    sweep_src = (REPO / "linkcli" / "core" / "sweep.py").read_text(encoding="utf-8")
    names |= set(_re.findall(r'SweepEvent\([^,()]+(?:\([^()]*\))?, "([a-z_]+)"', sweep_src))  # event kinds
    assert sorted(names - words) == []
