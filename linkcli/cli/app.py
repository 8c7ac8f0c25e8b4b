"""The ``linkcli`` typer app: global options, command registration, the one error handler.

Console script ``linkcli`` and ``python -m linkcli`` both call :func:`main`.

Error handling lives in :class:`LinkcliGroup.invoke`, around every command (so typer's
CliRunner sees the same exit codes as a user):

* ``MechanismFileError``  -> each diagnostic ``file:line:col: error: key: message. hint`` on
  stderr, exit 3;
* other ``LinkcliError`` (``AnalysisInputError``, ``OutputError`` ...) -> ``error: ...``, exit 2;
  click usage errors also exit 2;
* anything else -> one ``internal error: ...`` line, exit 70; the traceback only with
  ``--traceback`` or ``LINKCLI_TRACEBACK=1``.

Adding a command: create ``commands/<name>.py`` with ``register(app)`` (see ``commands/info.py``),
import heavy modules inside the command function, add the module to ``COMMAND_MODULES`` (a
module that registers a command of another name lists it in ``COMMAND_ALIASES``) and its
listing to ``COMMAND_SUMMARIES`` (tests/test_imports.py says what to write).

Commands are built on first use (:class:`LazyCommands`): ``linkcli validate FILE`` imports
only ``commands/validate.py`` and converts only its parameters; ``linkcli --help``'s
listing is read from ``COMMAND_SUMMARIES`` (no command module imported, no parameter built: typer's
conversion of every parameter of every command was ~10 ms of each start-up, importing the
modules ~5 ms).
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Mapping, MutableMapping
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperGroup

from linkcli import __version__

from .common import EXIT_CODES_HELP, ExitCode, echo_err

REPORT_TO = "the linkcli issue tracker"
TRACEBACK_ENV = "LINKCLI_TRACEBACK"

#: command modules, in the order ``--help`` lists them; each has ``register(app)``
COMMAND_MODULES = (
    "validate",
    "info",
    "schema",
    "solve",  # solve and fk
    "ik",
    "jacobian",
    "simulate",
    "forces",  # inverse dynamics, kinetostatics, equilibrium
    "draw",  # pictures (linkcli.plot, `plot` extra)
    "animate",
    "batch",  # batch runs and parameter studies (linkcli/batch)
    "compile",  # numba kernels into the cache ahead of time (images, CI)
)
#: commands registered by a module of another name: command -> module
COMMAND_ALIASES = {"fk": "solve"}
#: what ``--help`` lists, so that the listing imports no command module (~5 ms of its ~100 ms):
#: command -> ("short_help", its explicit short help) or ("doc", the first paragraph of its
#: docstring, which click shortens to the width). A module none of whose commands is here is
#: imported for the listing (correct, slower). tests/test_imports.py checks every entry
#: against the command itself and the order against the modules' registration order.
COMMAND_SUMMARIES: dict[str, tuple[str, str]] = {
    "validate": ("short_help", "Check mechanism files (syntax, format, references, topology); exit 3 if any is "
                               "invalid."),
    "info": ("short_help", "Summarise a mechanism: links, joints, variables, loops, mobility, elements."),
    "schema": ("short_help", "Print (or write with -o) the JSON Schema of mechanism files."),
    "solve": ("doc", "Solve the configuration at a point or along a sweep (with velocities and accelerations when "
                     "rates are given). Example: linkcli solve mechanisms/fourbar.yaml --sweep crank_pin=0:360:1 "
                     "-o out.csv"),
    "fk": ("doc", "Forward kinematics at one point (solve without a sweep). Example: linkcli fk "
                  "mechanisms/fourbar.yaml --set crank_pin=30"),
    "ik": ("doc", "Find the joint variables that put the tool frame at a target (least squares when it cannot; "
                  "unreachable targets exit 1 with the closest pose). Example: linkcli ik "
                  "mechanisms/planar_3r.yaml --target 1.2,0.8"),
    "jacobian": ("doc", "The Jacobian from actuated rates to the tool twist (rows vx, vy[, vz], [wx, wy,] wz), its "
                        "singular values, condition number and manipulability (JSON metadata, stderr summary). "
                        "Example: linkcli jacobian mechanisms/fourbar.yaml --set crank_pin=30 --frame effector"),
    "simulate": ("doc", "Simulate the mechanism's motion under gravity, springs, dampers, loads and drivers. "
                        "Example: linkcli simulate mechanisms/fourbar.yaml --dt 1e-3 --t-end 2 -o run.csv"),
    "forces": ("doc", "Input torques, joint forces and shaking forces along a sweep (inverse dynamics), or with "
                      "--static the torques that hold loads, or with --equilibrium the rest positions. Example: "
                      "linkcli forces mechanisms/fourbar.yaml --speed crank_pin=60rpm -o forces.csv"),
    "draw": ("doc", "Draw the mechanism at one configuration: links, joints, sliders, ground; spatial mechanisms "
                    "in 3-D. Example: linkcli draw mechanisms/fourbar.yaml --set crank_pin=30 -o fourbar.png"),
    "animate": ("doc", "Animate the mechanism over a sweep or a simulation, with the traced effector path. "
                       "Example: linkcli animate mechanisms/fourbar.yaml --sweep crank_pin=0:360:5 -o fourbar.gif"),
    "batch": ("short_help", "Run job files or many mechanism files in parallel (checks, studies, Dask); "
                            "summary.json and JUnit."),
    "compile": ("doc", "Compile the numba kernels into the on-disk cache now and report the CPU time. Useful when "
                       "building an image or a CI cache; later runs then start compiled at once. Exits 1 when "
                       "kernels cannot be compiled here (no numba, or LINKCLI_JIT=never)."),
}


def _click_exception_base() -> type[BaseException]:
    """click's ClickException as typer uses it: typer >= 0.2x vendors click, older typer uses
    the click package; both raise subclasses of the class found here."""
    for cls in typer.BadParameter.__mro__:
        if cls.__name__ == "ClickException":
            return cls
    return typer.BadParameter  # pragma: no cover


#: exceptions that carry their own exit status (usage errors, typer.Exit, --help ...)
_PASS_THROUGH = (typer.Exit, typer.Abort, SystemExit, _click_exception_base())


def _traceback_wanted(ctx: Any) -> bool:
    if os.environ.get(TRACEBACK_ENV, "").strip().lower() not in ("", "0", "false", "no"):
        return True
    while ctx is not None:
        if ctx.params.get("traceback"):
            return True
        ctx = ctx.parent
    return False


def handle_exception(exc: BaseException, show_traceback: bool) -> int:
    """Report ``exc`` on stderr the linkcli way and return the exit code."""
    from linkcli.errors import LinkcliError, MechanismFileError

    if isinstance(exc, MechanismFileError):
        from .common import print_diagnostics

        print_diagnostics(exc.diagnostics, omitted=exc.omitted)
        n = sum(d.severity == "error" for d in exc.diagnostics) + exc.omitted
        if n > 1:
            echo_err(f"{n} errors")
        return ExitCode.INVALID_FILE
    if isinstance(exc, LinkcliError):
        echo_err(f"error: {exc}")
        return ExitCode.USAGE
    if isinstance(exc, KeyboardInterrupt):
        from linkcli.errors import Terminated

        echo_err("terminated" if isinstance(exc, Terminated) else "interrupted")
        return 143 if isinstance(exc, Terminated) else 130
    if isinstance(exc, BrokenPipeError):  # e.g. `linkcli schema | head`: stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 141
    if show_traceback:
        import traceback

        sys.stderr.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    notes = "; ".join(getattr(exc, "__notes__", ()))
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    line = f"internal error: {text}" + (f" ({notes})" if notes else "")
    line += f". linkcli {__version__}: please report at {REPORT_TO} with the file and the command line"
    line += "." if show_traceback else " (rerun with --traceback for details)."
    echo_err(line)
    return ExitCode.INTERNAL


class LazyCommands(MutableMapping):
    """The group's commands (name -> click command), each built when first looked up.

    Iterating gives every command name, in the order ``--help`` lists them, without building
    anything; :meth:`summary` is a parameterless stand-in carrying what the listing prints.
    """

    def __init__(self, built: Mapping[str, Any] | None = None) -> None:
        self._built: dict[str, Any] = dict(built or {})
        self._infos: dict[str, Any] = {}  # command name -> typer CommandInfo, per imported module
        self._names: dict[str, list[str]] = {}  # module -> its command names, in registration order

    def _load_module(self, module: str) -> list[str]:
        if module not in self._names:
            import importlib

            registry = typer.Typer()
            importlib.import_module(f"{__package__}.commands.{module}").register(registry)
            names = []
            for info in registry.registered_commands:
                names.append(info.name or typer.main.get_command_name(getattr(info.callback, "__name__", "")))
                self._infos[names[-1]] = info
            self._names[module] = names
        return self._names[module]

    def _load_all(self) -> list[str]:
        """Every command name: by module in ``COMMAND_MODULES`` order, then by registration."""
        return [name for module in COMMAND_MODULES for name in self._load_module(module)]

    def _listed(self, module: str) -> list[str]:
        """The command names of ``module``, from ``COMMAND_SUMMARIES`` when it lists them."""
        names = [name for name in COMMAND_SUMMARIES if COMMAND_ALIASES.get(name, name) == module]
        return names or self._load_module(module)

    def _info(self, name: str) -> Any:
        module = COMMAND_ALIASES.get(name, name)
        if module in COMMAND_MODULES:
            self._load_module(module)
        if name not in self._infos:  # registered under a name not in the tables: look everywhere
            self._load_all()
        return self._infos.get(name)

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            info = self._info(name)
            if info is None:
                raise KeyError(name)
            self._built[name] = typer.main.get_command_from_info(
                info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        self._built.pop(name, None)
        self._infos.pop(name, None)

    def __contains__(self, name: object) -> bool:  # without building the command
        return isinstance(name, str) and (name in self._built or name in COMMAND_SUMMARIES
                                          or self._info(name) is not None)

    def __iter__(self):
        names = [name for module in COMMAND_MODULES for name in self._listed(module)]
        return iter(dict.fromkeys(names + list(self._built)))  # + commands added by add_command

    def __len__(self) -> int:
        return len(list(iter(self)))

    def summary(self, name: str) -> Any:
        """The built command, or a parameterless command with its name, help, short help,
        hidden and deprecated flags (what the listing of ``--help`` reads)."""
        from typer.core import TyperCommand

        if name in self._built:
            return self._built[name]
        if name in COMMAND_SUMMARIES:
            kind, text = COMMAND_SUMMARIES[name]
            return TyperCommand(name=name, help=text if kind == "doc" else None,
                                short_help=text if kind == "short_help" else None,
                                rich_markup_mode=app.rich_markup_mode)
        info = self._info(name)
        if info is None:
            return None
        doc = inspect.getdoc(info.callback) if info.help is None else inspect.cleandoc(info.help)
        return TyperCommand(name=name, help=doc, short_help=info.short_help, hidden=info.hidden,
                            deprecated=info.deprecated, rich_markup_mode=app.rich_markup_mode)


class LinkcliGroup(TyperGroup):
    """Typer's group with the single error handler around command execution; its commands are
    built on first use (:class:`LazyCommands`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = LazyCommands(self.commands)
        self.commands = self.lazy_commands

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return self.commands.get(cmd_name)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """click's listing of the commands (name, short help), read from their summaries so
        that ``--help`` builds no command's parameters."""
        from gettext import gettext

        rows = [(name, cmd) for name in self.list_commands(ctx)
                if (cmd := self.lazy_commands.summary(name)) is not None and not cmd.hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section(gettext("Commands")):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])

    def invoke(self, ctx: Any) -> Any:
        import warnings

        try:
            with warnings.catch_warnings():
                _quiet_numeric_warnings()
                return super().invoke(ctx)
        except _click_exception_base() as exc:  # usage errors quote the user's words: escaped
            from linkcli.errors import visible

            message = getattr(exc, "message", None)
            if isinstance(message, str):
                click_exc: Any = exc  # a ClickException (its class is found at run time)
                click_exc.message = visible(message)
            raise
        except _PASS_THROUGH:
            raise
        except BaseException as exc:  # noqa: BLE001 - the one place that turns errors into exit codes
            code = handle_exception(exc, _traceback_wanted(ctx))
            raise typer.Exit(int(code)) from None


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"linkcli {__version__}")
        raise typer.Exit()


app = typer.Typer(
    name="linkcli",
    cls=LinkcliGroup,
    help="Analyse linkages and mechanisms described in YAML files: assembly, kinematics, "
         "Jacobians, dynamics. Data goes to stdout; progress, warnings and summaries to stderr.",
    epilog=EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain text: rich markup would eat "[s]" in "Time step [s]."
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def root(
    version: Annotated[bool | None, typer.Option(
        "--version", callback=_version_callback, is_eager=True, help="Print the version and exit.")] = None,
    traceback: Annotated[bool, typer.Option(
        "--traceback", help=f"Show the traceback of internal errors (also {TRACEBACK_ENV}=1).")] = False,
) -> None:
    """Analyse linkages and mechanisms described in YAML files."""


def _raise_terminated(signum: int, frame: Any) -> None:
    from linkcli.errors import Terminated

    raise Terminated()


def install_signal_handlers() -> None:
    """SIGTERM raises :class:`~linkcli.errors.Terminated` (a KeyboardInterrupt), so it runs the
    same clean-up as Ctrl-C: the default SIGTERM action kills the process on the spot and
    leaves temporary files behind. Only from the main thread (where signals are delivered)."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _raise_terminated)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``linkcli`` console script and ``python -m linkcli``."""
    install_signal_handlers()
    app(args=argv, prog_name="linkcli")


def _quiet_numeric_warnings() -> None:
    """numpy's RuntimeWarnings (``invalid value encountered in divide`` with an internal file
    path and line) never reach the user: every analysis reports non-finite results through its
    status column and messages instead. Other warnings print as one line without a path."""
    import warnings

    warnings.filterwarnings("ignore", category=RuntimeWarning)

    def one_line(message, category, filename, lineno, file=None, line=None):  # noqa: ARG001
        echo_err(f"warning: {message}")

    warnings.showwarning = one_line


__all__ = ["app", "main", "handle_exception", "install_signal_handlers", "LinkcliGroup", "LazyCommands",
           "COMMAND_MODULES", "COMMAND_ALIASES", "COMMAND_SUMMARIES"]
