"""Streamed simulations (issue 11, large outputs): ``simulate_stream`` tabulates the run chunk by
chunk into a scratch file and the writers read it back, so memory stays bounded whatever the
number of saved steps. The truth is the whole-in-memory path (``run_simulate``, the table and
files ``linkcli simulate`` wrote before): every file must be the same, byte for byte for CSV
and JSON, array for array for .npz, whatever the chunk size, for runs that end normally, stop
early on a failing step, refine steps into substeps, or are interrupted."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from test_dynamics_branch import parallelogram_chain
from test_dynamics_errors import JOINTS
from test_dynamics_fourbar import joint_state
from test_dynamics_support import load

from linkcli.analyses.simulate import SimulateRequest, run_simulate, simulate_stream
from linkcli.cli.common import load_and_compile
from linkcli.core.dynamics import simulate, simulate_chunks
from linkcli.io.writers import write_table
from linkcli.results import ResultTable, TableSpool

REPO = Path(__file__).resolve().parent.parent
#: Parquet where pyarrow is installed (the `parquet` extra; CI may not have it)
FORMATS = ("csv", "json", "npz") + (("parquet",) if importlib.util.find_spec("pyarrow") else ())
MOTOR_FOURBAR = REPO / "mechanisms" / "motor_fourbar.yaml"
PUMA = REPO / "mechanisms" / "puma560.yaml"


def toggle_fourbar():
    """A crank-rocker driven at the rocker at 30 deg/s: the rocker reaches its toggle position
    at t = 1.12 s, where no assembly exists beyond; the run stops there (diverged)."""
    q0, _ = joint_state(np.radians(60.0))
    return load("fourbar_w3.yaml", {"joints": JOINTS, "drivers": {
        "m": {"joint": "O4", "type": "constant_speed", "speed": 30.0, "start": float(np.degrees(q0[3]))}}})


def write_all(table, folder: Path, name: str) -> dict[str, Path]:
    out = {}
    for fmt in FORMATS:
        out[fmt] = folder / f"{name}.{fmt}"
        write_table(table, out[fmt])
    return out


def assert_same_files(a: dict[str, Path], b: dict[str, Path]) -> None:
    assert a["csv"].read_bytes() == b["csv"].read_bytes()
    assert a["json"].read_bytes() == b["json"].read_bytes()  # metadata (summary, events) included
    with np.load(a["npz"]) as za, np.load(b["npz"]) as zb:
        assert za.files == zb.files
        for key in za.files:
            assert za[key].dtype == zb[key].dtype and za[key].tobytes() == zb[key].tobytes(), key
    if "parquet" in FORMATS:
        import pyarrow.parquet as pq

        assert pq.read_table(a["parquet"]).equals(pq.read_table(b["parquet"]), check_metadata=True)


def streamed_equals_whole(mech, req, loaded, tmp_path: Path, block_rows=(1, 7, 16_384)):
    whole = run_simulate(mech, req, loaded)
    ref = write_all(whole.table, tmp_path, "whole")
    for rows in block_rows:
        streamed = simulate_stream(mech, req, loaded, block_rows=rows, scratch_dir=str(tmp_path))
        assert streamed.table.n == whole.table.n
        assert {k: v for k, v in streamed.summary.items() if k != "wall_time_s"} == \
               {k: v for k, v in whole.summary.items() if k != "wall_time_s"}
        assert streamed.messages == whole.messages and streamed.n_failed == whole.n_failed
        assert_same_files(ref, write_all(streamed.table, tmp_path, f"s{rows}"))
    return whole


def test_streamed_table_is_the_whole_table_for_any_chunk_size(tmp_path):
    # 51 rows: chunks of 1 and 7 rows put boundaries everywhere (7 does not divide 51)
    loaded, mech = load_and_compile(MOTOR_FOURBAR)
    whole = streamed_equals_whole(mech, SimulateRequest(t_end=0.05, dt=1e-3), loaded, tmp_path)
    assert whole.ok and whole.table.n == 51


def test_streamed_spatial_table_is_the_whole_table(tmp_path):
    """Spatial: quaternion columns, an effector with a tool frame (a 4x4 product per row)."""
    loaded, mech = load_and_compile(PUMA)
    whole = streamed_equals_whole(mech, SimulateRequest(t_end=0.012, dt=1e-3), loaded, tmp_path, (1, 5))
    assert whole.ok and whole.table.n == 13


def test_refined_steps_and_unwrapped_angles_stream_identically(tmp_path):
    """Five coupled parallelograms swing through their aligned positions: refined steps
    (substeps) and link angles that pass pi (unwrapped across chunk boundaries)."""
    mech = parallelogram_chain(5)
    whole = streamed_equals_whole(mech, SimulateRequest(t_end=1.2, dt=2e-3, every=5), None, tmp_path, (1, 7))
    assert whole.ok and whole.summary["refined_steps"] >= 2
    angle = whole.table["r0.angle [rad]"]
    assert angle.min() < -np.pi + 0.5  # past -pi: the wrapped angle would jump by 2 pi
    assert np.abs(np.diff(angle)).max() < 0.5


def test_a_run_that_fails_mid_way_streams_every_good_row_and_no_other(tmp_path):
    mech = toggle_fourbar()
    req = SimulateRequest(t_end=5.0, dt=1e-3, every=10, set={"crank_pin": 60.0})
    whole = streamed_equals_whole(mech, req, None, tmp_path, (1, 7))
    assert whole.summary["status"] == "diverged" and whole.n_failed == 1
    t = whole.table["t [s]"]
    assert 1.0 < t[-1] < 1.13 and whole.table.n == len(t)
    assert whole.table["constraint_residual [m]"].max() <= 1e-10  # every row kept is a converged state (m)


def test_an_interrupted_stream_keeps_exactly_the_rows_of_an_uninterrupted_run(tmp_path):
    loaded, mech = load_and_compile(REPO / "mechanisms" / "double_pendulum.yaml")
    calls = {"n": 0}

    def stop() -> bool:  # asked after every compiled chunk of steps: stop after the fifth
        calls["n"] += 1
        return calls["n"] >= 5

    part = simulate_stream(mech, SimulateRequest(t_end=1000.0, dt=1e-3, every=2), loaded, stop=stop, block_rows=7,
                           scratch_dir=str(tmp_path))
    assert part.summary["status"] == "interrupted" and part.table.metadata["summary"]["status"] == "interrupted"
    n = part.table.n
    assert 1 < n < 1000.0 / 2e-3
    got = part.table.materialize()
    full = run_simulate(mech, SimulateRequest(t_end=float(got["t [s]"][-1]), dt=1e-3, every=2), loaded)
    assert full.ok and full.table.n == n
    for header in full.table.headers():  # bit for bit, the energy balance (against row 0) included
        np.testing.assert_array_equal(got[header], full.table[header], err_msg=header)


def test_simulate_chunks_hands_over_the_rows_of_simulate():
    """Core: the chunks joined are simulate()'s arrays bit for bit (chunk sizes 1 and 7), the
    run's status and counts are the same, and a chunk of no row is never handed over."""
    mech = toggle_fourbar()
    q0, _ = joint_state(np.radians(60.0))
    whole = simulate(mech, q0, np.zeros(4), t_end=5.0, dt=1e-3, every=10)
    assert whole.status == "diverged"
    for rows in (1, 7):
        chunks = []
        run = simulate_chunks(mech, q0, np.zeros(4), t_end=5.0, dt=1e-3, every=10, on_rows=chunks.append,
                              chunk_rows=rows)
        assert (run.status, run.message, run.n_rows, run.dt) == (whole.status, whole.message, len(whole.t), whole.dt)
        assert (run.refined_steps, run.newton_iterations) == (whole.refined_steps, whole.newton_iterations)
        assert all(0 < len(c.t) <= rows and c.ok for c in chunks)
        for field in dataclasses.fields(whole):
            value = getattr(whole, field.name)
            if isinstance(value, np.ndarray):
                joined = np.concatenate([getattr(c, field.name) for c in chunks])
                assert joined.tobytes() == value.tobytes(), (rows, field.name)
    with pytest.raises(ValueError, match="chunk_rows"):
        simulate_chunks(mech, q0, np.zeros(4), t_end=0.01, dt=1e-3, on_rows=print, chunk_rows=0)


def test_cli_simulate_leaves_no_temporary_file(tmp_path):
    from typer.testing import CliRunner

    from linkcli.cli.app import app

    out = tmp_path / "run.csv"
    result = CliRunner().invoke(app, ["simulate", str(MOTOR_FOURBAR), "--t-end", "0.05", "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert sorted(os.listdir(tmp_path)) == ["run.csv"]
    loaded, mech = load_and_compile(MOTOR_FOURBAR)
    ref = tmp_path / "ref" / "run.csv"
    ref.parent.mkdir()
    write_table(run_simulate(mech, SimulateRequest(t_end=0.05, dt=1e-3), loaded).table, ref)
    assert out.read_bytes() == ref.read_bytes()


def test_a_write_that_fails_mid_stream_leaves_the_old_file_and_no_temporary(tmp_path):
    loaded, mech = load_and_compile(MOTOR_FOURBAR)
    streamed = simulate_stream(mech, SimulateRequest(t_end=0.05, dt=1e-3), loaded, block_rows=7,
                               scratch_dir=str(tmp_path))
    target = tmp_path / "run.csv"
    target.write_text("old\n")
    blocks = streamed.table.blocks

    def failing():  # the third block never comes (Ctrl-C while writing)
        for i, block in enumerate(blocks()):
            if i == 2:
                raise KeyboardInterrupt
            yield block

    streamed.table.blocks = failing
    for name in ("run.csv", "run.npz"):
        with pytest.raises(KeyboardInterrupt):
            write_table(streamed.table, tmp_path / name)
    assert target.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["run.csv"]


def test_table_spool_gives_back_the_blocks_appended(tmp_path):
    spool = TableSpool(str(tmp_path))
    blocks = []
    for start, stop in ((0, 3), (3, 4), (4, 9)):
        block = ResultTable(stop - start)
        block.add("", "x", "m", np.arange(start, stop) * 0.1)
        block.add("", "k", "", np.arange(start, stop))
        block.add("", "status", "", ["ok" if i % 2 else "failed, far" for i in range(start, stop)])
        block.add("", "flag", "", np.arange(start, stop) % 3 == 0)
        spool.append(block)
        blocks.append(block)
    assert os.listdir(tmp_path) == []  # an anonymous file
    stream = spool.stream({"analysis": "test"})
    assert stream.n == 9 and stream.metadata["analysis"] == "test"
    for _ in range(2):  # every pass reads the same rows
        got = list(stream.blocks())
        assert len(got) == 3
        for g, b in zip(got, blocks, strict=True):
            assert g.headers() == b.headers()
            for c, d in zip(g.columns, b.columns, strict=True):
                assert c.values.dtype == d.values.dtype and np.array_equal(c.values, d.values)
    other = ResultTable(1)
    other.add("", "y", "m", [1.0])
    with pytest.raises(ValueError, match="differ"):
        spool.append(other)
    spool.close()


def test_a_full_scratch_disk_is_a_clear_error(monkeypatch):
    from linkcli.io.writers import OutputError

    def no_space(self, block):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(TableSpool, "append", no_space)
    loaded, mech = load_and_compile(MOTOR_FOURBAR)
    with pytest.raises(OutputError, match="No space left on device.*free disk space"):
        simulate_stream(mech, SimulateRequest(t_end=0.01, dt=1e-3), loaded)
