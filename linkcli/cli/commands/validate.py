"""``linkcli validate FILE...``: check mechanism files (load, validate, compile)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..common import ExitCode, echo_err, echo_out, load_and_compile, print_diagnostics, print_plain_json
from ..options import CheckFormat, CheckFormatOption, MechanismFiles, QuietOption


def check_file(path: str, strict: bool = False) -> dict[str, Any]:
    """``{"file", "valid", "diagnostics": [Diagnostic.to_dict()...]}`` (warnings included) plus
    the Diagnostic objects under ``"_diagnostics"``; ``strict``: warnings are errors. A compile
    failure of a valid file is a bug and propagates (exit 70)."""
    from linkcli.errors import MechanismFileError
    from linkcli.io.loader import strict_errors
    from linkcli.io.yaml_source import source_name

    try:
        loaded, _mech = load_and_compile(path)
    except MechanismFileError as exc:
        diags, omitted = list(exc.diagnostics), exc.omitted
        valid = False
    else:
        from .info import actuation_warnings  # over-actuated: solve would find no assembly

        diags, omitted = list(loaded.warnings) + actuation_warnings(loaded, _mech, over_only=True), 0
        valid = True
        if strict and diags:
            diags, valid = strict_errors(diags), False
    out = {"file": source_name(path), "valid": valid, "diagnostics": [d.to_dict() for d in diags]}
    if omitted:
        out["omitted"] = omitted  # problems found but not described
    return {**out, "_diagnostics": diags, "_omitted": omitted}


StrictOption = Annotated[bool, typer.Option("--strict", help="Treat warnings (implausible gravity or inertia, "
                                           "a mass without cg/inertia, a spring too stiff for dt ...) as errors.")]


def validate(files: MechanismFiles, fmt: CheckFormatOption = CheckFormat.text, quiet: QuietOption = False,
             strict: StrictOption = False) -> None:
    """Check mechanism files: YAML syntax, the file format, references and topology; each valid
    file is also compiled.

    Prints 'ok FILE' on stdout for each valid file and every problem as file:line:col on stderr.
    With --format json, stdout is one JSON list of {file, valid, diagnostics}. Exit 0 when all
    files are valid, 3 when any is invalid (with --strict: or has a warning).
    """
    results = [check_file(str(f), strict) for f in files]
    n_bad = sum(not r["valid"] for r in results)
    if fmt == CheckFormat.json:
        print_plain_json([{k: v for k, v in r.items() if not k.startswith("_")} for r in results])
    else:
        for r in results:
            if r["valid"]:
                n_warn = len(r["_diagnostics"])
                echo_out(f"ok {r['file']}" + (f" ({n_warn} warning{'s' * (n_warn != 1)})" if n_warn else ""))
                print_diagnostics(r["_diagnostics"], quiet)
            else:
                print_diagnostics(r["_diagnostics"], omitted=r["_omitted"])
        if not quiet and len(results) > 1:
            echo_err(f"{len(results)} files: {len(results) - n_bad} valid, {n_bad} invalid")
    if n_bad:
        raise typer.Exit(int(ExitCode.INVALID_FILE))


def register(app: typer.Typer) -> None:
    app.command("validate", short_help="Check mechanism files (syntax, format, references, topology); "
                                       "exit 3 if any is invalid.")(validate)
