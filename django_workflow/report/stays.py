"""The stays the report counts, as querysets: ended ones read from the log, open ones
from the records, and the log rows of the timeouts that fired in them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db.models import Case, Count, F, FloatField, Func, Q, Value, When

from ..model.columns import STATE_ENTERED_AT
from ..model.triggers import Trigger
from ..models import TransitionLog

#: Log rows that do not begin a stay: failures and halts of an automatic step, and votes
#: (cast or retracted in place).
NOT_ENTRIES = (Trigger.FAILED, Trigger.HALTED, Trigger.VOTE)


class EpochSeconds(Func):
    """An instant as seconds since 1970 (a float), on SQLite and PostgreSQL."""

    output_field = FloatField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        template = "((julianday(%(expressions)s) - 2440587.5) * 86400.0)"
        return self.as_sql(compiler, connection, template=template)

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        # date_part gives a float directly; EXTRACT gives a numeric, far slower to carry.
        return self.as_sql(compiler, connection, template="date_part('epoch', %(expressions)s)")


def _log_rows(model: Any, db: str, since: datetime, until: datetime, condition: Q) -> Any:
    """The model's log rows meeting ``condition`` that belong to stays begun in the window."""
    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    rows = TransitionLog.objects.using(db).filter(
        condition,
        content_type=content_type,
        from_state_entered_at__gte=since,
        from_state_entered_at__lt=until,
    )
    return rows.order_by()


def _leaving(model: Any) -> Q:
    """A log row that ends a stay: a move out of ``from_state`` (a transition back into
    the same step, a timeout's included, ends one stay and begins the next); not a
    failure, a halt, or an action timeout, every or entry action firing in place."""
    fired_in_place = Q(triggered_by=Trigger.TIMEOUT, from_state=F("to_state"))
    for name, step in model.workflow.steps.items():
        back = [t.name for t in step.timeouts if t.transition_to == name]
        if back:
            fired_in_place &= ~Q(from_state=name, transition_name__in=back)
    return ~Q(from_state="") & ~Q(triggered_by__in=NOT_ENTRIES) & ~fired_in_place


def ended_stays(model: Any, db: str, since: datetime, until: datetime) -> Any:
    """Each stay begun in the window that its record has left since: the row that left
    it names the step and its start, so a stay is one row. Its end, in epoch seconds,
    counts only when it came before ``until``."""
    left_at = Case(When(occurred_at__lt=until, then=EpochSeconds("occurred_at")))
    return (
        _log_rows(model, db, since, until, _leaving(model))
        .annotate(step=F("from_state"), entered=EpochSeconds("from_state_entered_at"))
        .annotate(left_at=left_at)
        .values("object_id", "step", "entered", "left_at")
    )


def current_stays(model: Any, db: str, since: datetime, until: datetime) -> Any:
    """Each record's stay in its current step, when it began in the window: open now,
    so open at ``until`` too, with the name of its zone when it names one (``""``
    otherwise). Terminal steps are only counted (``terminal_stays``)."""
    workflow = model.workflow
    state, zone_field = workflow.state_attribute, workflow.time_zone_field
    rows = _current(model, db, since, until).exclude(**{f"{state}__in": terminal_steps(model)})
    return rows.annotate(
        step=F(state),
        entered=EpochSeconds(STATE_ENTERED_AT),
        zone_name=F(zone_field) if zone_field else Value(""),
    ).values("step", "entered", "zone_name")


def terminal_stays(model: Any, db: str, since: datetime, until: datetime) -> Any:
    """Per terminal step, the records that entered it in the window and are there now.
    Time in a step no record leaves is only the time since it got there: no figures."""
    state = model.workflow.state_attribute
    rows = _current(model, db, since, until).filter(**{f"{state}__in": terminal_steps(model)})
    return rows.values(terminal_step=F(state)).annotate(stays=Count("pk"))


def _current(model: Any, db: str, since: datetime, until: datetime) -> Any:
    rows = model._base_manager.using(db).order_by()
    return rows.filter(**{f"{STATE_ENTERED_AT}__gte": since, f"{STATE_ENTERED_AT}__lt": until})


def terminal_steps(model: Any) -> list[str]:
    return [name for name, step in model.workflow.steps.items() if step.is_terminal]


def firings(model: Any, db: str, since: datetime, until: datetime, names: list[str]) -> Any:
    """The log rows of timeouts ``names`` firing before ``until`` in stays begun in the
    window: a transition timeout's row ends the stay, an action timeout's happens in it."""
    fired = Q(triggered_by=Trigger.TIMEOUT, transition_name__in=names, occurred_at__lt=until)
    rows = _log_rows(model, db, since, until, fired)
    return rows.values("from_state", "transition_name", "object_id", "from_state_entered_at")
