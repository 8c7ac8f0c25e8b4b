"""Study workers solve their variants with the compiled sweep kernel (solve_sweep's
``method="many"``), a plain solve keeps the rule for one sweep; both give the same study.

Truth: the numpy continuation (forced with ``LINKCLI_SWEEP=numpy``) is the independent
reference; tests/test_kinematics_fast.py shows the two paths agree point by point.
"""

from __future__ import annotations

import csv
import io
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


def test_workers_use_the_compiled_kernel_single_solves_keep_the_rule(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.delenv("LINKCLI_SWEEP", raising=False)
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    from kin_helpers import mech_from_yaml

    from linkcli.core import sweep

    mech = mech_from_yaml(FOURBAR.read_text(encoding="utf-8"))
    assert sweep._use_compiled(mech, 37, many=True)
    assert not sweep._use_compiled(mech, 37)
    monkeypatch.setenv("LINKCLI_SWEEP", "numpy")  # the override wins
    assert not sweep._use_compiled(mech, 37, many=True)
    with pytest.raises(ValueError, match="method"):
        sweep.solve_sweep(mech, [[0.0]], mech.q_init, method="fast")


def test_study_with_the_kernel_equals_the_study_with_the_numpy_path(runner, tmp_path, monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    monkeypatch.delenv("LINKCLI_SWEEP", raising=False)
    fast = _rows(runner, tmp_path, "fast")
    monkeypatch.setenv("LINKCLI_SWEEP", "numpy")
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
