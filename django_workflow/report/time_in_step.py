"""The time-in-step report made: bounds and model checked, the statement run on the
database, its rows read into figures."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connections, router, transaction
from django.utils import timezone

from .figures import Report, ReportError, assemble
from .slas import sla_figures
from .statement import statement
from .working_days import calendar_days, zones_in_play

#: PostgreSQL's memory for the report's sorts, for its own transaction only.
WORK_MEM = "256MB"


def time_in_step(
    model: Any, since: datetime, until: datetime | None = None, using: str | None = None
) -> Report:
    """The report for ``model`` over the stays that began in ``[since, until)``.

    ``until`` defaults to now. Raises ``ReportError`` for a model that does not log,
    naive or reversed bounds, an unknown time zone on a record, or a database
    other than SQLite or PostgreSQL.
    """
    until = until or timezone.now()
    _check(model, since, until)
    db = using or router.db_for_read(model)
    vendor = connections[db].vendor
    if vendor not in ("sqlite", "postgresql"):
        raise ReportError(f"The time-in-step report runs on SQLite and PostgreSQL, not {vendor}.")
    zones, note = zones_in_play(model, db), _business_hours_note(model)
    days = None if note else calendar_days(model, zones, since, until)
    with transaction.atomic(using=db), connections[db].cursor() as cursor:
        if vendor == "postgresql":
            # The sorts of a large window fit in memory; compiling the generated
            # expressions (JIT) costs more than it saves on a statement run once.
            cursor.execute(f"SET LOCAL work_mem = '{WORK_MEM}'")
            cursor.execute("SET LOCAL jit = off")
        cursor.execute(*statement(model, db, since, until, zones, days))
        rows = cursor.fetchall()
    steps = assemble(model, rows, business=days is not None)
    return Report(model, since, until, steps, note, sla_figures(model, since, until, db))


def _check(model: Any, since: datetime, until: datetime) -> None:
    workflow = getattr(model, "workflow", None)
    if workflow is None:
        raise ReportError(f"{model._meta.label} declares no workflow.")
    if workflow.log is not True:
        raise ReportError(
            f"{model._meta.label} keeps no transition log, which the report reads; "
            "set `log = True` in its `class Workflow:`."
        )
    if timezone.is_naive(since) or timezone.is_naive(until):
        raise ReportError("The report's bounds must be aware datetimes (with a time zone).")
    if since >= until:
        raise ReportError(f"The report's start ({since}) must come before its end ({until}).")


def _business_hours_note(model: Any) -> str | None:
    """A calendar returned per record by a model method cannot be known without loading
    every record, so such a model's report leaves business hours out, and says so."""
    holidays = model.workflow.holidays
    if isinstance(holidays, str):
        return (
            f"Business hours are not reported: {model._meta.label} reads its holidays per "
            f"record (`holidays = {holidays!r}`)."
        )
    return None
