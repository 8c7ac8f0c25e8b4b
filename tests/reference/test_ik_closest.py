"""Inverse kinematics of unreachable targets: the closest pose against closed forms.

Provenance:
* a serial arm's position workspace without limits: planar 3R (1, 0.8, 0.5) reaches every point
  within 2.3 of its base, so a target at distance R > 2.3 is R - 2.3 from the closest pose;
* PUMA 560 (mechanisms/puma560.yaml, standard DH): the wrist centre (the tool point, d6 = 0)
  lies at distance sqrt(r^2 + d3^2) from the shoulder, r the in-plane reach of the upper arm
  a2 = 0.4318 plus forearm (a3, d4) = (0.0203, 0.4318), d3 = 0.15005 the shoulder offset; the
  outer boundary is the sphere of radius sqrt((a2 + hypot(a3, d4))^2 + d3^2). For targets whose
  closest sphere point lies outside the cylinder of radius d3 and needs no joint at a limit,
  the distance is |t| - that radius;
* a 2R arm (1, 0.8) whose elbow is limited to [0, 90] deg cannot fold enough to reach a point
  0.5 from its base (that needs 150 deg); inside the limits the closest pose folds to 90 deg and
  reaches sqrt(1 + 0.64) from the base, so it is sqrt(1.64) - 0.5 from the target.

Tolerance 1e-9 m, the issue's requirement: the distance is stationary at the minimum, so it is
known to ~1e-15 once the pose is within ~1e-7 rad of the optimum.
"""

import numpy as np
import pytest
from kin_helpers import mech_from_yaml, open_fourbar_yaml

from linkcli.analyses.ik import IKRequest, run_ik
from linkcli.compile import compile_mechanism
from linkcli.io.loader import load_mechanism

R3 = """
name: 3R
kind: planar
units: {length: m, angle: deg}
links: {base: {}}
serial:
  convention: standard
  rows:
    - {name: l1, joint_name: j1, a: 1.0}
    - {name: l2, joint_name: j2, a: 0.8}
    - {name: l3, joint_name: j3, a: 0.5}
base: base
effector: l3
assembly: {j1: 30, j2: 45, j3: -30}
"""

R2_LIMITED = """
name: 2R with a limited elbow
kind: planar
units: {length: m, angle: deg}
links: {base: {}}
serial:
  convention: standard
  rows:
    - {name: l1, joint_name: j1, a: 1.0}
    - {name: l2, joint_name: j2, a: 0.8, limits: [0, 90]}
base: base
effector: l2
assembly: {j1: 30, j2: 45}
"""


@pytest.mark.parametrize("target", [[3.0, 1.0], [-2.0, 2.5], [0.1, -2.4]])
def test_planar_3r_unreachable_is_at_the_closed_form_distance(target):
    out = run_ik(mech_from_yaml(R3), IKRequest([target], mode="position"))
    table, failed = out.table, out.n_failed
    assert failed == 1 and table["status"][0] == "unreachable"
    assert table["position_error [m]"][0] == pytest.approx(np.hypot(*target) - 2.3, abs=1e-9)
    # ... and the distance is reported in words (the command's summary line), not only a column
    assert f"closest pose reached is {np.hypot(*target) - 2.3:.9g} m away" in table.metadata["events"][0]


def test_puma_unreachable_is_at_the_closed_form_distance():
    mech = compile_mechanism(load_mechanism("mechanisms/puma560.yaml").model)
    radius = np.hypot(0.4318 + np.hypot(0.0203, 0.4318), 0.15005)
    targets = [[1.2, 0.5, 0.6], [-0.4, 1.1, -0.3]]
    out = run_ik(mech, IKRequest(targets, mode="position"))
    table, failed = out.table, out.n_failed
    assert failed == 2 and list(table["status"]) == ["unreachable"] * 2
    expected = [np.linalg.norm(t) - radius for t in targets]
    np.testing.assert_allclose(table["position_error [m]"], expected, atol=1e-9)
    # the arm joints (the wrist's do not move the wrist centre) are off their limits: no limit
    # binds, so the closed form applies
    q = np.radians(np.stack([table[f"joint{i}.q [deg]"] for i in range(1, 4)], axis=1))
    assert np.all((q > mech.q_lower[:3] + 1e-6) & (q < mech.q_upper[:3] - 1e-6))


def test_target_reachable_only_outside_limits_gives_the_closest_pose_inside_them():
    out = run_ik(mech_from_yaml(R2_LIMITED), IKRequest([[0.3, 0.4]], mode="position"))
    table, failed = out.table, out.n_failed
    assert failed == 1 and table["status"][0] == "unreachable"
    assert table["j2.q [deg]"][0] == pytest.approx(90.0, abs=1e-7)  # folded as far as allowed
    assert table["position_error [m]"][0] == pytest.approx(np.sqrt(1.64) - 0.5, abs=1e-9)


def column(table, prefix: str) -> np.ndarray:
    """The column whose header starts with ``prefix`` (its unit may change)."""
    (name,) = [n for n in table.headers() if n.split(" [")[0] == prefix]
    return np.asarray(table[name], dtype=float)


def test_fivebar_unreachable_closest_pose_closes_its_loops():
    """Five-bar (mechanisms/fivebar.yaml: ground 2, cranks 1, distal links 2): the tool point P
    is within 3 of both O1 = (0, 0) and O5 = (2, 0); the workspace's top is the lens corner
    (1, sqrt(8)) with both arms stretched, so the target (1, 3.5) is 3.5 - sqrt(8) away. The
    closest pose used to keep a loop residual of 2e-7 (its distance then off by 1e-7)."""
    mech = compile_mechanism(load_mechanism("mechanisms/fivebar.yaml").model)
    out = run_ik(mech, IKRequest([[1.0, 3.5]], mode="position"))
    table = out.table
    assert out.n_failed == 1 and table["status"][0] == "unreachable"
    assert table["position_error [m]"][0] == pytest.approx(3.5 - np.sqrt(8.0), abs=1e-9)
    assert column(table, "loop_residual")[0] <= 1e-9  # the ik tolerance (relative to a size of ~2 m)
    assert table["reached.x [m]"][0] == pytest.approx(1.0, abs=1e-7)




def test_a_pose_that_cannot_close_its_loops_is_not_presented():
    # links 1 + 1 + 1 cannot span a ground of 10: no configuration exists
    out = run_ik(mech_from_yaml(open_fourbar_yaml()), IKRequest([[1.0, 1.0]], mode="position"))
    table = out.table
    assert out.n_failed == 1 and table["status"][0] == "no_assembly"
    for name in ("crank_pin.q [deg]", "A.q [deg]", "reached.x [m]", "reached.y [m]", "position_error [m]"):
        assert np.isnan(table[name][0]), name
