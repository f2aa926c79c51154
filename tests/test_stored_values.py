"""The engine adapts the values of its compiled statements itself, the few kinds it writes
most without Django's calls; what it sends is what ``get_db_prep_save`` would."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.db import connections

from django_workflow.models import TransitionLog, WorkAttempt
from django_workflow.statements import db_value
from tests.conftest import workflow_database

INSTANT = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)


def outcome(adapt):
    try:
        return adapt()
    except ValueError as error:
        return type(error)


@pytest.mark.parametrize(
    ("model", "name", "value"),
    [
        (TransitionLog, "occurred_at", INSTANT),
        (TransitionLog, "occurred_at", INSTANT.astimezone(timezone(timedelta(hours=5)))),
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
    assert db_value(field, value, connection) == field.get_db_prep_save(value, connection)


def test_an_instant_once_adapted_follows_a_change_of_the_time_zone_settings(settings):
    connection = connections[workflow_database()]
    field = TransitionLog._meta.get_field("occurred_at")
    db_value(field, INSTANT, connection)  # kept for the next rows
    settings.USE_TZ = False  # on SQLite an aware instant is refused now
    expected = outcome(lambda: field.get_db_prep_save(INSTANT, connection))
    assert outcome(lambda: db_value(field, INSTANT, connection)) == expected
