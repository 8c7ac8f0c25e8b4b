"""schemas/mechanism.schema.json is generated from the models; it must be current and must
accept every mechanism in mechanisms/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linkcli.cli.commands.schema import SCHEMA_PATH, mechanism_schema, schema_text

REPO = Path(__file__).resolve().parent.parent
REGENERATE = "run `linkcli schema -o schemas/mechanism.schema.json`"


def test_committed_schema_is_current():
    path = REPO / SCHEMA_PATH
    assert path.exists(), f"{SCHEMA_PATH} is missing: {REGENERATE}"
    committed = path.read_text(encoding="utf-8")
    if committed != schema_text():
        pytest.fail(f"{SCHEMA_PATH} is stale (the models changed): {REGENERATE}", pytrace=False)


def test_schema_header():
    schema = mechanism_schema()
    assert list(schema)[:3] == ["$schema", "$id", "title"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object" and "links" in schema["properties"]
    assert schema["additionalProperties"] is False
    json.dumps(schema, allow_nan=False)


def test_schema_accepts_every_example_mechanism():
    jsonschema = pytest.importorskip("jsonschema")
    from linkcli.io.yaml_source import read_yaml_file  # YAML 1.2 scalars, as linkcli reads them

    schema = mechanism_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    files = sorted((REPO / "mechanisms").glob("*.yaml"))
    assert files
    for path in files:
        doc, _ = read_yaml_file(path)
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
        assert errors == [], f"{path.name} does not match the schema:\n" + "\n".join(errors)


def test_readme_example_is_a_valid_mechanism(tmp_path):
    """The commented four-bar in README.md loads, compiles and matches the schema."""
    from linkcli.cli.common import load_and_compile

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = readme.split("```yaml\n")
    assert len(blocks) >= 2, "README.md lost its YAML example"
    example = blocks[1].split("```", 1)[0]
    path = tmp_path / "readme.yaml"
    path.write_text(example, encoding="utf-8")
    loaded, mech = load_and_compile(path)
    assert loaded.warnings == [] and mech.gruebler_mobility == 1 and mech.n_actuated == 1


def test_readme_starts_with_the_two_setup_commands():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    commands = [ln for ln in lines[:12] if ln.startswith("pip install")]
    assert commands == ['pip install ".[fast]" && linkcli solve mechanisms/fourbar.yaml',
                        'pip install ".[test]" && python -m pytest -q']
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "\npython -m pytest -q\n" in ci  # CI runs the README's test command
