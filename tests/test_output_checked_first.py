"""Every command that writes a result table checks ``-o`` before it runs (issue #11 review): an
unknown format or a missing directory is refused at once (exit 2, the path and the fix named),
never after a long run whose rows are then lost. The analyses are replaced by functions that fail
the test if called, so these tests see that nothing ran."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from linkcli.io.writers import OutputError, check_output

REPO = Path(__file__).resolve().parent.parent
MECH = REPO / "mechanisms"

#: command line (without -o) and the analysis functions it may call, as module:function
COMMANDS = {
    "solve": (["solve", MECH / "fourbar.yaml"], ["linkcli.analyses.solve:run_solve",
                                                  "linkcli.analyses.solve:solve_stream"]),
    "fk": (["fk", MECH / "fourbar.yaml"], ["linkcli.analyses.solve:run_solve", "linkcli.analyses.solve:solve_stream"]),
    "forces": (["forces", MECH / "motor_fourbar.yaml"], ["linkcli.analyses.forces:run_forces",
                                                          "linkcli.analyses.forces:plan_kernels"]),
    "equilibrium": (["forces", "--equilibrium", MECH / "motor_fourbar.yaml"],
                    ["linkcli.analyses.forces:run_equilibrium", "linkcli.analyses.forces:plan_kernels"]),
    "simulate": (["simulate", MECH / "motor_fourbar.yaml", "--t-end", "1000"],
                 ["linkcli.analyses.simulate:simulate_stream", "linkcli.analyses.simulate:plan_kernels"]),
    "jacobian": (["jacobian", MECH / "fourbar.yaml"], ["linkcli.analyses.jacobian:run_jacobian"]),
    "ik": (["ik", MECH / "planar_3r.yaml", "--target", "1.2,0.8"], ["linkcli.analyses.ik:run_ik"]),
}


def _no_run(monkeypatch, targets):
    import importlib

    def ran(*args, **kwargs):
        raise AssertionError("the analysis ran before the output was checked")

    for target in targets:
        module, name = target.split(":")
        monkeypatch.setattr(importlib.import_module(module), name, ran)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_missing_output_directory_is_refused_before_the_run(run_cli, monkeypatch, tmp_path, command):
    args, targets = COMMANDS[command]
    _no_run(monkeypatch, targets)
    out = tmp_path / "nodir" / "x.csv"
    res = run_cli(*args, "-o", out, "-q")
    assert res.exit_code == 2, res.stderr
    assert f"directory '{out.parent}' does not exist" in res.stderr and "mkdir -p" in res.stderr
    assert not (tmp_path / "nodir").exists()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_unknown_output_format_is_refused_before_the_run(run_cli, monkeypatch, tmp_path, command):
    args, targets = COMMANDS[command]
    _no_run(monkeypatch, targets)
    res = run_cli(*args, "-o", tmp_path / "x.xyz", "-q")
    assert res.exit_code == 2, res.stderr
    assert "cannot tell the output format" in res.stderr and "x.xyz" in res.stderr
    assert os.listdir(tmp_path) == []


def test_a_good_output_still_runs_and_is_written(run_cli, tmp_path):
    """The check refuses nothing that can be written: the same commands with a good path."""
    res = run_cli("simulate", MECH / "motor_fourbar.yaml", "--t-end", "0.01", "-o", tmp_path / "run.npz", "-q")
    assert res.exit_code == 0, res.stderr
    assert (tmp_path / "run.npz").is_file()
    res = run_cli("solve", MECH / "fourbar.yaml", "-f", "json", "-o", tmp_path / "noext", "-q")
    assert res.exit_code == 0, res.stderr  # --format csv|json names the format of a file without extension
    assert (tmp_path / "noext").read_text().lstrip().startswith("{")


def test_check_output_cases(tmp_path):
    assert check_output(tmp_path / "a.csv") == "csv"
    assert check_output(tmp_path / "a.NPZ") == "npz"
    assert check_output(tmp_path / "a", "json") == "json"
    assert check_output(os.devnull) == "csv"  # a device: written directly, csv unless told
    with pytest.raises(OutputError, match="it is a directory; give a file name in it"):
        check_output(tmp_path, "csv")
    with pytest.raises(OutputError, match="does not exist; create it first"):
        check_output(tmp_path / "missing" / "deeper" / "a.csv")
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OutputError, match="does not exist"):  # a file where the directory should be
        check_output(blocker / "a.csv")
    assert os.listdir(tmp_path) == ["file"]  # the check writes nothing


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_directory_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="no permission to create files"):
            check_output(locked / "a.csv")
    finally:
        locked.chmod(0o700)


def test_the_simulation_scratch_file_never_moves_quietly_to_another_disk(tmp_path):
    """TableSpool in a directory that does not exist is an error (it used to fall back to TMPDIR);
    the analysis reports it as an OutputError naming the directory."""
    from linkcli.analyses.simulate import SimulateRequest, simulate_stream
    from linkcli.cli.common import load_and_compile
    from linkcli.results import TableSpool

    with pytest.raises(FileNotFoundError):
        TableSpool(str(tmp_path / "gone"))
    loaded, mech = load_and_compile(MECH / "motor_fourbar.yaml")
    with pytest.raises(OutputError, match="scratch file.*gone.*exists and is writable"):
        simulate_stream(mech, SimulateRequest(t_end=0.01, dt=1e-3), loaded, scratch_dir=str(tmp_path / "gone"))


@pytest.mark.parametrize("fmt", ["npz", "parquet", ".NPZ"])
def test_format_npz_or_parquet_says_how_to_choose_them(run_cli, fmt):
    res = run_cli("solve", MECH / "fourbar.yaml", "--format", fmt)
    assert res.exit_code == 2
    assert "is not one of 'table', 'csv', 'json'" in res.stderr and "-o FILE.npz or -o FILE.parquet" in res.stderr


def test_format_choices_still_work(run_cli):
    res = run_cli("solve", MECH / "fourbar.yaml", "-f", "JSON")  # case-insensitive, as before
    assert res.exit_code == 0 and res.stdout.lstrip().startswith("{")
    res = run_cli("solve", MECH / "fourbar.yaml", "-f", "xml")
    assert res.exit_code == 2 and "'xml' is not one of" in res.stderr and "FILE.npz" not in res.stderr
