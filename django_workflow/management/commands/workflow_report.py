"""``manage.py workflow_report app_label.Model --since DATE [--until DATE] [--format table|csv]``:
time in step, from the transition log (docs/report.md)."""

from __future__ import annotations

import csv
from datetime import date, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from ...report import Report, ReportError, StepFigures, time_in_step
from .workflow_graph import _model as find_model

COLUMNS = (
    "step",
    "stays",
    "open",
    "median_hours",
    "p90_hours",
    "median_business_hours",
    "p90_business_hours",
)


class Command(BaseCommand):
    help = (
        "Per step of a workflow model: stays that began in the window, median and p90 time "
        "in step in calendar and business hours, and each timeout's breach rate."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "model", help="app_label.ModelName, or ModelName when one workflow model has it"
        )
        parser.add_argument(
            "--since",
            required=True,
            help="The window's start: YYYY-MM-DD (midnight in the workflow's time zone) "
            "or an ISO date-time.",
        )
        parser.add_argument("--until", help="The window's end, excluded (default: now).")
        parser.add_argument("--format", choices=["table", "csv"], default="table")

    def handle(self, *args: Any, **options: Any) -> None:
        model = find_model(options["model"])
        workflow = getattr(model, "workflow", None)
        if workflow is None:
            raise CommandError(f"{model._meta.label} declares no workflow.")
        zone = ZoneInfo(workflow.time_zone)
        since = _instant("--since", options["since"], zone)
        until = _instant("--until", options["until"], zone) if options["until"] else None
        if until is not None and since >= until:
            raise CommandError(f"--since ({since}) must come before --until ({until}).")
        try:
            report = time_in_step(model, since, until)
        except ReportError as error:
            raise CommandError(str(error)) from error
        if options["format"] == "csv":
            _write_csv(report, self.stdout)
        else:
            self.stdout.write(_table(report))
        if report.business_hours_note:
            self.stderr.write(report.business_hours_note)


def _instant(option: str, text: str, zone: ZoneInfo) -> datetime:
    """A date is its midnight in ``zone``; a date-time without an offset is read in ``zone``."""
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time(), tzinfo=zone)
        value = datetime.fromisoformat(text)
    except ValueError as error:
        raise CommandError(
            f"{option}: {text!r} is not a date (YYYY-MM-DD) or an ISO date-time "
            "(2026-01-01T08:00+01:00)."
        ) from error
    return timezone.make_aware(value, zone) if timezone.is_naive(value) else value


def _timeout_names(report: Report) -> list[str]:
    """Every timeout name of the report, in the order steps declare them."""
    return list(dict.fromkeys(t.name for step in report.steps for t in step.timeouts))


def _values(step: StepFigures) -> list[Any]:
    return [
        step.step,
        step.stays,
        step.open,
        step.median_hours,
        step.p90_hours,
        step.median_business_hours,
        step.p90_business_hours,
    ]


def _write_csv(report: Report, out: Any) -> None:
    """One row per step; hours and breach rates (0 to 1) unrounded beyond 4 decimals,
    empty where there is no figure (no stay, no such timeout in the step)."""
    names = _timeout_names(report)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*COLUMNS, *(f"breach_rate:{name}" for name in names)])
    for step in report.steps:
        rates = {t.name: t.breach_rate for t in step.timeouts}
        cells = [*_values(step), *(rates.get(name) for name in names)]
        writer.writerow(
            ["" if v is None else round(v, 4) if isinstance(v, float) else v for v in cells]
        )


def _table(report: Report) -> str:
    names = _timeout_names(report)
    header = ["step", "stays", "open", "median h", "p90 h", "median bh", "p90 bh"]
    rows = [[*header, *(f"{name} breach" for name in names)]]
    for step in report.steps:
        rates = {t.name: t for t in step.timeouts}
        cells = [_hours(v) if isinstance(v, float | None) else str(v) for v in _values(step)]
        rows.append([*cells, *(_rate(rates.get(name)) for name in names)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    title = (
        f"{report.model._meta.label}: stays that began from {report.since.isoformat()} "
        f"to {report.until.isoformat()}; h = calendar hours, bh = business hours; "
        "open stays count up to the end."
    )
    return "\n".join([title, *lines, *_sla_lines(report)])


def _sla_lines(report: Report) -> list[str]:
    """One line per SLA: the clocks stopped in the window, then the open ones now."""
    return [
        f"SLA {sla.name} ({sla.target}): stopped in the window {sla.met + sla.breached} "
        f"(met {sla.met}, breached {sla.breached}, median consumed "
        f"{_hours(sla.median_hours)} h); open now {sla.running + sla.paused} "
        f"(running {sla.running}, paused {sla.paused}, breached {sla.breached_open})"
        for sla in report.slas
    ]


def _hours(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _rate(timeout: Any) -> str:
    if timeout is None or timeout.breach_rate is None:
        return "-"
    return f"{timeout.breach_rate:.0%} ({timeout.fired})"
