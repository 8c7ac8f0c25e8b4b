"""``linkcli compile``: compile every numba kernel into the cache ahead of time (container images,
CI caches), so that no later run compiles or runs interpreted kernels. Reports the CPU seconds."""

from __future__ import annotations

import typer

from ..common import echo_err
from ..options import QuietOption


def compile_kernels(quiet: QuietOption = False) -> None:
    """Compile the numba kernels into the on-disk cache now and report the CPU time.
    Useful when building an image or a CI cache; later runs then start compiled at once.
    Exits 1 when kernels cannot be compiled here (no numba, or LINKCLI_JIT=never)."""
    from linkcli.analyses.kernels import compile_kernels as compile_all

    report = compile_all()
    if not report.compiled:
        echo_err(f"cannot compile kernels: {report.reason}")
        raise typer.Exit(1)
    if not quiet:
        state = "were already cached (loaded)" if report.was_cached else "compiled into numba's cache"
        echo_err(f"kernels {state}: {report.cpu_s:.1f} s of CPU")


def register(app: typer.Typer) -> None:
    app.command("compile")(compile_kernels)
