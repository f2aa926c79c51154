"""Upgrades racing other writers on PostgreSQL (docs/versions.md): each on a connection of
its own, released together; the row locks let each record move once and consistently."""

from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from django_workflow import StaleRecord, TransitionNotAllowed
from django_workflow.models import TransitionLog
from tests.helpers import fresh
from tests.races import at_once, race
from tests.testapp.models import Tender
from tests.versions.test_versions import on_version_1

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-level concurrency needs PostgreSQL"
    ),
]


def logged(record, name):
    return TransitionLog.objects.filter(object_id=str(record.pk), transition_name=name).count()


@pytest.mark.parametrize("attempt", range(5))
def test_an_upgrade_racing_a_transition_moves_the_record_once_and_consistently(attempt):
    tender = on_version_1()
    tender.submit()
    upgrade, approve = race(
        Tender,
        tender.pk,
        [lambda r: r.workflow.upgrade(to=2), lambda r: r.approve()],
        (StaleRecord, TransitionNotAllowed),
    )
    tender = fresh(tender)
    assert upgrade == "done"
    assert tender.workflow_version == 2
    assert logged(tender, "upgrade") == 1
    if approve == "done":  # it went first, on version 1; the upgrade took the record after
        assert (tender.state, logged(tender, "approve")) == ("approved", 1)
    else:  # the upgrade went first: the call decided on version 1 is stale
        assert approve == "StaleRecord"
        assert (tender.state, logged(tender, "approve")) == ("review", 0)


def test_two_upgrade_commands_at_once_move_each_record_once():
    records = [on_version_1() for _ in range(120)]

    def command():
        call_command("workflow_upgrade", "testapp.Tender", "--to", "2", "--batch", "25",
                     stdout=StringIO())  # fmt: skip

    assert at_once([command, command]) == [None, None]
    assert set(Tender.objects.values_list("workflow_version", flat=True)) == {2}
    upgrades = Counter(
        TransitionLog.objects.filter(triggered_by="upgrade").values_list("object_id", flat=True)
    )
    assert upgrades == Counter({str(record.pk): 1 for record in records})
