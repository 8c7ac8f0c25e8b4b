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
    # what a user's command imports: the default kernel mode (conftest forces compiled kernels,
    # which would load numba for solve's sweep)
    env["LINKCLI_JIT"] = "auto"
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


# -- what each command imports (benchmarks/bench_startup.py measures what it costs) -------------------
#: third-party packages no command below needs for the four-bar example (scipy: not used by a
#: sweep; numba: a 361-point sweep runs the sweep kernel interpreted (core/sweep.py's rule);
#: pint: only when a file writes a unit string; rich: only info's and the terminal's tables)
NOT_NEEDED = ("scipy", "numba", "pint", "matplotlib", "dask", "distributed", "pyarrow", "jsonschema", "PIL")


def modules_after(*argv: str) -> set[str]:
    """Every module loaded by the end of ``linkcli *argv`` (in a fresh interpreter)."""
    code = ("import sys\nfrom linkcli.cli.app import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
            "print('\\n'.join(sys.modules), file=sys.stderr)")
    proc = run_python("-c", code, *argv)
    assert proc.returncode == 0, proc.stderr
    return {line.strip() for line in proc.stderr.splitlines() if line.strip()}


def packages(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def command_modules(modules: set[str]) -> set[str]:
    return {m.rpartition(".")[2] for m in modules if m.startswith("linkcli.cli.commands.")}


@pytest.mark.parametrize(("argv", "allowed_extra", "commands"), [
    # validate compiles the mechanism (numpy) and checks actuation with info's helper
    (["validate", "mechanisms/fourbar.yaml"], {"numpy"}, {"validate", "info"}),
    (["validate", "--format", "json", "mechanisms/fourbar.yaml"], {"numpy"}, {"validate", "info"}),
    (["info", "mechanisms/fourbar.yaml"], {"numpy", "rich"}, {"info"}),
    (["solve", "mechanisms/fourbar.yaml", "-o", "{tmp}/x.csv"], {"numpy"}, {"solve"}),
    (["solve", "mechanisms/fourbar.yaml", "-f", "csv"], {"numpy"}, {"solve"}),
    (["schema"], set(), {"schema"}),
])
def test_commands_import_only_what_they_use(tmp_path, argv, allowed_extra, commands):
    """A command imports its own command module (not the other ten) and none of the heavy
    packages it does not use; the file's YAML and pydantic models always."""
    loaded = modules_after(*[a.format(tmp=tmp_path) for a in argv])
    heavy = {"numpy", "rich", *NOT_NEEDED}
    assert packages(loaded) & heavy == allowed_extra
    assert command_modules(loaded) == commands


def test_help_imports_no_pydantic_and_command_help_builds_one_command():
    loaded = modules_after("--help")
    assert packages(loaded) & {"pydantic", "pydantic_core", "numpy", "rich", *NOT_NEEDED} == set()
    assert command_modules(loaded) == set()  # the listing comes from COMMAND_SUMMARIES
    assert command_modules(modules_after("fk", "--help")) == {"solve"}  # fk lives in commands/solve.py


def test_every_command_is_found_through_its_module_name_or_an_alias():
    """A command is looked up lazily through ``COMMAND_MODULES`` (command = module name) or
    ``COMMAND_ALIASES`` (command -> module): each registered command must be listed so, or
    ``linkcli NAME`` would import every command module to find it."""
    import importlib

    import typer

    from linkcli.cli.app import COMMAND_ALIASES, COMMAND_MODULES

    for module in COMMAND_MODULES:
        registry = typer.Typer()
        importlib.import_module(f"linkcli.cli.commands.{module}").register(registry)
        names = [info.name for info in registry.registered_commands]
        assert module in names or any(COMMAND_ALIASES.get(n) == module for n in names), (module, names)
        for name in names:
            assert name == module or COMMAND_ALIASES.get(name) == module, \
                f"command {name!r} of commands/{module}.py: add {name!r}: {module!r} to COMMAND_ALIASES in app.py"


def test_command_summaries_are_what_the_commands_say():
    """``COMMAND_SUMMARIES`` (the listing of ``--help`` without importing the command modules)
    holds each command's explicit short help, or the first paragraph of its docstring, in the
    modules' registration order."""
    import importlib
    import inspect

    import typer

    from linkcli.cli.app import COMMAND_MODULES, COMMAND_SUMMARIES

    registered = []
    for module in COMMAND_MODULES:
        registry = typer.Typer()
        importlib.import_module(f"linkcli.cli.commands.{module}").register(registry)
        for info in registry.registered_commands:
            assert not info.hidden and not info.deprecated and info.help is None  # what the table can say
            if info.short_help:
                entry = ("short_help", info.short_help)
            else:
                entry = ("doc", " ".join(inspect.getdoc(info.callback).split("\n\n")[0].split()))
            assert COMMAND_SUMMARIES.get(info.name) == entry, \
                f"COMMAND_SUMMARIES in linkcli/cli/app.py: write {info.name!r}: {entry!r}"
            registered.append(info.name)
    assert list(COMMAND_SUMMARIES) == registered


def test_lazy_listing_is_the_listing_of_the_built_commands():
    """``--help`` lists summaries (no parameters built); the text must be what the fully built
    commands give, at any width."""
    import typer.main

    from linkcli.cli.app import app

    group = typer.main.get_command(app)
    names = group.list_commands(None)
    assert names[:4] == ["validate", "info", "schema", "solve"] and "fk" in names and len(set(names)) == len(names)
    for width in (40, 80, 200):
        ctx = group.make_context("linkcli", ["--traceback"])
        lazy = group.get_help(ctx) if width == 80 else None
        formatter = ctx.make_formatter()
        formatter.width = width
        group.format_commands(ctx, formatter)
        listed_lazily = formatter.getvalue()
        built = {name: group.get_command(ctx, name) for name in names}  # builds every command
        parameterless = {"schema", "compile"}  # commands whose built form has no options of their own
        assert all(cmd is not None and cmd.params for name, cmd in built.items() if name not in parameterless)
        formatter = ctx.make_formatter()
        formatter.width = width
        group.format_commands(ctx, formatter)
        assert formatter.getvalue() == listed_lazily
        if lazy is not None:
            assert group.get_help(ctx) == lazy
        group = typer.main.get_command(app)  # a fresh group: nothing built
    assert group.get_command(None, "no-such-command") is None
    assert "fk" in group.commands and "no-such-command" not in group.commands
    group = typer.main.get_command(app)
    group.get_command(None, "fk")  # built first: the listing keeps its order
    assert group.list_commands(None) == names


def test_a_command_missing_from_the_summaries_is_listed_from_its_module(monkeypatch):
    import typer.main

    from linkcli.cli import app as app_module

    def listing() -> str:
        group = typer.main.get_command(app_module.app)
        return group.get_help(group.make_context("linkcli", ["--traceback"]))

    full = listing()
    monkeypatch.delitem(app_module.COMMAND_SUMMARIES, "batch")
    monkeypatch.delitem(app_module.COMMAND_SUMMARIES, "solve")
    monkeypatch.delitem(app_module.COMMAND_SUMMARIES, "fk")
    assert listing() == full


def test_a_mistyped_command_is_still_suggested(run_cli):
    r = run_cli("valdate", "mechanisms/fourbar.yaml")
    assert r.exit_code == 2
    assert "Did you mean 'validate'?" in r.stderr


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
    # scipy: a cubic table driver's end slope (checks.motion_rate_jumps, imported lazily)
    "linkcli/model": (("pydantic", "pydantic_core", "numpy", "pint", "scipy"), ("linkcli.model", "linkcli.errors")),
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
