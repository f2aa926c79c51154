"""``manage.py workflow_graph app_label.Model [--format mermaid|dot]``: print the diagram."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError

from django_workflow import graph


class Command(BaseCommand):
    help = "Print a workflow model's diagram as Mermaid (default) or Graphviz dot."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("model", help="app_label.ModelName")
        parser.add_argument("--format", choices=["mermaid", "dot"], default="mermaid")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            model = apps.get_model(options["model"])
        except (LookupError, ValueError) as error:
            raise CommandError(f"{options['model']!r} is not a model: {error}") from error
        workflow = getattr(model, "workflow", None)
        if workflow is None:
            raise CommandError(f"{model._meta.label} declares no workflow.")
        render = graph.mermaid if options["format"] == "mermaid" else graph.dot
        self.stdout.write(render(workflow))
