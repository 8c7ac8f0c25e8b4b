"""Write :class:`~linkcli.results.ResultTable` objects to CSV or JSON, atomically.

* :func:`write_table` picks the format from the extension (``.csv``, ``.json``) or ``format=``,
  writes a temporary file in the target's directory, flushes and fsyncs it, then ``os.replace``s
  it over the target: readers see the old file or the complete new one, never a partial file.
  On any exception (including KeyboardInterrupt) the temporary file is removed and an existing
  target is left untouched.
* :func:`dump_table` writes the same text to an open stream (stdout for ``--format csv|json``).
* :func:`atomic_write_text` is the atomic primitive, for other outputs (schemas, reports).

CSV layout: one header line (``entity.quantity [unit]``), then one line per row. Floats are
written with Python's shortest round-trip repr (``0.1``, ``1e-12``; reading them back gives the
identical float64); NaN is ``nan`` and infinities ``inf``/``-inf``; bools ``true``/``false``;
text is quoted only when it holds a comma, quote or line break (RFC 4180). No metadata (use JSON).

JSON layout (columnar, one array per column)::

    {
      "format": "linkcli.table/1",
      "metadata": {"linkcli_version": ..., "file": ..., "file_sha256": ..., "units": {...}, ...},
      "n_rows": 3,
      "columns": [{"name": "coupler.P.x [m]", "entity": "coupler.P", "quantity": "x",
                   "unit": "m", "type": "float"}, ...],
      "data": {"coupler.P.x [m]": [1.0, null, 2.5], ...}
    }

Non-finite floats (NaN, +-inf) are ``null`` in ``data`` (JSON has no such numbers).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Any

import numpy as np

from linkcli.errors import LinkcliError, visible_json
from linkcli.results import Column, ResultTable, TableStream, json_safe

FORMATS = ("csv", "json", "npz", "parquet")
EXTENSIONS = {".csv": "csv", ".json": "json", ".npz": "npz", ".parquet": "parquet"}
#: formats that are files only (binary): not printable on stdout
BINARY_FORMATS = ("npz", "parquet")
JSON_FORMAT_ID = "linkcli.table/1"
NPZ_FORMAT_ID = "linkcli.table-npz/1"
NPZ_META_KEY = "__linkcli_table__"
_CHUNK_ROWS = 20_000  # rows formatted per write() in CSV


class OutputError(LinkcliError):
    """An output cannot be written (unknown format, missing directory, permission ...). The
    message names the path and says what to do; the CLI exits with code 2."""


# -- format selection -----------------------------------------------------------------------------
def format_for(path: str | os.PathLike, format: str | None = None) -> str:
    """``csv`` or ``json`` from ``format`` (if given) or the file extension."""
    if format is not None:
        fmt = str(format).lower().lstrip(".")
        if fmt not in FORMATS:
            raise OutputError(f"unknown output format '{format}'; use one of: {', '.join(FORMATS)}")
        return fmt
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in EXTENSIONS:
        shown = f"'{ext}'" if ext else "no extension"
        raise OutputError(f"cannot tell the output format of '{os.fspath(path)}' ({shown}); "
                          "name the file .csv or .json (.npz or .parquet: binary, for large runs), "
                          "or give --format csv|json")
    return EXTENSIONS[ext]


# -- public API -------------------------------------------------------------------------------------
def check_output(path: str | os.PathLike, format: str | None = None, *, make_dirs: bool = False) -> str:
    """Check before a run that :func:`write_table` can write ``path`` (``format`` as there):
    the format is known (from ``format`` or the extension; .parquet also needs pyarrow), and
    ``path`` is a device, or a file name in an existing, writable directory. Returns the format.
    Raises :class:`OutputError` naming the path and the fix, so that a long run never ends in
    an output that cannot be written.

    ``make_dirs``: the directory may be missing when the writer creates it first (``linkcli
    batch`` makes the folders of its outputs): then its nearest existing ancestor must be a
    writable directory (not a file in the way)."""
    name = os.fspath(path)
    if format is None and is_special_file(name) and os.path.splitext(name)[1].lower() not in EXTENSIONS:
        format = "csv"
    fmt = format_for(path, format)
    if fmt == "parquet":
        _pyarrow_parquet(path)
    if not is_special_file(name):
        check_destination(name, make_dirs=make_dirs, example=f"results.{fmt}")
    return fmt


def check_destination(path: str | os.PathLike, *, make_dirs: bool = False, example: str = "results.csv") -> None:
    """The directory part of :func:`check_output`, for any file written atomically (a report):
    ``path`` is not a directory, and its directory exists (or, with ``make_dirs``, can be
    created) and is writable. OutputError naming the path and the fix."""
    name = os.fspath(path)
    target = os.path.abspath(name)
    directory = os.path.dirname(target)
    if os.path.isdir(target):
        raise OutputError(f"cannot write '{name}': it is a directory; give a file name in it, e.g. "
                          f"'{os.path.join(name, example)}'")
    if not os.path.isdir(directory) and make_dirs:
        directory = _creatable_directory(name, directory)
    if not os.path.isdir(directory):
        raise OutputError(f"cannot write '{name}': directory '{directory}' does not exist; create it first "
                          f"(mkdir -p '{directory}') or write elsewhere")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write '{name}': no permission to create files in directory '{directory}'; "
                          "write elsewhere")


def _creatable_directory(name: str, directory: str) -> str:
    """The nearest existing ancestor of the missing ``directory`` (where ``os.makedirs`` starts
    creating folders); OutputError when a file (or anything not a directory) stands in the way."""
    ancestor = directory
    while not os.path.lexists(ancestor):
        parent = os.path.dirname(ancestor)
        if parent == ancestor:
            break
        ancestor = parent
    if not os.path.isdir(ancestor):
        raise OutputError(f"cannot write '{name}': its folder '{directory}' cannot be created, '{ancestor}' "
                          "exists and is not a directory; remove or rename it, or write elsewhere")
    return ancestor


def write_table(table: ResultTable | TableStream, path: str | os.PathLike, format: str | None = None) -> str:
    """Write ``table`` to ``path`` atomically as CSV, JSON or .npz (by extension unless
    ``format``). Returns the format written. Raises :class:`OutputError` for an unknown format
    or an OS error (the previous file, if any, is then unchanged).

    A :class:`~linkcli.results.TableStream` is written block by block: CSV rows are appended to
    the temporary file; .npz and JSON columns gathered in an anonymous scratch file next to it,
    then written column after column (so memory holds one block, not the table). The file
    appears under ``path`` only when complete (:func:`atomic_path`)."""
    if format is None and is_special_file(os.fspath(path)) and os.path.splitext(str(path))[1].lower() not in EXTENSIONS:
        format = "csv"  # /dev/stdout, a pipe: no extension to go by
    fmt = format_for(path, format)
    if fmt == "npz":
        with atomic_path(path, ".npz") as tmp, open(tmp, "wb") as fh:
            if isinstance(table, TableStream):
                _write_npz_stream(table, fh, scratch_dir=os.path.dirname(tmp))
            else:
                _write_npz(table, fh)
        return fmt
    if fmt == "parquet":
        pq = _pyarrow_parquet(path)
        with atomic_path(path, ".parquet") as tmp:
            _write_parquet(table, tmp, pq)
        return fmt
    # a JSON stream's scratch file next to the output (the disk it goes to), not next to a device
    scratch = None if is_special_file(os.fspath(path)) else os.path.dirname(os.path.abspath(path))
    atomic_write(path, lambda fh: dump_table(table, fh, fmt, scratch))
    return fmt


def dump_table(table: ResultTable | TableStream, stream: IO[str], format: str = "csv",
               scratch_dir: str | None = None) -> None:
    """Write ``table`` as ``csv`` or ``json`` text to an open text stream. A TableStream is
    written block by block: CSV rows as they come, JSON (whose layout holds each column whole)
    through a scratch file of its columns in ``scratch_dir`` (default: the system's temporary
    directory), one column at a time, the same text as the joined table's."""
    fmt = format_for("", format)
    if fmt in BINARY_FORMATS:
        raise OutputError(f"{fmt} is a binary format: write it to a file (-o results.{fmt})")
    if fmt == "csv":
        _write_csv(table, stream)
    elif isinstance(table, TableStream):
        _write_json_stream(table, stream, scratch_dir)
    else:
        _write_json(table, stream)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write(path, lambda fh: fh.write(text))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = ".tmp") -> Iterator[str]:
    """Yield a temporary file path next to ``path``; when the block ends normally the file is
    fsynced and renamed over ``path``; on any exception (KeyboardInterrupt and SIGTERM, which
    the CLI turns into one, included) it is removed and ``path`` is unchanged. OS errors
    become :class:`OutputError` naming the file.

    A ``path`` that exists and is neither a regular file nor a directory (``/dev/null``, a
    named pipe, ``/dev/stdout``, a terminal) is yielded itself: written directly, never
    renamed over (a rename would replace the device node with a regular file)."""
    target = os.path.abspath(os.fspath(path))
    directory = os.path.dirname(target)
    if os.path.isdir(target):
        raise OutputError(f"cannot write '{os.fspath(path)}': it is a directory")
    if is_special_file(target):
        try:
            yield target
        except OSError as exc:
            raise OutputError(f"cannot write '{os.fspath(path)}': {exc.strerror or exc}") from exc
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=suffix, dir=directory)
    except FileNotFoundError:
        raise OutputError(f"cannot write '{os.fspath(path)}': directory '{directory}' does not exist; "
                          "create it first") from None
    except OSError as exc:
        raise OutputError(f"cannot write '{os.fspath(path)}': {exc.strerror or exc}") from None
    os.close(fd)
    try:
        yield tmp
        _fsync_file(tmp)
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError(f"cannot write '{os.fspath(path)}': {exc.strerror or exc}") from exc
        raise
    _fsync_directory(directory)


def is_special_file(path: str) -> bool:
    """Whether ``path`` exists and is not a regular file or a directory (a device, a FIFO, a
    socket). Symbolic links are followed: a link to ``/dev/null`` is a special file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _fsync_file(path: str) -> None:
    """Flush ``path`` to disk through a handle open for WRITING: Windows' fsync (``_commit``)
    fails on a read-only handle (EBADF), POSIX accepts both."""
    fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike, write: Callable[[IO[str]], Any]) -> None:
    """Call ``write(fh)`` on a temporary text file next to ``path``, fsync it and rename it
    over ``path``. On any exception the temporary file is removed and ``path`` is unchanged."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            write(fh)


def _mode_for(target: str) -> int:
    """Permissions of the file being replaced, else the usual 0o666 minus the umask
    (mkstemp creates files 0o600)."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask(os.path.dirname(target) or ".")


def _umask(directory: str) -> int:
    """The process umask, read without changing it: ``os.umask(0)`` then restoring it would
    leave a window in which files other threads create get mode 0o666. Linux reports it in
    /proc/self/status (since 4.7); elsewhere a probe file is created 0o777 in ``directory``
    (where the output goes anyway; empty, removed at once) and the mode it got is read back."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    probe = os.path.join(directory, f".linkcli-umask-{os.getpid()}-{secrets.token_hex(4)}")
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o777)  # 0o777: every umask bit shows
    try:
        return 0o777 & ~stat.S_IMODE(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
        os.unlink(probe)


def _fsync_directory(directory: str) -> None:
    """Make the rename durable (POSIX); silently skipped where directories cannot be opened."""
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


# -- CSV ----------------------------------------------------------------------------------------------
def _csv_quote(text: str) -> str:
    if any(ch in text for ch in ',"\r\n') or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv_cells(values: np.ndarray, kind: str, start: int, stop: int) -> list:
    """Python objects whose str() is the CSV cell: float repr is the shortest round-trip text."""
    chunk = values[start:stop]
    if kind == "bool":
        return np.where(chunk, "true", "false").tolist()
    if kind == "str":
        uniq, inverse = np.unique(chunk, return_inverse=True)
        quoted = np.asarray([_csv_quote(u) for u in uniq.tolist()] or [""], dtype=object)
        return quoted[inverse.reshape(-1)].tolist() if len(chunk) else []
    return chunk.tolist()


def _write_csv(table: ResultTable | TableStream, fh: IO[str]) -> None:
    # Hand-written rather than csv.writer, measured (benchmarks/bench_csv_writer.py, 100,000 rows
    # x 13 columns, 1 Dec 2026, load 5-7 on 2 cores): csv.writer takes 1.26-1.5x the CPU time of
    # this loop, and its output differs for text cells with leading/trailing spaces, which
    # _csv_quote quotes (so readers that strip spaces keep them) and QUOTE_MINIMAL does not.
    # Floats are the same shortest round-trip repr either way.
    blocks = table.blocks() if isinstance(table, TableStream) else [table]
    for i, block in enumerate(blocks):
        cols = block.columns
        if i == 0:
            fh.write(",".join(_csv_quote(c.header) for c in cols) + "\n")
        if not cols:
            continue
        row_format = ",".join(["%s"] * len(cols)) + "\n"
        kinds = [c.kind for c in cols]
        for start in range(0, block.n, _CHUNK_ROWS):
            stop = min(start + _CHUNK_ROWS, block.n)
            cells = [_csv_cells(c.values, k, start, stop) for c, k in zip(cols, kinds, strict=True)]
            fh.write("".join(map(row_format.__mod__, zip(*cells, strict=True))))
    if isinstance(table, TableStream) and table.n == 0:
        fh.write(",".join(_csv_quote(h) for h in table.headers()) + "\n")


# -- JSON ---------------------------------------------------------------------------------------------
def _json_values(values: np.ndarray, kind: str) -> list:
    if kind == "float":
        bad = ~np.isfinite(values)
        if bad.any():
            obj = values.astype(object)
            obj[bad] = None
            return obj.tolist()
    return values.tolist()


def _json_dumps(value: Any, **kwargs: Any) -> str:
    """json.dumps for the table layout: control characters as \\uXXXX (safe on a terminal)."""
    return visible_json(json.dumps(value, allow_nan=False, ensure_ascii=False, **kwargs))


def _write_json_head(table: ResultTable | TableStream, columns: list[Column], fh: IO[str]) -> None:
    """Everything of the JSON layout before the first data column."""
    descr = [{"name": c.header, "entity": c.entity, "quantity": c.quantity, "unit": c.unit, "type": c.kind}
             for c in columns]
    fh.write("{\n")
    fh.write(f'  "format": "{JSON_FORMAT_ID}",\n')
    metadata = _json_dumps(json_safe(table.metadata), indent=2).replace("\n", "\n  ")
    fh.write(f'  "metadata": {metadata},\n')
    fh.write(f'  "n_rows": {table.n},\n')
    fh.write('  "columns": [' + ",".join("\n    " + _json_dumps(c) for c in descr)
             + ("\n  ],\n" if descr else "],\n"))
    fh.write('  "data": {')


def _write_json(table: ResultTable, fh: IO[str]) -> None:
    """Metadata and column descriptions indented; each data column on one line."""
    _write_json_head(table, table.columns, fh)
    for i, c in enumerate(table.columns):
        values = _json_dumps(_json_values(c.values, c.kind))
        fh.write(("," if i else "") + f"\n    {_json_dumps(c.header)}: {values}")
    fh.write("\n  }\n}\n" if table.columns else "}\n}\n")


def _write_json_stream(table: TableStream, fh: IO[str], scratch_dir: str | None = None) -> None:
    """The text of :func:`_write_json` of the joined table, without joining it: the blocks'
    columns go to a scratch file (:func:`_column_scratch`), then each column is written piece
    by piece (a block's worth of values at a time): ``json.dumps`` of a list is its items'
    texts joined by ", " in brackets, so the pieces' texts joined the same way are the same
    bytes (tests/test_simulate_stream.py compares them)."""
    with _column_scratch(table, scratch_dir) as (columns, pieces, read):
        _write_json_head(table, columns, fh)
        for i, (c, p) in enumerate(zip(columns, pieces, strict=True)):
            fh.write(("," if i else "") + f"\n    {_json_dumps(c.header)}: [")
            first = True
            for piece in p:
                text = _json_dumps(_json_values(read(piece, c.values.dtype), c.kind))[1:-1]
                if text:
                    fh.write(text if first else ", " + text)
                    first = False
            fh.write("]")
        fh.write("\n  }\n}\n" if columns else "}\n}\n")


# -- NPZ (binary, for large runs) -----------------------------------------------------------------------
# numpy's .npz: a zip of .npy arrays, one per column keyed by its header (``coupler.P.x [m]``),
# plus NPZ_META_KEY: a JSON text with the format id, the metadata (units, file, solver ...) and
# the column descriptions of the JSON layout. Floats are stored as float64 (exact), NaN as NaN;
# text columns as unicode arrays (no pickles: np.load(..., allow_pickle=False) reads it). About
# 50-100x faster to write than CSV, whose float formatting dominates (benchmarks/README.md).
def _npz_meta(table: ResultTable | TableStream, columns: list[Column]) -> np.ndarray:
    descr = [{"name": c.header, "entity": c.entity, "quantity": c.quantity, "unit": c.unit, "type": c.kind}
             for c in columns]
    meta = {"format": NPZ_FORMAT_ID, "metadata": json_safe(table.metadata), "n_rows": table.n, "columns": descr}
    return np.array(json.dumps(meta, allow_nan=False, ensure_ascii=False))


def _write_npz(table: ResultTable, fh: IO[bytes]) -> None:
    arrays: dict[str, Any] = {NPZ_META_KEY: _npz_meta(table, table.columns)}
    for c in table.columns:
        arrays[c.header] = np.asarray(c.values)
    np.savez(fh, **arrays)


#: bytes copied at a time from the scratch file into the .npz
_COPY_BYTES = 1 << 22


def _write_npz_stream(table: TableStream, fh: IO[bytes], scratch_dir: str | None = None) -> None:
    """The .npz of :func:`_write_npz` from a TableStream without holding its columns: each
    block's columns are appended to an anonymous scratch file (:func:`_column_scratch`), then
    every column is copied into its zip entry, as ``np.savez`` lays them out (stored, zip64,
    ``<header>.npy`` in .npy format 1.0). Text columns take the widest block's width. Holding a
    column at a time instead (np.savez of a joined column per entry) was not chosen: the
    four-bar's 10^6-point table is ~8 MB per float column, but a block-wise writer keeps memory
    flat whatever the row count (benchmarks/README.md)."""
    import zipfile

    with _column_scratch(table, scratch_dir) as (columns, pieces, read):
        with zipfile.ZipFile(fh, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            with zf.open(NPZ_META_KEY + ".npy", "w", force_zip64=True) as out:
                np.lib.format.write_array(out, _npz_meta(table, columns), allow_pickle=False)
            for c, p in zip(columns, pieces, strict=True):
                dtype = c.values.dtype
                with zf.open(c.header + ".npy", "w", force_zip64=True) as out:
                    np.lib.format.write_array_header_1_0(out, {"descr": np.lib.format.dtype_to_descr(dtype),
                                                                "fortran_order": False, "shape": (table.n,)})
                    for piece in p:
                        offset, rows, d = piece
                        if d == dtype:
                            read.scratch.seek(offset)
                            _copy_bytes(read.scratch, out, rows * d.itemsize)
                        else:
                            out.write(read(piece, dtype).tobytes())


class _PieceReader:
    """``read((offset, rows, dtype), as_dtype)``: one block's column back from the scratch file."""

    def __init__(self, scratch: IO[bytes]) -> None:
        self.scratch = scratch

    def __call__(self, piece: tuple[int, int, np.dtype], dtype: np.dtype) -> np.ndarray:
        offset, rows, d = piece
        self.scratch.seek(offset)
        values = np.frombuffer(self.scratch.read(rows * d.itemsize), dtype=d)
        return values if d == dtype else values.astype(dtype)


@contextlib.contextmanager
def _column_scratch(table: TableStream, scratch_dir: str | None
                    ) -> Iterator[tuple[list[Column], list[list[tuple[int, int, np.dtype]]], _PieceReader]]:
    """Read the blocks of ``table`` once into an anonymous scratch file in ``scratch_dir``
    (removed by the OS however the run ends; the system's temporary directory when None or
    missing). Yields the columns (entity, quantity, unit and an empty array of the column's
    dtype: text takes the widest block's width), per column the ``(offset, rows, dtype)`` of
    each block's piece, and a reader of a piece."""
    columns: list[Column] = []
    pieces: list[list[tuple[int, int, np.dtype]]] = []
    with tempfile.TemporaryFile(dir=_existing_dir(scratch_dir)) as scratch:
        for block in table.blocks():
            if not columns:
                columns = [Column(c.entity, c.quantity, c.unit, c.values[:0]) for c in block.columns]
                pieces = [[] for _ in columns]
            for p, c in zip(pieces, block.columns, strict=True):
                values = np.ascontiguousarray(c.values)
                p.append((scratch.tell(), len(values), values.dtype))
                scratch.write(values.tobytes())  # tobytes: a copy of one block's column, typed as bytes
        for c, p in zip(columns, pieces, strict=True):
            dtype = np.result_type(*(d for _, _, d in p)) if p else c.values.dtype
            c.values = np.empty(0, dtype=dtype)  # its kind, for the column description
        yield columns, pieces, _PieceReader(scratch)


def _existing_dir(directory: str | None) -> str | None:
    return directory if directory is not None and os.path.isdir(directory) else None


def _copy_bytes(src: IO[bytes], dst: IO[bytes], size: int) -> None:
    while size > 0:
        chunk = src.read(min(size, _COPY_BYTES))
        if not chunk:
            raise OSError("the scratch file ended early")
        dst.write(chunk)
        size -= len(chunk)


# -- Parquet (binary, for large runs; needs pyarrow: the `parquet` extra) -------------------------------
# One column per table column, named by its header; float64 (NaN kept as NaN, not null), int64,
# bool, string. Units: each field's metadata holds entity, quantity and unit; the table metadata
# (as in JSON) is JSON under the schema key ``linkcli`` (the key batch study tables use) and the
# .npz-style description (format id, n_rows, columns) under ``linkcli.table``. A TableStream is
# written one row group per block (pyarrow's ParquetWriter), so only a block is in memory.
PARQUET_META_KEY = b"linkcli"
PARQUET_TABLE_KEY = b"linkcli.table"


def _pyarrow_parquet(path):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise OutputError(f"cannot write '{os.fspath(path)}': Parquet needs pyarrow: pip install 'linkcli[parquet]' "
                          "(or write .npz, numpy's binary format)") from None
    return pq


def _write_parquet(table: ResultTable | TableStream, path: str, pq) -> None:
    import pyarrow as pa

    writer = None
    try:
        for block in (table.blocks() if isinstance(table, TableStream) else [table]):
            if writer is None:
                descr = [{"name": c.header, "entity": c.entity, "quantity": c.quantity, "unit": c.unit,
                          "type": c.kind} for c in block.columns]
                fields = [pa.field(c.header, _ARROW_TYPES[c.kind](pa),
                                   metadata={"entity": c.entity, "quantity": c.quantity, "unit": c.unit})
                          for c in block.columns]
                meta = {PARQUET_META_KEY: json.dumps(json_safe(table.metadata), allow_nan=False).encode(),
                        PARQUET_TABLE_KEY: json.dumps({"format": PARQUET_FORMAT_ID, "n_rows": table.n,
                                                       "columns": descr}).encode()}
                schema = pa.schema(fields, metadata=meta)
                writer = pq.ParquetWriter(path, schema)
            arrays = [pa.array(c.values, type=f.type) for c, f in zip(block.columns, schema, strict=True)]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
        if writer is None:  # no block: an empty table without columns
            writer = pq.ParquetWriter(path, pa.schema([], metadata={PARQUET_META_KEY: json.dumps(
                json_safe(table.metadata), allow_nan=False).encode()}))
    finally:
        if writer is not None:
            writer.close()


PARQUET_FORMAT_ID = "linkcli.table-parquet/1"
_ARROW_TYPES = {"float": lambda pa: pa.float64(), "int": lambda pa: pa.int64(), "bool": lambda pa: pa.bool_(),
                "str": lambda pa: pa.string()}


def read_table_parquet(path: str | os.PathLike) -> ResultTable:
    """Read a table written by :func:`write_table` as ``.parquet`` (needs pyarrow)."""
    pq = _pyarrow_parquet(path)
    data = pq.read_table(path)
    meta = data.schema.metadata or {}
    table = ResultTable(data.num_rows, metadata=json.loads(meta.get(PARQUET_META_KEY, b"{}")))
    for name, field in zip(data.column_names, data.schema, strict=True):
        fm = field.metadata or {}
        values = data.column(name).to_numpy(zero_copy_only=False)
        if _is_arrow_string(field.type):
            values = np.asarray(values.tolist(), dtype=str) if len(values) else np.zeros(0, dtype="<U1")
        table.add(fm.get(b"entity", b"").decode(), fm.get(b"quantity", name.encode()).decode(),
                  fm.get(b"unit", b"").decode(), values)
    return table


def _is_arrow_string(t) -> bool:
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t)


def read_table_npz(path: str | os.PathLike) -> ResultTable:
    """Read a table written by :func:`write_table` as ``.npz``."""
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data[NPZ_META_KEY]))
        if meta.get("format") != NPZ_FORMAT_ID:
            raise ValueError(f"not a linkcli table (format {meta.get('format')!r})")
        table = ResultTable(meta["n_rows"], metadata=meta.get("metadata") or {})
        for col in meta["columns"]:
            table.add(col["entity"], col["quantity"], col["unit"], data[col["name"]])
    return table


def read_table_json(path_or_stream: str | os.PathLike | IO[str]) -> ResultTable:
    """Read a table written by :func:`write_table` as JSON (nulls in float columns -> NaN)."""
    if hasattr(path_or_stream, "read"):
        doc = json.load(path_or_stream)  # type: ignore[arg-type]
    else:
        with open(path_or_stream, encoding="utf-8") as fh:
            doc = json.load(fh)
    if doc.get("format") != JSON_FORMAT_ID:
        raise ValueError(f"not a linkcli table (format {doc.get('format')!r})")
    table = ResultTable(doc["n_rows"], metadata=doc.get("metadata") or {})
    for col in doc["columns"]:
        raw = doc["data"][col["name"]]
        if col["type"] == "float":
            values = np.array([np.nan if v is None else v for v in raw], dtype=float)
        elif col["type"] == "int":
            values = np.array(raw, dtype=np.int64)
        elif col["type"] == "bool":
            values = np.array(raw, dtype=bool)
        else:
            values = np.array(raw, dtype=str)
        table.add(col["entity"], col["quantity"], col["unit"], values)
    return table


__all__ = ["OutputError", "check_output", "check_destination", "atomic_path", "is_special_file", "FORMATS",
           "format_for", "write_table", "dump_table",
           "atomic_write", "atomic_write_text", "read_table_json", "read_table_npz", "read_table_parquet",
           "BINARY_FORMATS"]
