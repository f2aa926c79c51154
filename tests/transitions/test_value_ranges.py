"""A value the engine's fast path writes is refused where Django's own path refuses it,
with the same error and the row unchanged; a value its column cannot hold is never stored
wrapped round (PostgreSQL binds the fast path's integers on the server, 32 bits for an
IntegerField). An event carrying such a value is an ``InvalidDelivery``, storing nothing
(docs/transitions.md, docs/events.md)."""

from datetime import date
from decimal import Decimal

import pytest
from django.db import DataError, connection, transaction

from django_workflow import InvalidDelivery, deliver
from django_workflow.models import EventDelivery
from tests.testapp.models import Ledger

pytestmark = pytest.mark.django_db

CASES = [
    ("small", 2**15),
    ("small", -(2**15) - 1),
    ("regular", 2**31),
    ("regular", 10**12),
    ("regular", -(2**31) - 1),
    ("big", 2**63),
    ("big", -(2**63) - 1),
    ("positive", -1),
    ("positive", 2**31),
    ("amount", Decimal("1000.00")),
    ("amount", Decimal("999.99")),
    ("code", "x" * 11),
    ("booked_on", date(9999, 12, 31)),
    ("regular", "10000000000"),  # text, converted to an integer only when prepared
    ("regular", Decimal("10000000000")),
]


def djangos_own(field, value):
    """What Django's own UPDATE does with ``value``: the error, or the value read back."""
    row = Ledger.objects.create()
    try:
        with transaction.atomic():
            Ledger._base_manager.filter(pk=row.pk).update(**{field: value})
    except Exception as error:
        return type(error), None
    return None, stored(row.pk, field)


def stored(pk, field):
    """The column as stored, unconverted (SQLite keeps 1000 in a decimal(5, 2), which
    Django then cannot read back)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {field} FROM testapp_ledger WHERE id = %s", [pk])
        return cursor.fetchone()[0]


@pytest.mark.parametrize("field, value", CASES)
def test_a_transition_refuses_what_djangos_own_save_refuses_and_stores_nothing(field, value):
    refused, kept = djangos_own(field, value)
    ledger = Ledger.objects.create()
    if refused is None:
        ledger.book(**{field: value})
        assert stored(ledger.pk, field) == kept
        return
    # sqlite3 raises OverflowError past 64 bits; the engine says DataError, as PostgreSQL.
    expected = (DataError,) if refused is OverflowError else (refused,)
    with pytest.raises(expected), transaction.atomic():
        ledger.book(**{field: value})
    state = Ledger._base_manager.values_list("state", flat=True).get(pk=ledger.pk)
    assert (state, stored(ledger.pk, field)) == ("open", stored(Ledger.objects.create().pk, field))


@pytest.mark.parametrize("field, value", [c for c in CASES if isinstance(c[1], int)])
def test_an_event_carrying_an_integer_its_column_cannot_hold_is_refused(field, value):
    refused, kept = djangos_own(field, value)
    ledger = Ledger.objects.create(ref="L-1")
    if refused is None:  # a value its column holds: applied as Django stores it
        deliver("ledger.booked", "L-1", id=f"e-{field}-{value}", data={field: value})
        assert stored(ledger.pk, field) == kept
        return
    with pytest.raises(InvalidDelivery, match=f"Ledger.{field}"):
        deliver("ledger.booked", "L-1", id=f"e-{field}-{value}", data={field: value})
    assert not EventDelivery.objects.exists()
    assert Ledger.objects.get(ref="L-1").state == "open"


def test_a_foreign_key_is_checked_as_the_key_it_points_at():
    from django_workflow.engine.sql.writes import db_value
    from tests.testapp.models import Consignment

    carrier = Consignment._meta.get_field("carrier")  # a BigAutoField key: 64 bits
    assert db_value(carrier, 2**63 - 1, connection) == 2**63 - 1
    with pytest.raises(DataError, match=r"Carrier\.id"):
        db_value(carrier, 2**63, connection)
