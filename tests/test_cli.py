"""Wiring of the command line (typer's CliRunner): exit codes, stdout that parses, stderr that
names file:line, complete output files. The analyses themselves are tested elsewhere."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
import typer

from linkcli import __version__
from linkcli.cli.app import app
from linkcli.cli.common import ExitCode, emit_table, finish
from linkcli.cli.options import DataFormat, DataFormatOption, OutputOption, QuietOption
from linkcli.results import ResultTable


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing ``needle``."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# -- global options ----------------------------------------------------------------------------------
def test_help_lists_commands_and_exit_codes(run_cli):
    r = run_cli("--help")
    assert r.exit_code == 0
    for word in ("validate", "info", "schema", "Exit codes", "70"):
        assert word in r.stdout


def test_no_arguments_shows_help(run_cli):
    r = run_cli()
    assert r.exit_code in (0, 2)  # click versions differ; it must not be an error of ours
    assert "Usage" in r.output


def test_version(run_cli):
    r = run_cli("--version")
    assert r.exit_code == 0
    assert r.stdout.strip() == f"linkcli {__version__}"


@pytest.mark.parametrize("args", [["bogus"], ["info"], ["info", "--format", "xml", "x.yaml"], ["validate"],
                                  ["schema", "--nope"]])
def test_usage_errors_exit_2(run_cli, args):
    r = run_cli(*args)
    assert r.exit_code == ExitCode.USAGE, r.output


# -- validate ------------------------------------------------------------------------------------
def test_validate_ok(run_cli, fourbar_path):
    r = run_cli("validate", fourbar_path)
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == f"ok {fourbar_path}"


def test_validate_bad_file_names_file_and_line(run_cli, fourbar_text, write_mech):
    text = fourbar_text.replace("child: coupler.A", "child: couplr.A")
    path = write_mech(text, "bad.yaml")
    r = run_cli("validate", path)
    assert r.exit_code == ExitCode.INVALID_FILE
    assert r.stdout == ""
    line = line_of(text, "couplr")
    assert re.search(rf"^{re.escape(path)}:{line}:\d+: error: .*couplr", r.stderr, re.M), r.stderr


def test_validate_many_files_json(run_cli, fourbar_path, fourbar_text, write_mech):
    bad = write_mech(fourbar_text.replace("type: revolute, parent: crank.A", "type: revolut, parent: crank.A"))
    missing = bad + ".missing"
    r = run_cli("validate", "--format", "json", fourbar_path, bad, missing)
    assert r.exit_code == ExitCode.INVALID_FILE
    data = json.loads(r.stdout)  # stdout is only JSON
    assert [d["file"] for d in data] == [fourbar_path, bad, missing]
    assert [d["valid"] for d in data] == [True, False, False]
    assert data[0]["diagnostics"] == []
    diag = data[1]["diagnostics"][0]
    assert diag["line"] == line_of(fourbar_text, "type: revolute, parent: crank.A")
    assert diag["severity"] == "error" and "revolut" in diag["message"] + diag["hint"]


def test_validate_warnings_keep_exit_0(run_cli, fourbar_text, write_mech):
    path = write_mech(fourbar_text.replace("links:\n", "links:\n  spare: {frames: {X: [0, 0]}}\n", 1))
    r = run_cli("validate", path)
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == f"ok {path} (1 warning)"
    assert f"{path}:" in r.stderr and "warning" in r.stderr and "spare" in r.stderr
    quiet = run_cli("validate", "--quiet", path)
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_validate_compile_failure_is_internal_error(run_cli, fourbar_path, monkeypatch):
    import linkcli.compile

    def broken(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(linkcli.compile, "compile_mechanism", broken)
    r = run_cli("validate", fourbar_path)
    assert r.exit_code == ExitCode.INTERNAL
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("internal error: ValueError: boom")
    assert fourbar_path in lines[0] and "report" in lines[0]


# -- info ----------------------------------------------------------------------------------------
def test_info_table(run_cli, fourbar_path):
    r = run_cli("info", fourbar_path)
    assert r.exit_code == 0, r.output
    for word in ("Crank-rocker four-bar", "crank_pin", "coupler.P", "Gruebler 1", "closed by joint"):
        assert word in r.stdout


def test_info_json(run_cli, fourbar_path):
    r = run_cli("info", "--format", "json", fourbar_path)
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["name"] == "Crank-rocker four-bar"
    assert data["counts"] == {"links": 4, "joints": 4, "variables": 4, "loops": 1, "constraints": 3, "actuated": 1}
    assert data["mobility"]["gruebler"] == 1
    assert data["actuated"] == ["crank_pin"]
    assert [j["name"] for j in data["joints"]] == ["crank_pin", "A", "B", "O4"]
    assert len(data["loops"]) == 1 and data["loops"][0]["closed_by"] in {"A", "B", "O4"}
    assert data["variables"][0]["initial"] == 45.0 and data["variables"][0]["unit"] == "deg"
    assert data["warnings"] == []


def test_info_warns_when_actuation_differs_from_mobility(run_cli, fourbar_text, write_mech):
    path = write_mech(fourbar_text.replace("child: coupler.A}", "child: coupler.A, actuated: true}"))
    r = run_cli("info", "-f", "json", path)
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)  # stdout holds only the JSON, warnings included
    assert data["actuated"] == ["crank_pin", "A"]
    assert any("2 actuated variables" in w["message"] for w in data["warnings"])
    assert re.search(rf"^{re.escape(path)}:\d+:\d+: warning: joints: 2 actuated", r.stderr, re.M)


def test_info_invalid_file_exit_3(run_cli, write_mech):
    path = write_mech("name: x\nbase: ground\nlinks:\n  ground: {}\njoints: [1, 2\n")
    r = run_cli("info", path)
    assert r.exit_code == ExitCode.INVALID_FILE
    assert r.stderr.startswith(f"{path}:")


# -- error handler -------------------------------------------------------------------------------
def _break_info(monkeypatch, exc):
    import linkcli.cli.commands.info as info_cmd

    def broken(*args, **kwargs):
        raise exc

    monkeypatch.setattr(info_cmd, "mechanism_info", broken)


def test_internal_error_one_line_without_traceback(run_cli, fourbar_path, monkeypatch):
    monkeypatch.delenv("LINKCLI_TRACEBACK", raising=False)
    _break_info(monkeypatch, RuntimeError("kaput\nsecond line"))
    r = run_cli("info", fourbar_path)
    assert r.exit_code == ExitCode.INTERNAL
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("internal error: RuntimeError: kaput second line")
    assert "please report" in lines[0] and "--traceback" in lines[0]
    assert "Traceback" not in r.output


def test_internal_error_traceback_on_request(run_cli, fourbar_path, monkeypatch):
    _break_info(monkeypatch, RuntimeError("kaput"))
    r = run_cli("--traceback", "info", fourbar_path)
    assert r.exit_code == ExitCode.INTERNAL
    assert "Traceback (most recent call last)" in r.stderr and "internal error" in r.stderr
    r = run_cli("info", fourbar_path, env={"LINKCLI_TRACEBACK": "1"})
    assert r.exit_code == ExitCode.INTERNAL and "Traceback" in r.stderr


def test_analysis_input_error_exit_2(run_cli, fourbar_path, monkeypatch):
    from linkcli.errors import AnalysisInputError

    _break_info(monkeypatch, AnalysisInputError("unknown joint 'crank'; valid: crank_pin, A, B, O4"))
    r = run_cli("info", fourbar_path)
    assert r.exit_code == ExitCode.USAGE
    assert r.stderr.strip() == "error: unknown joint 'crank'; valid: crank_pin, A, B, O4"


# -- schema --------------------------------------------------------------------------------------
def test_schema_stdout_and_file(run_cli, tmp_path):
    r = run_cli("schema")
    assert r.exit_code == 0
    schema = json.loads(r.stdout)
    assert list(schema)[:3] == ["$schema", "$id", "title"]
    out = tmp_path / "s.json"
    r2 = run_cli("schema", "-o", out)
    assert r2.exit_code == 0 and r2.stdout == ""
    assert out.read_text(encoding="utf-8") == r.stdout


# -- the shared table output used by solve/simulate ------------------------------------------------
def _table_app() -> typer.Typer:
    """A throwaway app using the same helpers and error handler as the real commands."""
    from linkcli.cli.app import LinkcliGroup

    test_app = typer.Typer(cls=LinkcliGroup, pretty_exceptions_enable=False, add_completion=False)

    @test_app.callback()
    def root() -> None:
        """Test app."""

    @test_app.command("demo")
    def demo(fmt: DataFormatOption = DataFormat.table, output: OutputOption = None, quiet: QuietOption = False,
             fail: bool = False) -> None:
        t = ResultTable(4, metadata={"file": "demo.yaml"})
        t.add("A", "q", "deg", np.array([0.0, 0.5, np.nan, 1e-300]))
        t.add("", "status", "", np.array(["CONVERGED", "CONVERGED", "NO_ASSEMBLY", "x, \"y\""]))
        emit_table(t, output=output, fmt=fmt, quiet=quiet)
        finish(1 if fail else 0, t.n, quiet=quiet, first_failure="row 2: NO_ASSEMBLY")

    return test_app


def test_emit_table_formats_and_files(runner, tmp_path):
    test_app = _table_app()
    r = runner.invoke(test_app, ["demo", "--format", "csv"])
    assert r.exit_code == 0, r.output
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0] == ["A.q [deg]", "status"] and len(rows) == 5
    assert rows[4] == ["1e-300", 'x, "y"'] and rows[3][0] == "nan"

    r = runner.invoke(test_app, ["demo", "-f", "json"])
    doc = json.loads(r.stdout)
    assert doc["data"]["A.q [deg]"] == [0.0, 0.5, None, 1e-300]

    r = runner.invoke(test_app, ["demo"])
    assert r.exit_code == 0 and "A.q [deg]" in r.stdout and "NO_ASSEMBLY" in r.stdout

    out = tmp_path / "res.json"
    r = runner.invoke(test_app, ["demo", "-o", str(out), "--fail"])
    assert r.exit_code == ExitCode.ANALYSIS_FAILED  # some case failed: rows still written
    assert r.stdout == "" and "1 of 4 cases failed" in r.stderr
    doc = json.loads(out.read_text())
    assert doc["n_rows"] == 4 and doc["metadata"]["file"] == "demo.yaml"
    assert [f.name for f in tmp_path.iterdir()] == ["res.json"]  # no temporary files left

    r = runner.invoke(test_app, ["demo", "-o", str(tmp_path / "res.txt")])
    assert r.exit_code == ExitCode.USAGE and ".csv" in r.stderr and ".json" in r.stderr
    r = runner.invoke(test_app, ["demo", "-o", str(tmp_path / "nodir" / "res.csv")])
    assert r.exit_code == ExitCode.USAGE and "does not exist" in r.stderr


def test_render_keeps_to_the_console_width():
    from rich.console import Console

    from linkcli.cli.render import render_table

    t = ResultTable(100)
    for k in range(12):
        t.add(f"link{k}", "x", "m", np.linspace(0, 1, 100))
    con = Console(width=60, record=True, file=io.StringIO())
    render_table(t, con, max_rows=6)
    text = con.export_text()
    assert all(len(line) <= 60 for line in text.splitlines())
    # every column is shown: the table wraps into parts that each repeat the first column
    assert all(f"link{k}.x [m]" in text for k in range(12))
    parts = text.count("link0.x [m]")
    assert parts > 1 and text.count("100 rows, 6 shown") == 1


def test_status_and_units_always_show_and_one_row_is_name_value_pairs(run_cli):
    """ik hid `status` (an unreachable target looked solved); fk showed 5 of 29 columns at 80
    characters."""
    planar_3r = Path(__file__).resolve().parent.parent / "mechanisms" / "planar_3r.yaml"
    r = run_cli("ik", planar_3r, "--target", "5,5", "--target", "1,1", env={"COLUMNS": "80"})
    assert r.exit_code == 1
    assert all(len(line) <= 80 for line in r.stdout.splitlines())
    blocks = r.stdout.count("status")
    assert blocks >= 2 and r.stdout.count("unreachable") == blocks  # status in every part
    for header in ("position_error [m]", "reached.x [m]", "shoulder.q [deg]", "iterations"):
        assert header in r.stdout
    fourbar = planar_3r.with_name("fourbar.yaml")
    r = run_cli("fk", fourbar, "--set", "crank_pin=30", env={"COLUMNS": "80"})
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    headers = next(csv.reader(io.StringIO(run_cli("fk", fourbar, "--set", "crank_pin=30", "-f", "csv").stdout)))
    assert len(headers) == 29
    shown = {ln.rsplit(None, 1)[0].strip(): ln.split()[-1] for ln in lines if ln.strip() and "─" not in ln}
    assert all(h in shown for h in headers)  # each column on its own line: name [unit], value
    assert shown["status"] == "ok" and float(shown["crank_pin.q [deg]"]) == pytest.approx(30)


def test_jacobian_table_has_units(run_cli):
    fivebar = Path(__file__).resolve().parent.parent / "mechanisms" / "fivebar.yaml"
    r = run_cli("jacobian", fivebar, "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(x["component"], x["unit"]) for x in rows] == [("vx", "m/deg"), ("vy", "m/deg"), ("wz", "deg/deg")]


def test_info_uses_rank_mobility_when_available(run_cli, fourbar_path, monkeypatch):
    """Contract with linkcli.core.mobility: mobility_report(mech, q) -> object with .mobility."""
    import sys
    import types
    from dataclasses import dataclass

    @dataclass
    class Report:
        mobility: int
        rank: int

    calls = []

    def mobility_report(mech, q):
        calls.append(q.shape)
        return Report(mobility=1, rank=3)

    fake = types.ModuleType("linkcli.core.mobility")
    fake.mobility_report = mobility_report
    monkeypatch.setitem(sys.modules, "linkcli.core.mobility", fake)
    r = run_cli("info", "-f", "json", fourbar_path)
    assert r.exit_code == 0, r.output
    mob = json.loads(r.stdout)["mobility"]
    assert mob["rank"] == 1 and mob["gruebler"] == 1 and mob["rank_details"] == {"mobility": 1, "rank": 3}
    assert calls == [(4,)]


# -- issue 13: the command line as users expect it; issue 15: clean stderr ----------------------------
def test_dash_o_dash_writes_to_stdout(run_cli, fourbar_path):
    r = run_cli("fk", fourbar_path, "--set", "crank_pin=30", "-o", "-")
    assert r.exit_code == 0, r.output
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0][0] == "crank_pin.q [deg]" and len(rows) == 2
    assert float(rows[1][0]) == pytest.approx(30.0, abs=1e-12)  # deg -> rad -> deg rounding
    r = run_cli("fk", fourbar_path, "--set", "crank_pin=30", "-o", "-", "--format", "json")
    assert json.loads(r.stdout)["n_rows"] == 1
    r = run_cli("schema", "-o", "-")
    assert json.loads(r.stdout)["title"] == "linkcli mechanism file"


def test_schema_refuses_a_csv_file(run_cli, tmp_path):
    r = run_cli("schema", "-o", tmp_path / "s.csv")
    assert r.exit_code == ExitCode.USAGE
    assert "name the file .json" in r.stderr and not (tmp_path / "s.csv").exists()


def test_numpy_warnings_never_reach_stderr(tmp_path, fourbar_text):
    """A coupler of zero length cannot assemble at 30 deg; numpy warned 'invalid value
    encountered in divide' with an internal path. The user sees linkcli's message only."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "m.yaml"
    path.write_text(fourbar_text.replace("B: [3.5, 0], P:", "B: [0, 0], P:"), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.run([sys.executable, "-m", "linkcli", "fk", str(path), "--set", "crank_pin=30",
                           "-f", "csv"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "cannot assemble at crank_pin = 30 deg" in proc.stderr
    assert "Warning" not in proc.stderr and ".py:" not in proc.stderr


def _help_texts(command) -> list[str]:
    """The help strings of a click command: its own and every parameter's."""
    texts = [command.help or "", command.epilog or ""]
    texts += [getattr(p, "help", None) or "" for p in command.params]
    return texts


def test_every_help_text_survives_rendering(run_cli):
    """Rich markup ate '[s]' in 'Time step [s].' (simulate --dt read 'Time step .'): every
    bracketed text (units, defaults) in every command's help must be printed as written."""
    import typer.main

    group = typer.main.get_command(app)
    commands = {"": group, **{name: group.get_command(None, name) for name in group.list_commands(None)}}
    checked = 0
    for name, command in commands.items():
        r = run_cli(*([name] if name else []), "--help", env={"COLUMNS": "200"})
        assert r.exit_code == 0, r.output
        shown = " ".join(r.stdout.split())
        for text in _help_texts(command):
            for bracket in re.findall(r"\[[^\]\n]*\]", text):
                assert " ".join(bracket.split()) in shown, f"linkcli {name} --help lost {bracket!r}"
                checked += 1
    assert checked >= 5  # --dt [s], --t-end [s] and the [x, y] forms at least


def test_shell_completion_is_available():
    """README: `linkcli --install-completion` (or --show-completion SHELL to see the script)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    # typer detects the user's shell from the process tree (a terminal always has one); a test run
    # with no shell among its ancestors (a detached job) names it instead, with typer's own switch
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
           "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    proc = subprocess.run([sys.executable, "-m", "linkcli", "--show-completion", "bash"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "complete -o default -F _linkcli_completion linkcli" in proc.stdout
    env.update(_LINKCLI_COMPLETE="complete_bash", COMP_WORDS="linkcli simu", COMP_CWORD="1")
    proc = subprocess.run([sys.executable, "-c", "from linkcli.cli.app import main; main()"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == ["simulate"]


# -- byte-level determinism (issue 15) ---------------------------------------------------------------
def test_identical_runs_give_identical_files(run_cli, fourbar_path, tmp_path):
    """No wall time in the table's metadata (it stays in the stderr summary), a fixed SVG id
    salt: two runs write the same bytes."""
    pytest.importorskip("matplotlib")
    pendulum = str(Path(fourbar_path).with_name("double_pendulum.yaml"))
    outputs = []
    for k in range(2):
        sim, svg = tmp_path / f"sim{k}.json", tmp_path / f"draw{k}.svg"
        r = run_cli("simulate", pendulum, "--t-end", "0.05", "--dt", "0.01", "-o", sim)
        assert r.exit_code == 0, r.output
        r = run_cli("draw", fourbar_path, "-o", svg)
        assert r.exit_code == 0, r.output
        outputs.append((sim.read_bytes(), svg.read_bytes()))
    assert b"wall" not in outputs[0][0]
    assert b"clip-path" in outputs[0][1]  # ids that used to be random
    assert outputs[0] == outputs[1]
