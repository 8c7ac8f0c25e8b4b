"""Rows of a long result table thinned for a line plot, keeping what a plot shows (numpy only).

A figure of a 10^6-step simulation cannot show 10^6 points per line: a panel is a few hundred
pixels wide. Drawing them all costs memory (the whole table, plus matplotlib's paths: ~1 GB at
10^6 rows, benchmarks/README.md) and time, and plain subsampling (every k-th row) would drop
short peaks -- a driver-torque spike one step long, the very thing a plot is looked at for.

Chosen: **M4 decimation** (Jugel et al., "M4: a visualization-oriented time series data
aggregation", PVLDB 7(10), 2014), the min-max decimation that also keeps each bucket's first
and last row. The rows are cut into ``buckets`` runs of equal length in row order (a
simulation's rows are equally spaced in time, so equal time spans); of each run are kept its
first and last row and, for every plotted series, the rows where it is smallest and largest
(and the first row where a series is not finite, so a gap stays visible). A line drawn through
the kept rows has, within every bucket, the true extremes and end points of every series: with
at least one bucket per pixel column it is the picture of all the rows (the M4 paper's result),
and with fewer it still shows every peak at its true height and time. The kept rows are real
rows (all columns from the same step), so derived quantities (a reaction's magnitude, the energy
budget) computed from them are exact at those rows; series whose extremes matter are given as
``keys`` so their extremes are kept too.

The same rows serve the solve figure (:func:`~linkcli.plot.figures.solve_plot_rows`): a
sweep's rows are equally spaced in its input (a grid's in its first input), so the buckets are
equal spans of the x axis there too.

The table may be a :class:`~linkcli.results.TableStream` (a streamed simulation read back from
its scratch file, a streamed solve computed block by block again): it is read block by block,
and only the kept rows and the candidate rows of the bucket still open are held, at most
``buckets * (3 + 2 K) + 3 + 2 K`` rows for ``K`` key series, whatever the row count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..results import Column, ResultTable, TableStream

#: buckets of a plot: one per pixel column of a 6-inch panel at 160 dpi (figures are 100 dpi by
#: default), so a decimated line is the picture of every row at the usual sizes
PLOT_BUCKETS = 1000


def decimate_rows(table: ResultTable | TableStream, keys: Callable[[ResultTable], np.ndarray],
                  buckets: int = PLOT_BUCKETS, columns: Sequence[str] | None = None) -> ResultTable:
    """The rows of ``table`` a plot needs (M4, see the module docstring), in row order, as a
    ResultTable with ``table``'s metadata (``columns``: keep only these headers; default all).

    ``keys(block)`` gives the plotted series of a block of rows as an ``(rows, K)`` float array
    (row by row: a row's key values depend on that row only). A table of at most ``4 *
    buckets`` rows is returned whole (a stream joined). ``metadata["plot_rows"]`` says how many
    rows the table had and how many were kept."""
    if int(buckets) < 1:
        raise ValueError(f"buckets must be >= 1, got {buckets}")
    n = table.n
    width = -(-n // int(buckets))  # rows per bucket (ceil): at most `buckets` buckets
    if n <= 4 * int(buckets):
        whole = table.materialize() if isinstance(table, TableStream) else table
        return _with_columns(whole, columns, n)
    kept: list[ResultTable] = []
    pending: ResultTable | None = None  # candidate rows of the bucket still open (from earlier blocks)
    pending_rows = np.zeros(0, dtype=np.int64)
    start = 0
    for block in (table.blocks() if isinstance(table, TableStream) else [table]):
        block = _with_columns(block, columns, None)
        rows = np.arange(start, start + block.n, dtype=np.int64)
        start += block.n
        if pending is not None:
            block, rows = _concat([pending, block]), np.concatenate([pending_rows, rows])
        if not len(rows):
            continue
        bucket = rows // width
        chosen = _m4(bucket, np.asarray(keys(block), dtype=float).reshape(len(rows), -1))
        if rows[-1] + 1 < min(n, (bucket[-1] + 1) * width):  # the last bucket goes on in the next block
            is_open = bucket[chosen] == bucket[-1]
            pending, pending_rows = _take(block, chosen[is_open]), rows[chosen[is_open]]
            chosen = chosen[~is_open]
        else:
            pending, pending_rows = None, pending_rows[:0]
        kept.append(_take(block, chosen))
    if pending is not None:  # a table whose blocks hold fewer rows than it says (TableStream raises first)
        kept.append(pending)
    out = _concat(kept) if kept else _with_columns(table.materialize() if isinstance(table, TableStream)
                                                   else table, columns, n)
    out.metadata = {**table.metadata, "plot_rows": {"rows": n, "kept": out.n, "buckets": -(-n // width),
                                                    "method": "M4 (first, last, min, max per bucket)"}}
    return out


def _m4(bucket: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Positions (sorted, unique) of each bucket's first and last row, of the smallest and
    largest value of every key column, and of its first row with a non-finite key. ``bucket``:
    non-decreasing bucket numbers of the rows; ``keys``: (rows, K)."""
    m = len(bucket)
    starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
    ends = np.r_[starts[1:], m] - 1
    group = np.cumsum(np.r_[True, bucket[1:] != bucket[:-1]]) - 1  # 0, 0, 1, 1, 1, ...
    position = np.arange(m)
    picked = [starts, ends]
    finite = np.isfinite(keys)
    for k in range(keys.shape[1]):
        v = keys[:, k]
        for low, fill in ((True, np.inf), (False, -np.inf)):
            w = np.where(finite[:, k], v, fill)  # NaN never wins; an all-NaN bucket gives its first row
            best = (np.minimum if low else np.maximum).reduceat(w, starts)
            picked.append(np.minimum.reduceat(np.where(w == best[group], position, m), starts))
    if not finite.all():
        first_bad = np.minimum.reduceat(np.where(finite.all(axis=1), m, position), starts)
        picked.append(first_bad[first_bad < m])
    return np.unique(np.concatenate(picked))


def _take(table: ResultTable, positions: np.ndarray) -> ResultTable:
    out = ResultTable(len(positions), metadata=table.metadata, units=table.units)
    for c in table.columns:
        out.add_column(Column(c.entity, c.quantity, c.unit, c.values[positions]))
    return out


def _concat(tables: list[ResultTable]) -> ResultTable:
    if len(tables) == 1:
        return tables[0]
    first = tables[0]
    out = ResultTable(sum(t.n for t in tables), metadata=first.metadata, units=first.units)
    for k, c in enumerate(first.columns):
        out.add_column(Column(c.entity, c.quantity, c.unit, np.concatenate([t.columns[k].values for t in tables])))
    return out


def _with_columns(table: ResultTable, columns: Sequence[str] | None, n: int | None) -> ResultTable:
    """A new table of ``table``'s ``columns`` (all when None; views of the same arrays, its
    metadata copied); ``n`` given: the table is whole, noted in ``plot_rows``."""
    out = ResultTable(table.n, metadata=table.metadata, units=table.units)
    for c in (table.columns if columns is None else [table.column(h) for h in columns]):
        out.add_column(Column(c.entity, c.quantity, c.unit, c.values))
    if n is not None:
        out.metadata["plot_rows"] = {"rows": n, "kept": n, "buckets": None, "method": "all rows"}
    return out


__all__ = ["PLOT_BUCKETS", "decimate_rows"]
