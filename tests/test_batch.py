"""``linkcli batch``: job files, statuses, checks, summary.json, JUnit, exit codes (CliRunner),
and the job-file model's diagnostics. Studies are in test_batch_study.py, Dask in
test_batch_dask.py.

Truths used: the four-bar of mechanisms/fourbar.yaml (ground 4, crank 1, coupler 3.5, rocker 3)
has a minimum transmission angle of 54.31 deg (README of that file: the closed form
mu = arccos((b^2 + c^2 - (a +- d)^2) / 2bc) gives 54.31 and 125.69 deg), and it is a Grashof
crank-rocker; planar_3r has reach 1 + 0.8 + 0.5 = 2.3 m, so (5, 5) is out of reach.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from linkcli.cli.common import ExitCode

DATA = Path(__file__).resolve().parent / "data" / "batch"
REPO = Path(__file__).resolve().parent.parent
FOURBAR = REPO / "mechanisms" / "fourbar.yaml"


def jobs_by_id(summary_path: Path) -> dict:
    data = json.loads(summary_path.read_text(encoding="utf-8"))
    assert data["format"] == "linkcli.batch-summary/1"
    return {j["id"]: j for j in data["jobs"]}


@pytest.fixture(scope="module")
def mix_run(run_cli, tmp_path_factory):
    """tests/data/batch/jobs_mix.yaml run once in this process (-j 1)."""
    out = tmp_path_factory.mktemp("mix")
    result = run_cli("batch", DATA / "jobs_mix.yaml", "--jobs", "1", "--out-dir", out, "--junit", out / "report.xml")
    return result, out


# -- a mix of passing, failing and invalid jobs ----------------------------------------------------------
def test_mix_exit_code_is_1_and_every_job_is_reported(mix_run):
    result, out = mix_run
    assert result.exit_code == ExitCode.ANALYSIS_FAILED, result.output
    jobs = jobs_by_id(out / "summary.json")
    assert {k: j["status"] for k, j in jobs.items()} == {
        "good": "passed", "too_strict": "failed", "broken": "invalid", "missing": "invalid",
        "nothing_matches": "error", "bad_option": "error", "unreachable": "failed"}
    assert result.stdout == ""  # data goes to files; the summary to stderr
    for name in jobs:
        assert re.search(rf"^│ {name}\s", result.stderr, re.M), f"{name} not in the summary table"


def test_passing_job_has_figures_checks_and_its_table(mix_run):
    _, out = mix_run
    good = jobs_by_id(out / "summary.json")["good"]
    assert good["figures"]["grashof"]["value"] == "crank-rocker"
    assert good["figures"]["O4.range"]["unit"] == "deg"
    assert [c["passed"] for c in good["checks"]] == [True, True]
    # minimum over the 30-degree sweep: at least the closed-form minimum over a full turn
    assert good["checks"][0]["value"] >= 54.31 - 1e-2
    table = Path(good["output"])
    assert table == out / "good.csv" and table.is_file()
    lines = table.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + 13  # header + 0..360 by 30
    assert "B.transmission [deg]" in lines[0]


def test_failing_check_names_value_and_limit(mix_run):
    _, out = mix_run
    job = jobs_by_id(out / "summary.json")["too_strict"]
    (check,) = job["checks"]
    assert check["name"] == "min_transmission_angle >= 60" and check["passed"] is False
    assert check["value"] == pytest.approx(54.3147, abs=1e-3)
    assert "below 60" in job["message"]
    assert Path(job["output"]).is_file()  # a failed job still writes its results


def test_invalid_mechanism_file_is_reported_with_its_line(mix_run):
    _, out = mix_run
    job = jobs_by_id(out / "summary.json")["broken"]
    text = (DATA / "broken.yaml").read_text(encoding="utf-8")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "couplr" in ln)
    assert re.search(rf"broken\.yaml:{line}:\d+: error: joints\.A\.child: .*couplr", job["message"])
    assert job["diagnostics"][0]["line"] == line
    assert job["output"] is None


def test_glob_without_match_points_at_the_job_file(mix_run):
    _, out = mix_run
    job = jobs_by_id(out / "summary.json")["nothing_matches"]
    text = (DATA / "jobs_mix.yaml").read_text(encoding="utf-8")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "nothing_*" in ln)
    assert f"jobs_mix.yaml:{line}:" in job["message"] and "no file matches" in job["message"]


def test_bad_option_names_the_option_and_suggests(mix_run):
    _, out = mix_run
    job = jobs_by_id(out / "summary.json")["bad_option"]
    assert job["message"].startswith("options.set: 'crank' is not a joint variable")
    assert "Did you mean 'crank_pin'?" in job["message"]


def test_analysis_failure_fails_the_job(mix_run):
    _, out = mix_run
    job = jobs_by_id(out / "summary.json")["unreachable"]
    assert job["failed_cases"] == 1 and job["cases"] == 2
    assert "is unreachable" in job["message"]  # the typed failure event of the target


def test_junit_report(mix_run):
    _, out = mix_run
    root = ET.parse(out / "report.xml").getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("7", "2", "4")
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {"good", "too_strict", "broken", "missing", "nothing_matches", "bad_option", "unreachable"}
    assert cases["good"].find("failure") is None and cases["good"].find("error") is None
    failure = cases["too_strict"].find("failure")
    assert failure is not None and "min_transmission_angle >= 60" in failure.text
    assert cases["broken"].find("error").get("type") == "invalid_file"
    assert cases["bad_option"].find("error").get("type") == "error"


# -- all passing, processes -------------------------------------------------------------------------------
def test_all_passing_exit_0_on_two_processes(run_cli, tmp_path):
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f"""
jobs:
  fourbar:
    files: {FOURBAR}
    options: {{sweep: {{crank_pin: {{from: 0, to: 360, step: 60}}}}}}
    checks: [{{min_transmission_angle: 50}}]
  jacobian:
    files: {FOURBAR}
    analysis: jacobian
    options: {{set: {{crank_pin: 30}}}}
    output: jacobian.json
""", encoding="utf-8")
    r = run_cli("batch", jobs, "--jobs", "2", "--out-dir", tmp_path / "out", "--quiet")
    assert r.exit_code == 0, r.output
    assert r.stderr == ""  # --quiet
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["ok"] is True and summary["counts"]["passed"] == 2
    assert summary["executor"] == {"kind": "processes", "workers": 2}
    data = json.loads((tmp_path / "out" / "jacobian.json").read_text(encoding="utf-8"))
    assert data["format"] == "linkcli.table/1" and data["metadata"]["analysis"] == "jacobian"


# -- the job file itself is invalid: exit 3 with file:line:col --------------------------------------
def test_invalid_job_file_exits_3_with_every_problem(run_cli, tmp_path):
    text = """jobs:
  a:
    files: x.yaml
    analysis: simulat
  b:
    files: [x.yaml]
    optons: {}
    checks:
      - {column: "B.transmission [deg]"}
"""
    path = tmp_path / "jobs.yaml"
    path.write_text(text, encoding="utf-8")
    r = run_cli("batch", path, "--out-dir", tmp_path / "out")
    assert r.exit_code == ExitCode.INVALID_FILE, r.output
    assert re.search(rf"^{re.escape(str(path))}:4:\d+: error: jobs\.a\.analysis: 'simulat' is not allowed.*"
                     r"Did you mean 'simulate'\?", r.stderr, re.M), r.stderr
    assert re.search(r":7:\d+: error: jobs\.b\.optons: unknown key 'optons'\. Did you mean 'options'\?", r.stderr)
    assert re.search(r":9:\d+: error: jobs\.b\.checks\[0\]\.column: a column check needs `min:` or `max:`", r.stderr)
    assert not (tmp_path / "out").exists()  # nothing ran


def test_job_file_yaml_syntax_error_exits_3(run_cli, tmp_path):
    path = tmp_path / "jobs.yaml"
    path.write_text("jobs:\n  a: {files: [x.yaml\n", encoding="utf-8")
    r = run_cli("batch", path)
    assert r.exit_code == ExitCode.INVALID_FILE
    assert str(path) in r.stderr


@pytest.mark.parametrize("text, key, message", [
    ("jobs: {}\n", "jobs", "list is too short"),
    ("jobs:\n  a: {files: 3}\n", "jobs.a.files", "expected a file path or a list of them"),
    ("jobs:\n  a: {files: x, figures: [{column: c, grashof: true}]}\n", "jobs.a.figures[0].grashof",
     "a figure takes one of"),
    ("jobs:\n  a: {files: x, checks: [{figure: dev, max: 1}]}\n", "jobs.a.checks[0].figure", "unknown figure 'dev'"),
    ("jobs:\n  a: {files: x, checks: [{min_transmission_angle: 40, min: 3}]}\n", "jobs.a.checks[0].min",
     "does not apply"),
    ("jobs:\n  a:\n    files: x\n    analysis: ik\n", "jobs.a.options", "missing required key 'options'"),
    ("jobs:\n  a:\n    files: x\n    study: {method: normal, parameters: {links.a.b: {sd: 1}}}\n", "jobs.a.study",
     "needs `variants:`"),
    ("jobs:\n  a:\n    files: x\n"
     "    study: {method: random, variants: 3, parameters: {links.a.b: {low: 2, high: 1}}}\n",
     "jobs.a.study.parameters.links.a.b.high", "must be below high"),
    ("jobs:\n  a:\n    files: x\n    study: {method: grid, parameters: {'links[x]': {values: [1]}}}\n",
     "jobs.a.study.parameters.links[x]", "is not a parameter path"),
    ("jobs:\n  a:\n    files: x\n    study: {method: list, parameters: {a.b: {values: [1, 2]}, a.c: {values: [1]}}}\n",
     "jobs.a.study.parameters", "the same number of values"),
    ("jobs:\n  a:\n    files: x\n    figures: [{path_deviation: coupler.P}]\n", "jobs.a.figures[0].path_deviation",
     "needs a `study`"),
    ("jobs:\n  a: {files: x.yaml, output: r.csv}\n  b: {files: y.yaml, output: r.csv}\n", "jobs.b.output",
     "like job a"),
    ("jobs:\n  summary: {files: x.yaml, output: summary.json}\n", "jobs.summary.output", "like the batch summary"),
])
def test_job_file_diagnostics(tmp_path, text, key, message):
    from linkcli.batch.plan import plan_job_file
    from linkcli.errors import MechanismFileError

    path = tmp_path / "jobs.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(MechanismFileError) as info:
        plan_job_file(path, str(tmp_path / "out"))
    d = info.value.diagnostics[0]
    assert (d.key, message in d.message) == (key, True), d.format()
    assert d.line >= 1


# -- the short form -----------------------------------------------------------------------------------
def test_short_form_with_checks_and_an_invalid_file(run_cli, tmp_path):
    shutil.copy(DATA / "broken.yaml", tmp_path / "broken.yaml")
    r = run_cli("batch", FOURBAR, REPO / "mechanisms" / "parallelogram.yaml", tmp_path / "broken.yaml",
               "--analysis", "solve", "--jobs", "1", "--out-dir", tmp_path / "out",
               "--check", "min_transmission_angle=20", "--check", "B.transmission [deg]<=170", "--format", "json")
    assert r.exit_code == ExitCode.ANALYSIS_FAILED, r.output
    jobs = jobs_by_id(tmp_path / "out" / "summary.json")
    assert {k: j["status"] for k, j in jobs.items()} == {"fourbar": "passed", "parallelogram": "failed",
                                                         "broken": "invalid"}
    assert jobs["parallelogram"]["checks"][0]["value"] == pytest.approx(10.0, abs=1e-6)  # change point
    assert [c["name"] for c in jobs["fourbar"]["checks"]] == ["min_transmission_angle >= 20", "B.transmission <= 170"]
    assert (tmp_path / "out" / "fourbar.json").is_file()


def test_single_mechanism_file_without_analysis_is_solved(run_cli, tmp_path):
    r = run_cli("batch", FOURBAR, "--jobs", "1", "--out-dir", tmp_path, "-q")
    assert r.exit_code == 0, r.output
    assert jobs_by_id(tmp_path / "summary.json")["fourbar"]["cases"] == 361  # the file's own sweep


@pytest.mark.parametrize("args, message", [
    (["--analysis", "ik"], "needs targets"),
    (["--analysis", "dance"], "--analysis must be"),
    (["--check", "B.transmission [deg]~40"], "--check"),
    (["--check", "max_speed=3"], "--check"),
])
def test_short_form_usage_errors_exit_2(run_cli, tmp_path, args, message):
    r = run_cli("batch", FOURBAR, *args, "--out-dir", tmp_path)
    assert r.exit_code == ExitCode.USAGE, r.output
    assert message in r.stderr


def test_job_file_with_short_form_options_is_a_usage_error(run_cli, tmp_path):
    r = run_cli("batch", DATA / "jobs_mix.yaml", "--analysis", "solve", "--out-dir", tmp_path)
    assert r.exit_code == ExitCode.USAGE
    assert "a job file names its analyses" in r.stderr


def test_scheduler_that_does_not_answer_is_a_usage_error():
    """ExecutorError is a LinkcliError: the CLI reports it as `error: ...` with exit 2."""
    pytest.importorskip("distributed")
    from linkcli.batch.executors import DaskExecutor, ExecutorError
    from linkcli.cli.app import handle_exception
    from linkcli.errors import LinkcliError

    with pytest.raises(ExecutorError) as info:
        DaskExecutor("tcp://127.0.0.1:1", timeout="1s")
    assert "cannot connect to the Dask scheduler at tcp://127.0.0.1:1" in str(info.value)
    assert isinstance(info.value, LinkcliError) and handle_exception(info.value, False) == ExitCode.USAGE


# -- simulate through the registry ---------------------------------------------------------------------
def test_simulate_job_peak_torque_check(run_cli, tmp_path):
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f"""
jobs:
  motor:
    files: {REPO / 'mechanisms' / 'motor_fourbar.yaml'}
    analysis: simulate
    options: {{t_end: 0.05, dt: 5.0e-3}}
    figures: [{{peak_driver_load: motor}}]
    checks: [{{max_driver_torque: 1.0}}, {{max_loop_residual: 1.0e-6}}]
""", encoding="utf-8")
    r = run_cli("batch", jobs, "--jobs", "1", "--out-dir", tmp_path / "out", "-q")
    assert r.exit_code == ExitCode.ANALYSIS_FAILED, r.output
    job = jobs_by_id(tmp_path / "out" / "summary.json")["motor"]
    peak = job["figures"]["motor.peak"]
    assert peak["unit"] == "N m" and peak["value"] > 1.0
    torque, residual = job["checks"]
    assert torque["passed"] is False and torque["value"] == pytest.approx(peak["value"])
    assert residual["passed"] is True


def test_registry_lists_every_analysis_of_the_format():
    from linkcli.batch.analyses import ANALYSES
    from linkcli.model.jobs import ANALYSES as FORMAT_ANALYSES

    assert tuple(ANALYSES) == FORMAT_ANALYSES


# -- the shipped examples ----------------------------------------------------------------------------------
def test_ci_example_job_file_is_valid_and_covers_every_example(tmp_path):
    from linkcli.batch.plan import plan_job_file

    plan = plan_job_file(REPO / "mechanisms" / "jobs" / "ci_jobs.yaml", str(tmp_path))
    assert all(u.done is None for u in plan.units), [u.done.message for u in plan.units if u.done]
    assembled = {Path(u.file).name for u in plan.units if u.spec.job == "assemble"}
    assert assembled == {p.name for p in (REPO / "mechanisms").glob("*.yaml")}
    assert {u.spec.analysis for u in plan.units} == {"solve", "simulate", "ik", "jacobian"}


def test_study_example_is_valid(tmp_path):
    from linkcli.batch.plan import plan_job_file

    plan = plan_job_file(REPO / "mechanisms" / "jobs" / "fourbar_tolerance_study.yaml", str(tmp_path))
    (unit,) = plan.units
    assert unit.done is None and unit.study.variants == 10_000 and plan.n_variants == 10_000
    assert plan_job_file(REPO / "mechanisms" / "jobs" / "fourbar_tolerance_study.yaml", str(tmp_path),
                         variants=50).n_variants == 50


def test_figures_and_checks_on_a_table():
    """Column patterns, stats, NaN rows ignored, missing columns fail with a suggestion."""
    import numpy as np

    from linkcli.batch.figures import evaluate_check, evaluate_figure
    from linkcli.model.jobs import Check, Figure
    from linkcli.results import ResultTable

    t = ResultTable(4)
    t.add("B", "transmission", "deg", [50.0, 60.0, np.nan, 45.0])
    t.add("D", "transmission", "rad", [1.0, 1.2, 1.1, np.nan])
    t.add("loop_B", "residual", "mm", [1e-12, 5e-9, np.nan, 0.0])  # a length in the file's unit

    class Mech:
        driver_names = ()
        n_loops = 1

    fig = evaluate_figure(Figure(column="*.transmission [deg]", stat="min"), t, Mech())
    assert fig.value == 45.0 and fig.unit == "deg"
    assert evaluate_figure(Figure(column="B.transmission [deg]", stat="range"), t, Mech()).value == 15.0
    ok = evaluate_check(Check(min_transmission_angle=40), t, Mech(), [])
    assert ok.passed and ok.value == pytest.approx(45.0)  # 1 rad = 57.3 deg is above
    bad = evaluate_check(Check(min_transmission_angle=50), t, Mech(), [])
    assert not bad.passed and "below 50" in bad.message
    # max_loop_residual is in m whatever the file's unit: 5e-9 mm is 5e-12 m
    res = evaluate_check(Check(max_loop_residual=1e-11), t, Mech(), [])
    assert res.passed and res.value == pytest.approx(5e-12, rel=1e-12)
    assert not evaluate_check(Check(max_loop_residual=1e-12), t, Mech(), []).passed
    missing = evaluate_check(Check(column="B.transmision [deg]", min=1), t, Mech(), [])
    assert not missing.passed and "Did you mean 'B.transmission [deg]'" in missing.message
    assert math.isnan(evaluate_figure(Figure(column="nope", stat="max"), t, Mech()).value)


def test_readme_job_file_examples_validate(tmp_path):
    """The YAML blocks of README's batch section are valid job files."""
    from linkcli.batch.plan import load_job_file

    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Batch runs and parameter studies"):]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    for i, block in enumerate(blocks):
        path = tmp_path / f"readme{i}.yaml"
        path.write_text(block, encoding="utf-8")
        model, _ = load_job_file(path)
        assert model.jobs


def test_progress_bar_only_when_enabled():
    import io

    from rich.console import Console

    from linkcli.batch.report import ProgressBar

    buf = io.StringIO()
    bar = ProgressBar(Console(file=buf, force_terminal=True, width=100), enabled=True, description="variants")
    bar.start(10)
    bar.advance(4)
    bar.advance(6)
    bar.stop()
    assert "variants" in buf.getvalue() and "10/10" in buf.getvalue()
    quiet = io.StringIO()
    bar = ProgressBar(Console(file=quiet, force_terminal=True), enabled=False)
    bar.start(10)
    bar.advance(10)
    bar.stop()
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("jobs", [1, 2])
def test_executors_report_a_raising_task_and_go_on(jobs):
    from linkcli.batch.executors import make_executor

    with make_executor(jobs) as ex:
        out = {i: (res, exc) for i, res, exc in ex.run(int, ["1", "x", "3"])}
    assert out[0] == (1, None) and out[2] == (3, None)
    assert out[1][0] is None and isinstance(out[1][1], ValueError)


def test_a_column_check_never_compares_mixed_units():
    """`*.q [*]` over a revolute (deg) and a prismatic (mm) joint: 300 mm is not above 90 deg;
    the check fails saying the units differ (as a figure does); one unit matched is compared and
    the unit shown is the columns' (not the pattern's '*')."""
    from linkcli.batch.figures import evaluate_check, evaluate_figure
    from linkcli.model.jobs import Check, Figure
    from linkcli.results import ResultTable

    t = ResultTable(2)
    t.add("crank", "q", "deg", [10.0, 80.0])
    t.add("slider", "q", "mm", [120.0, 300.0])

    class Mech:
        driver_names = ()
        n_loops = 0

    mixed = evaluate_check(Check(column="*.q [*]", max=90), t, Mech(), [])
    assert not mixed.passed and mixed.value is None
    assert "different units (deg, mm)" in mixed.message and "above" not in mixed.message
    assert "different units" in evaluate_figure(Figure(column="*.q [*]", stat="max"), t, Mech()).note
    one = evaluate_check(Check(column="crank.q [*]", max=70), t, Mech(), [])
    assert not one.passed and one.message == "maximum 80 deg is above 70 deg"
    assert evaluate_check(Check(column="crank.q [*]", max=90), t, Mech(), []).passed
