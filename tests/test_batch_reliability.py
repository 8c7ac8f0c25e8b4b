"""What ``linkcli batch`` guarantees when things go wrong (README, "Interruptions, crashes and
time limits"): a dead worker costs only its own task, a time limit fails only its job or
variant, SIGTERM/SIGINT stop the run cleanly (no process left, finished work written and
marked), ``--resume`` gives the same table byte for byte as an uninterrupted run, one run at a
time per output folder, outputs stay in the output folder, and the JUnit report is valid XML
whatever the names and messages hold.

Timing: nothing here asserts a duration (the machine may be loaded). Waits poll with generous
bounds; a task that must be "slow" sleeps far longer (120 s) than any bound, and one that must
crash kills itself, so outcomes do not depend on speed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import batch_helpers
import pytest

from linkcli.cli.common import ExitCode

REPO = Path(__file__).resolve().parent.parent
FOURBAR = REPO / "mechanisms" / "fourbar.yaml"
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and /proc")


def study_jobs(tmp_path: Path, variants: int = 8, extra: str = "") -> Path:
    """A grid study of the four-bar's coupler length: `variants` variants, coarse sweep."""
    path = tmp_path / "jobs.yaml"
    path.write_text(f"""jobs:
  s:
    files: {FOURBAR}
    options: {{sweep: {{crank_pin: {{from: 0, to: 360, step: 30}}}}}}
    figures: [{{range_of_motion: O4}}, {{column: "B.transmission [deg]", stat: min}}]
    study:
      method: grid
      output: s.csv
      parameters:
        links.coupler.frames.B[0]: {{from: 3.3, to: 3.7, num: {variants}}}
{extra}""", encoding="utf-8")
    return path


def wait_for(predicate, bound_s: float = 120.0, what: str = "a condition"):
    """Poll ``predicate`` every 20 ms until it is true (returns its value) or ``bound_s`` passes."""
    end = time.monotonic() + bound_s
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {bound_s} s waiting for {what}")


# -- the process pool ------------------------------------------------------------------------------------
def test_a_dead_worker_costs_only_its_own_task():
    """kill -9 of a worker (here the task kills its own process) -> that task WorkerDied, every
    other task's result, and the pool keeps working."""
    from linkcli.batch.executors import ProcessExecutor, WorkerDied

    items = [1, 2, -1, 3, 4, 5, 6]
    with ProcessExecutor(2) as ex:
        out = {i: (res, exc) for i, res, exc in ex.run(batch_helpers.square_or_die, items)}
        again = sorted(res for _, res, _ in ex.run(batch_helpers.square_or_die, [7, 8, 9]))
    assert {i: r for i, (r, e) in out.items() if e is None} == {0: 1, 1: 4, 3: 9, 4: 16, 5: 25, 6: 36}
    died = out[2][1]
    assert isinstance(died, WorkerDied) and died.exitcode == -signal.SIGKILL
    assert "killed by signal 9 (SIGKILL)" in str(died)
    assert again == [49, 64, 81]


def test_a_task_past_its_time_limit_is_stopped_alone():
    from linkcli.batch.executors import ProcessExecutor, TaskTimedOut

    with ProcessExecutor(2) as ex:
        out = {i: (res, exc) for i, res, exc in ex.run(batch_helpers.square_or_die, [2, -2, 3, 4],
                                                         timeouts=[60, 0.5, 60, None])}
        again = sorted(res for _, res, _ in ex.run(batch_helpers.square_or_die, [5, 6, 7]))
    assert {i: r for i, (r, e) in out.items() if e is None} == {0: 4, 2: 9, 3: 16}
    assert isinstance(out[1][1], TaskTimedOut) and str(out[1][1]) == "timed out after 0.5 s"
    assert again == [25, 36, 49]  # the killed worker is replaced


def test_a_variant_that_kills_its_worker_is_pinned_on_itself(tmp_path, monkeypatch):
    """The chunk holding the crashing variant is split into single variants and each is tried
    again: only that variant fails, marked as a dead worker; the other rows equal an ordinary
    run's, byte for byte."""
    from linkcli.batch import runner
    from linkcli.batch.executors import InlineExecutor, ProcessExecutor
    from linkcli.batch.plan import plan_job_file

    jobs = study_jobs(tmp_path)
    good = runner.run_plan(plan_job_file(jobs, str(tmp_path / "good")), InlineExecutor(), chunk_size=4)
    monkeypatch.setattr(runner, "run_task", batch_helpers.crash_on_variant)
    with ProcessExecutor(2) as ex:
        report = runner.run_plan(plan_job_file(jobs, str(tmp_path / "crash")), ex, chunk_size=4)
    (res,) = report.results
    assert res.study["counts"] == {"passed": 7, "failed": 0, "invalid": 0, "error": 1}
    assert good.results[0].study["counts"]["passed"] == 8
    lines = (tmp_path / "crash" / "s.csv").read_text(encoding="utf-8").splitlines()
    good_lines = (tmp_path / "good" / "s.csv").read_text(encoding="utf-8").splitlines()
    k = batch_helpers.CRASH_VARIANT + 1  # + header
    assert lines[:k] + lines[k + 1:] == good_lines[:k] + good_lines[k + 1:]
    assert re.search(r"the worker process died \(killed by signal 9 \(SIGKILL\)\); tried 2 times", lines[k])


def test_time_limits_fail_only_their_job_and_variant(tmp_path, monkeypatch):
    from linkcli.batch import runner
    from linkcli.batch.executors import ProcessExecutor
    from linkcli.batch.plan import plan_job_file

    jobs = study_jobs(tmp_path, extra=f"""  {batch_helpers.SLOW_JOB}:
    files: {FOURBAR}
    timeout: 1
  fast:
    files: {FOURBAR}
    timeout: 60
""")
    monkeypatch.setattr(runner, "run_task", batch_helpers.slow_on_variant_or_job)
    plan = plan_job_file(jobs, str(tmp_path / "out"), timeout=2.0)  # the study takes the default
    assert {u.spec.uid: u.timeout for u in plan.units} == {"s": 2.0, "slow": 1.0, "fast": 60.0}
    with ProcessExecutor(2) as ex:
        report = runner.run_plan(plan, ex, chunk_size=4)
    by_id = {r.uid: r for r in report.results}
    assert by_id["fast"].status == "passed"
    assert by_id["slow"].status == "error" and by_id["slow"].message.startswith("timed out after 1 s")
    study = by_id["s"]
    assert study.study["counts"] == {"passed": 7, "failed": 0, "invalid": 0, "error": 1}
    row = (tmp_path / "out" / "s.csv").read_text(encoding="utf-8").splitlines()[batch_helpers.SLOW_VARIANT + 1]
    assert row.startswith(f"{batch_helpers.SLOW_VARIANT},") and "timed out after 2 s" in row


def test_job_file_timeout_through_the_command(run_cli, tmp_path):
    """`timeout:` in a job file: a limit no analysis can meet fails that job only (exit 1)."""
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f"jobs:\n  hurried: {{files: {FOURBAR}, timeout: 1.0e-6}}\n  calm: {{files: {FOURBAR}}}\n",
                    encoding="utf-8")
    r = run_cli("batch", jobs, "-j", "1", "--out-dir", tmp_path / "out", "-q")
    assert r.exit_code == ExitCode.ANALYSIS_FAILED, r.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    status = {j["id"]: (j["status"], j["message"]) for j in summary["jobs"]}
    assert status["calm"][0] == "passed"
    assert status["hurried"][0] == "error" and status["hurried"][1].startswith("timed out after 1e-06 s")


# -- interruption and resume ---------------------------------------------------------------------------
def _descendants(pid: int) -> set[int]:
    """Process ids below ``pid`` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def _workers(coordinator: int) -> set[int]:
    """The worker processes: children of the forkserver, the coordinator's child whose command
    line names multiprocessing.forkserver (workers are forks of it: same command line)."""
    servers = [p for p in _descendants(coordinator)
               if b"forkserver" in Path(f"/proc/{p}/cmdline").read_bytes()
               and int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1]) == coordinator]
    assert len(servers) == 1, servers
    return _descendants(servers[0])


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie has exited; only its parent's bookkeeping is left)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _rows_done(journal: Path) -> int:
    try:
        lines = journal.read_text(encoding="utf-8").splitlines()
    except OSError:
        return 0
    return sum(len(json.loads(ln)["rows"]) for ln in lines[:-1] if '"t":"rows"' in ln)


#: variants of the studies that _start_and_freeze stops mid-way: enough that the run is far from
#: done when its workers are frozen (a variant of this study takes ~1-3 ms with its task on the
#: study fast path, so 24 could all finish inside one 20 ms poll of the journal)
FROZEN_VARIANTS = 400


def _start_and_freeze(jobs: Path, out: Path):
    """Start `linkcli batch JOBS -j 2 --chunk-size 1` in a process; once 2 variants are in the
    journal, freeze its workers (SIGSTOP: the run cannot finish behind the test's back).
    Returns the process and the ids of every process below it."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "tests")]))
    cmd = [sys.executable, "-m", "linkcli", "batch", str(jobs), "-j", "2", "--chunk-size", "1", "--out-dir",
           str(out), "--junit", str(out / "report.xml")]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: _rows_done(out / ".batch-journal.jsonl") >= 2 or proc.poll() is not None, what="variants")
        assert proc.poll() is None, proc.communicate()
        tree = _descendants(proc.pid)
        for pid in _workers(proc.pid):  # the workers stop where they are
            os.kill(pid, signal.SIGSTOP)
    except BaseException:
        proc.kill()
        raise
    return proc, tree


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


@posix_only
@needs_proc
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_cleanly_and_resume_gives_the_same_table(run_cli, tmp_path, sig):
    """Run a 400-variant study on 2 workers, freeze it mid-way and send ``sig``. Then: exit code
    128 + sig, no process of the run left, summary.json and JUnit mark the study interrupted,
    the table holds the finished variants; `--resume` completes it and the table equals an
    uninterrupted run's byte for byte."""
    jobs = study_jobs(tmp_path, variants=FROZEN_VARIANTS)
    out = tmp_path / "out"
    proc, tree = _start_and_freeze(jobs, out)
    try:
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, stderr.decode()
    wait_for(lambda: not any(_running(p) for p in tree), 60, "the run's processes to end")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    (job,) = summary["jobs"]
    assert summary["interrupted"] == signal.Signals(sig).name and summary["ok"] is False
    assert job["status"] == "interrupted" and "--resume continues" in job["message"]
    case = ET.parse(out / "report.xml").getroot().find(".//testcase")
    assert case.find("error").get("type") == "interrupted"
    n_done = job["study"]["variants"]
    table = (out / "s.csv").read_text(encoding="utf-8").splitlines()
    assert 2 <= n_done < FROZEN_VARIANTS and len(table) == 1 + n_done
    assert f"interrupted ({signal.Signals(sig).name})" in stderr.decode()

    r = run_cli("batch", jobs, "-j", "1", "--out-dir", out, "--resume", "-q")
    assert r.exit_code == 0, r.output
    r = run_cli("batch", jobs, "-j", "1", "--out-dir", tmp_path / "whole", "-q")
    assert r.exit_code == 0, r.output
    assert (out / "s.csv").read_bytes() == (tmp_path / "whole" / "s.csv").read_bytes()
    assert not (out / ".batch-journal.jsonl").exists()  # a complete run leaves no journal


@posix_only
@needs_proc
def test_kill_9_of_the_coordinator_leaves_no_process_and_resume_completes(run_cli, tmp_path):
    """SIGKILL cannot be handled: the workers go with the coordinator (parent-death signal),
    the journal keeps the finished variants, and --resume gives the uninterrupted table."""
    jobs = study_jobs(tmp_path, variants=FROZEN_VARIANTS)
    out = tmp_path / "out"
    proc, tree = _start_and_freeze(jobs, out)
    proc.kill()
    proc.wait(timeout=120)  # not communicate(): the pipes close only when the last child is gone
    try:
        wait_for(lambda: not any(_running(p) for p in tree), 60, "the run's processes to end")
    finally:
        proc.stdout.close()
        proc.stderr.close()
        for p in tree:  # leave nothing behind if the assertion failed
            if _running(p):
                os.kill(p, signal.SIGKILL)
    assert _rows_done(out / ".batch-journal.jsonl") >= 2
    r = run_cli("batch", jobs, "-j", "1", "--out-dir", out, "--resume", "-q")
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["jobs"][0]["study"]["variants"] == FROZEN_VARIANTS
    r = run_cli("batch", jobs, "-j", "1", "--out-dir", tmp_path / "whole", "-q")
    assert (out / "s.csv").read_bytes() == (tmp_path / "whole" / "s.csv").read_bytes()


@posix_only
@needs_proc
def test_kill_9_of_a_worker_mid_study_changes_nothing(run_cli, tmp_path):
    """The attack of issue 15: kill -9 of one worker during a study. The run goes on with a new
    worker, the lost task is run again, and the table equals an undisturbed run's."""
    jobs = study_jobs(tmp_path, variants=FROZEN_VARIANTS)
    out = tmp_path / "out"
    proc, tree = _start_and_freeze(jobs, out)
    try:
        workers = sorted(_workers(proc.pid))
        os.kill(workers[0], signal.SIGKILL)
        for pid in workers[1:]:
            os.kill(pid, signal.SIGCONT)
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr.decode()
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["jobs"][0]["study"]["counts"]["passed"] == FROZEN_VARIANTS
    r = run_cli("batch", jobs, "-j", "1", "--out-dir", tmp_path / "whole", "-q")
    assert r.exit_code == 0, r.output
    assert (out / "s.csv").read_bytes() == (tmp_path / "whole" / "s.csv").read_bytes()


class _StopAfterFirst:
    """An inline executor that is "interrupted" after its first result (as a signal would)."""

    kind, workers = "inline", 1

    def run(self, fn, items, timeouts=None):
        from linkcli.batch.interrupts import Interrupted

        for i, item in enumerate(items):
            yield i, fn(item), None
            raise Interrupted(signal.SIGTERM)

    def describe(self):
        return {"kind": self.kind, "workers": 1}


def test_resume_keeps_finished_jobs_and_reruns_the_rest(tmp_path):
    from linkcli.batch.executors import InlineExecutor
    from linkcli.batch.plan import plan_job_file
    from linkcli.batch.runner import run_plan

    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f"""jobs:
  a: {{files: {FOURBAR}, options: {{sweep: {{crank_pin: {{from: 0, to: 90, step: 30}}}}}}}}
  b: {{files: {FOURBAR}, analysis: jacobian, options: {{set: {{crank_pin: 30}}}}}}
""", encoding="utf-8")
    out = str(tmp_path / "out")
    first = run_plan(plan_job_file(jobs, out), _StopAfterFirst())
    assert first.interrupted == "SIGTERM" and [r.status for r in first.results] == ["passed", "interrupted"]
    mtime = os.stat(os.path.join(out, "a.csv")).st_mtime_ns
    second = run_plan(plan_job_file(jobs, out), InlineExecutor(), resume=True)
    assert second.interrupted is None and second.reused == 1 and second.ok
    assert os.stat(os.path.join(out, "a.csv")).st_mtime_ns == mtime  # not computed again
    assert second.results[0].figures == first.results[0].figures
    # an edited job runs again: its key (options, file hash ...) changed
    jobs.write_text(jobs.read_text(encoding="utf-8").replace("to: 90", "to: 120"), encoding="utf-8")
    third = run_plan(plan_job_file(jobs, out), InlineExecutor(), resume=True)
    assert third.reused == 0


# -- one run per output folder ---------------------------------------------------------------------------
def test_a_second_run_into_the_same_folder_is_refused(run_cli, tmp_path):
    from linkcli.batch.interrupts import OutDirLock

    out = tmp_path / "out"
    with OutDirLock(str(out)):
        r = run_cli("batch", FOURBAR, "--out-dir", out, "-j", "1")
    assert r.exit_code == ExitCode.USAGE
    assert re.search(r"another linkcli batch \(pid \d+\) is writing to '.*out'", r.stderr)
    assert not (out / "summary.json").exists()
    assert run_cli("batch", FOURBAR, "--out-dir", out, "-j", "1", "-q").exit_code == 0  # released


# -- outputs stay in the output folder -------------------------------------------------------------------
@pytest.mark.parametrize("key, value, problem", [
    ("output", "../escape.csv", "goes up out of the output folder"),
    ("output", "../../escape.csv", "goes up out of the output folder"),
    ("output", "sub/../../escape.csv", "goes up out of the output folder"),
    ("output", "/tmp/escape.csv", "is an absolute path"),
    ("study", "../escape.csv", "goes up out of the output folder"),
])
def test_job_outputs_outside_the_folder_are_refused_at_their_line(run_cli, tmp_path, key, value, problem):
    if key == "output":
        text = f"jobs:\n  a:\n    files: {FOURBAR}\n    output: {value}\n"
        where = "jobs.a.output"
    else:
        text = (f"jobs:\n  a:\n    files: {FOURBAR}\n    study:\n      method: list\n      output: {value}\n"
                "      parameters: {\"links.coupler.frames.B[0]\": {values: [3.5]}}\n")
        where = "jobs.a.study.output"
    jobs = tmp_path / "deep" / "jobs.yaml"
    jobs.parent.mkdir()
    jobs.write_text(text, encoding="utf-8")
    r = run_cli("batch", jobs, "--out-dir", tmp_path / "deep" / "out")
    assert r.exit_code == ExitCode.INVALID_FILE, r.output
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if value in ln)
    assert re.search(rf"jobs\.yaml:{line}:\d+: error: {re.escape(where)}: '{re.escape(value)}' {problem}", r.stderr)
    assert not list(tmp_path.rglob("escape.csv")) and not (tmp_path / "deep" / "out").exists()


def test_mechanism_file_study_output_outside_is_refused(run_cli, tmp_path):
    text = FOURBAR.read_text(encoding="utf-8") + (
        "study:\n  method: list\n  output: ../escape.csv\n"
        "  parameters: {\"links.coupler.frames.B[0]\": {values: [3.5]}}\n")
    mech = tmp_path / "fb.yaml"
    mech.write_text(text, encoding="utf-8")
    r = run_cli("batch", mech, "--out-dir", tmp_path / "out", "-j", "1", "-q")
    assert r.exit_code == ExitCode.ANALYSIS_FAILED
    (job,) = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))["jobs"]
    line = text.splitlines().index("  output: ../escape.csv") + 1
    assert job["status"] == "error" and re.search(rf"fb\.yaml:{line}:\d+: error: study\.output: ", job["message"])
    assert not (tmp_path / "escape.csv").exists()


@posix_only
def test_symlinks_in_the_output_folder_are_not_followed_out(run_cli, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "j").symlink_to(outside, target_is_directory=True)  # out/j/<file>.csv would land outside
    (out / "k.csv").symlink_to(outside / "k.csv")
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f"jobs:\n  j: {{files: [{FOURBAR}, {REPO / 'mechanisms' / 'parallelogram.yaml'}]}}\n"
                    f"  k: {{files: {FOURBAR}}}\n", encoding="utf-8")
    r = run_cli("batch", jobs, "--out-dir", out, "-j", "1", "-q")
    assert r.exit_code == ExitCode.ANALYSIS_FAILED
    jobs_out = {j["id"]: j for j in json.loads((out / "summary.json").read_text(encoding="utf-8"))["jobs"]}
    assert jobs_out["j/fourbar"]["status"] == "error"
    assert "is a symbolic link that leads out of the output folder" in jobs_out["j/fourbar"]["message"]
    assert jobs_out["k"]["status"] == "error"
    assert list(outside.iterdir()) == []


# -- JUnit -------------------------------------------------------------------------------------------------
def test_junit_escapes_characters_xml_forbids():
    from linkcli.batch.report import junit_xml
    from linkcli.batch.runner import BatchReport
    from linkcli.batch.worker import UnitResult

    nasty = "x\x1b[2J\x1b]0;PWNED\x07\x00\x0b\ufffe end"
    res = UnitResult(f"job{nasty}", f"job{nasty}", f"f{nasty}.yaml", "solve", "failed", 0.1, f"msg {nasty}",
                     details=f"details {nasty}")
    text = junit_xml(BatchReport([res], "out"))
    root = ET.fromstring(text.encode("utf-8"))  # a strict XML 1.0 parser accepts it
    case = root.find(".//testcase")
    assert case.get("name") == "job" + r"x\x1b[2J\x1b]0;PWNED\x07\x00\x0b\ufffe end"
    failure = case.find("failure")
    assert r"msg x\x1b[2J" in failure.get("message") and r"details x\x1b" in failure.text
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f]", text)


# -- checks that do not apply, units of columns ------------------------------------------------------------
def test_readme_short_form_example_passes_and_says_what_it_skipped(run_cli, tmp_path):
    """The short-form command of README's batch section, as printed (globs expanded like a
    shell, the output folder moved to tmp, -j 1 to stay in this process)."""
    import glob
    import shlex

    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Batch runs and parameter studies"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    line = next(ln for ln in block.replace("\\\n", " ").splitlines() if "# short form" in ln)
    args = shlex.split(line.split("#")[0])
    assert args[:2] == ["linkcli", "batch"]
    expanded = []
    for a in args[2:]:
        expanded += sorted(glob.glob(str(REPO / a))) if "*" in a else [a]
    expanded[expanded.index("--out-dir") + 1] = str(tmp_path / "results")
    r = run_cli("batch", *expanded, "-j", "1")
    assert r.exit_code == 0, r.stderr
    jobs = {j["id"]: j for j in json.loads((tmp_path / "results" / "summary.json").read_text(encoding="utf-8"))["jobs"]}
    statuses = {name: [c["status"] for c in j["checks"]] for name, j in jobs.items()}
    assert statuses["fourbar"] == ["passed", "passed"]
    assert statuses["fivebar"] == ["skipped", "skipped"]  # a five-bar has no four-bar loop
    skipped = "check min_transmission_angle >= 40 skipped: the mechanism has no four-bar loop"
    assert skipped in jobs["fivebar"]["message"]
    # motor_fourbar.yaml is in rad: 'B.transmission [deg]' is checked on its column in rad, converted;
    # same geometry as fourbar.yaml, whose closed-form minimum is 54.31 deg (test_batch.py)
    motor = jobs["motor_fourbar"]["checks"][1]
    assert motor["status"] == "passed" and motor["value"] == pytest.approx(54.3147, abs=1e-3)


def test_unit_factor_covers_the_units_that_follow_the_file():
    import math

    from linkcli.batch.figures import unit_factor

    assert unit_factor("rad", "deg") == pytest.approx(180 / math.pi, rel=1e-15)
    assert unit_factor("mm/s", "m/s") == pytest.approx(1e-3, rel=1e-15)
    assert unit_factor("in", "mm") == pytest.approx(25.4, rel=1e-15)
    assert unit_factor("deg/s^2", "rad/s^2") == pytest.approx(math.pi / 180, rel=1e-15)
    assert unit_factor("deg/s", "rad") is None and unit_factor("m", "deg") is None
    assert unit_factor("N m", "N m") is None  # fixed SI units never differ between files


def test_shortcuts_that_do_not_apply_are_skipped(run_cli, tmp_path):
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f"""jobs:
  arm:
    files: {REPO / 'mechanisms' / 'planar_3r.yaml'}
    checks: [{{max_loop_residual: 1.0e-9}}, {{min_transmission_angle: 40}}, {{max_driver_torque: 1}}]
  fourbar_jacobian:
    files: {FOURBAR}
    analysis: jacobian
    options: {{set: {{crank_pin: 30}}}}
    checks: [{{min_transmission_angle: 40}}]
""", encoding="utf-8")
    r = run_cli("batch", jobs, "-j", "1", "--out-dir", tmp_path / "out", "-q")
    assert r.exit_code == ExitCode.ANALYSIS_FAILED
    out = {j["id"]: j for j in json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))["jobs"]}
    assert out["arm"]["status"] == "passed"
    assert [(c["status"], c["message"]) for c in out["arm"]["checks"]] == [
        ("skipped", "the mechanism has no closed loop"), ("skipped", "the mechanism has no four-bar loop"),
        ("skipped", "the mechanism has no drivers")]
    # it applies to the four-bar, but a jacobian does not compute transmission angles: a failure that says so
    (check,) = out["fourbar_jacobian"]["checks"]
    assert check["status"] == "failed" and "they come with analysis solve or forces" in check["message"]


def test_a_column_check_that_cannot_exist_is_a_job_file_error(run_cli, tmp_path):
    text = f"""jobs:
  typo:
    files: {FOURBAR}
    checks:
      - {{column: "B.transmision [deg]", min: 40}}
  no_fourbar:
    files: [{FOURBAR}, {REPO / 'mechanisms' / 'planar_3r.yaml'}]
    checks:
      - {{column: "coupler.P.y [m]", max: 3}}
      - {{column: "B.transmission [deg]", min: 40}}
"""
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(text, encoding="utf-8")
    r = run_cli("batch", jobs, "-j", "1", "--out-dir", tmp_path / "out")
    assert r.exit_code == ExitCode.INVALID_FILE, r.output
    assert re.search(r"jobs\.yaml:5:\d+: error: jobs\.typo\.checks\[0\]\.column: no column 'B\.transmision \[deg\]' "
                     r"in the results of solve on fourbar\.yaml\. Did you mean 'B\.transmission \[deg\]'\?", r.stderr)
    assert re.search(r"jobs\.yaml:9:\d+: error: jobs\.no_fourbar\.checks\[0\]\.column: no column 'coupler\.P\.y \[m\]' "
                     r"in the results of solve on planar_3r\.yaml", r.stderr)
    assert re.search(r"jobs\.yaml:10:\d+: error: jobs\.no_fourbar\.checks\[1\]\.column: .* on planar_3r\.yaml",
                     r.stderr)
    assert not (tmp_path / "out" / "summary.json").exists()  # nothing ran


def test_a_short_form_check_no_file_can_meet_is_a_usage_error(run_cli, tmp_path):
    r = run_cli("batch", FOURBAR, REPO / "mechanisms" / "planar_3r.yaml", "--check", "B.transmision [deg]>=40",
               "--out-dir", tmp_path)
    assert r.exit_code == ExitCode.USAGE
    assert "no file's results have a column 'B.transmision [deg]'. Did you mean 'B.transmission [deg]'?" in r.stderr
