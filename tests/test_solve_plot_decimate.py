"""``solve --plot`` of a long sweep draws M4-decimated rows read block by block from the
streamed table (linkcli.plot.decimate, the algorithm of ``simulate --plot``): memory bounded by
the number of buckets, every plotted line's extremes kept, the drawing at the first assembled
row as without decimation (issue #11: a 10^6-point ``solve --plot`` held the whole table)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_plot_decimate import _bound, _brute_m4, _stream

from linkcli.analyses.inputs import Sweep
from linkcli.analyses.solve import SolveRequest, run_solve, solve_stream
from linkcli.cli.common import load_and_compile
from linkcli.results import Column, ResultTable, TableStream

MECH = Path(__file__).resolve().parent.parent / "mechanisms"


def _short_coupler(fourbar_text: str, write_mech) -> str:
    """The four-bar with a coupler of length 1: the crank cannot turn fully (rows that do not
    assemble, NaN joint variables, in runs along the sweep)."""
    return write_mech(fourbar_text.replace("B: [3.5, 0], P: [1.75, 0.6]", "B: [1.0, 0], P: [0.5, 0.3]")
                      .replace("between: [A, B], mass: 3.5", "between: [A, B], mass: 1.0"))


def _expected_keys(mech, table) -> np.ndarray:
    """The series a solve figure needs, from the whole table's columns (file units) by plain
    rules, independently of linkcli.plot: the input, an assembled flag, the passive joint
    variables, the input where assembled, the effector position and the transmission angle."""
    q_cols = [h for h in table.headers() if h.endswith(("[deg]", "[m]")) and ".q [" in h]
    names = [h.split(".q [")[0] for h in q_cols]
    actuated = [mech.q_names[i] for i in mech.q_actuated]
    valid = np.all(np.isfinite(np.column_stack([table[h] for h in q_cols])), axis=1)
    keys = [table[f"{a}.q [deg]"] for a in actuated] + [np.where(valid, 0.0, 1.0)]
    keys += [table[h] for h, n in zip(q_cols, names, strict=True) if n not in actuated]
    keys += [np.where(valid, table[f"{a}.q [deg]"], np.nan) for a in actuated]
    keys += [table["effector.x [m]"], table["effector.y [m]"], table["B.transmission [deg]"]]
    return np.column_stack(keys).astype(float)


@pytest.mark.parametrize("block_rows", [257, 4096])
def test_the_plotted_rows_are_m4_of_the_whole_table(fourbar_text, write_mech, block_rows):
    from linkcli.plot.figures import solve_plot_rows

    loaded, mech = load_and_compile(_short_coupler(fourbar_text, write_mech))
    req = SolveRequest(sweeps=[Sweep("crank_pin", 100.0, 460.0, None, 3001)])  # starts where it cannot assemble
    whole = run_solve(mech, req, loaded).table
    ok = np.flatnonzero(np.isfinite(whole["A.q [deg]"]))
    assert 0 < ok[0] and len(ok) < whole.n  # rows without a configuration first: the hard case
    buckets = 50
    rows = solve_plot_rows(mech, solve_stream(mech, req, loaded, block_rows=block_rows).table, buckets=buckets)
    kept = np.searchsorted(whole["crank_pin.q [deg]"], rows["crank_pin.q [deg]"])  # the input identifies a row
    assert set(kept.tolist()) == _brute_m4(_expected_keys(mech, whole), -(-whole.n // buckets))
    assert rows.n <= _bound(buckets, 10)  # K = 10 series here
    for h in whole.headers():  # real rows, every column (status text too)
        np.testing.assert_array_equal(rows[h], whole[h][kept])
    assert ok[0] in kept  # the drawing's configuration: the first assembled row
    assert rows.metadata["plot_rows"]["rows"] == whole.n and rows.metadata["analysis"] == "solve"


def test_short_sweeps_are_drawn_from_every_row(fourbar_path):
    from linkcli.plot.figures import solve_plot_rows

    loaded, mech = load_and_compile(fourbar_path)
    req = SolveRequest(sweeps=[Sweep("crank_pin", 0.0, 360.0, 1.0, None)])
    whole = run_solve(mech, req, loaded).table
    rows = solve_plot_rows(mech, solve_stream(mech, req, loaded, block_rows=100).table)
    assert rows.n == whole.n == 361 and rows.metadata["plot_rows"]["method"] == "all rows"
    for h in whole.headers():
        np.testing.assert_array_equal(rows[h], whole[h])


def test_a_one_row_spike_among_10_000_rows_is_kept_and_drawn(fourbar_path):
    pytest.importorskip("matplotlib")
    from linkcli.plot.figures import solve_figure, solve_plot_rows

    loaded, mech = load_and_compile(fourbar_path)
    solved = run_solve(mech, SolveRequest(sweeps=[Sweep("crank_pin", 0.0, 360.0, None, 10_001)]), loaded).table
    whole = ResultTable(solved.n, metadata=solved.metadata, units=solved.units)
    for c in solved.columns:
        values = np.array(c.values)
        if c.header == "B.transmission [deg]":
            values[5_432], values[5_433] = 179.5, 0.5  # one row up, the next down: inside one 11-row bucket
        whole.add_column(Column(c.entity, c.quantity, c.unit, values))
    stream = _stream(whole, 3_333)  # blocks not aligned with the buckets
    rows = solve_plot_rows(mech, stream)
    assert rows.n < whole.n / 2
    got = rows["B.transmission [deg]"]
    x = rows["crank_pin.q [deg]"]
    assert got.max() == 179.5 and x[np.argmax(got)] == whole["crank_pin.q [deg]"][5_432]  # at its input
    assert got.min() == 0.5 and x[np.argmin(got)] == whole["crank_pin.q [deg]"][5_433]
    fig = solve_figure(mech, stream)
    (line,) = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_label() == "at joint B"]
    assert np.max(line.get_ydata()) == 179.5 and np.min(line.get_ydata()) == 0.5
    assert len(line.get_xdata()) == rows.n
    # the coupler path through the kept rows: a line (their uneven steps are not a grid's jumps)
    path = next(ln for ax in fig.axes for ln in ax.get_lines() if ln.get_gid() == "path:coupler.P")
    assert path.get_linestyle() == "-" and len(path.get_xdata()) == rows.n


@pytest.fixture
def no_whole_table(monkeypatch):
    """Joining a streamed table fails (tables of at most 4 x 1,000 buckets rows are joined:
    they are small; the sweeps below are longer)."""

    def whole(self):
        raise AssertionError("solve --plot joined the whole table")

    monkeypatch.setattr(TableStream, "materialize", whole)


def test_solve_plot_columns_of_a_long_sweep(run_cli, fourbar_path, tmp_path, no_whole_table):
    pytest.importorskip("matplotlib")
    from linkcli.plot import figures

    saved = []
    real = figures.save_figure
    figures.save_figure = lambda fig, path, dpi=100: (saved.append(fig), real(fig, path, dpi=dpi))
    try:
        r = run_cli("solve", fourbar_path, "--sweep", "crank_pin=0:360:0.05", "-o", tmp_path / "t.npz",
                    "--plot", tmp_path / "c.png", "--plot-columns", "coupler.P.x,B.transmission", "-q")
    finally:
        figures.save_figure = real
    assert r.exit_code == 0, r.output
    assert (tmp_path / "c.png").stat().st_size > 1000
    from linkcli.io.writers import read_table_npz

    whole = read_table_npz(tmp_path / "t.npz")  # the rows the command wrote (7,201)
    assert whole.n == 7201
    (fig,) = saved
    assert len(fig.axes) == 2  # one panel per unit: m and deg
    lines = {ln.get_label(): ln for ax in fig.axes for ln in ax.get_lines()}
    assert set(lines) == {"coupler.P.x", "B.transmission"}
    for name, header in (("coupler.P.x", "coupler.P.x [m]"), ("B.transmission", "B.transmission [deg]")):
        x, y = lines[name].get_xdata(), lines[name].get_ydata()
        assert len(x) < whole.n / 2
        k = np.searchsorted(whole["crank_pin.q [deg]"], x)
        np.testing.assert_array_equal(y, whole[header][k])  # real rows, the extremes among them
        assert (y.min(), y.max()) == (whole[header].min(), whole[header].max())
        assert x[0] == 0.0 and x[-1] == 360.0


@pytest.mark.parametrize("whole_rows", [100_000, 5_000])
def test_solve_plot_of_a_grid_keeps_its_dots_and_axes(run_cli, tmp_path, monkeypatch, whole_rows):
    """A grid's dots are drawn whole up to GRID_WHOLE_ROWS rows (read again and joined),
    decimated beyond (each series' range kept; the table is never joined)."""
    pytest.importorskip("matplotlib")
    from linkcli.plot import figures

    monkeypatch.setattr(figures, "GRID_WHOLE_ROWS", whole_rows)
    saved = []
    real = figures.save_figure
    monkeypatch.setattr(figures, "save_figure", lambda fig, path, dpi=100: (saved.append(fig), real(fig, path, dpi)))
    if whole_rows < 101 * 101:
        monkeypatch.setattr(TableStream, "materialize", lambda self: pytest.fail("solve --plot joined the table"))
    r = run_cli("solve", MECH / "fivebar.yaml", "--sweep", "O1=45:135:n101", "--sweep", "O5=45:135:n101",
                "-o", tmp_path / "g.npz", "--plot", tmp_path / "g.png", "-q")
    assert r.exit_code == 0, r.output
    from linkcli.io.writers import read_table_npz

    whole = read_table_npz(tmp_path / "g.npz")
    assert whole.n == 101 * 101
    (fig,) = saved
    lines = {ln.get_label(): ln for ax in fig.axes for ln in ax.get_lines()}
    a = lines["A"]
    assert a.get_linestyle() == "None" and a.get_marker() == "."  # a grid of inputs: dots, as without decimation
    assert any("O1 [deg]" in ax.get_xlabel() for ax in fig.axes)
    assert "O5" in lines  # the second swept input is a plotted joint variable
    path = next(ln for ax in fig.axes for ln in ax.get_lines() if ln.get_gid() == "path:link3.P")
    assert path.get_linestyle() == "None"  # the effector's points over the grid: dots too
    y = a.get_ydata()
    assert (np.nanmin(y), np.nanmax(y)) == (np.nanmin(whole["A.q [deg]"]), np.nanmax(whole["A.q [deg]"]))
    if whole_rows >= whole.n:
        np.testing.assert_array_equal(a.get_xdata(), whole["O1.q [deg]"])  # every dot
        np.testing.assert_array_equal(y, whole["A.q [deg]"])
    else:
        assert len(y) < whole.n / 2
