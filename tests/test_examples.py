"""Every example in mechanisms/ loads without errors or warnings, compiles, has the counts its
header comment promises, and its `assembly:` estimate really is (close to) an assembled pose.

Parametrised over ``mechanisms/*.yaml``: a new example is loaded, compiled and checked by the
generic tests automatically, and ``test_counts`` fails until its expected counts are added to
``EXPECTED`` below.

Truths used: the Gruebler-Kutzbach counts worked out by hand in each file's header; the loop
closure of the `assembly` estimate computed with the core's forward kinematics (independent of
how the estimate was derived, from hand-built positions); published forward kinematics of the
PUMA 560 (Corke's Robotics Toolbox ``fkine``) and closed forms for the serial arms.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linkcli.compile import compile_mechanism
from linkcli.core.forward import effector_pose, joint_motions, link_poses
from linkcli.core.transforms import log_so3
from linkcli.io.loader import load_mechanism

MECHANISMS = Path(__file__).resolve().parents[1] / "mechanisms"
FILES = sorted(MECHANISMS.glob("*.yaml"))
SCHEMA_LINE = "# yaml-language-server: $schema=../schemas/mechanism.schema.json"

#: (n_links, n_joints, n_q, n_loops, n_constraints, gruebler_mobility)
EXPECTED = {
    "fourbar": (4, 4, 4, 1, 3, 1),
    "slider_crank": (4, 4, 4, 1, 3, 1),
    "parallelogram": (4, 4, 4, 1, 3, 1),
    "motor_fourbar": (4, 4, 4, 1, 3, 1),
    "watt_sixbar": (6, 7, 7, 2, 6, 1),
    "stephenson_sixbar": (6, 7, 7, 2, 6, 1),
    "fivebar": (5, 5, 5, 1, 3, 2),
    "planar_3r": (4, 3, 3, 0, 0, 3),
    "double_pendulum": (3, 2, 2, 0, 0, 2),
    # 8 variables (R + S + S + R), 6 equations: the coupler's idle spin is the 2nd freedom
    "rssr_spatial": (4, 4, 8, 1, 6, 2),
    # 3 of the 6 spatial loop equations are redundant: Gruebler -2, true mobility 1
    "planar_fourbar_as_spatial": (4, 4, 4, 1, 6, -2),
    "puma560": (7, 6, 6, 0, 0, 6),
    # two parallelogram loops sharing a pin: Gruebler 0, one redundant equation, mobility 1
    "coupling_rod": (5, 6, 6, 2, 6, 0),
    "spherical_rrp": (4, 3, 3, 0, 0, 3),
    "shaker_pendulum": (3, 2, 2, 0, 0, 2),
}

#: examples whose number of actuated variables is not their Gruebler mobility, on purpose:
#: name -> (number of actuated variables, why)
INTENDED_ACTUATION = {
    "rssr_spatial": (1, "Gruebler counts the coupler's idle spin; one crank drives it"),
    "planar_fourbar_as_spatial": (1, "redundant constraints: the true mobility is 1"),
    "coupling_rod": (1, "over-constrained: one loop equation is redundant, the true mobility is 1"),
    "double_pendulum": (0, "a passive system: gravity moves it"),
    "shaker_pendulum": (1, "the driven arm carries a freely swinging bob"),
}


def _load(path: Path):
    loaded = load_mechanism(path)
    return loaded, compile_mechanism(loaded.model)


def test_the_library_is_complete():
    names = {f.stem for f in FILES}
    assert set(EXPECTED) <= names, f"missing examples: {set(EXPECTED) - names}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_loads_without_errors_or_warnings_and_compiles(path):
    loaded, mech = _load(path)
    assert loaded.warnings == []
    assert mech.n_links >= 2 and mech.n_joints >= 1


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_counts(path):
    assert path.stem in EXPECTED, f"add the expected counts of {path.name} to EXPECTED"
    _, mech = _load(path)
    counts = (mech.n_links, mech.n_joints, mech.n_q, mech.n_loops, mech.n_constraints,
              mech.gruebler_mobility)
    assert counts == EXPECTED[path.stem]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_actuated_variables_match_the_mobility(path):
    _, mech = _load(path)
    expected = INTENDED_ACTUATION.get(path.stem, (mech.gruebler_mobility, ""))[0]
    assert mech.n_actuated == expected


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_tutorial_header_and_analysis_block(path):
    """Schema line first, then a header comment (what it is, where the numbers come from, what
    to try); `analysis.solve.sweep` when something is actuated, `analysis.simulate` when the
    file gives masses."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == SCHEMA_LINE
    header = []
    for line in lines[1:]:
        if not line.startswith("#"):
            break
        header.append(line)
    text = "\n".join(header)
    assert len(header) >= 8, "explain the example in a header comment"
    assert "Try:" in text, "say what to try"
    loaded, mech = _load(path)
    analysis = loaded.model.analysis
    if mech.n_actuated:
        assert analysis.solve is not None and analysis.solve.sweep, "give a sweep for `linkcli solve`"
    if mech.link_has_mass.any():
        assert analysis.simulate is not None, "give `analysis.simulate` for `linkcli simulate`"


def loop_residuals(mech, q):
    """(position m, rotation rad) mismatch of each loop-closing joint: the joint frame on its
    parent moved by the joint's motion should be the joint frame on its child."""
    T = link_poses(mech, q)
    M, _ = joint_motions(mech, q)
    out = []
    for j in mech.loop_joint:
        a = T[mech.joint_parent[j]] @ mech.T_parent_joint[j] @ M[j]
        b = T[mech.joint_child[j]] @ mech.T_child_joint[j]
        out.append((np.linalg.norm(a[:3, 3] - b[:3, 3]), np.linalg.norm(log_so3(a[:3, :3].T @ b[:3, :3]))))
    return np.array(out).reshape(-1, 2)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_assembly_estimate_closes_the_loops(path):
    """The assembly values were derived from hand-built positions and written rounded to
    0.01 deg (1e-4 rad; 0.1 deg for the rssr's frame rpy). A rounding of d on a joint moves a
    point by at most lever * d: 0.005 deg = 8.7e-5 rad on levers up to ~8 m gives < 1e-3 m (the
    worst measured: 3.1e-4 m, 8.9e-4 rad). 1e-2 keeps a margin yet catches a wrong estimate:
    the other assembly branch or a sign error is off by the order of the links (>= 0.1 m)."""
    _, mech = _load(path)
    res = loop_residuals(mech, mech.q_init)
    assert res.shape == (mech.n_loops, 2)
    if mech.n_loops:
        assert res[:, 0].max() < 1e-2
        assert res[:, 1].max() < 1e-2


def _tip(name, q_file_units):
    _, mech = _load(MECHANISMS / f"{name}.yaml")
    q = np.where(mech.q_is_rotation, np.radians(q_file_units), q_file_units)
    return effector_pose(mech, link_poses(mech, q))


def test_puma560_matches_corke_fkine():
    """Corke, Robotics Toolbox, p560.fkine(qz) and fkine(qn) (printed to 4 decimals; qz is
    exact sums of the table's lengths, hence 1e-12)."""
    T = _tip("puma560", [0, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(T[:3, 3], [0.4521, -0.15005, 0.4318], atol=1e-12)
    np.testing.assert_allclose(T[:3, :3], np.eye(3), atol=1e-12)
    T = _tip("puma560", [0, 45, -180, 0, 45, 0])
    np.testing.assert_allclose(T[:3, 3], [0.5963, -0.1501, -0.0144], atol=6e-5)
    np.testing.assert_allclose(T[:3, :3], [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], atol=1e-12)


def test_planar_3r_tip_closed_form():
    q = np.array([30.0, 45.0, -30.0])
    c = np.radians(np.cumsum(q))
    L = np.array([1.0, 0.8, 0.5])
    T = _tip("planar_3r", q)
    np.testing.assert_allclose(T[:2, 3], [L @ np.cos(c), L @ np.sin(c)], atol=1e-14)


def test_spherical_rrp_tip_closed_form():
    """Stanford-arm geometry: d1 = 0.412 up, d2 = 0.154 sideways, boom of length r along the
    direction (sin(shoulder) cos(waist), sin(shoulder) sin(waist), cos(shoulder)); the
    sideways offset turns with the waist."""
    waist, shoulder, r = 30.0, 60.0, 0.8
    T = _tip("spherical_rrp", [waist, shoulder, r])
    w, s = np.radians(waist), np.radians(shoulder)
    expected = (np.array([0, 0, 0.412]) + 0.154 * np.array([-np.sin(w), np.cos(w), 0])
                + r * np.array([np.sin(s) * np.cos(w), np.sin(s) * np.sin(w), np.cos(s)]))
    np.testing.assert_allclose(T[:3, 3], expected, atol=1e-14)


def test_motor_fourbar_spring_is_in_si():
    """The file uses `angle: rad`, so 5e3 N m/rad and 150 N m s/rad reach the core unchanged."""
    _, mech = _load(MECHANISMS / "motor_fourbar.yaml")
    assert mech.torsional_names == ("return_spring", "rocker_damper")
    np.testing.assert_allclose(mech.torsional_stiffness, [5e3, 0.0])
    np.testing.assert_allclose(mech.torsional_damping, [0.0, 150.0])
    np.testing.assert_allclose(mech.link_mass, [0.0, 1.0, 1.5, 1.2])
