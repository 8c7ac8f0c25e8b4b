"""The Dask path: a real ``distributed.LocalCluster`` on loopback (one worker, two threads, no
dashboard: light enough for a 2-core machine) gives exactly the results of the local run.
Skipped when dask.distributed is not installed (``pip install 'linkcli[dask]'``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("distributed")


REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "batch"
FOURBAR = REPO / "mechanisms" / "fourbar.yaml"


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None,
                           host="127.0.0.1", protocol="tcp", scheduler_port=0)
    try:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        yield cluster.scheduler_address
    finally:
        cluster.close()


def test_study_on_dask_equals_the_local_run(run_cli, tmp_path, scheduler):
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f"""jobs:
  tol:
    files: {FOURBAR}
    options: {{sweep: {{crank_pin: {{from: 0, to: 360, step: 30}}}}}}
    figures:
      - {{name: dev, path_deviation: coupler.P}}
      - {{column: "B.transmission [deg]", stat: min}}
      - {{grashof: true}}
    checks:
      - {{figure: dev, max: 0.01}}
    study:
      method: normal
      variants: 12
      seed: 5
      pass_fraction: 0.5
      parameters:
        links.coupler.frames.B[0]: {{tolerance: 0.03}}
        links.crank.frames.A[0]: {{tolerance: 0.01}}
""", encoding="utf-8")
    local = run_cli("batch", jobs, "--jobs", "1", "--out-dir", tmp_path / "local", "-q")
    dask = run_cli("batch", jobs, "--scheduler", scheduler, "--chunk-size", "5", "--out-dir", tmp_path / "dask", "-q")
    assert local.exit_code == dask.exit_code == 0, local.output + dask.output
    assert (tmp_path / "dask" / "tol.csv").read_text() == (tmp_path / "local" / "tol.csv").read_text()
    summary = json.loads((tmp_path / "dask" / "summary.json").read_text())
    assert summary["executor"]["kind"] == "dask" and summary["executor"]["workers"] == 2
    assert summary["jobs"][0]["study"]["variants"] == 12


def test_job_mix_on_dask_has_the_local_statuses_and_files(run_cli, tmp_path, scheduler):
    local = run_cli("batch", DATA / "jobs_mix.yaml", "--jobs", "1", "--out-dir", tmp_path / "local", "-q")
    dask = run_cli("batch", DATA / "jobs_mix.yaml", "--scheduler", scheduler, "--out-dir", tmp_path / "dask", "-q",
                  "--junit", tmp_path / "dask" / "report.xml")
    assert local.exit_code == dask.exit_code == 1

    def statuses(folder):
        return {j["id"]: (j["status"], j["message"]) for j in json.loads((folder / "summary.json").read_text())["jobs"]}

    assert statuses(tmp_path / "dask") == statuses(tmp_path / "local")
    assert (tmp_path / "dask" / "good.csv").read_text() == (tmp_path / "local" / "good.csv").read_text()
    assert (tmp_path / "dask" / "report.xml").is_file()


def _fails_on_two(x):
    if x == 2:
        raise RuntimeError("boom")
    return x * 10


def test_a_task_that_raises_is_reported_not_fatal(scheduler):
    from linkcli.batch.executors import DaskExecutor

    ex = DaskExecutor(scheduler)
    try:
        out = {i: (res, exc) for i, res, exc in ex.run(_fails_on_two, [0, 1, 2, 3])}
    finally:
        ex.close()
    assert {i: r for i, (r, _) in out.items() if i != 2} == {0: 0, 1: 10, 3: 30}
    assert isinstance(out[2][1], RuntimeError) and "boom" in str(out[2][1])
