"""Shared option and argument types (``Annotated``) so every command spells them the same way.

Use in a command module::

    def run(file: MechanismFile, fmt: DataFormatOption = DataFormat.table,
            output: OutputOption = None, quiet: QuietOption = False) -> None: ...
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer


class SummaryFormat(str, Enum):
    """Reports about a mechanism (``info``)."""

    table = "table"
    json = "json"


class CheckFormat(str, Enum):
    """Check results (``validate``): ``text`` lines or a JSON list."""

    text = "text"
    json = "json"


class DataFormat(str, Enum):
    """Result tables (``solve``, ``simulate`` ...): ``table`` renders on the terminal; ``csv`` and
    ``json`` print the data on stdout (nothing else goes to stdout)."""

    table = "table"
    csv = "csv"
    json = "json"


MechanismFile = Annotated[
    Path, typer.Argument(metavar="FILE", help="Mechanism file (YAML).", show_default=False)]
MechanismFiles = Annotated[
    list[Path], typer.Argument(metavar="FILE...", help="Mechanism files (YAML); shell globs welcome.",
                               show_default=False)]

SummaryFormatOption = Annotated[
    SummaryFormat, typer.Option("--format", "-f", case_sensitive=False,
                                help="table: readable summary; json: the same data, only JSON on stdout.")]
CheckFormatOption = Annotated[
    CheckFormat, typer.Option("--format", "-f", case_sensitive=False,
                              help="text: one line per file; json: a JSON list on stdout.")]
def data_format(value: str | DataFormat) -> DataFormat:
    """``--format`` of result tables; .npz and .parquet (binary files) are chosen by ``-o``'s
    extension, which the refusal says."""
    if isinstance(value, DataFormat):
        return value
    try:
        return DataFormat(str(value).strip().lower())
    except ValueError:
        choices = ", ".join(f"'{f.value}'" for f in DataFormat)
        hint = ""
        if str(value).strip().lower().lstrip(".") in ("npz", "parquet"):
            hint = (f"; {str(value).strip().lower().lstrip('.')} is a binary file format, chosen by the output "
                    "file's name: -o FILE.npz or -o FILE.parquet")
        raise typer.BadParameter(f"{value!r} is not one of {choices}{hint}") from None


DataFormatOption = Annotated[
    DataFormat, typer.Option("--format", "-f", parser=data_format, metavar="[table|csv|json]",
                             help="Stdout format: table (terminal), csv or json. With -o the file "
                                  "extension decides unless --format is csv or json (.npz, .parquet: "
                                  "-o FILE.npz, -o FILE.parquet).")]

OutputOption = Annotated[
    Path | None, typer.Option("--output", "-o", metavar="FILE", dir_okay=False, show_default=False,
                                 help="Write to FILE (.csv or .json; .npz or .parquet: binary, for large runs) "
                                      "atomically instead of stdout ('-': stdout).")]
QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress, warnings or summaries on stderr (errors still).")]

__all__ = [
    "SummaryFormat", "CheckFormat", "DataFormat", "MechanismFile", "MechanismFiles", "SummaryFormatOption",
    "CheckFormatOption", "DataFormatOption", "OutputOption", "QuietOption",
]
