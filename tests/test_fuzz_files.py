"""Seeded fuzzing of the shipped mechanism files (issues 13 and 15): 120 mutated copies (characters
replaced or inserted, including control characters and NEL/LS/PS, lines deleted, duplicated or
swapped, numbers replaced by extreme values) go through `linkcli validate`. Every file must
come back as valid or as diagnostics (never another exception), at lines that exist in the
file as an editor counts them, with no raw control character on the terminal; a separator
inserted into a line is reported on that line. Special files (FIFO, device, directory,
dangling link, empty file) are answered too, without blocking.

Hang guard: each file gets 20 s of wall time (SIGALRM), far above the ~0.1 s it needs; this
detects hangs, it is not a speed test (benchmarks/bench_bad_files.py measures the times)."""

from __future__ import annotations

import os
import random
import re
import signal
from pathlib import Path

import pytest

from linkcli.cli.app import app

REPO = Path(__file__).resolve().parent.parent
FILES = sorted((REPO / "mechanisms").glob("*.yaml"))
SEED, N_FILES = 2026, 120
ALPHABET = list(":-[]{},#&*!|>'\"%@`?~. \t\n") + list("0123456789eE") + \
    ["\x07", "\x1b", "\x1b[2J", "\x9b", "\x00", "\x85", "\u2028", "\u2029", "\ufeff", "\ufffe"]
EXTREMES = ["1e308", "-1e308", "1e-300", "0", "-0", "nan", ".inf", "1e999", "9" * 40, "4.9e-324", "1e15"]
SEPARATORS = ["\x85", "\u2028", "\u2029"]
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufffe]")


def mutate(text: str, rng: random.Random) -> tuple[str, str, int | None]:
    """(mutated text, what was done, editor line of an inserted separator or None)."""
    lines = text.split("\n")
    kind = rng.randrange(7)
    i = rng.randrange(len(text))
    if kind == 0:
        return text[:i] + rng.choice(ALPHABET) + text[i + 1:], "replace", None
    if kind == 1:
        return text[:i] + rng.choice(ALPHABET) + text[i:], "insert", None
    if kind == 2:
        del lines[rng.randrange(len(lines))]
        return "\n".join(lines), "delete line", None
    if kind == 3:
        j = rng.randrange(len(lines))
        lines.insert(j, lines[j])
        return "\n".join(lines), "duplicate line", None
    if kind == 4:
        numbers = list(re.finditer(r"-?\d+(\.\d+)?", text))
        m = rng.choice(numbers)
        return text[:m.start()] + rng.choice(EXTREMES) + text[m.end():], "extreme number", None
    if kind == 5:
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[a], lines[b] = lines[b], lines[a]
        return "\n".join(lines), "swap lines", None
    return text[:i] + rng.choice(SEPARATORS) + text[i:], "separator", text[:i].count("\n") + 1


def cases() -> list[tuple[str, str, str, int | None]]:
    rng = random.Random(SEED)
    out = []
    for k in range(N_FILES):
        source = rng.choice(FILES)
        text, what, line = mutate(source.read_text(encoding="utf-8"), rng)
        out.append((f"{k:03d}-{source.stem}-{what.replace(' ', '_')}", text, what, line))
    return out


class Hang(Exception):
    pass


def _hang(signum, frame):
    raise Hang()


@pytest.fixture
def hang_guard():
    if not hasattr(signal, "SIGALRM"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("name, text, what, separator_line", cases(), ids=[c[0] for c in cases()])
def test_mutated_file_is_answered_at_a_real_line(runner, tmp_path, hang_guard, name, text, what, separator_line):
    path = tmp_path / "m.yaml"
    path.write_text(text, encoding="utf-8")
    r = runner.invoke(app, ["validate", str(path)])
    assert r.exception is None or isinstance(r.exception, SystemExit), (what, r.exception)
    assert r.exit_code in (0, 3), (what, r.output)
    assert not RAW.search(r.stdout + r.stderr), what  # echoed escaped
    n_lines = len(re.split("\r\n|\r|\n", text))  # as an editor counts them
    found = [(int(m[1]), m[2]) for m in re.finditer(rf"^{re.escape(str(path))}:(\d+):\d+: (\w+): ", r.stderr, re.M)]
    assert all(1 <= line <= n_lines + 1 for line, _ in found), (what, found, n_lines)
    if separator_line is not None:  # NEL/LS/PS are not line breaks: an error they cause is on their line
        errors = [line for line, severity in found if severity == "error"]
        assert all(line == separator_line for line in errors), (what, separator_line, r.stderr)


def _special_files(tmp_path: Path) -> dict[str, Path]:
    out = {"directory": tmp_path, "empty": tmp_path / "empty.yaml", "dangling link": tmp_path / "link.yaml"}
    out["empty"].write_text("")
    out["dangling link"].symlink_to(tmp_path / "nowhere.yaml")
    if hasattr(os, "mkfifo"):
        out["fifo"] = tmp_path / "fifo.yaml"
        os.mkfifo(out["fifo"])
    if os.path.exists("/dev/zero"):
        out["device"] = Path("/dev/zero")
    return out


def test_special_files_are_answered_each_with_its_diagnostic(runner, tmp_path, hang_guard):
    special = _special_files(tmp_path)
    r = runner.invoke(app, ["validate", *map(str, special.values()), str(FILES[0])])
    assert r.exit_code == 3
    assert r.stdout.strip() == f"ok {FILES[0]}"
    for what, path in special.items():
        assert re.search(rf"^{re.escape(str(path))}(:\d+:\d+)?: error: ", r.stderr, re.M), what
    assert ":0:0" not in r.stderr
