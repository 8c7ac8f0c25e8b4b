"""ik reports how far the reached tool frame is turned from a requested orientation (tryout 6,
item 9: a full-pose target on an arm that cannot match it reported only position_error).

Independent truth: the rotation angle between the target's and the reached frame computed with
scipy's Rotation from the table's own roll/pitch/yaw columns (extrinsic x-y-z, README), and for a
planar arm the wrapped difference of the angle columns."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

MECH = Path(__file__).resolve().parent.parent / "mechanisms"


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_full_pose_on_a_three_dof_arm_reports_its_orientation_error(run_cli):
    r = run_cli("ik", MECH / "spherical_rrp.yaml", "--target", "0.5,0.2,0.3,10,20,30", "-f", "csv")
    assert r.exit_code == 1, r.output  # 3 freedoms cannot take a 6-component pose: the closest one
    (row,) = _rows(r.stdout)
    target = Rotation.from_euler("xyz", [float(row[f"target.{a} [deg]"]) for a in ("roll", "pitch", "yaw")],
                                 degrees=True)
    reached = Rotation.from_euler("xyz", [float(row[f"reached.{a} [deg]"]) for a in ("roll", "pitch", "yaw")],
                                  degrees=True)
    expected = np.degrees((target.inv() * reached).magnitude())
    assert expected > 1.0  # the case is not trivial
    # the columns are written to 17 digits; rpy -> matrix round trips lose ~1e-12 deg
    assert abs(float(row["orientation_error [deg]"]) - expected) < 1e-9
    assert "orientation_error" in r.stderr and "turned" in r.stderr


def test_planar_full_and_position_rows(run_cli):
    r = run_cli("ik", MECH / "planar_3r.yaml", "--target", "1,1,30", "--target", "1,1", "--target", "2.5,0,0",
                "-f", "csv")
    full, position, far = _rows(r.stdout)
    wrapped = (float(full["reached.angle [deg]"]) - 30.0 + 180.0) % 360.0 - 180.0
    assert abs(float(full["orientation_error [deg]"]) - abs(wrapped)) < 1e-9
    assert float(full["orientation_error [deg]"]) < 1e-6  # reached (solver tolerance 1e-9 rad)
    assert position["orientation_error [deg]"] in ("", "nan")  # no orientation asked: empty
    wrapped = (float(far["reached.angle [deg]"]) + 180.0) % 360.0 - 180.0
    assert far["status"] == "unreachable" and abs(float(far["orientation_error [deg]"]) - abs(wrapped)) < 1e-9


def test_position_only_ik_has_no_orientation_column(run_cli):
    r = run_cli("ik", MECH / "planar_3r.yaml", "--target", "1,1", "-f", "csv")
    assert r.exit_code == 0 and "orientation_error" not in r.stdout.splitlines()[0]
