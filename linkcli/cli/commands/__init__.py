"""One module per command. Each defines ``register(app)`` adding its typer command(s), keeps its
module-level imports light (typer and ``..options`` / ``..common`` only) and imports numpy,
pydantic and the core inside the command function."""
