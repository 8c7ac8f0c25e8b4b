"""The Jacobian at a singular configuration (tryout 6, item 7): a rank-deficient effector Jacobian
is flagged (metadata ``singular``, ``rank``, ``lost_directions``), warned about on stderr as a
``singular_point`` event (as solve reports a grid point on a dead centre: the configuration is
solved, the rows stay, exit 0), with a threshold relative to the largest singular value of the
dimensionless Jacobian, so the verdict does not depend on the mechanism's size or units.

Independent truths: the planar 3R arm stretched along x (link lengths 1, 0.8, 0.5) has the
closed-form Jacobian rows vy = (2.3, 1.3, 0.5) m/rad, wz = (1, 1, 1): it cannot move along x,
and its null rates are the cross product of the two rows, (0.8, -1.8, 1.0). The PUMA 560 at
joint5 = 0 has wrist axes 4 and 6 aligned, so the table's joint4 and joint6 columns are
parallel and the lost rates combine those two joints only."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import linkcli.api as api

MECH = Path(__file__).resolve().parent.parent / "mechanisms"
ARM = MECH / "planar_3r.yaml"


def _arm(tmp_path: Path, factor: float, unit: str = "m") -> Path:
    """The planar 3R arm with its links scaled by ``factor`` and lengths in ``unit``."""
    text = ARM.read_text(encoding="utf-8").replace("length: m,", f"length: {unit},")
    for a in ("1.0", "0.8", "0.5"):
        text = text.replace(f"a: {a},", f"a: {float(a) * factor:.6e},")
    path = tmp_path / f"arm_{factor:g}_{unit}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("factor,unit", [(1.0, "m"), (1000.0, "mm"), (1e-4, "m"), (1e4, "m")])
def test_stretched_planar_arm_is_singular_whatever_its_size(tmp_path, factor, unit):
    out = api.load(_arm(tmp_path, factor, unit)).jacobian({"shoulder": 0, "elbow": 0, "wrist": 0})
    meta = out.metadata
    assert out.ok and meta["status"] == "ok"  # the configuration is solved: a warning, not a failure
    assert meta["singular"] is True and meta["rank"] == 2
    (lost,) = meta["lost_directions"]
    assert lost["twist"] == {"vx": 1.0}  # the radial direction, exactly (coefficients rounded to 1e-3)
    null = np.array([0.8, -1.8, 1.0]) / np.linalg.norm([0.8, -1.8, 1.0])
    null *= np.sign(null[np.argmax(np.abs(null))])
    got = np.array([lost["rates"].get(n, 0.0) for n in ("shoulder", "elbow", "wrist")])
    assert np.allclose(got, null, atol=1e-3)  # the rates are rounded to 3 decimals
    (event,) = [e for e in out.events if e.kind == "singular_point"]
    assert "rank 2 of 3" in event.message and "vx" in event.message and "smallest singular value" in event.message


@pytest.mark.parametrize("elbow", [45.0, 0.05])
def test_bent_planar_arm_is_not_singular(tmp_path, elbow):
    """Off the singularity, even close to it (elbow 0.05 deg: condition ~ 1e4, four decades under the
    threshold), the flag is off and nothing is warned: the threshold is not loose."""
    out = api.load(ARM).jacobian({"shoulder": 0, "elbow": elbow, "wrist": 0})
    meta = out.metadata
    assert meta["singular"] is False and meta["rank"] == 3 and meta["lost_directions"] == []
    assert np.isfinite(meta["condition"]) and not any(e.kind == "singular_point" for e in out.events)


def test_puma_wrist_singularity_warns_and_names_the_aligned_joints(run_cli):
    r = run_cli("jacobian", MECH / "puma560.yaml", "--set", "joint5=0", "-f", "json")
    assert r.exit_code == 0, r.output  # solved: a warning as solve's singular_point, not a failure
    assert "singular configuration at" in r.stderr and "rank 5 of 6" in r.stderr
    assert "(singular: rank 5 of 6)" in r.stderr  # the summary line says it too
    doc = json.loads(r.stdout)
    meta = doc["metadata"]
    assert meta["singular"] is True and meta["rank"] == 5 and meta["condition"] is None  # inf
    (lost,) = meta["lost_directions"]
    assert set(lost["rates"]) == {"joint4", "joint6"}
    # the table's columns (deg/deg, m/deg: all revolute, so the file-unit columns combine as the
    # dimensionless rates do): joint4 and joint6 cancel with the reported rates
    col = {j: np.nan_to_num(np.array(doc["data"][f"{j}.dv_dq [m/deg]"], dtype=float))
           + np.nan_to_num(np.array(doc["data"][f"{j}.dw_dq [deg/deg]"], dtype=float)) for j in ("joint4", "joint6")}
    residual = lost["rates"]["joint4"] * col["joint4"] + lost["rates"]["joint6"] * col["joint6"]
    assert np.abs(residual).max() < 2e-3  # coefficients rounded to 1e-3, columns of size <= 1
    assert abs(abs(lost["rates"]["joint4"]) - 2 ** -0.5) < 1e-3


def test_puma_off_the_wrist_singularity_is_quiet(run_cli):
    r = run_cli("jacobian", MECH / "puma560.yaml", "--set", "joint5=10", "-f", "json")
    assert r.exit_code == 0 and "singular" not in r.stderr
    assert json.loads(r.stdout)["metadata"]["singular"] is False


def test_jacobian_echoes_requested_values_exactly(run_cli):
    """--set joint3=-30 is echoed as -30, not -29.999999999999996 (a round trip through radians)."""
    r = run_cli("jacobian", MECH / "puma560.yaml", "--set", "joint3=-30", "--set", "joint2=10.1", "-f", "json")
    assert r.exit_code == 0, r.output
    conf = json.loads(r.stdout)["metadata"]["configuration"]
    assert conf["joint3"] == -30.0 and conf["joint2"] == 10.1


def test_estimate_values_echo_as_the_file_wrote_them(run_cli):
    """Actuated values taken from the file's assembly estimate (planar_3r: shoulder 30) echo as 30,
    in fk's input column and jacobian's configuration, not 29.999999999999996."""
    r = run_cli("fk", ARM, "-f", "csv")
    assert r.exit_code == 0, r.output
    header, row = r.stdout.splitlines()[:2]
    assert dict(zip(header.split(","), row.split(","), strict=True))["shoulder.q [deg]"] == "30.0"
    r = run_cli("jacobian", ARM, "-f", "json")
    assert json.loads(r.stdout)["metadata"]["configuration"]["shoulder"] == 30.0


@pytest.mark.parametrize("scale", [np.pi / 180, 0.0254, 1e-3, 0.3048, 1.0])
def test_file_value_is_the_written_decimal_and_never_another_si_value(scale):
    from linkcli.analyses.inputs import file_value

    for written in (30.0, -150.0, 0.1, 12.345678901, 1e-5, 7.0e4, 45.5):
        si = written * scale  # as compile converts a file value
        assert file_value(si, scale) == written
    for si in (0.123456789012345678, np.pi, 1 / 3):  # not from a short decimal: unchanged bits
        v = file_value(si, scale)
        assert v * scale == si or v == si / scale
