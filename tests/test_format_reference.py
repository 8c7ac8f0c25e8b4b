"""docs/format.md, the format reference, covers every field of the mechanism-file schema.

Truth: the JSON Schema written by ``linkcli schema`` (schemas/mechanism.schema.json, itself
tested to equal the pydantic models in tests/test_schema.py). Every property name at any depth
(including the members of ``anyOf``/``oneOf`` unions and every ``$defs`` entry) must appear in
the reference as a code span, e.g. `free_length`. A field added to the models without a line in
the reference fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _property_names(node, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items():
            out.add(key)
            _property_names(value, out)
        for key, value in node.items():
            if key != "properties":
                _property_names(value, out)
    elif isinstance(node, list):
        for item in node:
            _property_names(item, out)
    return out


def test_every_schema_field_is_in_the_format_reference():
    schema = json.loads((REPO / "schemas" / "mechanism.schema.json").read_text(encoding="utf-8"))
    fields = _property_names(schema, set())
    assert {"rpy", "free_length", "convention", "pass_fraction", "interpolation"} <= fields  # the walk works
    text = (REPO / "docs" / "format.md").read_text(encoding="utf-8")
    spans = set(re.findall(r"`([^`\n]+)`", text))
    words = {w for span in spans for w in re.findall(r"[A-Za-z_$][A-Za-z0-9_]*", span)}
    missing = sorted(f for f in fields if f not in words)
    assert missing == [], f"docs/format.md does not mention these schema fields: {missing}"


def test_format_reference_is_linked_and_its_pictures_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "docs/format.md" in readme
    text = (REPO / "docs" / "format.md").read_text(encoding="utf-8")
    for picture in re.findall(r"\]\((img/[^)]+)\)", text):
        assert (REPO / "docs" / picture).is_file(), f"docs/format.md shows a missing picture {picture}"
