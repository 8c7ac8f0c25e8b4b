"""Options that contradict each other are refused (tryout 6, item 8), never quietly resolved: exit 2
(a usage error, as every bad option) with a message naming the options, their values and the fix.

- ik ``--mode full`` with a target without orientation (was: solved for angle 0, target.angle nan);
- ik an orientation with ``--mode position`` / ``xy`` (was: the angle ignored);
- solve/forces/animate ``--set X=..`` with ``--sweep X=..`` (was: the --set dropped), and the
  same in one batch job's options; a file's ``analysis.solve.set`` still yields to a sweep given
  over it (planar_3r sets elbow: 45 and ``--sweep elbow=...`` sweeps it);
- ik ``--guess`` outside the joint's limits (was: accepted; the solver keeps joints inside
  them, so it could not start there: refused like any value that cannot be used)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import linkcli.api as api
from linkcli.analyses.ik import IKRequest, run_ik
from linkcli.cli.common import ExitCode
from linkcli.errors import AnalysisInputError

MECH = Path(__file__).resolve().parent.parent / "mechanisms"
ARM = MECH / "planar_3r.yaml"  # limits: shoulder +-180, elbow +-150, wrist +-120 deg
PUMA = MECH / "puma560.yaml"
FOURBAR = MECH / "fourbar.yaml"


@pytest.mark.parametrize("file,args,needles", [
    (ARM, ["--target", "1,1", "--mode", "full"], ["--target 1,1 --mode full", "--target 1,1,0", "--mode position"]),
    (PUMA, ["--target", "0.5,0.1,0.3", "--mode", "full"], ["--mode full", "ROLL,PITCH,YAW", "0.5,0.1,0.3,0,0,0"]),
    (ARM, ["--target", "1,1,30", "--mode", "position"], ["--target 1,1,30 --mode position", "30 deg",
                                                          "ignored", "--target 1,1", "--mode full"]),
    (ARM, ["--target", "1,1,30", "--mode", "xy"], ["--mode xy", "ignored"]),
    (PUMA, ["--target", "0.5,0.1,0.3,0,90,0", "--mode", "position"], ["0,90,0 deg", "--target 0.5,0.1,0.3"]),
    # the second target contradicts: refused before the first is solved
    (ARM, ["--target", "1,1,0", "--target", "1,1", "--mode", "full"], ["--target 1,1 --mode full"]),
    (ARM, ["--target", "1,1", "--guess", "elbow=400"], ["--guess elbow=400", "[-150, 150] deg", "elbow=150"]),
    (ARM, ["--target", "1,1", "--guess", "wrist=-121deg"], ["--guess wrist=-121", "[-120, 120] deg", "wrist=-120"]),
])
def test_ik_refuses_contradictory_options(run_cli, file, args, needles):
    r = run_cli("ik", file, *args)
    assert r.exit_code == ExitCode.USAGE, r.output
    assert "Traceback" not in r.output
    for needle in needles:
        assert needle in r.stderr, (needle, r.stderr)


@pytest.mark.parametrize("command", ["solve", "forces", "animate"])
def test_set_and_sweep_of_one_variable_are_refused(run_cli, tmp_path, command):
    extra = ["-o", str(tmp_path / "a.gif")] if command == "animate" else []
    r = run_cli(command, FOURBAR, "--set", "crank_pin=10", "--sweep", "crank_pin=0:10:5", *extra)
    assert r.exit_code == ExitCode.USAGE, r.output
    assert "--set crank_pin=10 and --sweep crank_pin=0:10:5" in r.stderr and "drop the --set" in r.stderr
    assert not (tmp_path / "a.gif").exists()


def test_set_of_another_variable_and_file_set_under_a_sweep_still_work(run_cli):
    """Only values and sweeps given together are refused: the file's analysis.solve sets elbow: 45
    and wrist: -30, a sweep of elbow given over it takes the sweep's values (the command line wins)."""
    from linkcli.analyses.inputs import Sweep, check_not_swept

    check_not_swept({"wrist": -30.0}, [Sweep("elbow", 0, 10, 5)])  # no error: another variable
    r = run_cli("solve", ARM, "--sweep", "elbow=0:10:5", "--set", "wrist=-20", "-f", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)["data"]
    assert data["elbow.q [deg]"] == [0.0, 5.0, 10.0] and data["wrist.q [deg]"] == [-20.0] * 3


def test_batch_job_with_set_and_sweep_of_one_variable_is_refused():
    from types import SimpleNamespace

    from linkcli.batch.analyses import solve_request

    loaded = SimpleNamespace(model=SimpleNamespace(analysis=SimpleNamespace(solve=None)))
    rng = SimpleNamespace(from_=0.0, to=10.0, step=5.0, num=None)
    options = SimpleNamespace(set={"crank_pin": 10.0}, sweep={"crank_pin": rng}, rates={}, accelerations={},
                              mode="grid", output_frames=None, model_fields_set={"set", "sweep"})
    with pytest.raises(AnalysisInputError, match=r"options.set crank_pin=10 and options.sweep crank_pin=0:10:5"):
        solve_request(loaded, options)


def test_ik_within_limits_and_consistent_mode_still_solves():
    """The checks refuse only contradictions: a guess at the limit and a full target with its angle solve."""
    mech = api.load(ARM)
    out = run_ik(mech.compiled, IKRequest([[1.0, 1.0, 30.0]], "full", {"elbow": 150.0}))
    assert out.ok and out["mode"][0] == "full" and out["target.angle [deg]"][0] == 30.0
    assert abs(out["reached.angle [deg]"][0] - 30.0) < 1e-6  # the requested orientation, reached
