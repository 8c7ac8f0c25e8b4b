"""Outputs of a TableStream (a streamed solve or simulate) that used to join the whole table
(issue #11 review): JSON is written column by column from a scratch file, the terminal table
reads only the rows it shows. The truth is the output of the joined table, byte for byte
(JSON also on real runs by tests/test_simulate_stream.py and tests/test_solve_stream.py)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from linkcli.io.writers import dump_table, read_table_json, write_table
from linkcli.results import ResultTable, TableStream


def _stream() -> TableStream:
    """Blocks with text of varying width (quotes, commas, non-ASCII, a control character), NaN
    and infinities (null), ints, bools, and an empty block between."""
    words = (["a", "bb"], ['c,"d"', "\x1b[31m"], [], ["é", "ffff ffff", "g"])

    def blocks():
        start = 0
        for w in words:
            t = ResultTable(len(w))
            t.add("", "word", "", np.array(w, dtype=str) if w else np.zeros(0, dtype="<U1"))
            x = np.arange(start, start + len(w), dtype=float) / 3
            x[::2] = [np.nan, np.inf, -np.inf][: len(x[::2])] if start == 4 else x[::2]
            t.add("link", "x", "m", x)
            t.add("", "i", "", np.arange(start, start + len(w)))
            t.add("", "ok", "", np.arange(len(w)) % 2 == 0)
            start += len(w)
            yield t

    return TableStream(7, blocks, metadata={"file": "x.yaml", "summary": {"steps": 7, "peak": float("nan")}})


def test_streamed_json_is_the_joined_tables_json_without_joining_it(tmp_path, monkeypatch):
    stream = _stream()
    write_table(stream.materialize(), tmp_path / "whole.json")
    whole_text = io.StringIO()
    dump_table(stream.materialize(), whole_text, "json")
    with monkeypatch.context() as m:
        m.setattr(TableStream, "materialize", lambda self: pytest.fail("JSON joined the blocks"))
        write_table(stream, tmp_path / "streamed.json")
        out = io.StringIO()  # --format json on stdout: scratch file in the temporary directory
        dump_table(stream, out, "json")
    assert (tmp_path / "streamed.json").read_bytes() == (tmp_path / "whole.json").read_bytes()
    assert out.getvalue() == whole_text.getvalue()
    back = read_table_json(tmp_path / "streamed.json")
    assert back["word"].tolist() == ["a", "bb", 'c,"d"', "\x1b[31m", "é", "ffff ffff", "g"]
    x = back["link.x [m]"]
    assert np.isnan(x[4]) and np.isnan(x[6]) and x[5] == 5 / 3  # non-finite -> null -> NaN
    assert "\\u001b" in out.getvalue() and "\x1b" not in out.getvalue()  # escapes stay escaped
    assert json.loads(out.getvalue())["metadata"]["summary"] == {"steps": 7, "peak": None}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["streamed.json", "whole.json"]  # no scratch left


def test_an_empty_stream_writes_the_empty_table(tmp_path):
    empty = TableStream(0, lambda: iter(()), metadata={"file": "x.yaml"})
    write_table(empty, tmp_path / "a.json")
    write_table(ResultTable(0, metadata=empty.metadata), tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))["n_rows"] == 0


def _numbered(n: int, rows: int) -> TableStream:
    def blocks():
        for s in range(0, n, rows):
            t = ResultTable(min(rows, n - s))
            t.add("", "row", "", np.arange(s, s + t.n))
            t.add("", "x", "m", np.arange(s, s + t.n) / 7.0)
            yield t

    return TableStream(n, blocks, metadata={"mechanism": "m"})


@pytest.mark.parametrize("n, rows, head, tail", [(100, 1, 3, 5), (100, 7, 20, 20), (100, 100, 0, 9),
                                                 (100, 13, 9, 0), (30, 7, 20, 20), (100, 30, 50, 50)])
def test_ends_are_the_first_and_last_rows(n, rows, head, tail):
    got = _numbered(n, rows).ends(head, tail)
    want = list(range(n)) if n <= head + tail else list(range(head)) + list(range(n - tail, n))
    assert got["row"].tolist() == want and got["x [m]"].tolist() == [r / 7.0 for r in want]


def test_the_terminal_table_of_a_stream_reads_only_its_ends(monkeypatch):
    from rich.console import Console

    from linkcli.cli.render import render_table

    def text(table) -> str:
        console = Console(record=True, width=100, file=io.StringIO())
        render_table(table, console, max_rows=10, title="t")
        return console.export_text()

    stream = _numbered(10_000, 333)
    whole = text(stream.materialize())
    with monkeypatch.context() as m:
        m.setattr(TableStream, "materialize", lambda self: pytest.fail("the terminal table joined the blocks"))
        assert text(stream) == whole
    assert "10000 rows, 10" in whole and " 9999 " in whole and " 9995 " in whole and " 9994 " not in whole  # 5 + 5 rows
    assert text(_numbered(8, 3)) == text(_numbered(8, 3).materialize())  # short: every row
