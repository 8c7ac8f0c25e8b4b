"""Long solves streamed to the writer in blocks (issue 11, "bounded memory").

Truth: the same analysis computed in one block (``run_solve``, what every caller got before
streaming) -- the streamed table must be the same table: CSV byte for byte, .npz and JSON
array for array, metadata (events, limits, status counts) equal, whatever the block size and
wherever an event falls relative to a block boundary. The streaming unwrap of the effector
angle is checked against ``np.unwrap`` itself, bit for bit. Interrupted writes leave nothing
under the final name (atomic_path)."""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest

from linkcli.analyses.inputs import Sweep
from linkcli.analyses.solve import SolveRequest, request_from_defaults, run_solve, solve_stream
from linkcli.compile import compile_mechanism
from linkcli.core.transforms import Unwrap
from linkcli.io.loader import load_mechanism
from linkcli.io.writers import read_table_npz, write_table
from linkcli.results import ResultTable, TableStream

REPO = Path(__file__).resolve().parent.parent
MECH = REPO / "mechanisms"


_SWEEPS: dict = {}


@pytest.fixture(autouse=True)
def _sweep_once(monkeypatch):
    """Each (mechanism, path) is swept once in this module: the sweep is not what these tests
    check (its result is the input of both the streamed and the whole table), and re-solving it
    for every block size would make them slow."""
    import linkcli.analyses.solve as solve_module

    solve_sweep = solve_module.solve_sweep

    def once(mech, path, q_start, **kw):
        key = (id(mech), path.tobytes(), q_start.tobytes(), tuple(sorted(kw.items())))
        if key not in _SWEEPS:
            _SWEEPS[key] = (mech, solve_sweep(mech, path, q_start, **kw))  # mech kept: its id stays unique
        return _SWEEPS[key][1]

    monkeypatch.setattr(solve_module, "solve_sweep", once)


@functools.cache
def _load(name: str):
    if name == NON_GRASHOF:  # the example four-bar with a crank of 3 m: 3 + 4 > 3.5 + 3, the
        # crank cannot turn fully (no configuration for crank angles within ~44 deg of 180 deg)
        text = (MECH / "fourbar.yaml").read_text().replace("A: [1, 0]}", "A: [3, 0]}")
        assert "A: [3, 0]}" in text
        path = Path(tempfile.mkdtemp()) / NON_GRASHOF
        path.write_text(text)
    else:
        path = MECH / name
    loaded = load_mechanism(path)
    return loaded, compile_mechanism(loaded.model)


NON_GRASHOF = "non_grashof_fourbar.yaml"


def _assert_same_table(a: ResultTable, b: ResultTable) -> None:
    assert a.n == b.n and a.headers() == b.headers()
    for x, y in zip(a.columns, b.columns, strict=True):
        assert x.values.dtype == y.values.dtype, x.header
        if x.kind == "float":  # bit for bit (NaN payloads included)
            np.testing.assert_array_equal(x.values.view(np.int64), y.values.view(np.int64), err_msg=x.header)
        else:
            np.testing.assert_array_equal(x.values, y.values, err_msg=x.header)
    assert json.dumps(a.metadata, default=str) == json.dumps(b.metadata, default=str)


def _assert_same_outcome(whole, streamed) -> None:
    assert (streamed.n_cases, streamed.n_failed, streamed.failure) == (whole.n_cases, whole.n_failed, whole.failure)
    assert streamed.events == whole.events
    _assert_same_table(whole.table, streamed.table.materialize())


# (file, request) pairs covering: rates and accelerations; failed rows (no assembly) with events
# and located limits; a 2-D grid solved in serpentine order (rows permuted between solving and
# writing); joints outside their limits; a spatial mechanism (no planar angle to unwrap)
CASES = {
    "fourbar_rates": ("fourbar.yaml", SolveRequest(sweeps=[Sweep("crank_pin", -170, 400, None, 201)],
                                                   rates={"crank_pin": 60.0}, accelerations={"crank_pin": 5.0})),
    "fourbar_failures": (NON_GRASHOF, SolveRequest(sweeps=[Sweep("crank_pin", -30, 700, None, 150)])),
    "fivebar_grid": ("fivebar.yaml", None),
    "planar_3r_outside_limits": ("planar_3r.yaml", SolveRequest(sweeps=[Sweep("shoulder", -170, 400, None, 500)])),
    "puma_spatial": ("puma560.yaml", SolveRequest(sweeps=[Sweep("joint2", -170, 400, None, 300)])),
}


def _case(name: str):
    file, req = CASES[name]
    loaded, mech = _load(file)
    if req is None:
        req = request_from_defaults(loaded.model.analysis.solve)
    return loaded, mech, req


@pytest.mark.parametrize("name", sorted(CASES))
def test_streamed_solve_is_the_whole_solve(name):
    loaded, mech, req = _case(name)
    whole = run_solve(mech, req, loaded)
    assert whole.table.n > 40  # several blocks of 13 and of 40 rows
    for block_rows in (2, 13, 40):  # 2: the smallest block (see solve._block_bounds)
        streamed = solve_stream(mech, req, loaded, block_rows=block_rows)
        assert isinstance(streamed.table, TableStream)
        assert sum(b.n for b in streamed.table.blocks()) == whole.table.n
        _assert_same_outcome(whole, streamed)


def test_the_cases_cover_what_they_claim():
    """Failures, events, limits, a permuted row order and outside-limits rows really occur."""
    loaded, mech, req = _case("fourbar_failures")
    out = run_solve(mech, req, loaded)
    assert out.n_failed > 20 and {"no_assembly", "reassembled", "limit"} <= {e.kind for e in out.events}
    assert [lim["kind"] for lim in out.table.metadata["limits"]] == ["end_of_range"] * 4
    loaded, mech, req = _case("fivebar_grid")
    from linkcli.analyses.inputs import input_grid

    order = input_grid(mech, req.set, req.sweeps, req.mode).order
    assert not np.array_equal(order, np.arange(len(order)))
    loaded, mech, req = _case("planar_3r_outside_limits")
    out = run_solve(mech, req, loaded)
    assert out.table.metadata["status_counts"].get("outside_limits", 0) > 0
    assert any(e.kind == "outside_limits" for e in out.events)


def test_events_at_block_boundaries_appear_once_with_their_index():
    """A block boundary just before, at and just after each event's row: the events (and every
    figure of the run) are those of the unblocked run, each once, at the same index."""
    loaded, mech, req = _case("fourbar_failures")
    whole = run_solve(mech, req, loaded)
    indices = sorted({e.index for e in whole.events if e.index is not None})
    assert len(indices) >= 2
    for k in indices[:3]:
        for block_rows in {max(2, k - 1), max(2, k), max(2, k + 1)}:
            streamed = solve_stream(mech, req, loaded, block_rows=block_rows)
            assert [(e.kind, e.index) for e in streamed.events] == [(e.kind, e.index) for e in whole.events]
            _assert_same_outcome(whole, streamed)
    # outside-limits rows: the first offending value and the count gathered across blocks
    loaded, mech, req = _case("planar_3r_outside_limits")
    whole = run_solve(mech, req, loaded)
    first = int(np.flatnonzero(whole.table["status"] == "outside_limits")[0])
    for block_rows in (first, first + 1):
        _assert_same_outcome(whole, solve_stream(mech, req, loaded, block_rows=block_rows))


@pytest.mark.parametrize("name", ["fourbar_failures", "fivebar_grid", "fourbar_rates"])
def test_streamed_files_are_the_files_of_the_whole_table(tmp_path, name, monkeypatch):
    """CSV and JSON byte for byte, .npz array for array (dtype, shape, bits; the metadata entry
    equal), written without ever joining the blocks for CSV and .npz."""
    loaded, mech, req = _case(name)
    whole = run_solve(mech, req, loaded).table
    streamed = solve_stream(mech, req, loaded, block_rows=13).table
    for ext in ("csv", "json", "npz"):
        write_table(whole, tmp_path / f"whole.{ext}")
    with monkeypatch.context() as m:
        m.setattr(TableStream, "materialize", lambda self: pytest.fail("CSV/.npz joined the blocks"))
        write_table(streamed, tmp_path / "streamed.csv")
        write_table(streamed, tmp_path / "streamed.npz")
    write_table(streamed, tmp_path / "streamed.json")
    for ext in ("csv", "json"):
        assert (tmp_path / f"streamed.{ext}").read_bytes() == (tmp_path / f"whole.{ext}").read_bytes(), ext
    with np.load(tmp_path / "whole.npz", allow_pickle=False) as a, \
            np.load(tmp_path / "streamed.npz", allow_pickle=False) as b:
        assert list(a.keys()) == list(b.keys())
        for key in a.keys():
            x, y = a[key], b[key]
            assert x.dtype == y.dtype and x.shape == y.shape, key
            if x.dtype.kind == "f":
                np.testing.assert_array_equal(x.view(np.int64), y.view(np.int64), err_msg=key)
            else:
                np.testing.assert_array_equal(x, y, err_msg=key)
    _assert_same_table(read_table_npz(tmp_path / "streamed.npz"), read_table_npz(tmp_path / "whole.npz"))


def test_text_columns_of_varying_width_across_blocks(tmp_path):
    """.npz text columns take the widest block's width (np.savez of the joined column)."""
    def blocks():
        for words in (["a", "bb"], ["ccc,\"d\""], [], ["é", "ffff ffff"]):
            t = ResultTable(len(words))
            t.add("", "word", "", np.array(words, dtype=str) if words else np.zeros(0, dtype="<U1"))
            t.add("", "x", "m", np.arange(len(words), dtype=float) / 3)
            yield t

    stream = TableStream(5, blocks, metadata={"file": "x.yaml"})
    whole = stream.materialize()
    for ext in ("csv", "npz"):
        write_table(whole, tmp_path / f"a.{ext}")
        write_table(stream, tmp_path / f"b.{ext}")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    _assert_same_table(read_table_npz(tmp_path / "a.npz"), read_table_npz(tmp_path / "b.npz"))
    assert read_table_npz(tmp_path / "b.npz")["word"].dtype == np.dtype("<U9")


@pytest.mark.parametrize("ext", ["csv", "npz", "json"])
@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError])
def test_interrupted_write_leaves_no_partial_file(tmp_path, ext, exc):
    """Ctrl-C (KeyboardInterrupt, as `linkcli solve` gets it) or a failure after two blocks:
    nothing under the final name, an older file there unchanged, no temporary left behind."""
    loaded, mech, req = _case("fourbar_rates")
    streamed = solve_stream(mech, req, loaded, block_rows=40).table
    produced = {"blocks": 0}
    inner = streamed._make_blocks

    def interrupted():
        for block in inner():
            if produced["blocks"] == 2:
                raise exc()
            produced["blocks"] += 1
            yield block

    streamed._make_blocks = interrupted
    target = tmp_path / f"out.{ext}"
    with pytest.raises(exc):
        write_table(streamed, target)
    assert produced["blocks"] == 2  # it was interrupted mid-way, with rows already written
    assert list(tmp_path.iterdir()) == []
    target.write_bytes(b"older results")
    produced["blocks"] = 0
    with pytest.raises(exc):
        write_table(streamed, target)
    assert [p.name for p in tmp_path.iterdir()] == [target.name]
    assert target.read_bytes() == b"older results"


def test_unwrap_in_blocks_is_numpys_unwrap():
    """Bit for bit against np.unwrap of the finite values (the solve's effector angle), with
    NaN runs, jumps of exactly +-pi (numpy's tie rule), steps below and above pi, and blocks of
    every size including empty and all-NaN ones."""
    rng = np.random.default_rng(7)
    n = 4000
    steps = rng.choice([0.3, -0.3, np.pi, -np.pi, 2.5, -2.5, 3.5, 6.0, 1e-12], size=n)
    angle = np.arctan2(np.sin(np.cumsum(steps)), np.cos(np.cumsum(steps))) * 1.0
    angle[rng.random(n) < 0.05] = np.nan
    angle[100:130] = np.nan
    angle[200:203] = [1.0, 1.0 + np.pi, 1.0]  # exact +-pi differences
    ref = angle.copy()
    finite = np.isfinite(ref)
    ref[finite] = np.unwrap(ref[finite])
    first = np.isfinite(angle[:300])
    assert (ref[:300][first] != angle[:300][first]).any()  # corrections inside a first block of 300
    for sizes in ([n], [1] * 50 + [n], [300, 300], [0, 7, 0, 93, 30, 1], list(rng.integers(0, 200, size=60))):
        u, out, s = Unwrap(), [], 0
        for size in sizes:
            out.append(u(angle[s:s + size]))
            s += size
        out.append(u(angle[s:]))
        got = np.concatenate(out)
        np.testing.assert_array_equal(got.view(np.int64), ref.view(np.int64))


def test_block_bounds_never_leave_one_row_alone():
    from linkcli.analyses.solve import _block_bounds

    for n in range(0, 40):
        for rows in (2, 3, 5, 13):
            bounds = _block_bounds(n, rows)
            assert [i for s, e in bounds for i in range(s, e)] == list(range(n))  # every row once, in order
            assert all(e - s >= 2 for s, e in bounds) or n == 1
            assert all(e - s <= rows + 1 for s, e in bounds)
    with pytest.raises(ValueError, match="block_rows"):
        loaded, mech, req = _case("fourbar_rates")
        solve_stream(mech, req, loaded, block_rows=1)


def test_parquet_streamed_is_the_whole_table(tmp_path):
    """.parquet (pyarrow's ParquetWriter, one row group per block): every column back bit for
    bit with its unit, the metadata equal, streamed or not."""
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from linkcli.io.writers import read_table_parquet

    loaded, mech, req = _case("fourbar_failures")
    whole = run_solve(mech, req, loaded).table
    streamed = solve_stream(mech, req, loaded, block_rows=40).table
    assert write_table(whole, tmp_path / "a.parquet") == "parquet"
    write_table(streamed, tmp_path / "b.parquet")
    assert pq.ParquetFile(tmp_path / "b.parquet").metadata.num_row_groups == len(list(streamed.blocks()))
    for name in ("a", "b"):
        back = read_table_parquet(tmp_path / f"{name}.parquet")
        assert [(c.entity, c.quantity, c.unit) for c in back.columns] == \
            [(c.entity, c.quantity, c.unit) for c in whole.columns]
        _assert_same_table(whole, back)


def test_parquet_without_pyarrow_says_how_to_get_it(tmp_path, monkeypatch):
    import sys

    from linkcli.io.writers import OutputError

    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # import fails as if not installed
    t = ResultTable(2)
    t.add("", "x", "m", np.array([1.0, 2.0]))
    with pytest.raises(OutputError, match=r"pip install 'linkcli\[parquet\]'"):
        write_table(t, tmp_path / "r.parquet")
    assert list(tmp_path.iterdir()) == []
