"""The engine adapts the values of its compiled statements itself, the few kinds it writes
most without Django's calls; what it sends is what ``get_db_prep_save`` would."""

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from django.db import connections

from django_workflow.engine.sql import writes
from django_workflow.engine.sql.writes import db_value
from django_workflow.models import TransitionLog, WorkAttempt
from tests.conftest import workflow_database

INSTANT = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)
PARIS = ZoneInfo("Europe/Paris")
#: 02:30 twice on the night summer time ended: an hour apart, yet equal in Python.
FIRST_0230 = datetime(2025, 10, 26, 2, 30, tzinfo=PARIS)
SECOND_0230 = FIRST_0230.replace(fold=1)


def sent(value):
    """What goes to the driver, instants as their instant (``fold`` counts)."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return type(value), value.astimezone(UTC)
    return type(value), value


def outcome(adapt):
    try:
        return sent(adapt())
    except ValueError as error:
        return type(error)


@pytest.mark.parametrize(
    ("model", "name", "value"),
    [
        (TransitionLog, "occurred_at", INSTANT),
        (TransitionLog, "occurred_at", INSTANT.astimezone(timezone(timedelta(hours=5)))),
        (TransitionLog, "occurred_at", FIRST_0230),
        (TransitionLog, "from_state", "draft"),
        (TransitionLog, "actor_id", None),
        (WorkAttempt, "attempts", 3),
        (WorkAttempt, "halted", True),
        (WorkAttempt, "object_id", 17),
    ],
)
def test_a_value_is_sent_as_get_db_prep_save_sends_it(model, name, value):
    connection = connections[workflow_database()]
    field = model._meta.get_field(name)
    assert sent(db_value(field, value, connection)) == sent(
        field.get_db_prep_save(value, connection)
    )


def test_the_second_of_two_equal_local_times_is_stored_as_its_own_instant():
    connection = connections[workflow_database()]
    field = TransitionLog._meta.get_field("occurred_at")
    db_value(field, FIRST_0230, connection)
    expected = sent(field.get_db_prep_save(SECOND_0230, connection))
    assert sent(db_value(field, SECOND_0230, connection)) == expected


def test_an_instant_once_adapted_follows_a_change_of_use_tz(settings):
    connection = connections[workflow_database()]
    field = TransitionLog._meta.get_field("occurred_at")
    db_value(field, INSTANT, connection)  # kept for the next rows
    settings.USE_TZ = False  # on SQLite an aware instant is refused now
    expected = outcome(lambda: field.get_db_prep_save(INSTANT, connection))
    assert outcome(lambda: db_value(field, INSTANT, connection)) == expected


def test_the_instants_kept_stay_few():
    connection = connections[workflow_database()]
    field = TransitionLog._meta.get_field("occurred_at")
    for minutes in range(3 * writes._INSTANTS_KEPT):
        db_value(field, INSTANT + timedelta(minutes=minutes), connection)
    assert len(writes._instants) <= writes._INSTANTS_KEPT
