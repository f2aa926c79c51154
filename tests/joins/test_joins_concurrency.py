"""The last children of a join finishing on two connections, on PostgreSQL
(docs/transitions.md, "Joins: a parent waiting for its children"): the parent row is
locked before its children are read, so the parent moves exactly once; a cancel racing
the last child ends in one of the two orders, never in a deadlock."""

import threading
from collections import Counter

import pytest
from django.db import DatabaseError, connection, connections, transaction

from django_workflow import StaleRecord
from django_workflow.models import TransitionLog
from tests.testapp.models import Bottle, Consignment, Crate, Parcel
from tests.transitions.test_cascades_concurrency import (
    in_thread,
    wait_until_a_connection_waits_for_a_lock,
)

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


def in_lockstep(rounds, *sides):
    """Call every side once per round, ``side(round)``, each side on a thread and a
    connection of its own kept for all rounds (no connection is opened per round); a
    barrier lets all sides start each round at the same instant. Returns, per side, each
    round's ``{"value": ...}`` or ``{"error": ...}``."""
    barrier = threading.Barrier(len(sides))
    outcomes = [[] for _ in sides]

    def run(index, side):
        try:
            for one in rounds:
                barrier.wait(30)
                try:
                    outcomes[index].append({"value": side(one)})
                except Exception as error:  # the test says which, deadlocks included
                    outcomes[index].append({"error": error})
        except threading.BrokenBarrierError:
            barrier.abort()  # the other sides stop waiting; the count of rounds tells
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, side)) for i, side in enumerate(sides)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert [len(side) for side in outcomes] == [len(rounds)] * len(sides)
    return outcomes


def closed_consignments(count, parcels):
    """``count`` consignments in ``picking``, each with ``parcels`` open parcels: made in
    bulk (a few statements, however many rounds), closed by one bulk transition; each
    with its parcels, loaded."""
    made = Consignment.objects.bulk_create(Consignment() for _ in range(count))
    Parcel.objects.bulk_create(Parcel(consignment=c) for c in made for _ in range(parcels))
    closing = Consignment.objects.filter(pk__in=[c.pk for c in made])
    assert set(closing.transition("close").values()) == {"picking"}
    children = {}
    for parcel in Parcel.objects.filter(consignment__in=made).order_by("pk"):
        children.setdefault(parcel.consignment_id, []).append(parcel)
    return sorted(children.items())


def packing(side):
    return lambda one: one[1][side].pack().state


def test_the_last_two_children_finishing_at_once_move_the_parent_exactly_once():
    rounds = closed_consignments(200, parcels=2)
    outcomes = in_lockstep(rounds, packing(0), packing(1))
    for side in outcomes:
        assert side == [{"value": "packed"}] * len(rounds)
    moved = Consignment.objects.filter(pk__in=[pk for pk, _ in rounds])
    assert set(moved.values_list("state", flat=True)) == {"shipping"}
    rows = TransitionLog.objects.filter(content_type__model="consignment", triggered_by="join")
    by_parent = {int(pk): data for pk, data in rows.values_list("object_id", "data")}
    assert rows.count() == len(by_parent) == len(rounds)  # one join row per consignment
    for consignment, parcels in rounds:
        assert by_parent[consignment]["child"] in {f"testapp.Parcel {p.pk}" for p in parcels}


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


def crates_with_one_open_bottle(count):
    """``count`` crates in ``packing``, each with two filled bottles and one open: the
    last; each as ``(crate, last bottle)``, loaded."""
    made = Crate.objects.bulk_create(Crate() for _ in range(count))
    Bottle.objects.bulk_create(Bottle(crate=crate) for crate in made for _ in range(3))
    bottles = Bottle.objects.filter(crate__in=made).order_by("pk")
    last = {bottle.crate_id: bottle for bottle in bottles}  # each crate's highest key
    assert set(bottles.exclude(pk__in=[b.pk for b in last.values()]).transition("fill").values())
    assert set(Crate.objects.filter(pk__in=last).transition("close").values()) == {"packing"}
    crates = Crate.objects.in_bulk(list(last))
    return [(crates[pk], Bottle.objects.get(pk=last[pk].pk)) for pk in sorted(last)]


def crate_rows(crates):
    """``{crate pk: [(trigger, data)]}`` of the step changes out of ``packing``."""
    rows = TransitionLog.objects.filter(
        content_type__model="crate", object_id__in=[str(c.pk) for c, _ in crates]
    ).filter(from_state="packing")
    found = {}
    for pk, trigger, data in rows.values_list("object_id", "triggered_by", "data"):
        found.setdefault(int(pk), []).append((trigger, data))
    return found


def test_a_cancel_racing_the_last_child_ends_in_one_of_the_two_outcomes_without_deadlock():
    crates = crates_with_one_open_bottle(100)
    filled, cancelled = in_lockstep(
        crates, lambda one: one[1].fill().state, lambda one: one[0].cancel().state
    )
    for fill, cancel in zip(filled, cancelled, strict=True):  # a deadlock would show here
        for outcome in (fill, cancel):
            assert "value" in outcome or isinstance(outcome["error"], StaleRecord), outcome
            assert not isinstance(outcome.get("error"), DatabaseError)
    states = dict(Crate.objects.filter(pk__in=[c.pk for c, _ in crates]).values_list("pk", "state"))
    bottles = dict(
        Bottle.objects.filter(pk__in=[b.pk for _, b in crates]).values_list("pk", "state")
    )
    rows = crate_rows(crates)
    seen = Counter()
    for (crate, last), fill, cancel in zip(crates, filled, cancelled, strict=True):
        seen[states[crate.pk]] += 1
        if states[crate.pk] == "sealed":  # the fill committed first: the join moved the crate
            assert fill == {"value": "filled"} and isinstance(cancel["error"], StaleRecord)
            assert bottles[last.pk] == "filled"
            assert rows[crate.pk] == [("join", {"child": f"testapp.Bottle {last.pk}"})]
        else:  # the cancel committed first: it voided the last bottle, the fill found it moved
            assert states[crate.pk] == "cancelled"
            assert cancel == {"value": "cancelled"} and isinstance(fill["error"], StaleRecord)
            assert bottles[last.pk] == "void"
            counts = {"cascaded": 1, "cascade": {"bottles": {"moved": 1, "stayed": 2}}}
            assert rows[crate.pk] == [("manual", counts)]
    assert seen["sealed"] and seen["cancelled"], seen  # the two orders both happened
