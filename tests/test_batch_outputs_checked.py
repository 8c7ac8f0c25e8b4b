"""``linkcli batch`` checks every output a job file names before any work (issue #11 review),
as ``solve/simulate/... -o`` do: an unknown extension or a folder that cannot be created (a
file in the way) is a job-file error at the line that names it (exit 3, file:line:col, the
job, the path and the fix); a bad ``--out-dir`` is a usage error (exit 2). Folders inside the
output folder that do not exist yet are created (``results/<job>/<file>.csv``): they are not
an error. ``run_batch`` (every executor, Dask included) is replaced by a function that fails
the test if called, so these tests see that nothing ran."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from linkcli.cli.common import ExitCode

MECH = Path(__file__).resolve().parent.parent / "mechanisms"
FOURBAR = MECH / "fourbar.yaml"


def _no_run(monkeypatch) -> None:
    import linkcli.batch

    def ran(*args, **kwargs):
        raise AssertionError("the batch ran before its outputs were checked")

    monkeypatch.setattr(linkcli.batch, "run_batch", ran)


def _job_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "jobs.yaml"
    path.write_text(body, encoding="utf-8")
    return path


STUDY = """    study:
      method: grid
      parameters: {{links.crank.mass: {{values: [1.0, 2.0]}}}}
      output: {output}
"""


def test_an_unknown_extension_is_refused_at_its_line_before_any_work(run_cli, monkeypatch, tmp_path):
    _no_run(monkeypatch)
    jobs = _job_file(tmp_path, f"""jobs:
  good:
    files: {FOURBAR}
  table:
    files: {FOURBAR}
    output: table.txt
  study:
    files: {FOURBAR}
""" + STUDY.format(output="studies/st.xlsx"))
    out = tmp_path / "out"
    r = run_cli("batch", jobs, "--out-dir", out)
    assert r.exit_code == ExitCode.INVALID_FILE, r.output
    assert re.search(rf"^{re.escape(str(jobs))}:6:5: error: jobs\.table\.output: job table \(its result table\): "
                     rf"cannot tell the format of '{re.escape(str(out / 'table.txt'))}' \('\.txt'\)\. "
                     r"Name the file \.csv or \.json", r.stderr, re.M), r.stderr
    assert re.search(r":12:7: error: jobs\.study\.study\.output: job study \(its study table\): cannot tell the "
                     r"format of .*st\.xlsx' \('\.xlsx'\)", r.stderr), r.stderr
    assert not out.exists()  # nothing ran, no folder made


def test_a_folder_that_cannot_be_created_is_refused_before_any_work(run_cli, monkeypatch, tmp_path):
    """A file where the output's folder should be (a table of an earlier run, say): the folder
    cannot be created, so the run would end in an unwritable table."""
    _no_run(monkeypatch)
    out = tmp_path / "out"
    out.mkdir()
    (out / "taken.csv").write_text("x\n1\n", encoding="utf-8")
    jobs = _job_file(tmp_path, f"""jobs:
  blocked:
    files: {FOURBAR}
    output: taken.csv/blocked.csv
""")
    r = run_cli("batch", jobs, "--out-dir", out)
    assert r.exit_code == ExitCode.INVALID_FILE, r.output
    assert re.search(rf"^{re.escape(str(jobs))}:4:5: error: jobs\.blocked\.output: job blocked \(its result "
                     rf"table\): cannot write '.*blocked\.csv': its folder '{re.escape(str(out / 'taken.csv'))}' "
                     r"cannot be created, .* exists and is not a directory; remove or rename it", r.stderr, re.M)
    assert (out / "taken.csv").read_text(encoding="utf-8") == "x\n1\n"  # untouched


def test_a_study_output_in_the_mechanism_files_own_study_block_is_located_there(monkeypatch, tmp_path):
    from linkcli.batch.plan import plan_job_file
    from linkcli.errors import MechanismFileError

    mech = tmp_path / "fourbar_study.yaml"
    mech.write_text(FOURBAR.read_text(encoding="utf-8") + "study:\n  method: grid\n  parameters:\n"
                    "    links.crank.mass: {values: [1.0, 2.0]}\n  output: st.doc\n", encoding="utf-8")
    jobs = _job_file(tmp_path, f"jobs:\n  s:\n    files: {mech}\n")
    with pytest.raises(MechanismFileError) as info:
        plan_job_file(jobs, str(tmp_path / "out"))
    (d,) = info.value.diagnostics
    lines = mech.read_text(encoding="utf-8").splitlines()
    assert d.file == str(mech) and d.key_path == ("study", "output") and lines[d.line - 1].strip() == "output: st.doc"
    assert "cannot tell the format" in d.message and "'.doc'" in d.message


def test_a_bad_out_dir_option_is_a_usage_error(run_cli, monkeypatch, tmp_path):
    _no_run(monkeypatch)
    (tmp_path / "afile").write_text("", encoding="utf-8")
    jobs = _job_file(tmp_path, f"jobs:\n  a:\n    files: {FOURBAR}\n")
    r = run_cli("batch", jobs, "--out-dir", tmp_path / "afile" / "out")
    assert r.exit_code == ExitCode.USAGE, r.output
    assert "the output folder: cannot write" in r.stderr and "exists and is not a directory" in r.stderr
    r = run_cli("batch", FOURBAR, "--out-dir", tmp_path / "afile" / "out")  # the short form too
    assert r.exit_code == ExitCode.USAGE, r.output


def test_a_junit_report_that_cannot_be_written_is_refused_before_any_work(run_cli, monkeypatch, tmp_path):
    _no_run(monkeypatch)
    (tmp_path / "afile").write_text("", encoding="utf-8")
    jobs = _job_file(tmp_path, f"jobs:\n  a:\n    files: {FOURBAR}\n")
    r = run_cli("batch", jobs, "--out-dir", tmp_path / "out", "--junit", tmp_path / "afile" / "report.xml")
    assert r.exit_code == ExitCode.USAGE, r.output
    assert f"cannot write '{tmp_path / 'afile' / 'report.xml'}'" in r.stderr and "not a directory" in r.stderr
    r = run_cli("batch", jobs, "--out-dir", tmp_path / "out", "--junit", tmp_path)  # a directory
    assert r.exit_code == ExitCode.USAGE and "is a directory" in r.stderr, r.output  # click says so
    assert not (tmp_path / "out").exists()


def test_the_out_dir_of_the_job_file_is_located_at_its_line(run_cli, monkeypatch, tmp_path):
    _no_run(monkeypatch)
    (tmp_path / "afile").write_text("", encoding="utf-8")
    jobs = _job_file(tmp_path, f"out_dir: afile/results\njobs:\n  a:\n    files: {FOURBAR}\n")
    r = run_cli("batch", jobs)
    assert r.exit_code == ExitCode.INVALID_FILE, r.output
    assert re.search(rf"^{re.escape(str(jobs))}:1:\d+: error: out_dir: the output folder: cannot write", r.stderr,
                     re.M), r.stderr


def test_a_dask_study_is_checked_before_the_cluster_starts(run_cli, monkeypatch, tmp_path):
    """The outputs are checked when the plan is made, before any executor exists: a study on
    --scheduler (here one that nothing listens on) is refused for its output at once."""
    _no_run(monkeypatch)
    jobs = _job_file(tmp_path, f"jobs:\n  st:\n    files: {FOURBAR}\n" + STUDY.format(output="st.xls"))
    r = run_cli("batch", jobs, "--out-dir", tmp_path / "out", "--scheduler", "tcp://127.0.0.1:9")
    assert r.exit_code == ExitCode.INVALID_FILE, r.output
    assert "jobs.st.study.output" in r.stderr and "'.xls'" in r.stderr


def test_good_outputs_in_new_folders_still_run(run_cli, tmp_path):
    """Folders inside the output folder are created, formats chosen by extension (.json, .npz)."""
    jobs = _job_file(tmp_path, f"""jobs:
  table:
    files: {FOURBAR}
    options: {{sweep: {{crank_pin: {{from: 0, to: 360, step: 90}}}}}}
    output: new/deeper/table.json
  study:
    files: {FOURBAR}
    options: {{sweep: {{crank_pin: {{from: 0, to: 360, step: 90}}}}}}
""" + STUDY.format(output="studies/st.npz"))
    out = tmp_path / "out"
    r = run_cli("batch", jobs, "--out-dir", out, "--jobs", "1", "--quiet")
    assert r.exit_code == 0, r.output
    table = json.loads((out / "new" / "deeper" / "table.json").read_text(encoding="utf-8"))
    assert table["format"] == "linkcli.table/1" and table["n_rows"] == 5  # 0, 90, ..., 360 deg
    from linkcli.io.writers import read_table_npz

    assert read_table_npz(out / "studies" / "st.npz").n == 2  # one row per variant
