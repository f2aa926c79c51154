"""Types for what declarations generate: the surface both the stubs and the mypy plugin
read (``surface``) and the ``.pyi`` writer (``writing``); docs/types.md."""
