"""Result tables: named columns with units, one row per case (sweep point, time sample ...).

A :class:`ResultTable` is what every analysis command hands to the writers
(:func:`linkcli.io.writers.write_table`) or to the terminal (:func:`linkcli.cli.render.render_table`).
It holds whole columns (numpy arrays of length ``n``), never rows: building one is vectorised,
and only the writer walks rows. Column headers read ``entity.quantity [unit]``::

    coupler.P.x [m]      crank_pin.q [deg]      crank_pin.qd [deg/s]      residual [m]      status

Units: lengths and angles in the mechanism file's units (:class:`Units` scales SI values from
the core), mass kg, force N, torque N m, time s. A unitless column has ``unit=""`` and no bracket.

Typical use in a command (``mech`` is a CompiledMechanism, ``loaded`` its LoadedMechanism)::

    table = ResultTable.for_mechanism(mech, loaded, n=len(t), solver={"tol": 1e-10})
    table.add("", "t", "s", t)
    table.add_q(mech.q_names, q, mech.q_is_rotation)              # (n, n_q) SI -> file units
    table.add_length("coupler.P", "x", p[:, 0])                    # m -> file length unit
    table.add_codes("", "status", status_codes, STATUS_NAMES)      # int codes -> labels
    table.metadata["events"].append({...})

Tables too long to hold: :class:`TableStream` (blocks of rows computed as a writer asks for
them) and :class:`TableSpool` (blocks appended as a run computes them, kept in an anonymous
scratch file, read back as a TableStream).

This module does no numerics beyond unit scaling and imports nothing from ``linkcli.core``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from linkcli import __version__

#: Units that never depend on the file (documented in README.md).
FIXED_UNITS = {"mass": "kg", "force": "N", "torque": "N m", "time": "s"}


def header_of(entity: str, quantity: str, unit: str) -> str:
    """``("coupler.P", "x", "m")`` -> ``coupler.P.x [m]``; empty entity or unit are left out:
    ``("", "status", "")`` -> ``status``, ``("", "residual", "m")`` -> ``residual [m]``."""
    name = f"{entity}.{quantity}" if entity else quantity
    return f"{name} [{unit}]" if unit else name


@dataclass(eq=False)
class Column:
    """One column: ``values`` is a 1-D array (float, int, bool, or str for labels)."""

    entity: str
    quantity: str
    unit: str
    values: np.ndarray

    @property
    def header(self) -> str:
        return header_of(self.entity, self.quantity, self.unit)

    @property
    def kind(self) -> str:
        """``float``, ``int``, ``bool`` or ``str`` (how writers format the values)."""
        k = self.values.dtype.kind
        return {"f": "float", "i": "int", "u": "int", "b": "bool"}.get(k, "str")

    def __repr__(self) -> str:
        return f"Column({self.header!r}, n={len(self.values)}, dtype={self.values.dtype})"


@dataclass(frozen=True)
class Units:
    """Output units of one mechanism and the factors from SI: ``value_file = value_si / scale``.
    ``length_scale`` is metres per file length unit, ``angle_scale`` radians per angle unit
    (the same numbers as ``CompiledMechanism.length_scale`` / ``angle_scale``)."""

    length: str = "m"
    angle: str = "rad"
    length_scale: float = 1.0
    angle_scale: float = 1.0

    @classmethod
    def of(cls, mech: Any) -> Units:
        """Units of a CompiledMechanism (any object with length_unit, angle_unit, length_scale,
        angle_scale)."""
        return cls(mech.length_unit, mech.angle_unit, float(mech.length_scale), float(mech.angle_scale))

    def length_from_si(self, values: Any) -> np.ndarray:
        return np.asarray(values, dtype=float) / self.length_scale

    def angle_from_si(self, values: Any) -> np.ndarray:
        return np.asarray(values, dtype=float) / self.angle_scale

    def q_scale(self, is_rotation: Any) -> np.ndarray:
        """SI units per file unit for each joint variable: angle_scale or length_scale."""
        return np.where(np.asarray(is_rotation, dtype=bool), self.angle_scale, self.length_scale)

    def q_from_si(self, q: Any, is_rotation: Any) -> np.ndarray:
        """Joint values ``(..., n_q)`` in SI (rad or m) -> file units (broadcast on the last axis)."""
        return np.asarray(q, dtype=float) / self.q_scale(is_rotation)

    def q_unit(self, is_rotation: bool, per: str = "") -> str:
        """Unit label of one joint variable (``deg``, ``mm``), or of its rate with ``per="s"``
        (``deg/s``) or ``per="s^2"``."""
        base = self.angle if is_rotation else self.length
        return f"{base}/{per}" if per else base

    def to_dict(self) -> dict:
        return {"length": self.length, "angle": self.angle, **FIXED_UNITS}


class ResultTable:
    """Named columns of equal length ``n`` plus a metadata dict (JSON-serialisable values).

    ``metadata`` keys set by :meth:`for_mechanism`: ``linkcli_version``, ``mechanism``,
    ``file``, ``file_sha256``, ``units``, ``warnings`` (list of Diagnostic dicts), ``events``
    (list), plus any keyword given (e.g. ``solver={...}``, ``analysis="solve"``).
    """

    def __init__(self, n: int | None = None, *, metadata: Mapping[str, Any] | None = None,
                 units: Units | None = None) -> None:
        self._n = None if n is None else int(n)
        self.columns: list[Column] = []
        self.metadata: dict[str, Any] = {"linkcli_version": __version__}
        if metadata:
            self.metadata.update(metadata)
        self.units = units or Units()
        self._index: dict[str, int] = {}

    @classmethod
    def for_mechanism(cls, mech: Any, loaded: Any = None, n: int | None = None, **metadata: Any) -> ResultTable:
        """An empty table whose metadata names the mechanism, its file, SHA-256 and units.
        ``loaded`` (a LoadedMechanism) adds the file hash and its warnings."""
        units = Units.of(mech)
        meta: dict[str, Any] = {
            "linkcli_version": __version__,
            "mechanism": getattr(mech, "name", ""),
            "file": getattr(loaded, "path", None) or getattr(mech, "file", "") or None,
            "file_sha256": getattr(loaded, "sha256", None) or None,
            "units": units.to_dict(),
            "warnings": [d.to_dict() for d in getattr(loaded, "warnings", ())],
            "events": [],
        }
        meta.update(metadata)
        return cls(n, metadata=meta, units=units)

    # -- size and lookup ------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of rows (0 for a table without columns and without a given n)."""
        return self._n or 0

    def __len__(self) -> int:
        return self.n

    def headers(self) -> list[str]:
        return [c.header for c in self.columns]

    def column(self, header: str) -> Column:
        """The column with this header; KeyError naming the close matches otherwise."""
        try:
            return self.columns[self._index[header]]
        except KeyError:
            import difflib

            close = difflib.get_close_matches(header, self._index, n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise KeyError(f"no column {header!r}.{hint}") from None

    def find(self, entity: str, quantity: str) -> Column | None:
        """The column of ``entity``'s ``quantity`` whatever its unit (None when there is none):
        plots and scripts look data up by name, not by parsing header strings."""
        return next((c for c in self.columns if c.entity == entity and c.quantity == quantity), None)

    def __getitem__(self, header: str) -> np.ndarray:
        return self.column(header).values

    def __contains__(self, header: object) -> bool:
        return header in self._index

    def __repr__(self) -> str:
        return f"ResultTable(n={self.n}, columns={self.headers()})"

    # -- adding columns -------------------------------------------------------------------------
    def add(self, entity: str, quantity: str, unit: str, values: Any) -> Column:
        """Append a column. ``values``: array-like of length n (a scalar is repeated n times);
        floats, ints, bools or strings (Enum members are written by name). ``unit=""`` (or
        ``"-"``) marks a unitless column. The first column fixes n when it was not given."""
        unit = "" if unit in ("-", "1", None) else str(unit)
        arr = self._as_column_array(values)
        col = Column(str(entity), str(quantity), unit, arr)
        return self.add_column(col)

    def add_column(self, col: Column) -> Column:
        header = col.header
        if header in self._index:
            raise ValueError(f"duplicate column {header!r}")
        if col.values.ndim != 1:
            raise ValueError(f"column {header!r} must be 1-D, got shape {col.values.shape}")
        if self._n is None:
            self._n = len(col.values)
        elif len(col.values) != self._n:
            raise ValueError(f"column {header!r} has {len(col.values)} values, the table has {self._n} rows")
        col.values.setflags(write=False)
        self._index[header] = len(self.columns)
        self.columns.append(col)
        return col

    def add_length(self, entity: str, quantity: str, values_si: Any, per: str = "") -> Column:
        """Add a length (m, or m/``per``) converted to the file's length unit."""
        unit = self.units.length + (f"/{per}" if per else "")
        return self.add(entity, quantity, unit, self.units.length_from_si(values_si))

    def add_angle(self, entity: str, quantity: str, values_si: Any, per: str = "") -> Column:
        """Add an angle (rad, or rad/``per``) converted to the file's angle unit."""
        unit = self.units.angle + (f"/{per}" if per else "")
        return self.add(entity, quantity, unit, self.units.angle_from_si(values_si))

    def add_q(self, names: Sequence[str], q_si: Any, is_rotation: Any, quantity: str = "q",
              per: str = "", file_values: dict[int, Any] | None = None) -> list[Column]:
        """One column per joint variable from an ``(n, n_q)`` SI array: ``<name>.q [deg]``.
        Use ``quantity="qd", per="s"`` for rates and ``quantity="qdd", per="s^2"``.
        ``file_values``: variable index -> (n,) values already in the file's units, written as
        they are (the requested inputs, exactly as asked) instead of that SI column."""
        q = np.asarray(q_si, dtype=float)
        if q.ndim != 2 or q.shape[1] != len(names):
            raise ValueError(f"q must have shape (n, {len(names)}), got {q.shape}")
        rot = np.asarray(is_rotation, dtype=bool).reshape(len(names))
        scaled = self.units.q_from_si(q, rot)
        for k, values in (file_values or {}).items():
            scaled[:, k] = values
        return [self.add(name, quantity, self.units.q_unit(bool(r), per), scaled[:, k])
                for k, (name, r) in enumerate(zip(names, rot, strict=True))]

    def add_codes(self, entity: str, quantity: str, codes: Any, labels: Sequence[str] | type[Enum]) -> Column:
        """A label column from integer codes, vectorised: ``labels[codes]``. ``labels`` may be a
        sequence of strings or an Enum class whose values are the codes (names are written)."""
        if isinstance(labels, type) and issubclass(labels, Enum):
            members = list(labels)
            table = [""] * (max(int(m.value) for m in members) + 1)
            for m in members:
                table[int(m.value)] = m.name
            labels = table
        lab = np.asarray(list(labels), dtype=str)
        return self.add(entity, quantity, "", lab[np.asarray(codes, dtype=int)])

    def _as_column_array(self, values: Any) -> np.ndarray:
        if isinstance(values, (str, bytes, Enum)) or np.ndim(values) == 0:
            if self._n is None:
                raise ValueError("a scalar column needs the table's n: give n to ResultTable()")
            value = values.name if isinstance(values, Enum) else values
            return np.full(self._n, value)
        arr = np.asarray(values)
        if arr.dtype.kind == "O":
            flat = [v.name if isinstance(v, Enum) else v for v in arr.ravel().tolist()]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in flat):
                arr = np.asarray(flat, dtype=float).reshape(arr.shape)
            else:
                arr = np.asarray(["" if v is None else str(v) for v in flat], dtype=str).reshape(arr.shape)
        elif arr.dtype.kind in "SU":
            arr = arr.astype(str)
        elif arr.dtype.kind == "f" and arr.dtype != np.float64:
            arr = arr.astype(np.float64)
        elif arr.dtype.kind not in "fiub":
            raise TypeError(f"unsupported column dtype {arr.dtype}")
        else:
            arr = arr.copy()
        return arr

    # -- rows (small tables, tests, rendering) --------------------------------------------------
    def to_records(self) -> list[dict[str, Any]]:
        """Rows as dicts ``{header: python value}``; NaN stays float('nan'). Per-row Python work:
        meant for small tables and tests, not for writing large outputs."""
        heads = self.headers()
        cols = [c.values.tolist() for c in self.columns]
        return [dict(zip(heads, row, strict=True)) for row in zip(*cols, strict=True)]

    def slice(self, start: int | None = None, stop: int | None = None) -> ResultTable:
        """Rows start:stop as a new table (views of the same arrays, same metadata)."""
        out = ResultTable(metadata=self.metadata, units=self.units)
        for c in self.columns:
            out.add_column(Column(c.entity, c.quantity, c.unit, c.values[start:stop]))
        if not self.columns:
            out._n = len(range(*slice(start, stop).indices(self.n)))
        return out


class TableStream:
    """A result table too long to hold: ``n`` rows, ``metadata`` and ``units`` as in a
    :class:`ResultTable`, its rows given by :meth:`blocks` as ResultTables of consecutive rows
    (the same columns in each). The writers (:func:`linkcli.io.writers.write_table`) append
    block after block, so only one block is in memory at a time; every figure of the whole run
    is in ``metadata`` before the first block. ``blocks()`` computes the blocks anew at each
    call (``make_blocks`` is a function returning an iterable of them)."""

    def __init__(self, n: int, make_blocks: Callable[[], Iterable[ResultTable]], *,
                 metadata: Mapping[str, Any] | None = None, units: Units | None = None) -> None:
        self._n = int(n)
        self._make_blocks = make_blocks
        self.metadata: dict[str, Any] = {"linkcli_version": __version__}
        if metadata:
            self.metadata.update(metadata)
        self.units = units or Units()
        self._headers: list[str] | None = None

    @property
    def n(self) -> int:
        return self._n

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return f"TableStream(n={self._n})"

    def blocks(self) -> Iterator[ResultTable]:
        """The blocks in row order; ValueError when a block's columns differ from the first
        block's or the row counts do not add up to ``n`` (a bug in the producer)."""
        rows = 0
        for block in self._make_blocks():
            headers = block.headers()
            if self._headers is None:
                self._headers = headers
            elif headers != self._headers:
                raise ValueError(f"a block's columns {headers} differ from the table's {self._headers}")
            rows += block.n
            yield block
        if rows != self._n:
            raise ValueError(f"the blocks hold {rows} rows, the table {self._n}")

    def headers(self) -> list[str]:
        """Column headers (computes the first block when none was computed yet)."""
        if self._headers is None:
            first = next(iter(self._make_blocks()), None)
            self._headers = first.headers() if first is not None else []
        return list(self._headers)

    def ends(self, head: int, tail: int) -> ResultTable:
        """The first ``head`` and the last ``tail`` rows as one table (every row when ``n <=
        head + tail``), read block by block: memory holds those rows and one block, not the
        table (the terminal shows a long table's ends)."""
        head, tail = max(0, int(head)), max(0, int(tail))
        if self._n <= head + tail:
            return self.materialize()
        first: list[ResultTable] = []
        last: list[ResultTable] = []  # the latest blocks holding at least `tail` rows
        got = start = 0
        for block in self.blocks():
            if got < head:
                first.append(block.slice(0, head - got))
                got += first[-1].n
            stop = start + block.n
            if stop > self._n - tail:
                last.append(block.slice(max(0, self._n - tail - start)))
            start = stop
        parts = first + last
        out = ResultTable(head + tail, metadata=self.metadata, units=self.units)
        for k, c in enumerate(parts[0].columns if parts else []):
            out.add_column(Column(c.entity, c.quantity, c.unit, np.concatenate([p.columns[k].values for p in parts])))
        return out

    def materialize(self) -> ResultTable:
        """The whole table in memory (the blocks' columns joined)."""
        parts: list[list[Column]] = []
        for block in self.blocks():
            if not parts:
                parts = [[c] for c in block.columns]
            else:
                for p, c in zip(parts, block.columns, strict=True):
                    p.append(c)
        out = ResultTable(self._n, metadata=self.metadata, units=self.units)
        while parts:  # column by column, dropping the blocks' pieces as they are joined
            p = parts.pop(0)
            values = p[0].values if len(p) == 1 else np.concatenate([c.values for c in p])
            out.add_column(Column(p[0].entity, p[0].quantity, p[0].unit, values))
        return out


class TableSpool:
    """The blocks of a table appended as they are computed (a simulation, step chunk after step
    chunk), kept in an anonymous scratch file instead of memory, then given back by
    :meth:`stream` as a :class:`TableStream` for the writers -- for producers that know the
    figures of the whole run (its metadata, its row count) only after its last row. Each
    column's values are stored as raw bytes of their dtype (float64 exact, text as fixed-width
    unicode), so the blocks read back are the blocks appended, bit for bit. The scratch file
    is created in ``directory`` (default: the system's temporary directory; give the output's
    directory, the disk it is written to anyway), removed by the OS however the process ends,
    and closed with :meth:`close` or when the spool is garbage collected."""

    def __init__(self, directory: str | None = None) -> None:
        import tempfile

        # a missing or unwritable ``directory`` is an OSError (the CLI checks the output's directory
        # before the run: linkcli.io.writers.check_output), never a quiet switch to another disk
        self._file = tempfile.TemporaryFile(dir=directory or None)
        self._segments: list[tuple[int, list[tuple[int, np.dtype]]]] = []  # (rows, (offset, dtype) per column)
        self._columns: list[tuple[str, str, str]] | None = None
        self.n = 0

    def append(self, block: ResultTable) -> None:
        """Store ``block``'s rows after those appended before (the same columns each time)."""
        columns = [(c.entity, c.quantity, c.unit) for c in block.columns]
        if self._columns is None:
            self._columns = columns
        elif columns != self._columns:
            raise ValueError(f"a block's columns {block.headers()} differ from the spool's first block's")
        self._file.seek(0, 2)
        parts = []
        for c in block.columns:
            values = np.ascontiguousarray(c.values)
            parts.append((self._file.tell(), values.dtype))
            self._file.write(values.tobytes())  # a copy of one block's column, as bytes
        self._segments.append((block.n, parts))
        self.n += block.n

    def blocks(self, units: Units | None = None) -> Iterator[ResultTable]:
        """The appended blocks, read back one at a time, in order."""
        for rows, parts in self._segments:
            block = ResultTable(rows, units=units)
            for (entity, quantity, unit), (offset, dtype) in zip(self._columns or [], parts, strict=True):
                self._file.seek(offset)
                values = np.frombuffer(self._file.read(rows * dtype.itemsize), dtype=dtype)
                block.add_column(Column(entity, quantity, unit, values))
            yield block

    def stream(self, metadata: Mapping[str, Any] | None = None, units: Units | None = None) -> TableStream:
        """The spooled rows as a TableStream (read back from the scratch file at each pass)."""
        return TableStream(self.n, lambda: self.blocks(units), metadata=metadata, units=units)

    def close(self) -> None:
        self._file.close()


def json_safe(value: Any) -> Any:
    """Metadata value -> plain JSON data: numpy scalars/arrays to Python, Enums by name, NaN and
    infinities to None, dataclasses and objects with ``to_dict`` to dicts, other objects to str."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, np.generic):
        return json_safe(value.item())
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    if hasattr(value, "to_dict"):
        return json_safe(value.to_dict())
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_safe(dataclasses.asdict(value))
    return str(value)


__all__ = ["Column", "ResultTable", "TableSpool", "TableStream", "Units", "FIXED_UNITS", "header_of", "json_safe"]
