"""A streamed result table that a batch job's figures and checks can read, one column at a time
(:class:`StreamedColumns`): what a batch simulate job returns (:mod:`linkcli.batch.analyses`)."""

from __future__ import annotations

import numpy as np

from ..results import Column, TableStream


class StreamedColumns(TableStream):
    """A streamed result table (a :class:`~linkcli.results.TableStream`, e.g. a simulation's rows
    in a scratch file: the writers read it block by block) that also answers what a job's
    figures and checks ask of a ResultTable (:mod:`linkcli.batch.figures`): ``column(h)``,
    ``table[h]`` and ``h in table``. A column is read block by block and joined: one column in
    memory (8 bytes per row for numbers), never the table (~330 bytes per row for a four-bar's
    simulation). Whole columns, not running reductions over blocks: a figure's mean, std or RMS
    (numpy's pairwise sums) would differ in the last bits from the same figure over the whole
    column, and a job's figures are the same whichever way its table is held. Each column asked
    for is one pass over the scratch file (figures and checks ask for a few)."""

    def __init__(self, stream) -> None:
        super().__init__(stream.n, stream.blocks, metadata=stream.metadata, units=stream.units)
        self.metadata = stream.metadata

    def __contains__(self, header: str) -> bool:
        return header in self.headers()

    def column(self, header: str):
        """The column ``header`` (a :class:`~linkcli.results.Column`) read from every block;
        KeyError for a header the table does not have."""
        headers = self.headers()
        if header not in headers:
            raise KeyError(header)
        k = headers.index(header)
        parts, first = [], None
        for block in self.blocks():
            first = first or block.columns[k]
            parts.append(block.columns[k].values)
        if first is None:  # no rows (blocks of a TableStream have at least one)
            raise KeyError(header)
        return Column(first.entity, first.quantity, first.unit, np.concatenate(parts))

    def __getitem__(self, header: str):
        return self.column(header).values


__all__ = ["StreamedColumns"]
