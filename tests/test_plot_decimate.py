"""``simulate --plot`` of a long run draws M4-decimated rows (linkcli.plot.decimate): memory
bounded by the number of buckets, not the run's length, and every line's true extremes kept
(issue #11 review: a 10^6-step plot held the whole table, ~1 GB)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linkcli.plot.decimate import decimate_rows
from linkcli.results import ResultTable, TableStream

MECH = Path(__file__).resolve().parent.parent / "mechanisms"


def _sim_table(n: int, spike_at: int, dt: float = 1e-3) -> ResultTable:
    """A simulate-like table: smooth lines plus one-row spikes (driver torque up and down, and a
    reaction whose magnitude peaks where neither component does)."""
    t = np.arange(n) * dt
    table = ResultTable(n, metadata={"mechanism": "synthetic"})
    table.add("", "t", "s", t)
    table.add("crank", "q", "rad", 2.0 * t)
    torque = np.sin(t)
    torque[spike_at] = 1000.0
    torque[spike_at + 1] = -500.0
    table.add("motor", "torque", "N m", torque)
    fx, fy = np.cos(t), np.sin(t)  # magnitude 1 everywhere ...
    fx[spike_at + 7], fy[spike_at + 7] = 0.9, 0.9  # ... but 1.27 here, where each component is < its max 1
    table.add("J", "Fx", "N", fx)
    table.add("J", "Fy", "N", fy)
    table.add("energy", "kinetic", "J", 1.0 + np.cos(t) ** 2)
    table.add("energy", "potential", "J", 1.0 + np.sin(t) ** 2)
    table.add("energy", "total", "J", np.full(n, 3.0))
    table.add("energy", "work_drivers", "J", np.zeros(n))
    return table


def _stream(table: ResultTable, rows: int) -> TableStream:
    return TableStream(table.n, lambda: (table.slice(s, s + rows) for s in range(0, table.n, rows)),
                       metadata=table.metadata, units=table.units)


def _bound(buckets: int, k: int) -> int:
    """Kept rows at most: per bucket first, last, a non-finite row and min and max of each of K
    series (the module docstring's bound)."""
    return buckets * (3 + 2 * k) + 3 + 2 * k


def test_a_one_row_spike_among_1e5_rows_survives_and_the_rows_are_bounded():
    from linkcli.plot.figures import simulation_plot_rows

    n, spike = 100_000, 54_321
    whole = _sim_table(n, spike)
    rows = simulation_plot_rows(_stream(whole, 7_777), buckets=1000)  # blocks not aligned with buckets
    # K = 1 q + 1 driver + 1 reaction magnitude + 3 energies + summed work + total - work = 8 series
    assert rows.n <= _bound(1000, 8) and rows.n < n / 5, rows.n
    torque = rows["motor.torque [N m]"]
    t = rows["t [s]"]
    assert torque.max() == 1000.0 and t[np.argmax(torque)] == whole["t [s]"][spike]  # the peak at its time
    assert torque.min() == -500.0 and t[np.argmin(torque)] == whole["t [s]"][spike + 1]
    mag = np.hypot(rows["J.Fx [N]"], rows["J.Fy [N]"])
    assert mag.max() == np.hypot(0.9, 0.9)  # a derived line's extreme is kept, not only its columns'
    assert t[0] == 0.0 and t[-1] == whole["t [s]"][-1] and np.all(np.diff(t) > 0)  # ends kept, in order
    # the kept rows are real rows: every column from the same step
    k = np.searchsorted(whole["t [s]"], t)
    for h in rows.headers():
        np.testing.assert_array_equal(rows[h], whole[h][k])
    assert rows.metadata["plot_rows"]["rows"] == n and rows.metadata["mechanism"] == "synthetic"


def _brute_m4(keys: np.ndarray, width: int) -> set[int]:
    """Independent M4 by plain loops over each bucket of ``width`` rows."""
    out: set[int] = set()
    for s in range(0, len(keys), width):
        rows = list(range(s, min(s + width, len(keys))))
        out |= {rows[0], rows[-1]}
        bad = [r for r in rows if not np.all(np.isfinite(keys[r]))]
        if bad:
            out.add(bad[0])
        for k in range(keys.shape[1]):
            good = [r for r in rows if np.isfinite(keys[r, k])]
            if not good:
                out.add(rows[0])
                continue
            out.add(min(good, key=lambda r: (keys[r, k], r)))
            out.add(min(good, key=lambda r: (-keys[r, k], r)))
    return out


@pytest.mark.parametrize("block", [1, 7, 64, 5003])
def test_the_kept_rows_are_m4_of_the_whole_table_for_any_block_size(block):
    rng = np.random.default_rng(11)
    n, buckets = 5003, 50
    keys = rng.normal(size=(n, 3))
    keys[rng.integers(0, n, 40), rng.integers(0, 3, 40)] = np.nan
    keys[300:420, 1] = np.nan  # a whole bucket of NaN in one series
    keys[10, 2] = keys[20, 2] = keys[15:100, 2].max() + 1  # ties: the first row wins
    table = ResultTable(n)
    table.add("", "row", "", np.arange(n))
    for k in range(3):
        table.add("s", f"k{k}", "", keys[:, k])
    series = lambda b: np.column_stack([b[f"s.k{k}"] for k in range(3)])  # noqa: E731
    got = decimate_rows(_stream(table, block), series, buckets)
    width = -(-n // buckets)
    assert set(got["row"].tolist()) == _brute_m4(keys, width)
    assert got.n <= _bound(buckets, 3)


def test_short_tables_are_drawn_whole():
    table = _sim_table(3000, 100)
    rows = decimate_rows(_stream(table, 999), lambda b: np.zeros((b.n, 0)), buckets=1000)
    assert rows.n == 3000 and rows.metadata["plot_rows"]["method"] == "all rows"
    assert "plot_rows" not in table.metadata  # the caller's table is not changed


def test_the_figure_draws_the_spike_from_few_points():
    pytest.importorskip("matplotlib")
    from linkcli.plot.figures import simulation_figure

    n, spike = 100_000, 12_345
    fig = simulation_figure(_stream(_sim_table(n, spike), 4096))
    lines = {line.get_label(): line for ax in fig.axes for line in ax.get_lines()}
    torque = lines["motor torque"]
    assert np.max(torque.get_ydata()) == 1000.0 and np.min(torque.get_ydata()) == -500.0
    assert len(torque.get_xdata()) < n / 5
    energy = next(line for label, line in lines.items() if label.startswith("initial + work"))
    assert "max diff 0 J" in energy.get_label()  # total 3 J = total(0) + 0 work at every row


def test_simulate_plot_does_not_hold_the_whole_run(run_cli, monkeypatch, tmp_path):
    """The command hands the streamed table to the figure: joining it (materialize) fails here
    (tables of at most 4 x 1,000 buckets rows are joined: they are small)."""
    pytest.importorskip("matplotlib")

    def whole(self):
        raise AssertionError("simulate --plot joined the whole table")

    monkeypatch.setattr(TableStream, "materialize", whole)
    res = run_cli("simulate", MECH / "motor_fourbar.yaml", "--t-end", "5", "-o", tmp_path / "run.npz",  # 5,001 rows
                  "--plot", tmp_path / "run.png", "-q")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "run.png").stat().st_size > 1000 and (tmp_path / "run.npz").is_file()
