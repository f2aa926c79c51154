"""``key_lists.among``: the rows whose column holds one of a list of values, the list
bound as one array on PostgreSQL (docs/traces-and-metrics.md#what-a-scrape-costs), Django's
``IN`` elsewhere; the same rows either way."""

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_workflow.reading.key_lists import among
from tests.testapp.models import Order, Ticket

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", [Order, Ticket], ids=["uuid key", "integer key"])
def test_among_finds_the_rows_in_holds_and_nothing_else(model):
    records = [model.objects.create() for _ in range(5)]
    wanted = [record.pk for record in records[1:4]]
    found = set(model.objects.filter(among("pk", wanted)).values_list("pk", flat=True))
    through_in = set(model.objects.filter(pk__in=wanted).values_list("pk", flat=True))
    assert found == set(wanted) == through_in


def test_among_an_empty_list_finds_nothing():
    Ticket.objects.create()
    assert not Ticket.objects.filter(among("pk", [])).exists()


def test_among_keys_that_are_no_rows_find_nothing():
    Order.objects.create()
    assert not Order.objects.filter(among("pk", [uuid.uuid4(), uuid.uuid4()])).exists()


def test_among_binds_one_parameter_on_postgresql_whatever_the_number_of_keys():
    keys = list(range(1, 501))
    with CaptureQueriesContext(connection) as captured:
        list(Ticket.objects.filter(among("pk", keys)))
    sql = captured.captured_queries[0]["sql"]
    if connection.vendor == "postgresql":
        assert "= ANY(" in sql and " IN (" not in sql
    else:
        assert " IN (" in sql
