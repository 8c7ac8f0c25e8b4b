"""The ``linkcli`` command line (typer). Nothing in the library imports this package.

Layout: ``app.py`` (the typer app, global options, the one error handler, exit codes),
``options.py`` (shared Annotated option types), ``common.py`` (load_and_compile, stderr
messages, emitting tables), ``render.py`` (rich rendering), ``commands/<name>.py`` (one module
per command, each with ``register(app)``). Heavy modules (numpy, pydantic, the core) are
imported inside command functions only, so ``linkcli --help`` stays fast.
"""
