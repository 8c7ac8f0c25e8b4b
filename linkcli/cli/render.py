"""Rich rendering of result tables on a terminal (rich is imported lazily).

Files keep full precision (:mod:`linkcli.io.writers`); the terminal shows 6 significant digits,
the first and last rows of long tables, and as many columns as fit the console width, with a
caption saying what was left out and how to get everything (``--format csv`` or ``-o FILE``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from linkcli.results import ResultTable

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


def render_table(table: "ResultTable", console: "Console", max_rows: int = 40, title: str | None = None,
                 columns: Sequence[str] | None = None) -> None:
    """Print ``table`` with rich.

    ``columns``: headers to show (default all, in order); columns that do not fit the console
    width are left out (the first one always shows) and the caption names how many. Rows:
    the first and last ``max_rows // 2`` when there are more than ``max_rows``.
    """
    from rich import box
    from rich.table import Table

    from linkcli.errors import visible

    def escape(text: str) -> str:  # no rich markup, no terminal control characters
        from rich.markup import escape as escape_markup

        return escape_markup(visible(text))

    cols = [table.column(h) for h in columns] if columns is not None else list(table.columns)
    n = table.n
    ranges = _row_ranges(n, max_rows)
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

    budget = max(console.width - 2, 20)
    shown: list[int] = []
    widths: dict[int, int] = {}
    used = 0
    for k, c in enumerate(cols):
        need = max([len(c.header)] + [len(s) for s in cells[k] if s is not None]) + 3
        if shown and used + need > budget:
            break
        shown.append(k)
        widths[k] = need - 3  # + 2 padding + 1 separator
        used += need

    caption = f"{n} rows" + (f", {max_rows} shown" if n > max_rows else "")
    if len(shown) < len(cols):
        caption += (f"; {len(shown)} of {len(cols)} columns shown (all of them: --format csv|json or -o FILE)")
    rich_table = Table(title=None if title is None else escape(title), caption=caption, header_style="bold",
                       box=box.SIMPLE_HEAD, pad_edge=False)
    for k in shown:
        c = cols[k]
        rich_table.add_column(escape(c.header), justify="right" if c.kind in ("float", "int") else "left",
                              overflow="fold", min_width=widths[k])
    n_cells = len(cells[0]) if cells else 0
    for i in range(n_cells):
        rich_table.add_row(*(ELLIPSIS if cells[k][i] is None else escape(cells[k][i]) for k in shown))  # type: ignore[arg-type]
    console.print(rich_table)


__all__ = ["render_table", "format_cell"]
