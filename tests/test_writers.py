"""ResultTable and the CSV/JSON writers: headers, round trips (NaN, strings that need quoting,
exact floats), atomic replacement, large tables."""

from __future__ import annotations

import csv
import json
import os
import stat
from enum import Enum
from pathlib import Path

import numpy as np
import pytest

from linkcli.io import writers
from linkcli.io.writers import OutputError, dump_table, read_table_json, write_table
from linkcli.results import Column, ResultTable, Units, header_of


def table_to_string(table, format: str = "csv") -> str:
    """The text write_table would put in a file (dump_table into memory)."""
    import io

    buf = io.StringIO()
    dump_table(table, buf, format)
    return buf.getvalue()


class Status(Enum):
    CONVERGED = 0
    MAX_ITER = 1
    NO_ASSEMBLY = 2


STRINGS = ["plain", "with, comma", 'with "quotes"', "line\nbreak", " padded ", ""]
FLOATS = [0.1, -1e-300, np.nan, np.inf, -np.inf, 1 / 3]


def sample_table() -> ResultTable:
    t = ResultTable(6, metadata={"file": "x.yaml", "solver": {"tol": 1e-10, "max_iter": np.int64(50)}})
    t.add("coupler.P", "x", "m", FLOATS)
    t.add("A", "q", "deg", np.arange(6) * 0.7)
    t.add("", "iterations", "", np.arange(6, dtype=np.int32))
    t.add("", "ok", "-", np.array([True, False, True, True, False, True]))
    t.add("", "note", "", STRINGS)
    t.add_codes("", "status", [0, 1, 2, 0, 0, 1], Status)
    return t


def files_in(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


# -- ResultTable -----------------------------------------------------------------------------------
def test_headers():
    assert header_of("coupler.P", "x", "m") == "coupler.P.x [m]"
    assert header_of("", "status", "") == "status"
    assert header_of("", "residual", "m") == "residual [m]"
    t = sample_table()
    assert t.headers() == ["coupler.P.x [m]", "A.q [deg]", "iterations", "ok", "note", "status"]
    assert t.n == len(t) == 6
    assert t.column("A.q [deg]").unit == "deg"
    assert list(t["status"]) == ["CONVERGED", "MAX_ITER", "NO_ASSEMBLY", "CONVERGED", "CONVERGED", "MAX_ITER"]
    with pytest.raises(KeyError, match="A.q"):
        t.column("A.q [rad]")


def test_add_checks_lengths_duplicates_and_freezes():
    t = ResultTable()
    t.add("a", "x", "m", [1.0, 2.0])
    with pytest.raises(ValueError, match="rows"):
        t.add("b", "x", "m", [1.0])
    with pytest.raises(ValueError, match="duplicate"):
        t.add("a", "x", "m", [3.0, 4.0])
    t.add("", "status", "", "CONVERGED")  # scalar: repeated n times
    assert list(t["status"]) == ["CONVERGED"] * 2
    with pytest.raises(ValueError):
        t["a.x [m]"][0] = 5.0  # columns are read-only
    assert t.to_records() == [{"a.x [m]": 1.0, "status": "CONVERGED"}, {"a.x [m]": 2.0, "status": "CONVERGED"}]


def test_unit_scaling_helpers():
    units = Units(length="mm", angle="deg", length_scale=1e-3, angle_scale=np.pi / 180)
    t = ResultTable(2, units=units)
    t.add_length("coupler.P", "x", [1.0, 0.002])
    t.add_angle("coupler", "angle", [np.pi, -np.pi / 2])
    q = np.array([[np.pi / 2, 0.01], [np.pi, 0.02]])
    t.add_q(["A", "slider"], q, [True, False])
    t.add_q(["A", "slider"], q, [True, False], quantity="qd", per="s")
    assert t.headers() == ["coupler.P.x [mm]", "coupler.angle [deg]", "A.q [deg]", "slider.q [mm]",
                           "A.qd [deg/s]", "slider.qd [mm/s]"]
    np.testing.assert_allclose(t["coupler.P.x [mm]"], [1000.0, 2.0], rtol=1e-15)
    np.testing.assert_allclose(t["coupler.angle [deg]"], [180.0, -90.0], rtol=1e-15)
    np.testing.assert_allclose(t["slider.q [mm]"], [10.0, 20.0], rtol=1e-15)


def test_for_mechanism_metadata(fourbar_path):
    from linkcli.cli.common import load_and_compile

    loaded, mech = load_and_compile(fourbar_path)
    t = ResultTable.for_mechanism(mech, loaded, n=3, solver={"tol": 1e-12})
    meta = t.metadata
    assert meta["file"] == fourbar_path and len(meta["file_sha256"]) == 64
    assert meta["units"]["length"] == "m" and meta["units"]["angle"] == "deg" and meta["units"]["torque"] == "N m"
    assert meta["solver"] == {"tol": 1e-12} and meta["warnings"] == [] and meta["events"] == []
    assert t.units.angle_scale == pytest.approx(np.pi / 180)


# -- CSV / JSON round trips ----------------------------------------------------------------------------
def test_csv_round_trip(tmp_path):
    t = sample_table()
    path = tmp_path / "out.csv"
    assert write_table(t, path) == "csv"
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == t.headers()
    assert len(rows) == t.n + 1
    got = np.array([float(r[0]) for r in rows[1:]])
    np.testing.assert_array_equal(got, np.asarray(FLOATS))  # exact: shortest round-trip repr; NaN == NaN here
    assert [r[0] for r in rows[1:3]] == ["0.1", "-1e-300"]
    assert [float(r[1]) for r in rows[1:]] == t["A.q [deg]"].tolist()
    assert [r[2] for r in rows[1:]] == [str(i) for i in range(6)]
    assert [r[3] for r in rows[1:]] == ["true", "false", "true", "true", "false", "true"]
    assert [r[4] for r in rows[1:]] == STRINGS
    assert rows[1][5] == "CONVERGED"
    assert path.read_text(encoding="utf-8").startswith("coupler.P.x [m],A.q [deg],iterations,ok,note,status\n")


def test_json_round_trip(tmp_path):
    t = sample_table()
    path = tmp_path / "out.json"
    assert write_table(t, path) == "json"
    doc = json.loads(path.read_text(encoding="utf-8"))  # strict JSON: no NaN tokens
    assert doc["format"] == "linkcli.table/1" and doc["n_rows"] == 6
    assert doc["metadata"]["solver"] == {"tol": 1e-10, "max_iter": 50}
    assert doc["columns"][0] == {"name": "coupler.P.x [m]", "entity": "coupler.P", "quantity": "x", "unit": "m",
                                 "type": "float"}
    assert doc["data"]["coupler.P.x [m]"] == [0.1, -1e-300, None, None, None, 1 / 3]
    assert doc["data"]["note"] == STRINGS
    assert doc["data"]["ok"][:2] == [True, False]
    back = read_table_json(path)
    assert back.headers() == t.headers()
    np.testing.assert_array_equal(back["A.q [deg]"], t["A.q [deg]"])
    assert np.isnan(back["coupler.P.x [m]"][2])
    assert list(back["note"]) == STRINGS
    assert back["iterations"].dtype.kind == "i" and back["ok"].dtype == bool


def test_explicit_format_and_unknown_extension(tmp_path):
    t = sample_table()
    assert write_table(t, tmp_path / "data.txt", format="json") == "json"
    json.loads((tmp_path / "data.txt").read_text())
    with pytest.raises(OutputError, match=r"\.csv or \.json"):
        write_table(t, tmp_path / "data.xlsx")
    with pytest.raises(OutputError, match="csv, json"):
        write_table(t, tmp_path / "data.csv", format="xlsx")
    assert files_in(tmp_path) == ["data.txt"]


def test_empty_table():
    t = ResultTable()
    assert table_to_string(t, "csv") == "\n"
    assert json.loads(table_to_string(t, "json"))["n_rows"] == 0
    t = ResultTable(0)
    t.add("a", "x", "m", np.zeros(0))
    t.add("", "status", "", np.zeros(0, dtype=str))
    assert table_to_string(t, "csv") == "a.x [m],status\n"
    assert json.loads(table_to_string(t, "json"))["data"] == {"a.x [m]": [], "status": []}


# -- atomicity -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("exc", [RuntimeError("disk on fire"), KeyboardInterrupt()])
def test_failed_write_keeps_previous_file(tmp_path, monkeypatch, fmt, exc):
    path = tmp_path / f"out.{fmt}"
    path.write_text("previous content\n", encoding="utf-8")
    big = ResultTable(50_000)
    big.add("a", "x", "m", np.linspace(0, 1, 50_000))
    calls = {"n": 0}
    real = writers._csv_cells if fmt == "csv" else writers._json_values

    def fail_later(*args, **kwargs):  # fail after some data has already been written
        calls["n"] += 1
        if calls["n"] > 1 or fmt == "json":
            raise exc
        return real(*args, **kwargs)

    monkeypatch.setattr(writers, "_csv_cells" if fmt == "csv" else "_json_values", fail_later)
    with pytest.raises(type(exc)):
        write_table(big, path)
    assert path.read_text(encoding="utf-8") == "previous content\n"
    assert files_in(tmp_path) == [path.name]  # temporary file removed


def test_failed_replace_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "out.csv"
    path.write_text("old\n")

    def no_replace(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(writers.os, "replace", no_replace)
    with pytest.raises(OutputError, match="cannot write"):
        write_table(sample_table(), path)
    assert path.read_text() == "old\n" and files_in(tmp_path) == ["out.csv"]


@pytest.mark.parametrize("proc", [True, False], ids=["proc-status", "probe-file"])
def test_umask_read_without_changing_it(tmp_path, monkeypatch, proc):
    """writers._umask reads the umask from /proc/self/status or, where that is missing, from
    a probe file; both agree with os.umask, which is never called (it would flip the umask
    process-wide, racing other threads), and the probe leaves no file behind."""
    from linkcli.io import writers

    old = os.umask(0o027)
    try:
        if not proc:
            real_open = open

            def no_proc(file, *args, **kwargs):
                if str(file) == "/proc/self/status":
                    raise FileNotFoundError(file)
                return real_open(file, *args, **kwargs)

            monkeypatch.setattr("builtins.open", no_proc)
        elif not os.path.exists("/proc/self/status"):
            pytest.skip("no /proc on this system")
        monkeypatch.setattr(os, "umask", lambda *_: pytest.fail("os.umask called"))
        assert writers._umask(str(tmp_path)) == 0o027
        path = tmp_path / "out.csv"
        write_table(sample_table(), path)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    finally:
        monkeypatch.undo()
        os.umask(old)
    assert files_in(tmp_path) == ["out.csv"]


def test_write_replaces_and_keeps_permissions(tmp_path):
    path = tmp_path / "out.csv"
    write_table(sample_table(), path)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    umask = os.umask(0)  # the test runs single-threaded: flipping the umask here is safe
    os.umask(umask)
    assert mode == 0o666 & ~umask  # not mkstemp's 0o600
    os.chmod(path, 0o640)
    t = ResultTable(1)
    t.add("", "x", "", [1.0])
    write_table(t, path)
    assert path.read_text() == "x\n1.0\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert files_in(tmp_path) == ["out.csv"]


def test_output_errors(tmp_path):
    with pytest.raises(OutputError, match="does not exist"):
        write_table(sample_table(), tmp_path / "missing" / "out.csv")
    (tmp_path / "adir.csv").mkdir()
    with pytest.raises(OutputError, match="directory"):
        write_table(sample_table(), tmp_path / "adir.csv")


# -- size ----------------------------------------------------------------------------------------------
def test_100k_rows(tmp_path):
    n = 100_000
    rng = np.random.default_rng(1)
    t = ResultTable(n)
    for k in range(8):
        t.add(f"link{k}", "x", "m", rng.standard_normal(n))
    t.add("", "status", "", np.where(rng.random(n) < 0.01, "NO_ASSEMBLY", "CONVERGED"))
    write_table(t, tmp_path / "big.csv")
    write_table(t, tmp_path / "big.json")
    with open(tmp_path / "big.csv", encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    assert len(lines) == n + 1
    last = lines[-1].split(",")
    assert float(last[0]) == t["link0.x [m]"][-1] and last[-1] == t["status"][-1]
    back = read_table_json(tmp_path / "big.json")
    assert back.n == n
    np.testing.assert_array_equal(back["link7.x [m]"], t["link7.x [m]"])


def test_column_kind():
    assert Column("a", "x", "m", np.zeros(2)).kind == "float"
    assert Column("a", "x", "", np.zeros(2, dtype=int)).kind == "int"
    assert Column("a", "x", "", np.zeros(2, dtype=bool)).kind == "bool"
    assert Column("a", "x", "", np.array(["a", "b"])).kind == "str"


# -- special targets, Windows, SIGTERM (issues 13 and 15) ---------------------------------------------
@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
def test_dev_null_is_written_not_replaced(tmp_path):
    """A rename over /dev/null would make it a regular file (as root: for every process). The
    test writes through a symbolic link to /dev/null: on a regression the rename replaces the
    link in tmp_path, never the machine's /dev/null."""
    link = tmp_path / "null.csv"
    link.symlink_to("/dev/null")
    before = os.stat("/dev/null")
    write_table(sample_table(), link)
    writers.atomic_write_text(link, "x")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert link.is_symlink() and files_in(tmp_path) == ["null.csv"]  # no temporary file next to it


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_named_pipe_is_written_directly(tmp_path):
    import threading

    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    got = {}
    reader = threading.Thread(target=lambda: got.setdefault("text", fifo.read_text()), daemon=True)
    reader.start()
    assert write_table(sample_table(), fifo) == "csv"
    reader.join(10)
    assert got["text"] == table_to_string(sample_table(), "csv")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and files_in(tmp_path) == ["out.csv"]


def test_fsync_goes_through_a_writable_handle(tmp_path, monkeypatch):
    """Windows' fsync (_commit) fails with EBADF on a handle opened read-only; POSIX does not
    care, so fake Windows' rule here (and Windows' refusal to open a directory)."""
    import errno
    import fcntl

    real_fsync, real_open = os.fsync, os.open
    synced = []

    def windows_fsync(fd):
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
            raise OSError(errno.EBADF, "Bad file descriptor")
        synced.append(fd)
        return real_fsync(fd)

    def windows_open(path, flags, *args, **kwargs):
        if os.path.isdir(path):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(writers.os, "fsync", windows_fsync)
    monkeypatch.setattr(writers.os, "open", windows_open)
    path = tmp_path / "out.csv"
    write_table(sample_table(), path)
    assert path.read_text() == table_to_string(sample_table(), "csv") and synced
    assert files_in(tmp_path) == ["out.csv"]


SIGTERM_SCRIPT = r"""
import sys, time
import linkcli.io.writers as writers
from linkcli.cli.app import main

def slow_csv(table, fh):  # some data written, then a long pause inside the atomic write
    fh.write("partial\n"); fh.flush()
    print("ready", flush=True)
    time.sleep(60)

writers._write_csv = slow_csv
main(["fk", sys.argv[1], "--set", "crank_pin=30", "-o", sys.argv[2]])
"""


@pytest.mark.skipif(os.name != "posix", reason="SIGTERM is POSIX")
def test_sigterm_runs_the_same_cleanup_as_ctrl_c(tmp_path, fourbar_path):
    import signal
    import subprocess
    import sys

    out = tmp_path / "out.csv"
    out.write_text("previous\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.Popen([sys.executable, "-c", SIGTERM_SCRIPT, fourbar_path, str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert len(files_in(tmp_path)) == 2  # the target and the temporary file
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    assert "terminated" in err and "Traceback" not in err
    assert files_in(tmp_path) == ["out.csv"] and out.read_text() == "previous\n"
