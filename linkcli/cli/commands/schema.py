"""``linkcli schema [-o FILE]``: the JSON Schema of mechanism files (for editors: add
``# yaml-language-server: $schema=../schemas/mechanism.schema.json`` to a YAML file).

The committed copy is ``schemas/mechanism.schema.json``; tests/test_schema.py regenerates it and
fails when it is stale (fix: ``linkcli schema -o schemas/mechanism.schema.json``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..common import echo_err
from ..options import QuietOption

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:linkcli:schema:mechanism"
SCHEMA_TITLE = "linkcli mechanism file"
SCHEMA_PATH = "schemas/mechanism.schema.json"  # relative to the repository root


#: list short forms that the models accept in a ``mode="before"`` validator, which pydantic's
#: generated schema cannot know: ``Frame`` as ``[x, y]``, ``[x, y, angle]`` (planar) or
#: ``[x, y, z]`` (spatial). Without this, editors flag every frame of mechanisms/fourbar.yaml.
SHORT_FORMS = {
    "Frame": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 3,
              "description": "[x, y] or [x, y, angle] (planar), [x, y, z] (spatial)"},
}


def mechanism_schema() -> dict[str, Any]:
    """``Mechanism.model_json_schema(by_alias=True)`` with ``$schema``, ``$id`` and ``title``
    first, and the list short forms of :data:`SHORT_FORMS` added (``anyOf``) to their models."""
    from linkcli.model.mechanism import Mechanism

    generated = Mechanism.model_json_schema(by_alias=True)
    defs = generated.get("$defs", {})
    for name, short in SHORT_FORMS.items():
        model = defs.get(name)
        if model is None or model.get("type") != "object":
            continue  # absent, or the model already describes its short forms
        title = model.get("title", name)
        defs[name] = {"title": title, "anyOf": [short, {k: v for k, v in model.items() if k != "title"}]}
    head = {"$schema": SCHEMA_DIALECT, "$id": SCHEMA_ID, "title": SCHEMA_TITLE}
    return {**head, **{k: v for k, v in generated.items() if k not in head}}


def schema_text() -> str:
    """The schema as written to files and stdout: 2-space JSON, trailing newline."""
    import json

    return json.dumps(mechanism_schema(), indent=2, ensure_ascii=False) + "\n"


SchemaOutputOption = Annotated[
    Path | None, typer.Option("--output", "-o", metavar="FILE", dir_okay=False, show_default=False,
                                 help="Write to FILE (.json) atomically instead of stdout ('-': stdout).")]


def schema(output: SchemaOutputOption = None, quiet: QuietOption = False) -> None:
    """Print the JSON Schema of mechanism files, or write it to FILE (.json, atomically)."""
    text = schema_text()
    if output is None or str(output) == "-":
        typer.echo(text, nl=False)
        return
    from linkcli.io.writers import OutputError, atomic_write_text, is_special_file

    if output.suffix.lower() != ".json" and not is_special_file(str(output)):  # /dev/null is fine
        raise OutputError(f"cannot write the schema to '{output}': it is JSON; name the file .json "
                          "(e.g. schemas/mechanism.schema.json)")

    atomic_write_text(output, text)
    if not quiet:
        echo_err(f"wrote {output}")


def register(app: typer.Typer) -> None:
    app.command("schema", short_help="Print (or write with -o) the JSON Schema of mechanism files.")(schema)
