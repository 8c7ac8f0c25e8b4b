"""Batch simulate jobs stream their rows (issue #11): the job runs ``simulate_stream`` (rows in a
scratch file, block by block), its worker writes the output file itself, figures and checks read
one column at a time. The files, figures and checks are those of the in-memory path the batch
used before (``run_simulate``, then the coordinator's ``write_table``), byte for byte."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

from linkcli.batch.executors import InlineExecutor
from linkcli.batch.plan import plan_job_file
from linkcli.batch.runner import remove_partial_output, run_plan
from linkcli.results import TableStream

MECH = Path(__file__).resolve().parent.parent / "mechanisms"
FILES = ("motor_fourbar.yaml", "double_pendulum.yaml")


def _jobs(tmp_path: Path, fmt: str) -> Path:
    jobs = tmp_path / "jobs.yaml"
    files = ", ".join(str(MECH / f) for f in FILES)
    jobs.write_text(f"""
jobs:
  sim:
    files: [{files}]
    analysis: simulate
    options: {{t_end: 0.6, dt: 2.0e-3, every: 1}}
    output: "sim.{fmt}"
    figures:
      - {{column: "energy.total [J]", stat: mean}}
      - {{column: "energy.kinetic [J]", stat: std}}
      - {{column: "energy.potential [J]", stat: rms}}
      - {{column: "*.q [deg]", stat: range}}
      - {{column: "t [s]", stat: last}}
    checks: [{{max_loop_residual: 1.0e-6}}, {{column: "energy.kinetic [J]", max: 1.0e6}}]
""", encoding="utf-8")
    return jobs


@pytest.fixture
def small_blocks(monkeypatch):
    """Streamed simulations in blocks of 97 rows (the runs below are 301 rows: four blocks, the
    last one short), and joining a streamed table fails: the job never holds its table."""
    import linkcli.analyses.simulate as sim

    monkeypatch.setattr(sim, "simulate_stream", functools.partial(sim.simulate_stream, block_rows=97))

    def whole(self):
        raise AssertionError("a batch simulate job joined its whole table")

    monkeypatch.setattr(TableStream, "materialize", whole)


def _before(unit):
    """The job's table and figures on the in-memory path the batch used before this change."""
    from linkcli.analyses.simulate import run_simulate
    from linkcli.batch.analyses import simulate_request
    from linkcli.batch.figures import evaluate_checks, evaluate_figures
    from linkcli.compile import compile_mechanism
    from linkcli.io.loader import load_mechanism

    loaded = load_mechanism(unit.source.path)
    mech = compile_mechanism(loaded.model)
    table = run_simulate(mech, simulate_request(loaded, unit.spec.options), loaded, many=True).table
    figures = evaluate_figures(unit.spec.figures, table, mech)
    return table, figures, evaluate_checks(unit.spec.checks, table, mech, figures)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_batch_simulate_job_writes_the_in_memory_paths_bytes(tmp_path, small_blocks, fmt):
    from linkcli.io.writers import write_table

    out = tmp_path / "out"
    plan = plan_job_file(_jobs(tmp_path, fmt), str(out))
    report = run_plan(plan, InlineExecutor())
    assert [r.status for r in report.results] == ["passed", "passed"], [r.message for r in report.results]
    for unit, res in zip(plan.units, report.results, strict=True):
        assert res.table is None and res.output == unit.output  # written by the worker, not sent back
        table, figures, checks = _before(unit)
        assert table.n == 301
        write_table(table, tmp_path / f"before.{fmt}")
        assert Path(res.output).read_bytes() == (tmp_path / f"before.{fmt}").read_bytes()
        assert res.figures == figures  # the same floats: whole columns, numpy's own sums
        assert res.checks == checks
    # the outputs and nothing else (scratch files are anonymous; the journal is removed at the end)
    assert sorted(p.name for p in out.iterdir()) == sorted(f"sim-{Path(f).stem}.{fmt}" for f in FILES)


def test_a_table_that_goes_to_another_machine_travels_whole(tmp_path):
    """A Dask worker (no output for the worker to write) sends the table back whole: the same
    table as the in-memory path's, written by the coordinator."""
    from linkcli.batch.worker import UnitTask, run_unit

    plan = plan_job_file(_jobs(tmp_path, "csv"), str(tmp_path / "out"))
    unit = plan.units[0]
    res = run_unit(UnitTask(unit.spec, unit.source))
    before, figures, _ = _before(unit)
    assert not isinstance(res.table, TableStream) and res.table.headers() == before.headers()
    for h in before.headers():
        np.testing.assert_array_equal(res.table[h], before[h])
    assert res.figures == figures and res.output is None


def test_an_output_that_cannot_be_written_is_an_error_run_again_on_resume(tmp_path):
    out = tmp_path / "out"
    plan = plan_job_file(_jobs(tmp_path, "csv"), str(out))
    (out / "sim-motor_fourbar.csv").mkdir(parents=True)  # after the plan's checks: a folder where the file goes
    report = run_plan(plan, InlineExecutor())
    bad = report.results[0]
    assert bad.status == "error" and "cannot write the results" in bad.message and "directory" in bad.message
    assert bad.lost and bad.output is None  # not journalled: --resume runs it again
    assert report.results[1].status == "passed"


def test_a_killed_writers_temporary_file_is_removed_and_nothing_else(tmp_path):
    output = tmp_path / "run.csv"
    keep = [output, tmp_path / ".run.csv.notmine", tmp_path / ".other.csv.abcd1234.tmp", tmp_path / "x.tmp"]
    partial = [tmp_path / ".run.csv.k2_x9q0a.tmp", tmp_path / ".run.csv.a1b2c3d4.npz"]
    for p in keep + partial:
        p.write_text("x", encoding="utf-8")
    assert sorted(remove_partial_output(str(output))) == sorted(str(p) for p in partial)
    assert all(p.exists() for p in keep) and not any(p.exists() for p in partial)


def test_summary_figures_match_through_the_command(run_cli, tmp_path, small_blocks):
    r = run_cli("batch", _jobs(tmp_path, "csv"), "-j", "1", "--out-dir", tmp_path / "out", "-q")
    assert r.exit_code == 0, r.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    for job in summary["jobs"]:
        assert job["status"] == "passed" and Path(job["output"]).name.endswith(".csv")


def test_local_worker_processes_write_the_same_files(tmp_path):
    from linkcli.batch.executors import ProcessExecutor

    jobs = _jobs(tmp_path, "csv")
    with ProcessExecutor(2) as ex:
        report = run_plan(plan_job_file(jobs, str(tmp_path / "pool")), ex)
    inline = run_plan(plan_job_file(jobs, str(tmp_path / "inline")), InlineExecutor())
    for a, b in zip(report.results, inline.results, strict=True):
        assert a.status == b.status == "passed" and a.table is None
        assert Path(a.output).read_bytes() == Path(b.output).read_bytes()
        assert a.figures == b.figures
