"""linkcli: analyse linkages and mechanisms described in YAML files.

Importing this package is cheap on purpose (no numpy, no pydantic): the command line imports
heavy modules only in the commands that use them. Pipeline (see README.md)::

    linkcli.io.loader.load_mechanism(path)      -> LoadedMechanism (validated model)
    linkcli.compile.compile_mechanism(model)     -> CompiledMechanism (SI arrays)
    linkcli.core.<analysis>(mech, ...)           -> <Analysis>Result
    linkcli.results.ResultTable                  -> linkcli.io.writers.write_table (CSV/JSON)

Python API: ``linkcli.load(path)`` -> :class:`linkcli.api.Mechanism` with ``.solve``,
``.jacobian``, ``.ik``, ``.simulate``, each returning a :class:`linkcli.api.Outcome`.
"""

__version__ = "0.1.0"  # keep equal to [project].version in pyproject.toml (a test checks)

__all__ = ["__version__", "load", "Mechanism", "Outcome", "Event"]


def __getattr__(name: str):
    """The Python API (``linkcli.load`` ...; see :mod:`linkcli.api`), imported on first use so
    that the command line still starts without numpy."""
    if name in ("load", "Mechanism", "Outcome", "Event"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'linkcli' has no attribute {name!r}")
