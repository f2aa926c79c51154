"""``manage.py workflow_stubs [--out DIR] [--check]``: write (or check) the ``.pyi``
stubs that tell type checkers what each workflow declaration generates (docs: types.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ...stubs.surface import ModelSurface, surface, typed_models
from ...stubs.writing import module_stub


class Command(BaseCommand):
    help = (
        "Write a .pyi stub beside each module holding workflow models (or under --out), "
        "declaring the generated transition methods, fields and querysets."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--out",
            metavar="DIR",
            help="write the stubs under DIR, one folder per package (a stub folder such as "
            "pyright's `typings`), instead of beside each module",
        )
        parser.add_argument(
            "--check",
            action="store_true",
            help="write nothing; exit non-zero when a stub is missing or out of date",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        out = Path(options["out"]) if options["out"] else None
        stubs = dict(_stub(module, models, out) for module, models in _by_module().items())
        stale = sorted(path for path, text in stubs.items() if _read(path) != text)
        if options["check"]:
            if stale:
                listed = "\n  ".join(str(path) for path in stale)
                raise CommandError(
                    f"{len(stale)} workflow stub(s) missing or out of date:\n  {listed}\n"
                    "Run `manage.py workflow_stubs` with the same --out to rewrite them."
                )
            self.stdout.write(f"{len(stubs)} workflow stub(s) up to date.")
            return
        for path in stale:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(stubs[path], encoding="utf-8")
            self.stdout.write(f"Wrote {path}")
        self.stdout.write(f"{len(stubs)} workflow stub(s), {len(stale)} written.")


def _by_module() -> dict[str, list[ModelSurface]]:
    modules: dict[str, list[ModelSurface]] = {}
    for model in typed_models():
        modules.setdefault(model.__module__, []).append(surface(model))
    return modules


def _stub(module: str, models: list[ModelSurface], out: Path | None) -> tuple[Path, str]:
    source_file = Path(getattr(sys.modules[module], "__file__", "") or "")
    if source_file.suffix != ".py":
        raise CommandError(f"Module {module} has no Python source to stub ({source_file}).")
    source = source_file.read_text(encoding="utf-8")
    return stub_path(module, source_file, out), module_stub(
        source, source_file.name, module, models
    )


def stub_path(module: str, source_file: Path, out: Path | None) -> Path:
    """Beside the source, or where a stub folder looks for ``module``."""
    if out is None:
        return source_file.with_suffix(".pyi")
    parts = module.split(".")
    if source_file.name == "__init__.py":
        return out.joinpath(*parts, "__init__.pyi")
    return out.joinpath(*parts[:-1], parts[-1] + ".pyi")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
