"""``manage.py workflow_upgrade app_label.Model --to N [--from M] [--map old=new]...
[--dry-run] [--batch 500] [--database alias]``: move running records to another version
of their declaration (docs/versions.md)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ...engine import upgrading
from ...errors import UnmappedSteps
from .workflow_graph import _model as find_model


class Command(BaseCommand):
    help = (
        "Move the records of a versioned workflow model to another version: each locked, "
        "logged (trigger 'upgrade'), its deadlines recomputed from its entry instant."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "model", help="app_label.ModelName, or ModelName when one workflow model has it"
        )
        parser.add_argument("--to", type=int, required=True, help="The version to move to.")
        parser.add_argument(
            "--from", dest="from_version", type=int, help="Only the records on this version."
        )
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="OLD=NEW",
            help="Move the records in step OLD (which the target lacks) to step NEW; repeat "
            "for each step.",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Print what would move and the deadlines whose instant would change; "
            "write nothing.",
        )
        parser.add_argument(
            "--batch", type=int, default=upgrading.BATCH_SIZE, help="Records per transaction."
        )
        parser.add_argument("--database", help="The database alias (default: the router's).")

    def handle(self, *args: Any, **options: Any) -> None:
        model = find_model(options["model"])
        if getattr(model, "workflow", None) is None:
            raise CommandError(f"{model._meta.label} declares no workflow.")
        if options["batch"] < 1:
            raise CommandError("--batch must be at least 1.")
        steps = _mapping(options["map"])
        to, since = options["to"], options["from_version"]
        try:
            plan = upgrading.plan(
                model,
                to,
                from_version=since,
                steps=steps,
                using=options["database"],
                deadlines=options["dry_run"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(_table(plan))
        if plan.unmapped:
            raise CommandError(str(UnmappedSteps(model, to, plan.unmapped)))
        if options["dry_run"]:
            self.stdout.write("Dry run: nothing was written.")
            return
        started = time.monotonic()
        moved = upgrading.upgrade(
            model,
            to,
            from_version=since,
            steps=steps,
            batch_size=options["batch"],
            using=options["database"],
            progress=lambda done, total: self.stdout.write(f"  {done:,} of {total:,} moved"),
        )
        seconds = time.monotonic() - started
        self.stdout.write(
            self.style.SUCCESS(
                f"{model._meta.label}: {_records(moved)} moved to version {to} in {seconds:.1f} s."
            )
        )


def _mapping(pairs: list[str]) -> dict[str, str]:
    steps = {}
    for pair in pairs:
        old, sign, new = pair.partition("=")
        if not sign or not old or not new:
            raise CommandError(f"--map {pair!r}: write it as OLD=NEW (two step names).")
        steps[old] = new
    return steps


def _table(plan: upgrading.UpgradePlan) -> str:
    """One line per (version, step → step), with the deadlines a dry run found changing."""
    label = plan.model._meta.label
    if not plan.groups and not plan.unmapped:
        return f"{label}: every record already runs on version {plan.to}."
    lines = [f"{label}: to version {plan.to}"]
    for group in plan.groups:
        arrow = group.step if group.to_step == group.step else f"{group.step} -> {group.to_step}"
        lines.append(f"  version {group.version}, {arrow}: {_records(group.records)}")
        for name, count in sorted(group.deadlines_changed.items()):
            lines.append(f"    deadline {name!r}: due instant changes for {_records(count)}")
    for (version, step), count in sorted(plan.unmapped.items()):
        lines.append(f"  version {version}, {step}: {_records(count)}, not mapped")
    return "\n".join(lines)


def _records(count: int) -> str:
    return f"{count:,} record{'s' * (count != 1)}"
