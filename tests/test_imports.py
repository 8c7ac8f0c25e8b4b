"""Import discipline: the CLI starts without numpy/scipy/pydantic/the core (PERFORMANCE.md: a
CLI pays its imports on every run), and the package layers import only what they may
(ARCHITECTURE.md section 2)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "linkcli"
HEAVY = ("numpy", "scipy", "pydantic", "pydantic_core", "numba", "yaml", "matplotlib", "linkcli.core",
         "linkcli.model", "linkcli.compile", "linkcli.io")


def run_python(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("LINKCLI_TRACEBACK", None)
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def heavy_in(modules) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_importing_the_app_is_light():
    code = "import sys, linkcli.cli.app; print('\\n'.join(sys.modules))"
    proc = run_python("-c", code)
    assert proc.returncode == 0, proc.stderr
    assert heavy_in(proc.stdout.split()) == []


def imported_by(*argv: str) -> list[str]:
    proc = run_python("-X", "importtime", "-m", "linkcli", *argv)
    assert proc.returncode == 0, proc.stderr
    imported = [line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert "linkcli.cli.app" in imported
    return imported


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_help_does_not_import_heavy_modules(argv):
    assert heavy_in(imported_by(*argv)) == []


@pytest.mark.parametrize("command", ["info", "validate", "schema"])
def test_command_help_does_not_import_numerics(command):
    # typer >= 0.2x converts every parameter value with pydantic TypeAdapters, so once a command
    # is parsed pydantic is imported by typer itself; numpy, scipy and linkcli's core must not be.
    heavy = [m for m in heavy_in(imported_by(command, "--help")) if m.split(".")[0] not in ("pydantic",
                                                                                            "pydantic_core")]
    assert heavy == []


def test_python_dash_m_runs_the_cli():
    proc = run_python("-m", "linkcli", "validate", "mechanisms/fourbar.yaml")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok mechanisms/fourbar.yaml"


def test_version_matches_pyproject():
    tomllib = pytest.importorskip("tomllib")
    import linkcli

    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert linkcli.__version__ == meta["project"]["version"]
    assert meta["project"]["scripts"]["linkcli"] == "linkcli.cli.app:main"


# -- layering ----------------------------------------------------------------------------------------
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Absolute names of every module imported anywhere in the file (also inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if node.module is None or node.level:
                # `from . import x` may import submodule x
                out.update(f"{mod}.{alias.name}" for alias in node.names)
            out.add(mod)
    return out


def top(mod: str) -> str:
    return mod.split(".")[0]


def allowed(mod: str, third_party: tuple[str, ...], own: tuple[str, ...]) -> bool:
    if mod.startswith("linkcli"):
        return mod == "linkcli" or any(mod == o or mod.startswith(o + ".") for o in own)
    return top(mod) in STDLIB or top(mod) in third_party


RULES = {
    "linkcli/core": (("numpy", "scipy", "numba"), ("linkcli.core",)),
    # pint: unit strings in files (linkcli/model/units.py imports it lazily, only when one appears)
    "linkcli/model": (("pydantic", "pydantic_core", "numpy", "pint"), ("linkcli.model", "linkcli.errors")),
}


def package_files(sub: str = "") -> list[Path]:
    return sorted((PACKAGE / sub).rglob("*.py")) if (PACKAGE / sub).exists() else []


@pytest.mark.parametrize("folder", sorted(RULES))
def test_layer_imports(folder):
    third_party, own = RULES[folder]
    bad = []
    for path in package_files(folder.removeprefix("linkcli/")):
        for mod in sorted(imports_of(path)):
            if not allowed(mod, third_party, own):
                bad.append(f"{path.relative_to(REPO)} imports {mod}")
    assert bad == [], f"{folder} may import only {third_party}, the stdlib and {own}:\n" + "\n".join(bad)


def test_nothing_imports_the_cli():
    bad = []
    for path in package_files():
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith("linkcli/cli/") or rel == "linkcli/__main__.py":
            continue
        bad += [f"{rel} imports {m}" for m in imports_of(path) if m == "linkcli.cli" or m.startswith("linkcli.cli.")]
    assert bad == [], "only linkcli/__main__.py may import linkcli.cli:\n" + "\n".join(bad)


def test_import_walker_sees_relative_and_nested_imports(tmp_path):
    src = PACKAGE / "core" / "mechanism.py"
    assert "numpy" in imports_of(src)
    assert "linkcli.core.transforms" in imports_of(PACKAGE / "core" / "forward.py")
    # the package __init__ must stay light (the CLI imports it first)
    assert heavy_in(imports_of(PACKAGE / "__init__.py")) == []


def test_singular_threshold_is_declared_once_and_sizes_have_distinct_names():
    """Review finding 11: one SINGULAR_CONDITION (loop_closure) used by sweep, limits and
    kinetostatics; the mechanism's size is `mechanism_size`, never `length_scale` (which is the
    compiled mechanism's metres per file length unit)."""
    import re

    from linkcli.core import kinetostatics, limits, loop_closure, sweep

    root = Path(__file__).resolve().parent.parent / "linkcli"
    declared = [str(p.relative_to(root)) for p in sorted(root.rglob("*.py"))
                if re.search(r"^_?SINGULAR_CONDITION\s*=", p.read_text(encoding="utf-8"), re.M)]
    assert declared == ["core/loop_closure.py"]
    assert sweep.SINGULAR_CONDITION is limits.SINGULAR_CONDITION is kinetostatics.SINGULAR_CONDITION \
        is loop_closure.SINGULAR_CONDITION
    assert not hasattr(loop_closure, "length_scale") and callable(loop_closure.mechanism_size)
