"""schemas/mechanism.schema.json is generated from the models; it must be current and must
accept every mechanism in mechanisms/."""

from __future__ import annotations

import json
import subprocess
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
    """README's first code block is the set-up: exactly two lines, each creating (or reusing) a
    virtual environment first (a system pip outside one is refused on Debian/Ubuntu); the first
    installs the extras the README uses and runs linkcli on an example, the second the tests.
    .ci/run reads and runs that second line itself (checked by running its extraction here)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert readme.index("```sh\n") < readme.index("## "), "the set-up block comes first"
    assert len(block) == 2, "README keeps exactly two set-up commands"
    venv = "python3 -m venv .venv && . .venv/bin/activate && "
    assert block[0] == venv + 'pip install ".[fast,plot]" && linkcli solve mechanisms/fourbar.yaml'
    assert block[1] == venv + 'pip install ".[test]" && python -m pytest -q'
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert 'bash -eo pipefail -c "$test_line"' in ci
    awk = ci.split('test_line="$(', 1)[1].split(')"\n', 1)[0]
    got = subprocess.run(["bash", "-c", awk], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert got.strip() == block[1]  # CI runs the README's test command verbatim
    # ruff and mypy (pyproject.toml's pinned `lint` extra) run first, in the same .venv
    lint_at = ci.index('bash -eo pipefail -c "$lint_line"')
    assert lint_at < ci.index('bash -eo pipefail -c "$test_line"')
    assert 'pip install ".[lint]" && ruff check . && mypy' in ci
