"""What a step change writes to the service-level clocks (``Workflow.slas``): the stay it
ends added to each running clock, in the move's own ``UPDATE`` (``sla_clocks_read``
computes it)."""

from __future__ import annotations

from typing import Any

from django.db.models import Case, F, Value, When

from ..model.columns import STATE_ENTERED_AT
from ..model.triggers import Event
from ..model.versions import workflow_of
from ..work import sla_clocks_read

leaving = sla_clocks_read.leaving


def leaving_one(
    record: Any, guard: dict[str, Any], changes: dict[str, Any], event: Event
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The guard and changes of one record's move: a running clock adds the stay the
    instance saw, so the row must still be in that stay."""
    if not sla_clocks_read.running_in(workflow_of(record), event.from_state):
        return guard, changes
    entered = getattr(record, STATE_ENTERED_AT)
    guard = {**guard, STATE_ENTERED_AT: entered}
    return guard, leaving(record, event.from_state, entered, changes)


def leaving_many(
    model: Any, claim: Any, changes: dict[str, Any], event: Event
) -> tuple[dict[Any, Any], dict[Any, dict[str, Any]], dict[str, Any]]:
    """For a batch's move: each claimed row's entry instant, its clocks' new values, and
    the changes with one ``CASE`` per clock column so each row gets its own in the one
    ``UPDATE``. Without a running clock the rows' entry instants alone are read."""
    if not sla_clocks_read.running_in(model.workflow, event.from_state):
        return dict(claim.values_list("pk", STATE_ENTERED_AT)), {}, changes
    entered, per_record = {}, {}
    for record in claim:  # whole records: each one's zone and calendar count
        stay_start = getattr(record, STATE_ENTERED_AT)
        entered[record.pk] = stay_start
        left = leaving(record, event.from_state, stay_start, changes)
        per_record[record.pk] = {name: left[name] for name in left.keys() - changes.keys()}
    columns = {name for values in per_record.values() for name in values}
    cases = {
        name: Case(
            *(When(pk=pk, then=Value(values[name])) for pk, values in per_record.items()),
            default=F(name),
            output_field=model._meta.get_field(name),
        )
        for name in columns
    }
    return entered, per_record, {**changes, **cases}
