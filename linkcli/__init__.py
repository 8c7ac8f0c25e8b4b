"""linkcli: analyse linkages and mechanisms described in YAML files.

Importing this package is cheap on purpose (no numpy, no pydantic): the command line imports
heavy modules only in the commands that use them. Pipeline (see README.md)::

    linkcli.io.loader.load_mechanism(path)      -> LoadedMechanism (validated model)
    linkcli.compile.compile_mechanism(model)     -> CompiledMechanism (SI arrays)
    linkcli.core.<analysis>(mech, ...)           -> <Analysis>Result
    linkcli.results.ResultTable                  -> linkcli.io.writers.write_table (CSV/JSON)
"""

__version__ = "0.1.0"  # keep equal to [project].version in pyproject.toml (a test checks)

__all__ = ["__version__"]
