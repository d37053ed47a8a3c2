"""The `rubric` command: one Typer app per phase, thin wrappers over the library."""
