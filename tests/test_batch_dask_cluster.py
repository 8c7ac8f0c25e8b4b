"""A study on a real dask.distributed cluster started the way a user starts one: ``dask
scheduler`` and ``dask worker`` as separate processes on localhost (README: "Studies on a
cluster"). The worker imports linkcli from this checkout (PYTHONPATH), receives tasks over TCP
and must give exactly the table of the local run. Skipped when dask.distributed or its ``dask``
command is not installed; every wait is bounded (the cluster is stopped in any case).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from linkcli.cli.app import app  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FOURBAR = REPO / "mechanisms" / "fourbar.yaml"
START_TIMEOUT_S = 90  # scheduler + worker start-up on a busy 2-core machine (~5-20 s measured)


def _dask_command() -> list[str] | None:
    exe = Path(sys.executable).with_name("dask")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("dask")
    return [found] if found else None


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    dask = _dask_command()
    if dask is None:
        pytest.skip("the `dask` command (dask.distributed) is not installed")
    folder = tmp_path_factory.mktemp("cluster")
    sched_file = folder / "scheduler.json"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    log = open(folder / "cluster.log", "w")  # noqa: SIM115 - closed below
    procs = [subprocess.Popen(dask + ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                      "--scheduler-file", str(sched_file)], env=env, stdout=log, stderr=log)]
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sched_file.exists(), "dask scheduler did not start: " + (folder / "cluster.log").read_text()
        time.sleep(0.2)  # the file is written at once, but be safe about a partial write
        address = json.loads(sched_file.read_text())["address"]
        procs.append(subprocess.Popen(dask + ["worker", "--scheduler-file", str(sched_file), "--nworkers", "1",
                                              "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
                                      env=env, stdout=log, stderr=log, cwd=folder))
        from distributed import Client

        with Client(address, timeout=START_TIMEOUT_S) as client:
            client.wait_for_workers(1, timeout=START_TIMEOUT_S)
        yield address
    finally:
        for p in reversed(procs):
            _stop(p)
        log.close()


def test_study_on_a_separately_started_cluster_equals_the_local_run(runner, tmp_path, cluster):
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f"""jobs:
  tol:
    files: {FOURBAR}
    options: {{sweep: {{crank_pin: {{from: 0, to: 360, step: 15}}}}}}
    figures:
      - {{name: dev, path_deviation: coupler.P}}
      - {{range_of_motion: O4}}
      - {{grashof: true}}
    checks:
      - {{figure: dev, max: 0.01}}
    study:
      method: normal
      variants: 20
      seed: 11
      pass_fraction: 0.5
      parameters:
        links.coupler.frames.B[0]: {{tolerance: 0.03}}
        links.rocker.frames.B[0]: {{tolerance: 0.02}}
""", encoding="utf-8")
    local = runner.invoke(app, ["batch", str(jobs), "--jobs", "1", "--out-dir", str(tmp_path / "local"), "-q"])
    remote = runner.invoke(app, ["batch", str(jobs), "--scheduler", cluster, "--chunk-size", "6",
                                 "--out-dir", str(tmp_path / "remote"), "-q"])
    assert local.exit_code == remote.exit_code == 0, local.output + remote.output
    table = (tmp_path / "local" / "tol.csv").read_text()
    assert (tmp_path / "remote" / "tol.csv").read_text() == table
    assert len(table.splitlines()) == 21  # header + 20 variants
    summary = json.loads((tmp_path / "remote" / "summary.json").read_text())
    assert summary["executor"]["kind"] == "dask" and summary["executor"]["workers"] == 1
