"""Parameter studies: paths into the document, sampling, invalid and failing variants, the study
table, determinism across chunking and executors, Parquet.

Truths used: a four-bar with coupler 1.0 (ground 4, crank 1, rocker 3) cannot close: the
coupler and rocker reach at most 1 + 3 = 4 m but A is up to 5 m from O4, so the sweep fails
(status failed); sampling properties follow from the definitions (grid product order, Latin
hypercube strata, normal moments with tolerances justified below).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from linkcli.cli.app import app
from linkcli.cli.common import ExitCode

REPO = Path(__file__).resolve().parent.parent
FOURBAR = REPO / "mechanisms" / "fourbar.yaml"
COARSE = "options: {sweep: {crank_pin: {from: 0, to: 360, step: 30}}}"


def write_jobs(tmp_path: Path, study: str, extra: str = "", name: str = "jobs.yaml") -> Path:
    path = tmp_path / name
    path.write_text(f"""jobs:
  s:
    files: {FOURBAR}
    {COARSE}
    figures:
      - {{name: dev, path_deviation: coupler.P}}
      - {{range_of_motion: O4}}
      - {{grashof: true}}
    checks:
      - {{figure: dev, max: 0.02}}
    study:
{study}{extra}""", encoding="utf-8")
    return path


def read_csv(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


# -- parameter paths -------------------------------------------------------------------------------------
def test_paths_parse_set_and_share():
    from linkcli.batch.paths import ParameterPath, check_settable, with_values
    from linkcli.io.yaml_source import read_yaml_file

    data, _ = read_yaml_file(FOURBAR)
    p = ParameterPath.parse("links.coupler.frames.B[0]")
    assert p.keys == ("links", "coupler", "frames", "B", 0)
    assert check_settable(data, p.keys) == 3.5
    assert check_settable(data, ("links", "coupler", "mass")) is None  # allowed by the format, absent
    variant = with_values(data, [p.keys, ("links", "coupler", "mass")], [3.6, 2.0])
    assert variant["links"]["coupler"]["frames"]["B"] == [3.6, 0]
    assert variant["links"]["coupler"]["mass"] == 2.0
    assert data["links"]["coupler"]["frames"]["B"] == [3.5, 0] and "mass" not in data["links"]["coupler"]
    assert variant["joints"] is data["joints"]  # untouched parts are shared, not copied


@pytest.mark.parametrize("path, message, hint", [
    (("links", "couplr", "frames"), "links.couplr is not in the file", "Did you mean 'coupler'?"),
    (("links", "coupler", "frames", "B", 5), "past the end of the list", "[0] to [1]"),
    (("links", "coupler", "frames", "B", 0, 1), "is the value 3.5", "shorten it"),
    (("springs", "s1", "stiffness"), "springs is not in the file", ""),
])
def test_path_problems(path, message, hint):
    from linkcli.batch.paths import PathProblem, check_settable
    from linkcli.io.yaml_source import read_yaml_file

    data, _ = read_yaml_file(FOURBAR)
    with pytest.raises(PathProblem) as info:
        check_settable(data, path)
    assert message in info.value.message and hint in info.value.hint


# -- sampling ----------------------------------------------------------------------------------------------
def study(**kw):
    from linkcli.model.study import Study

    return Study.model_validate(kw)


def test_grid_and_list():
    from linkcli.batch.sampling import sample, variant_count

    s = study(method="grid", parameters={"a.x": {"values": [1, 2]}, "a.y": {"from": 0, "to": 1, "num": 3}})
    assert variant_count(s) == 6
    assert sample(s) == [(1, 0.0), (1, 0.5), (1, 1.0), (2, 0.0), (2, 0.5), (2, 1.0)]  # first slowest
    s = study(method="grid", parameters={"a.x": {"from": 0, "to": 1, "step": 0.25}})
    assert variant_count(s) == 5 and sample(s)[-1] == (1.0,)
    s = study(method="list", parameters={"a.x": {"values": [1, 2, 3]}, "a.y": {"values": ["p", "q", "r"]}})
    assert sample(s) == [(1, "p"), (2, "q"), (3, "r")]


def test_random_values_depend_on_seed_and_index_only():
    from linkcli.batch.sampling import sample

    s10 = sample(study(method="random", variants=10, seed=7, parameters={"a.x": {"low": 1, "high": 2},
                                                                         "a.y": {"low": -1, "high": 0}}))
    s4 = sample(study(method="random", variants=4, seed=7, parameters={"a.x": {"low": 1, "high": 2},
                                                                       "a.y": {"low": -1, "high": 0}}))
    assert s10[:4] == s4
    v = np.array(s10)
    assert np.all((v[:, 0] >= 1) & (v[:, 0] < 2) & (v[:, 1] >= -1) & (v[:, 1] < 0))
    other = sample(study(method="random", variants=4, seed=8, parameters={"a.x": {"low": 1, "high": 2},
                                                                          "a.y": {"low": -1, "high": 0}}))
    assert other != s4


def test_latin_hypercube_has_one_sample_per_stratum():
    from linkcli.batch.sampling import sample

    n = 50
    v = np.array(sample(study(method="lhs", variants=n, seed=1, parameters={"a.x": {"low": 0, "high": 10},
                                                                            "a.y": {"low": 5, "high": 6}})))
    for k, (lo, hi) in enumerate([(0, 10), (5, 6)]):
        strata = np.floor((v[:, k] - lo) / (hi - lo) * n).astype(int)
        assert sorted(strata) == list(range(n))
    # one seeded design (scipy.stats.qmc.LatinHypercube): the same seed and size give the same
    # values, another seed another design
    params = {"a.x": {"low": 0, "high": 10}, "a.y": {"low": 5, "high": 6}}
    assert sample(study(method="lhs", variants=n, seed=1, parameters=params)) == [tuple(r) for r in v.tolist()]
    assert not np.allclose(np.array(sample(study(method="lhs", variants=n, seed=2, parameters=params))), v)


def test_normal_tolerance_is_three_sd_about_the_file_value():
    """n = 4000: the sample mean's standard error is sd/sqrt(n) = 1.6 % of sd, so 6 % (~4 standard
    errors) never fails by chance in practice (fixed seed anyway); the sample sd's relative error
    is about 1/sqrt(2n) = 1.1 %, 5 % is ~4.5 of those."""
    from linkcli.batch.sampling import sample

    s = study(method="normal", variants=4000, seed=3,
              parameters={"a.x": {"tolerance": 0.03}, "a.y": {"sd": 2, "mean": 10}})
    v = np.array(sample(s, nominal=[3.5, None]))
    assert abs(v[:, 0].mean() - 3.5) < 0.06 * 0.01 and abs(v[:, 0].std() / 0.01 - 1) < 0.05
    assert abs(v[:, 1].mean() - 10) < 0.06 * 2 and abs(v[:, 1].std() / 2 - 1) < 0.05


# -- a study with an invalid and a failing variant ------------------------------------------------------------
def test_grid_study_reports_invalid_and_failing_variants(run_cli, tmp_path):
    jobs = write_jobs(tmp_path, """      method: grid
      parameters:
        links.coupler.frames.B[0]: {values: [3.5, long, 1.0, 3.51]}
""")
    r = run_cli("batch", jobs, "--jobs", "1", "--out-dir", tmp_path / "out")
    assert r.exit_code == ExitCode.ANALYSIS_FAILED, r.output  # pass_fraction 1 by default
    rows = read_csv(tmp_path / "out" / "s.csv")
    assert [row["variant"] for row in rows] == ["0", "1", "2", "3"]
    assert [row["links.coupler.frames.B[0]"] for row in rows] == ["3.5", "long", "1.0", "3.51"]
    assert [row["status"] for row in rows] == ["passed", "invalid", "failed", "passed"]
    # the invalid variant names the mechanism file's line of the changed value (line 40: B: [3.5, 0])
    assert f"{FOURBAR}:40:" in rows[1]["message"] and "links.coupler.frames.B[0]" in rows[1]["message"]
    assert "cannot assemble" in rows[2]["message"]
    assert float(rows[0]["dev [m]"]) == 0.0  # the nominal itself
    assert 0 < float(rows[3]["dev [m]"]) < 0.02
    assert rows[0]["grashof"] == "crank-rocker" and rows[2]["grashof"] == "triple-rocker"
    assert rows[0]["check dev <= 0.02"] == "true"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    (job,) = summary["jobs"]
    assert job["status"] == "failed" and job["study"]["counts"] == {"passed": 2, "failed": 1, "invalid": 1, "error": 0}
    assert "2 of 4 variants passed" in job["message"] and "variant 1 invalid" in job["message"]
    assert job["study"]["nominal"]["grashof"] == "crank-rocker"


def test_pass_fraction_lets_a_study_pass(run_cli, tmp_path):
    jobs = write_jobs(tmp_path, """      method: list
      pass_fraction: 0.5
      parameters:
        links.coupler.frames.B[0]: {values: [3.5, 1.0]}
""")
    r = run_cli("batch", jobs, "--jobs", "1", "--out-dir", tmp_path / "out", "-q")
    assert r.exit_code == 0, r.output


def test_parameter_path_not_in_the_file_fails_the_job_only(run_cli, tmp_path):
    jobs = write_jobs(tmp_path, """      method: list
      parameters:
        links.couplr.frames.B[0]: {values: [3.5]}
""", extra=f"""  other:
    files: {FOURBAR}
    {COARSE}
""")
    r = run_cli("batch", jobs, "--jobs", "1", "--out-dir", tmp_path / "out", "-q")
    assert r.exit_code == ExitCode.ANALYSIS_FAILED
    jobs_ = {j["id"]: j for j in json.loads((tmp_path / "out" / "summary.json").read_text())["jobs"]}
    assert jobs_["other"]["status"] == "passed"
    s = jobs_["s"]
    line = next(i for i, ln in enumerate(jobs.read_text().splitlines(), 1) if "couplr" in ln)
    assert s["status"] == "error" and f"jobs.yaml:{line}:" in s["message"] and "Did you mean 'coupler'?" in s["message"]


# -- determinism ----------------------------------------------------------------------------------------------
NORMAL = """      method: normal
      variants: 16
      seed: 11
      parameters:
        links.coupler.frames.B[0]: {tolerance: 0.03}
        links.rocker.frames.B[0]: {sd: 0.01}
"""


def test_same_seed_same_table_whatever_the_chunks_and_workers(run_cli, tmp_path):
    jobs = write_jobs(tmp_path, NORMAL)
    r1 = run_cli("batch", jobs, "--jobs", "1", "--chunk-size", "16", "--out-dir", tmp_path / "a", "-q")
    r2 = run_cli("batch", jobs, "--jobs", "2", "--chunk-size", "3", "--out-dir", tmp_path / "b", "-q")
    assert (r1.exit_code, r2.exit_code) == (0, 0), r1.output + r2.output
    a, b = (tmp_path / "a" / "s.csv").read_text(), (tmp_path / "b" / "s.csv").read_text()
    assert a == b
    rows = read_csv(tmp_path / "a" / "s.csv")
    assert len(rows) == 16 and len({row["links.coupler.frames.B[0] [m]"] for row in rows}) == 16
    # more variants: the first 16 are the same ones
    r3 = run_cli("batch", jobs, "--jobs", "1", "--variants", "20", "--out-dir", tmp_path / "c", "-q")
    assert r3.exit_code == 0
    assert read_csv(tmp_path / "c" / "s.csv")[:16] == rows


def test_parquet_study_table(run_cli, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    jobs = write_jobs(tmp_path, NORMAL.replace("variants: 16", "variants: 6") + "      output: s.parquet\n")
    r = run_cli("batch", jobs, "--jobs", "1", "--out-dir", tmp_path / "out", "-q")
    assert r.exit_code == 0, r.output
    table = pq.read_table(tmp_path / "out" / "s.parquet")
    assert table.num_rows == 6
    assert table.column("variant").to_pylist() == list(range(6))
    assert table.column("status").to_pylist() == ["passed"] * 6
    meta = json.loads(table.schema.metadata[b"linkcli"])
    assert meta["format"] == "linkcli.study/1" and meta["study"]["seed"] == 11


def test_parquet_without_pyarrow_says_what_to_install(monkeypatch, tmp_path):
    import builtins

    from linkcli.batch.report import write_study_table
    from linkcli.io.writers import OutputError
    from linkcli.results import ResultTable

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    t = ResultTable(1)
    t.add("", "variant", "", [0])
    with pytest.raises(OutputError, match=r"linkcli\[parquet\]"):
        write_study_table(t, str(tmp_path / "s.parquet"))


def test_simulate_study_peak_torque_and_an_invalid_stiffness(run_cli, tmp_path):
    """A spring stiffness cannot be negative (the format says >= 0): that variant is invalid and
    names the file's line; the others report the motor's peak torque."""
    motor = REPO / "mechanisms" / "motor_fourbar.yaml"
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f"""jobs:
  springs:
    files: {motor}
    analysis: simulate
    options: {{t_end: 0.02, dt: 5.0e-3}}
    figures: [{{name: peak, peak_driver_load: motor}}]
    study:
      method: grid
      pass_fraction: 0.6
      parameters:
        springs.return_spring.stiffness: {{values: [5000, -1, 1000]}}
""", encoding="utf-8")
    r = run_cli("batch", jobs, "--jobs", "1", "--out-dir", tmp_path / "out", "-q")
    assert r.exit_code == 0, r.output
    rows = read_csv(tmp_path / "out" / "springs.csv")
    assert [row["status"] for row in rows] == ["passed", "invalid", "passed"]
    line = next(i for i, ln in enumerate(motor.read_text().splitlines(), 1) if "return_spring:" in ln)
    assert f"motor_fourbar.yaml:{line}:" in rows[1]["message"] and "negative" in rows[1]["message"]
    peaks = [float(rows[0]["peak [N m]"]), float(rows[2]["peak [N m]"])]
    assert all(p > 0 for p in peaks) and peaks[0] != peaks[1]
    assert rows[1]["peak [N m]"] == "nan"


def test_mechanism_file_with_its_own_study(tmp_path):
    """A `study:` block in a mechanism file runs with `linkcli batch FILE`; the variants are the
    file without the block, and each variant's crank length shows in the study table."""
    from typer.testing import CliRunner

    text = (REPO / "mechanisms" / "fourbar.yaml").read_text(encoding="utf-8")
    text = text.replace("analysis:", "study:\n  method: grid\n  parameters:\n    links.crank.frames.A[0]: "
                        "{values: [0.9, 1.0, 1.1]}\n  output: crank_study.csv\nanalysis:", 1)
    path = tmp_path / "fourbar_study.yaml"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["batch", str(path), "--out-dir", str(out), "--jobs", "1", "-q"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO((out / "crank_study.csv").read_text())))
    assert len(rows) == 3
    assert [float(r["links.crank.frames.A[0] [m]"]) for r in rows] == [0.9, 1.0, 1.1]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["jobs"][0]["study"]["variants"] == 3


# -- parameter column units --------------------------------------------------------------------------------
def test_parameter_columns_carry_the_files_units(run_cli, tmp_path):
    """Each parameter column's header gives the unit its values are in: the field's declared
    dimension (linkcli.model.units) in the file's `units` for lengths and angles -- README
    "Units": a length in a mm file is mm, the angle of a frame's [x, y, angle] is deg -- and SI
    otherwise (a mass is kg whatever the file says); a value written with a unit ("3.5 m") is
    converted by pint to the column's unit (3500 mm), not left a text column without one."""
    text = FOURBAR.read_text(encoding="utf-8")
    assert "units: {length: m, angle: deg}" in text and "O4: [4, 0]}" in text
    mm = tmp_path / "fourbar_mm.yaml"  # the same four-bar, 1000 times smaller: it still closes
    mm.write_text(text.replace("units: {length: m, angle: deg}", "units: {length: mm, angle: deg}")
                  .replace("O4: [4, 0]}", "O4: [4, 0, 0]}"), encoding="utf-8")
    study = """      method: list
      parameters:
        links.ground.frames.O4[0]: {values: [4.0, 4.01]}
        links.ground.frames.O4[2]: {values: [0.0, 0.5]}
        links.crank.mass: {values: [1.0, 1.1]}
        links.coupler.frames.B[0]: {values: [3.5, "3.5 m"]}
"""
    jobs = write_jobs(tmp_path, study).read_text(encoding="utf-8").replace(str(FOURBAR), str(mm))
    (tmp_path / "mm.yaml").write_text(jobs, encoding="utf-8")
    r = run_cli("batch", tmp_path / "mm.yaml", "--jobs", "1", "--out-dir", tmp_path / "mm", "-q")
    assert r.exit_code in (0, 1), r.output
    header = (tmp_path / "mm" / "s.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[:6] == ["variant", "links.ground.frames.O4[0] [mm]", "links.ground.frames.O4[2] [deg]",
                          "links.crank.mass [kg]", "links.coupler.frames.B[0] [mm]", "status"]
    assert [float(r["links.coupler.frames.B[0] [mm]"]) for r in read_csv(tmp_path / "mm" / "s.csv")] == [3.5, 3500.0]
    # the metre file: metres
    r = run_cli("batch", write_jobs(tmp_path, """      method: list
      parameters:
        links.ground.frames.O4[0]: {values: [4.0]}
"""), "--jobs", "1", "--out-dir", tmp_path / "m", "-q")
    assert r.exit_code in (0, 1), r.output
    assert read_csv(tmp_path / "m" / "s.csv")[0]["links.ground.frames.O4[0] [m]"] == "4.0"


@pytest.mark.parametrize("path, unit", [
    (("joints", "R", "limits", 1), "deg"),  # revolute: an angle
    (("joints", "P", "limits", 0), "mm"),  # prismatic: a length
    (("joints", "C", "limits", 1, 0), "mm"),  # cylindrical: rotation, then slide (docs/format.md)
    (("joints", "C", "limits", 0, 1), "deg"),
    (("assembly", "C", 1), "mm"), (("assembly", "R"), "deg"),
    (("serial", "rows", 0, "limits", 0), "deg"),  # a DH row is revolute by default
    (("serial", "rows", 0, "a"), "mm"), (("serial", "rows", 0, "alpha"), "deg"),
    (("links", "l", "inertia"), "kg m^2"), (("gravity", 1), "m/s^2"), (("springs", "s", "stiffness"), "N/m"),
    (("springs", "t", "stiffness"), "N m/rad"),
    (("links", "l", "frames", "F", 1), "mm"), (("links", "l", "frames", "F", "origin", 1), "mm"),
    # unknown: a driver value may be a motion or an effort; text; a key with no unit
    (("drivers", "d", "value"), ""), (("name",), ""), (("joints", "R", "type"), ""),
    (("links", "l", "frames", "F", 2), ""),  # past the end of [x, y]
])
def test_parameter_unit_of_each_kind_of_path(path, unit):
    from linkcli.batch.paths import parameter_unit

    data = {"name": "x", "kind": "planar", "units": {"length": "mm"}, "gravity": [0, -9.81],
            "links": {"l": {"frames": {"F": [1, 2]}, "inertia": 1.0}},
            "joints": {"R": {"type": "revolute", "limits": [0, 90]}, "P": {"type": "prismatic", "limits": [0, 5]},
                       "C": {"type": "cylindrical", "limits": [[0, 90], [0, 5]]}},
            "assembly": {"R": 10, "C": [10, 2]}, "serial": {"rows": [{"a": 1, "alpha": 0, "limits": [0, 1]}]},
            "springs": {"s": {"between": ["l.F", "l.F"], "stiffness": 1, "free_length": 1},
                        "t": {"type": "torsional", "joint": "R", "stiffness": 1}},
            "drivers": {"d": {"joint": "R", "type": "constant", "value": 1}}}
    assert parameter_unit(data, path) == unit
