"""Ctrl-C or SIGTERM during a long ``simulate`` (issue 15): the run always goes in compiled
chunks of about 0.1 s, a signal is seen between two chunks, the rows computed so far are
written (marked interrupted in the metadata and on stderr) and the exit code is 130 / 143.
The rows kept are exactly those of an uninterrupted run (chunking never changes results)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from linkcli.analyses.simulate import SimulateRequest, run_simulate
from linkcli.cli.common import load_and_compile

REPO = Path(__file__).resolve().parent.parent
PENDULUM = REPO / "mechanisms" / "double_pendulum.yaml"


def test_stop_keeps_exactly_the_rows_of_an_uninterrupted_run():
    loaded, mech = load_and_compile(PENDULUM)
    calls = {"n": 0}

    def stop() -> bool:  # asked after every chunk: stop after the fifth
        calls["n"] += 1
        return calls["n"] >= 5

    req = SimulateRequest(t_end=1000.0, dt=1e-3, every=2)
    part = run_simulate(mech, req, loaded, stop=stop)
    assert not part.ok and part.summary["status"] == "interrupted"
    assert part.table.metadata["summary"]["status"] == "interrupted"
    assert any("interrupted at t = " in m for m in part.messages)
    n = part.table.n
    assert 1 < n < 1000.0 / 2e-3  # stopped early, with rows
    t = part.table["t [s]"]
    np.testing.assert_allclose(np.diff(t), 2e-3, rtol=1e-9)  # the saving grid, no gap
    full = run_simulate(mech, SimulateRequest(t_end=float(t[-1]), dt=1e-3, every=2), loaded)
    assert full.ok and full.table.n == n
    for header in part.table.headers():  # bit for bit: chunk boundaries change nothing
        np.testing.assert_array_equal(part.table[header], full.table[header], err_msg=header)


SCRIPT = r"""
import sys
import linkcli.core.dynamics.runner as runner
from linkcli.cli.app import main

done = runner._Chunks.done
def announce(self, k, k1, h):  # tell the test the run is under way (once)
    if not getattr(runner, "_announced", False):
        runner._announced = True
        print("running", flush=True)
    return done(self, k, k1, h)

runner._Chunks.done = announce
main(["simulate", sys.argv[1], "--t-end", "1e4", "--dt", "1e-3", "--every", "10", "-o", sys.argv[2]])
"""


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_simulate_writes_the_rows_so_far(tmp_path, sig, code):
    out = tmp_path / "run.json"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(PENDULUM), str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "running"  # no terminal: the run is not chunked for a bar
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert "interrupted at t = " in err and "Traceback" not in err
    doc = json.loads(out.read_text())
    assert doc["metadata"]["summary"]["status"] == "interrupted"
    t = doc["data"]["t [s]"]
    assert 1 <= len(t) < 1e4 / 1e-2 and t[-1] < 1e4
    assert [f.name for f in tmp_path.iterdir()] == ["run.json"]  # no temporary file left
