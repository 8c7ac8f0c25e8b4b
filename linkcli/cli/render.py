"""Rich rendering of result tables on a terminal (rich is imported lazily).

Files keep full precision (:mod:`linkcli.io.writers`); the terminal shows 6 significant digits,
the first and last rows of long tables and every column: a one-row table as name/value pairs,
a wide one wrapped into several tables that each repeat the first column and ``status``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from linkcli.results import ResultTable, TableStream

ELLIPSIS = "…"


def format_cell(value: Any, kind: str) -> str:
    """Numbers with 6 significant digits for reading (files keep full precision)."""
    if kind == "float":
        if isinstance(value, float) and math.isnan(value):
            return "nan"
        return f"{value:.6g}"
    if kind == "bool":
        return "true" if value else "false"
    return str(value)


def _row_ranges(n: int, max_rows: int) -> list[tuple[int, int] | None]:
    """Row ranges to show; ``None`` marks the elided middle."""
    if n <= max_rows:
        return [(0, n)]
    head = max_rows - max_rows // 2
    return [(0, head), None, (n - max_rows // 2, n)]


def render_table(table: ResultTable | TableStream, console: Console, max_rows: int = 40, title: str | None = None,
                 columns: Sequence[str] | None = None) -> None:
    """Print ``table`` with rich, every column (headers carry the units).

    ``columns``: headers to show (default all, in order). A one-row table prints as name/value
    pairs. A table wider than the console wraps: it prints as several tables of the columns
    that fit, each repeating the first column and ``status`` (so a failed row is never shown
    without its status). Rows: the first and last ``max_rows // 2`` when there are more than
    ``max_rows``.
    """
    from rich import box
    from rich.table import Table

    from linkcli.errors import visible

    def escape(text: str) -> str:  # no rich markup, no terminal control characters
        from rich.markup import escape as escape_markup

        return escape_markup(visible(text))

    from linkcli.results import TableStream

    n = table.n
    ranges = _row_ranges(n, max_rows)
    if isinstance(table, TableStream):  # a long run: only the rows shown are read into memory
        if len(ranges) == 1:
            table = table.materialize()
        else:
            head, tail = ranges[0][1], n - ranges[2][0]  # type: ignore[index]
            table = table.ends(head, tail)
            ranges = [(0, head), None, (head, head + tail)]
    cols = [table.column(h) for h in columns] if columns is not None else list(table.columns)
    if n == 1 and len(cols) > 1:
        pairs = Table(title=None if title is None else escape(title), caption="1 row", header_style="bold",
                      box=box.SIMPLE_HEAD, pad_edge=False)
        pairs.add_column("column", overflow="fold")
        pairs.add_column("value", justify="right", overflow="fold")
        for c in cols:
            pairs.add_row(escape(c.header), escape(format_cell(c.values[0].item(), c.kind)))
        console.print(pairs)
        return

    cells: list[list[str | None]] = []
    for c in cols:
        kind = c.kind
        col_cells: list[str | None] = []
        for part in ranges:
            if part is None:
                col_cells.append(None)
            else:
                col_cells.extend(format_cell(v, kind) for v in c.values[part[0]:part[1]].tolist())
        cells.append(col_cells)
    width = [max([len(c.header)] + [len(s) for s in cells[k] if s is not None]) for k, c in enumerate(cols)]
    groups = _column_groups(cols, width, max(console.width - 2, 20))

    caption = f"{n} rows" + (f", {max_rows} shown" if n > max_rows else "")
    n_cells = len(cells[0]) if cells else 0
    for g, group in enumerate(groups):
        last = g == len(groups) - 1
        part_note = f" (columns, part {g + 1} of {len(groups)})" if len(groups) > 1 else ""
        rich_table = Table(title=None if title is None else escape(title) + part_note,
                           caption=caption if last else None, header_style="bold", box=box.SIMPLE_HEAD,
                           pad_edge=False)
        for k in group:
            c = cols[k]
            rich_table.add_column(escape(c.header), justify="right" if c.kind in ("float", "int") else "left",
                                  overflow="fold", min_width=min(width[k], 40))
        for i in range(n_cells):
            rich_table.add_row(*(ELLIPSIS if cells[k][i] is None else escape(cells[k][i]) for k in group))  # type: ignore[arg-type]
        console.print(rich_table)


def _column_groups(cols: list, width: list[int], budget: int) -> list[list[int]]:
    """Column indices per printed table: each holds the first column and ``status`` (pinned)
    and as many others, in order, as fit ``budget`` characters (at least one)."""
    pinned = [0] + [k for k, c in enumerate(cols) if k and c.quantity == "status" and not c.entity]
    rest = [k for k in range(len(cols)) if k not in pinned]
    need = [w + 3 for w in width]  # + 2 padding + 1 separator
    base = sum(need[k] for k in pinned)
    groups: list[list[int]] = []
    current: list[int] = []
    used = base
    for k in rest:
        if current and used + need[k] > budget:
            groups.append(current)
            current, used = [], base
        current.append(k)
        used += need[k]
    groups.append(current)
    first, status = pinned[:1], pinned[1:]
    return [first + group + status for group in groups] if cols else [[]]


__all__ = ["render_table", "format_cell"]
