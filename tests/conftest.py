"""Shared test set-up: hypothesis profiles, paths, a CLI runner (``run_cli``), a mechanism-file factory.

Hypothesis: the ``ci`` profile (derandomised, no deadline) is loaded when ``CI`` is set (as in
.ci/run), so CI runs are reproducible; select another with ``--hypothesis-profile``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Kernels: the suite exercises the compiled path (as before the "auto" mode), whatever this
# developer's numba cache and record say (LINKCLI_NO_JIT still runs everything interpreted), and
# the record of interpreted/compile costs (linkcli.core.jit) is only ever written in a temporary
# directory, also by the CLI subprocesses that inherit this environment.
os.environ["LINKCLI_JIT"] = "always"
os.environ["LINKCLI_JIT_RECORD"] = os.path.join(tempfile.mkdtemp(prefix="linkcli-jit-record-"), "jit-record.json")

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))

REPO = Path(__file__).resolve().parent.parent
MECHANISMS = REPO / "mechanisms"
FOURBAR = MECHANISMS / "fourbar.yaml"


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture
def fourbar_path() -> str:
    return str(FOURBAR)


@pytest.fixture
def fourbar_text() -> str:
    return FOURBAR.read_text(encoding="utf-8")


@pytest.fixture
def write_mech(tmp_path: Path) -> Callable[..., str]:
    """``write_mech(text, name="m.yaml") -> path`` of a file in a fresh temporary folder."""

    def write(text: str, name: str = "m.yaml") -> str:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write


def _cli_runner():
    """typer's CliRunner with stdout and stderr kept apart (``result.stdout``, ``result.stderr``)."""
    from typer.testing import CliRunner

    try:
        return CliRunner(mix_stderr=False)  # click < 8.2 style runners
    except TypeError:
        return CliRunner()


@pytest.fixture(scope="session")
def run_cli():
    """``run_cli(*args, **kwargs)``: run linkcli in this process with ``args`` (each str()-ed, so
    paths may be Path objects); keyword arguments go to CliRunner.invoke (``input=``, ``env=``).
    Returns click's Result (``exit_code``, ``stdout``, ``stderr``). Session-scoped (each call
    is isolated by CliRunner), so module-scoped fixtures may use it too."""
    from linkcli.cli.app import app

    runner = _cli_runner()

    def run(*args, **kwargs):
        return runner.invoke(app, [str(a) for a in args], **kwargs)

    return run


@pytest.fixture
def runner():
    """typer's CliRunner with stdout and stderr kept apart (``result.stdout``, ``result.stderr``)."""
    return _cli_runner()
