"""The last children of a join finishing on two connections, on PostgreSQL
(docs/transitions.md, "Joins: a parent waiting for its children"): the parent row is
locked before its children are read, so the parent moves exactly once."""

import threading
from functools import partial

import pytest
from django.db import connection, transaction

from django_workflow.models import TransitionLog
from tests.test_cascades_concurrency import in_thread, wait_until_a_connection_waits_for_a_lock
from tests.testapp.models import Consignment, Parcel

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-level concurrency needs PostgreSQL"
    ),
]


def picking(parcels):
    consignment = Consignment.objects.create()
    made = [Parcel.objects.create(consignment=consignment) for _ in range(parcels)]
    consignment.close()
    return consignment, made


def joined(consignment):
    rows = TransitionLog.objects.filter(
        content_type__model="consignment", object_id=str(consignment.pk), triggered_by="join"
    )
    return list(rows.values_list("to_state", "data"))


def pack_together(start, pk):
    start.wait(10)  # both children leave the barrier at the same instant
    return Parcel.objects.get(pk=pk).pack().state


def test_the_last_two_children_finishing_at_once_move_the_parent_exactly_once():
    for _ in range(50):
        consignment, parcels = picking(parcels=2)
        start = threading.Barrier(2)
        runs = [in_thread(partial(pack_together, start, parcel.pk)) for parcel in parcels]
        for thread, _ in runs:
            thread.join(30)
        assert [outcome for _, outcome in runs] == [{"value": "packed"}] * 2
        consignment.refresh_from_db()
        assert consignment.state == "shipping"
        [(_, data)] = joined(consignment)
        assert data["child"] in {f"testapp.Parcel {parcel.pk}" for parcel in parcels}


def test_a_child_finishing_while_another_holds_the_parent_waits_then_completes_the_join():
    consignment, (first, second) = picking(parcels=2)
    packed, release = threading.Event(), threading.Event()

    def pack_and_hold():
        with transaction.atomic():
            Parcel.objects.get(pk=first.pk).pack()  # locks the consignment, reads one open
            packed.set()
            release.wait(10)

    holder, held = in_thread(pack_and_hold)
    assert packed.wait(10)
    racer, raced = in_thread(lambda: Parcel.objects.get(pk=second.pk).pack().state)
    wait_until_a_connection_waits_for_a_lock()  # the racer waits for the consignment's row
    release.set()
    holder.join(10)
    racer.join(10)
    assert held == {"value": None} and raced == {"value": "packed"}
    consignment.refresh_from_db()
    assert consignment.state == "shipping"
    assert joined(consignment) == [("shipping", {"child": f"testapp.Parcel {second.pk}"})]
