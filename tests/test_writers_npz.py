"""Binary .npz result tables: every column back exactly (floats bit for bit, NaN, text,
booleans), units and metadata kept, atomic like the text formats, never on stdout.

Truth: the table written is the reference (lossless format: exact equality is the test)."""

from __future__ import annotations

import numpy as np
import pytest

from linkcli.io.writers import OutputError, dump_table, read_table_json, read_table_npz, write_table
from linkcli.results import ResultTable


def _table(n: int = 5) -> ResultTable:
    t = ResultTable(n, metadata={"units": {"length": "mm", "angle": "deg"}, "file": "x.yaml"})
    t.add("coupler.P", "x", "mm", np.linspace(-1.0, 1.0, n) / 3.0)
    t.add("crank_pin", "q", "deg", np.r_[np.nan, np.inf, -np.inf, 1e-300, 0.1][:n])
    t.add("", "status", "", np.array(["ok", "no_assembly", "ok", "a,b \"q\"", "ok"][:n]))
    t.add("", "ok", "", np.array([True, False, True, True, False][:n]))
    t.add("", "iterations", "", np.arange(n, dtype=np.int64))
    return t


def test_npz_round_trip_is_exact_with_units(tmp_path):
    t = _table()
    assert write_table(t, tmp_path / "r.npz") == "npz"
    back = read_table_npz(tmp_path / "r.npz")
    assert back.headers() == t.headers() == ["coupler.P.x [mm]", "crank_pin.q [deg]", "status", "ok", "iterations"]
    assert back.n == t.n and back.metadata == t.metadata
    for a, b in zip(t.columns, back.columns, strict=True):
        assert (a.entity, a.quantity, a.unit, a.kind) == (b.entity, b.quantity, b.unit, b.kind)
        if a.kind == "float":
            np.testing.assert_array_equal(a.values.view(np.int64), b.values.view(np.int64))  # bit for bit
        else:
            np.testing.assert_array_equal(a.values, b.values)
    # the same table through JSON agrees (one table model for every format)
    write_table(t, tmp_path / "r.json")
    assert read_table_json(tmp_path / "r.json").headers() == back.headers()
    # plain numpy can read it without pickles: one array per column, named by header
    with np.load(tmp_path / "r.npz", allow_pickle=False) as data:
        np.testing.assert_array_equal(data["coupler.P.x [mm]"], t["coupler.P.x [mm]"])


def test_npz_is_atomic_and_file_only(tmp_path, monkeypatch):
    target = tmp_path / "r.npz"
    write_table(_table(), target)
    before = target.read_bytes()
    import linkcli.io.writers as w

    def boom(*a, **k):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(w, "_write_npz", boom)
    with pytest.raises(RuntimeError):
        write_table(_table(3), target)
    assert target.read_bytes() == before  # old file intact
    assert [p.name for p in tmp_path.iterdir()] == ["r.npz"]  # no temporary left behind
    import io

    with pytest.raises(OutputError, match="binary"):
        dump_table(_table(), io.StringIO(), "npz")


def test_empty_table(tmp_path):
    t = ResultTable(0)
    write_table(t, tmp_path / "e.npz")
    back = read_table_npz(tmp_path / "e.npz")
    assert back.n == 0 and back.headers() == []
