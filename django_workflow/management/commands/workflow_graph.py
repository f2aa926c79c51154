"""``manage.py workflow_graph [app_label.]Model [--format mermaid|dot]``: print the diagram."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError

from ...model import graph
from ...model.registry import workflow_models


class Command(BaseCommand):
    help = "Print a workflow model's diagram as Mermaid (default) or Graphviz dot."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "model", help="app_label.ModelName, or ModelName when one workflow model has it"
        )
        parser.add_argument("--format", choices=["mermaid", "dot"], default="mermaid")

    def handle(self, *args: Any, **options: Any) -> None:
        model = _model(options["model"])
        workflow = getattr(model, "workflow", None)
        if workflow is None:
            raise CommandError(f"{model._meta.label} declares no workflow.")
        render = graph.mermaid if options["format"] == "mermaid" else graph.dot
        self.stdout.write(render(workflow))


def _model(name: str) -> Any:
    """The model ``app_label.ModelName``, or the one workflow model called ``ModelName``
    (in any case); otherwise an error that lists the workflow models to choose from."""
    if "." in name:
        try:
            return apps.get_model(name)
        except (LookupError, ValueError) as error:
            raise CommandError(f"{name!r} is not a model: {error}. {_choices()}") from error
    found = [m for m in workflow_models() if m.__name__.lower() == name.lower()]
    if len(found) == 1:
        return found[0]
    if not found:
        raise CommandError(f"No workflow model is called {name!r}. {_choices()}")
    labels = ", ".join(sorted(m._meta.label for m in found))
    raise CommandError(f"Several workflow models are called {name!r}: {labels}. Name one.")


def _choices() -> str:
    labels = sorted(m._meta.label for m in workflow_models())
    return f"Workflow models: {', '.join(labels)}." if labels else "No workflow model exists."
