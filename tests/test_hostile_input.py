"""Hostile input at the command line (issue 15): text that would drive the terminal, special
files as inputs, standard input, unreadable files. Every echoed user string goes through one
helper (:func:`linkcli.errors.visible`); only regular files and standard input are read."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from linkcli.errors import visible, visible_json
from linkcli.io import yaml_source
from linkcli.io.yaml_source import read_yaml_file

REPO = Path(__file__).resolve().parent.parent
FOURBAR = REPO / "mechanisms" / "fourbar.yaml"
#: ESC [2J clears the screen, ESC ] 0 ; ... BEL sets the window title, 0x9b is the 8-bit CSI
EVIL = "x\x1b[2J\x1b]0;PWNED\x07\x9b31m\u2028\u202e\ufdd0"
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\u2028", "\u202e", "\ufdd0")


def no_raw_controls(text: str) -> bool:
    return not any(c in text for c in RAW_CONTROLS)


# -- the helper ------------------------------------------------------------------------------------
def test_visible_escapes_controls_and_keeps_ordinary_text():
    assert visible("crank_pin é 日本 \\ ok") == "crank_pin é 日本 \\ ok"
    assert visible(EVIL) == "x\\x1b[2J\\x1b]0;PWNED\\x07\\x9b31m\\u2028\\u202e\\ufdd0"
    assert visible("a\nb\tc\x7f") == "a\\x0ab\\x09c\\x7f"
    assert visible("\U0010ffff\U0001fffe\udcff") == "\\U0010ffff\\U0001fffe\\udcff"  # non-characters, surrogate


def test_visible_json_is_the_same_json_value():
    data = {"name": EVIL + "\U0010ffff", "n": [1, 2]}
    text = visible_json(json.dumps(data, ensure_ascii=False, indent=2))
    assert no_raw_controls(text) and "\n" in text  # layout newlines stay
    assert json.loads(text) == data


# -- the commands ----------------------------------------------------------------------------------
@pytest.fixture
def evil_file(tmp_path, fourbar_text):
    """A valid four-bar whose name holds escape sequences."""
    escaped = EVIL.encode("unicode_escape").decode().replace("\\x1b", "\\e").replace("\\x07", "\\a")
    text = fourbar_text.replace("name: Crank-rocker four-bar", f'name: "{escaped}"')
    path = tmp_path / "evil.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("args", [["info"], ["fk", "--set", "crank_pin=30"]])
def test_emoji_codes_in_names_are_printed_as_written(run_cli, tmp_path, fourbar_text, args):
    """rich turned ':smile:' in a file's name into an emoji on the terminal tables."""
    path = tmp_path / "emoji.yaml"
    path.write_text(fourbar_text.replace("name: Crank-rocker four-bar", 'name: "a :smile: b :thumbs_up:"'),
                    encoding="utf-8")
    r = run_cli(args[0], path, *args[1:], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "a :smile: b :thumbs_up:" in r.stdout + r.stderr
    assert "\U0001F604" not in r.stdout + r.stderr


def test_unknown_key_with_escapes_is_shown_escaped(run_cli, tmp_path, fourbar_text):
    path = tmp_path / "m.yaml"
    path.write_text(fourbar_text + '"bad\\e[31mkey\\x9b": 1\n', encoding="utf-8")
    r = run_cli("validate", path)
    assert r.exit_code == 3
    assert "unknown key 'bad\\x1b[31mkey\\x9b'" in r.stderr
    assert no_raw_controls(r.stderr) and no_raw_controls(r.stdout)


@pytest.mark.parametrize("args", [["info"], ["info", "--format", "json"], ["fk", "--set", "crank_pin=30"],
                                  ["fk", "--set", "crank_pin=30", "--format", "json"],
                                  ["jacobian", "--set", "crank_pin=30"]])
def test_names_with_escapes_never_reach_the_terminal_raw(run_cli, evil_file, args):
    r = run_cli(args[0], evil_file, *args[1:])
    assert r.exit_code == 0, r.output
    assert no_raw_controls(r.stdout) and no_raw_controls(r.stderr)
    assert "\\x1b[2J" in r.stdout or "\\u001b[2J" in r.stdout  # shown, as an escape
    if "json" in args:
        doc = json.loads(r.stdout)
        assert EVIL in (doc.get("name"), doc.get("metadata", {}).get("mechanism"))  # the data is intact


def test_file_name_with_escapes(run_cli, tmp_path, fourbar_text):
    path = tmp_path / "a\x1b]0;PWNED\x07.yaml"
    path.write_text(fourbar_text, encoding="utf-8")
    r = run_cli("validate", path, tmp_path / "missing\x1b[2J.yaml")
    assert r.exit_code == 3
    assert no_raw_controls(r.stdout + r.stderr)
    assert "a\\x1b]0;PWNED\\x07.yaml" in r.stdout


def test_option_values_with_escapes(run_cli):
    r = run_cli("fk", FOURBAR, "--set", "bogus\x1b[2J=3")
    assert r.exit_code == 2
    assert no_raw_controls(r.stderr) and "bogus" in r.stderr


# -- special files and standard input ----------------------------------------------------------------
def _with_deadline(func, seconds: float = 10.0):
    """Run func() in a thread; fail (instead of hanging the suite) when it blocks."""
    box: dict = {}

    def target():
        try:
            box["value"] = func()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"blocked for more than {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_fifo_is_refused_without_blocking(run_cli, tmp_path):
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    try:
        r = _with_deadline(lambda: run_cli("validate", fifo, FOURBAR))
    finally:  # unblock a reader if the test failed
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        except OSError:
            pass
    assert r.exit_code == 3
    assert f"{fifo}: error: is a named pipe (FIFO), not a regular file" in r.stderr
    assert r.stdout.strip() == f"ok {FOURBAR}"  # the other file is still checked


def test_devices_are_refused(run_cli):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    r = _with_deadline(lambda: run_cli("validate", "/dev/zero"))
    assert r.exit_code == 3
    assert "/dev/zero: error: is a character device" in r.stderr


def test_dash_reads_the_mechanism_from_stdin(run_cli, tmp_path, fourbar_text):
    r = run_cli("validate", "-", input=fourbar_text)
    assert (r.exit_code, r.stdout.strip()) == (0, "ok <stdin>")
    out = tmp_path / "x.json"
    r = run_cli("fk", "-", "--set", "crank_pin=30", "-o", out, input=fourbar_text)
    assert r.exit_code == 0, r.output
    meta = json.loads(out.read_text())["metadata"]
    assert meta["file"] == "<stdin>"
    assert meta["file_sha256"] == hashlib.sha256(fourbar_text.encode()).hexdigest()


def test_dash_with_errors_names_stdin(run_cli, fourbar_text):
    r = run_cli("validate", "-", input=fourbar_text.replace("child: coupler.A", "child: couplr.A"))
    assert r.exit_code == 3
    assert r.stderr.startswith("<stdin>:")


@pytest.mark.skipif(not os.path.exists("/dev/stdin"), reason="no /dev/stdin")
def test_dev_stdin_is_hashed_with_the_bytes_parsed(tmp_path):
    out = tmp_path / "x.json"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(FOURBAR, "rb") as stdin:  # a pipe, not the file: it can be read only once
        proc = subprocess.run([sys.executable, "-m", "linkcli", "fk", "/dev/stdin", "--set", "crank_pin=30",
                               "-o", str(out)], input=FOURBAR.read_bytes(), env=env, capture_output=True,
                              timeout=120)
    del stdin
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(out.read_text())["metadata"]
    assert meta["file_sha256"] == hashlib.sha256(FOURBAR.read_bytes()).hexdigest()


def test_an_unreadable_file_is_a_diagnostic_of_that_file(run_cli, tmp_path, monkeypatch):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\n")
    real_open = yaml_source.os.open

    def failing_open(path, *args, **kwargs):
        if os.fspath(path) == str(bad):
            raise OSError(errno.EIO, "Input/output error")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(yaml_source.os, "open", failing_open)
    r = run_cli("validate", bad, FOURBAR)
    assert r.exit_code == 3
    assert f"{bad}: error: cannot read the file: Input/output error" in r.stderr
    assert r.stdout.strip() == f"ok {FOURBAR}"


def test_whole_file_problems_are_not_at_line_0(run_cli, tmp_path):
    r = run_cli("validate", tmp_path / "missing.yaml", tmp_path)
    assert r.exit_code == 3
    assert ":0:0" not in r.stderr
    assert f"{tmp_path / 'missing.yaml'}: error: file not found" in r.stderr


def test_read_yaml_file_on_a_regular_file_still_works():
    data, smap = read_yaml_file(FOURBAR)
    assert data["name"] == "Crank-rocker four-bar" and smap.locate(("joints",))[0] > 1


# -- bounded parsing and bounded reports ---------------------------------------------------------------
def test_thousands_of_unknown_keys_give_a_short_report(run_cli, tmp_path, fourbar_text):
    from linkcli.errors import MAX_DIAGNOSTICS

    path = tmp_path / "m.yaml"
    n_bad = 3000
    path.write_text(fourbar_text + "".join(f"zz{i}: 1\n" for i in range(n_bad)), encoding="utf-8")
    r = run_cli("validate", path)
    assert r.exit_code == 3
    lines = r.stderr.splitlines()
    errors = [ln for ln in lines if ": error: " in ln]
    assert len(errors) == MAX_DIAGNOSTICS
    assert f"... and {n_bad - MAX_DIAGNOSTICS} more problems" in r.stderr
    # the allowed keys are listed once, not on every line
    assert sum("links, joints" in ln for ln in lines) == 1
    assert len(r.stderr) < 200 * MAX_DIAGNOSTICS
    r = run_cli("validate", "--format", "json", path)
    (doc,) = json.loads(r.stdout)
    assert len(doc["diagnostics"]) == MAX_DIAGNOSTICS and doc["omitted"] == n_bad - MAX_DIAGNOSTICS


def test_100000_unknown_keys_stop_at_the_value_limit(run_cli, tmp_path):
    from linkcli.io.yaml_source import MAX_NODES

    path = tmp_path / "m.yaml"
    path.write_text("".join(f"k{i}: 1\n" for i in range(100_000)), encoding="utf-8")  # 1 MB
    r = run_cli("validate", path)
    assert r.exit_code == 3
    (line,) = r.stderr.splitlines()
    # key k_i and its value are values 2i+2 and 2i+3 (the root mapping is value 1): value
    # MAX_NODES + 1 is the value of k_(MAX_NODES/2 - 1), on line MAX_NODES/2 after "k9999: "
    i = MAX_NODES // 2 - 1
    assert line.startswith(f"{path}:{i + 1}:{len(f'k{i}: ') + 1}: error: k{i}: ") and "too many values" in line


def test_usage_errors_quote_the_words_escaped(run_cli):
    r = run_cli("fk", FOURBAR, "--bogus\x1b[2J")
    assert r.exit_code == 2
    assert "--bogus\\x1b[2J" in r.output and no_raw_controls(r.output)
    r = run_cli("no\x1b]0;PWNED\x07such")
    assert r.exit_code == 2 and no_raw_controls(r.output)
