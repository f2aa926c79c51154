"""Workflow models on a database of their own, and PostgreSQL connections that bind
parameters on the server (docs/deployment.md, "Several databases").

Run with ``DJANGO_SETTINGS_MODULE=tests.settings_databases`` the records live on a
second PostgreSQL database beside SQLite or PostgreSQL (tests/routers.py); with the
plain settings the same tests run on ``default`` when it is PostgreSQL.
"""

import copy
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.db import connections, router, transaction

from django_workflow import run_work
from django_workflow.engine.sql import probes
from tests.moments import T
from tests.testapp.models import Batch, SideEffect

RECORDS = router.db_for_write(Batch)

pytestmark = [
    pytest.mark.django_db(transaction=True, databases="__all__"),
    pytest.mark.skipif(
        connections[RECORDS].vendor != "postgresql",
        reason="row locks and server-side binding are PostgreSQL's",
    ),
]


@contextmanager
def another_connection(**options):
    """A connection of its own to the records' database, as another process would hold."""
    settings = copy.deepcopy(connections[RECORDS].settings_dict)
    settings["OPTIONS"] = {**settings.get("OPTIONS", {}), **options}
    wrapper = type(connections[RECORDS])(settings, alias="workflow_other")
    connections["workflow_other"] = wrapper
    try:
        yield wrapper
    finally:
        wrapper.close()
        del connections["workflow_other"]


def test_a_record_locked_by_another_transaction_is_skipped_on_the_records_database():
    batch = Batch.objects.create()
    with another_connection() as other:
        other.set_autocommit(False)
        with other.cursor() as cursor:
            table = other.ops.quote_name(Batch._meta.db_table)
            cursor.execute(f"SELECT 1 FROM {table} WHERE id = %s FOR UPDATE", [batch.pk])
        with transaction.atomic(using=RECORDS):
            assert probes.locked(Batch, batch.pk, RECORDS) is None
        other.rollback()
    with transaction.atomic(using=RECORDS):
        assert probes.locked(Batch, batch.pk, RECORDS) == batch


def test_a_due_action_timeout_fires_once_on_the_records_database(clock):
    batch = Batch.objects.create()
    clock.move_to(T + timedelta(days=1, minutes=1))
    assert run_work(Batch, "timeout:waiting.ping") == 1
    assert run_work(Batch, "timeout:waiting.ping") == 0
    assert SideEffect.objects.filter(batch=batch).count() == 1
    assert [row.triggered_by for row in batch.history()] == ["initial", "timeout"]


def test_prepared_polls_answer_through_server_side_binding(clock):
    Batch.objects.create()
    due, early = T + timedelta(days=1, minutes=1), T + timedelta(hours=1)
    with another_connection(server_side_binding=True) as bound:
        answers = [probes.any_due(Batch, at, bound.alias) for at in (due, early) * 4]
    assert answers == [True, False] * 4
