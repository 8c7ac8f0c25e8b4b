"""Study workers solve their variants with the compiled sweep kernel (solve_sweep's
``method="many"``), a plain solve keeps the rule for one sweep; both give the same study.

Truth: the study run with every kernel interpreted (``LINKCLI_JIT=never``: the per-variant
path, solve_sweep in the interpreted kernel); tests/test_kinematics_fast.py shows compiled and
interpreted kernel agree point by point, tests/test_sweep_kernel.py the kernel and the numpy
continuation it replaced.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

from linkcli.cli.app import app

REPO = Path(__file__).resolve().parent.parent
FOURBAR = REPO / "mechanisms" / "fourbar.yaml"

JOBS = f"""jobs:
  s:
    files: {FOURBAR}
    options: {{sweep: {{crank_pin: {{from: 0, to: 360, step: 10}}}}}}
    figures:
      - {{name: dev, path_deviation: coupler.P}}
      - {{range_of_motion: O4}}
      - {{column: "B.transmission [deg]", stat: min}}
      - {{grashof: true}}
    checks:
      - {{figure: dev, max: 0.01}}
    study:
      method: normal
      variants: 12
      seed: 7
      parameters:
        links.coupler.frames.B[0]: {{tolerance: 0.05}}
        links.crank.frames.A[0]: {{tolerance: 0.01}}
"""


def _rows(runner, tmp_path: Path, name: str) -> list[dict]:
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(JOBS, encoding="utf-8")
    res = runner.invoke(app, ["batch", str(jobs), "--jobs", "1", "--out-dir", str(tmp_path / name), "-q"])
    assert res.exit_code in (0, 1), res.output
    return list(csv.DictReader(io.StringIO((tmp_path / name / "s.csv").read_text(encoding="utf-8"))))


def test_workers_use_the_compiled_kernel_single_solves_keep_the_rule(monkeypatch, tmp_path):
    pytest.importorskip("numba")
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    monkeypatch.setenv("LINKCLI_JIT", "auto")
    monkeypatch.setenv("LINKCLI_JIT_RECORD", str(tmp_path / "record.json"))
    from kin_helpers import mech_from_yaml

    from linkcli.core import sweep

    mech = mech_from_yaml(FOURBAR.read_text(encoding="utf-8"))
    monkeypatch.setattr(sweep, "_compiled_loaded", lambda: False)  # (as in a fresh process)
    monkeypatch.setattr(sweep, "_rent_in_process", 0.0)
    assert sweep._use_compiled(mech, 37, many=True)
    assert not sweep._use_compiled(mech, 37)
    monkeypatch.setenv("LINKCLI_JIT", "never")  # the override wins
    assert not sweep._use_compiled(mech, 37, many=True)
    with pytest.raises(ValueError, match="method"):
        sweep.solve_sweep(mech, [[0.0]], mech.q_init, method="fast")


def test_study_with_the_kernel_equals_the_study_interpreted(runner, tmp_path, monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    fast = _rows(runner, tmp_path, "fast")
    monkeypatch.setenv("LINKCLI_JIT", "never")
    ref = _rows(runner, tmp_path, "ref")
    assert len(fast) == len(ref) == 12
    # some variants fail the 0.01 m check: both outcomes are exercised
    assert {r["status"] for r in ref} >= {"passed", "failed"}
    for a, b in zip(fast, ref, strict=True):
        for key in b:
            if key.endswith("[m]"):
                # positions converge to 1e-10 of the 4 m mechanism on both paths: 4e-10 m each
                assert math.isclose(float(a[key]), float(b[key]), rel_tol=0, abs_tol=1e-9), key
            elif key.endswith("[deg]"):
                # angles to ~1e-9 rad (x condition number, < 10 here): 1e-6 deg leaves margin
                assert math.isclose(float(a[key]), float(b[key]), rel_tol=0, abs_tol=1e-6), key
            else:  # inputs, statuses, labels, checks, messages: identical
                assert a[key] == b[key], key


# -- the fast path (linkcli/batch/variants.py) against the per-variant path ---------------------------------
LIST_JOBS = f"""jobs:
  s:
    files: {FOURBAR}
    options: {{sweep: {{crank_pin: {{from: 0, to: 360, step: 10}}}}}}
    figures:
      - {{name: dev, path_deviation: coupler.P}}
      - {{range_of_motion: O4}}
      - {{column: "B.transmission [deg]", stat: min}}
      - {{grashof: true}}
    checks:
      - {{figure: dev, max: 0.02}}
      - {{min_transmission_angle: 40}}
    study:
      method: list
      parameters:
        links.coupler.frames.B[0]: {{values: [3.5, long, 1.0, 3.51, "3520 mm", 3.6, 3.49, 3.5]}}
        links.coupler.frames.P[1]: {{values: [0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.605, .inf]}}
"""


def _study(runner, tmp_path: Path, name: str, text: str) -> tuple[list[dict], dict]:
    jobs = tmp_path / f"{name}.yaml"
    jobs.write_text(text, encoding="utf-8")
    res = runner.invoke(app, ["batch", str(jobs), "--jobs", "1", "--out-dir", str(tmp_path / name), "-q"])
    assert res.exit_code in (0, 1), res.output
    rows = list(csv.DictReader(io.StringIO((tmp_path / name / "s.csv").read_text(encoding="utf-8"))))
    summary = json.loads((tmp_path / name / "summary.json").read_text(encoding="utf-8"))
    return rows, summary["jobs"][0]["study"]


def _same_rows(fast: list[dict], ref: list[dict]) -> None:
    assert len(fast) == len(ref)
    for a, b in zip(fast, ref, strict=True):
        for key in b:
            if key.endswith("[m]") and b[key] not in ("", "nan"):
                # coupler positions converge to 1e-10 of the 4 m mechanism on both paths
                assert math.isclose(float(a[key]), float(b[key]), rel_tol=0, abs_tol=1e-9), key
            elif key.endswith("[deg]") and b[key] not in ("", "nan"):
                # angles to ~1e-9 rad (x condition number, < 10 here): 1e-6 deg leaves margin
                assert math.isclose(float(a[key]), float(b[key]), rel_tol=0, abs_tol=1e-6), key
            else:  # parameters, statuses, labels, checks, messages (with the file's line): identical
                assert a[key] == b[key], key


def test_fast_path_equals_the_per_variant_path_variant_by_variant(runner, tmp_path, monkeypatch):
    """Valid, invalid (a word; an infinite coordinate), unit-string, unassemblable and failing
    variants: the same table as when every variant is validated, compiled and analysed on its
    own, and the study says which way each went."""
    pytest.importorskip("numba")
    for var in ("LINKCLI_NO_JIT", "LINKCLI_STUDY_PATH"):
        monkeypatch.delenv(var, raising=False)
    fast, how = _study(runner, tmp_path, "fast", LIST_JOBS)
    monkeypatch.setenv("LINKCLI_STUDY_PATH", "per-variant")
    ref, how_ref = _study(runner, tmp_path, "ref", LIST_JOBS)
    _same_rows(fast, ref)
    # every outcome is exercised: passed, invalid (word, inf), failed (cannot assemble; a check)
    assert [r["status"] for r in ref] == ["passed", "invalid", "failed", "passed", "passed", "failed", "passed",
                                          "invalid"]
    assert "cannot assemble" in ref[2]["message"] and "check dev" in ref[5]["message"]
    assert float(fast[0]["dev [m]"]) == 0.0  # the nominal deviates from itself by exactly 0
    ev = how["evaluation"]
    assert ev["fast"] == 4  # 3.5, 3.51, 3.6 (fails a check: still fast), 3.49
    assert ev["per_variant"] == 4 and ev["per_variant_reasons"] == {
        "a value is not a finite number": 3,  # 'long', '3520 mm' (a unit: validated on its own), inf
        "its sweep met a point that did not converge, a restart or a singular configuration": 1}
    assert how_ref["evaluation"] == {"fast": 0, "per_variant": 8,
                                     "per_variant_reasons": {"LINKCLI_STUDY_PATH=per-variant": 8}}


@pytest.mark.parametrize("change, reason", [
    ("strict: true", "strict: true"),
    ("parameter", "the fast path varies frame origin coordinates"),
])
def test_studies_the_fast_path_does_not_cover_take_the_per_variant_path(runner, tmp_path, monkeypatch, change,
                                                                         reason):
    pytest.importorskip("numba")
    for var in ("LINKCLI_NO_JIT", "LINKCLI_STUDY_PATH"):
        monkeypatch.delenv(var, raising=False)
    text = JOBS.replace("variants: 12", "variants: 3")
    if change == "parameter":
        text = text.replace("links.crank.frames.A[0]: {tolerance: 0.01}", "links.crank.mass: {tolerance: 0.1}")
    else:
        text = text.replace("    study:", f"    {change}\n    study:")
    rows, how = _study(runner, tmp_path, "s", text)
    assert len(rows) == 3 and how["evaluation"]["fast"] == 0 and how["evaluation"]["per_variant"] == 3
    (why,) = how["evaluation"]["per_variant_reasons"]
    assert reason in why


MECHS = REPO / "mechanisms"
CASES = {  # file, parameters (3 sd), figures, checks: two loops; a prismatic joint; a file in cm
    "watt_sixbar": (MECHS / "watt_sixbar.yaml", {"links.rocker.frames.C[0]": 0.02, "links.output.frames.D[0]": 0.02,
                                                  "links.ground.frames.O6[1]": 0.01},
                    ["{name: dev, path_deviation: output.D}", "{range_of_motion: O6}", "{grashof: true}",
                     '{column: "*.transmission [deg]", stat: min}'], ["{figure: dev, max: 0.02}"]),
    "slider_crank": (MECHS / "slider_crank.yaml",
                     {"links.coupler.frames.B[0]": 0.03, "links.ground.frames.rail[1]": 0.02},
                     ["{name: dev, path_deviation: slider.B}", '{column: "slide.q [m]", stat: max}',
                      "{range_of_motion: slide}"], ["{figure: dev, max: 0.02}", "{max_loop_residual: 1.0e-9}"]),
    "jansen_cm": (MECHS / "gallery" / "jansen.yaml", {"links.foot.frames.G[1]": 0.5, "links.bar_f.frames.F[0]": 0.3},
                  ["{name: dev, path_deviation: foot.G}", "{range_of_motion: F}"], ["{figure: dev, max: 0.5}"]),
}


def _case_jobs(name: str) -> str:
    file, params, figures, checks = CASES[name]
    lines = "\n".join(f"        {k}: {{tolerance: {v}}}" for k, v in params.items())
    return f"""jobs:
  s:
    files: {file}
    figures: [{", ".join(figures)}]
    checks: [{", ".join(checks)}]
    study:
      method: normal
      variants: 10
      seed: 5
      parameters:
{lines}
"""


@pytest.mark.parametrize("name", list(CASES))
def test_fast_path_on_multi_loop_prismatic_and_non_si_mechanisms(runner, tmp_path, monkeypatch, name):
    """Watt's six-bar (two loops), the slider-crank (a prismatic joint whose rail frame is a
    parameter), Jansen's linkage (eight links, file in cm): the fast path covers every variant
    and gives the per-variant path's table (positions to 1e-9 m = 1e-7 cm: the solver's 1e-10
    of the mechanism's size with margin; angles to 1e-6 deg)."""
    pytest.importorskip("numba")
    for var in ("LINKCLI_NO_JIT", "LINKCLI_STUDY_PATH"):
        monkeypatch.delenv(var, raising=False)
    fast, how = _study(runner, tmp_path, "fast", _case_jobs(name))
    monkeypatch.setenv("LINKCLI_STUDY_PATH", "per-variant")
    ref, _ = _study(runner, tmp_path, "ref", _case_jobs(name))
    assert how["evaluation"]["fast"] == 10, how["evaluation"]
    assert len(fast) == len(ref) == 10
    numeric = [k for k in ref[0] if "[" in k and "frames" not in k]
    assert all(r[k] not in ("", "nan") for r in ref for k in numeric)  # every figure has a value
    for a, b in zip(fast, ref, strict=True):
        for key in b:
            tol = {"[m]": 1e-9, "[cm]": 1e-7, "[deg]": 1e-6}.get(key[key.rfind("["):] if "[" in key else "", None)
            if tol is not None and b[key] not in ("", "nan"):
                assert math.isclose(float(a[key]), float(b[key]), rel_tol=0, abs_tol=tol), (key, a[key], b[key])
            elif key.startswith("check ") or key in ("status", "message", "grashof", "variant") or "frames" in key:
                assert a[key] == b[key], key
            elif b[key] not in ("", "nan"):
                pytest.fail(f"column {key!r} is not compared: give its unit a tolerance or compare it exactly")


def test_variants_outside_joint_limits_take_the_per_variant_path(runner, tmp_path, monkeypatch):
    """The four-bar with limits on the rocker pin that the nominal (O4 from -141.4 to -101.4 deg)
    keeps: variants whose rocker swings past them are failed by the per-variant path (status
    outside_limits rows), which the fast path hands them to; the others stay fast."""
    pytest.importorskip("numba")
    for var in ("LINKCLI_NO_JIT", "LINKCLI_STUDY_PATH"):
        monkeypatch.delenv(var, raising=False)
    text = FOURBAR.read_text(encoding="utf-8").replace(
        "O4: {type: revolute, parent: rocker.O4, child: ground.O4}",
        "O4: {type: revolute, parent: rocker.O4, child: ground.O4, limits: [-141.8, -101.0]}")
    mech = tmp_path / "limited.yaml"
    mech.write_text(text, encoding="utf-8")
    jobs = LIST_JOBS.replace(str(FOURBAR), str(mech)).replace(
        '[3.5, long, 1.0, 3.51, "3520 mm", 3.6, 3.49, 3.5]', "[3.5, 3.4, 3.6, 3.5, 3.5, 3.5, 3.5, 3.5]").replace(
        "[0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.605, .inf]", "[0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]")
    fast, how = _study(runner, tmp_path, "fast", jobs)
    monkeypatch.setenv("LINKCLI_STUDY_PATH", "per-variant")
    ref, _ = _study(runner, tmp_path, "ref", jobs)
    _same_rows(fast, ref)
    assert "outside its limits" in ref[1]["message"] + ref[2]["message"]
    assert how["evaluation"]["per_variant_reasons"].get("a joint left its limits", 0) >= 1
    assert how["evaluation"]["fast"] >= 6
