"""The worker re-checks parents waiting in a join step (docs/transitions.md, "Joins: a
parent waiting for its children"): children whose step changed outside the engine move
their parent at the first poll after its re-check falls due, found through the
``next_due_at`` index, with the same few queries however many parents and children."""

from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from django_workflow import Join, Step, deadlines
from django_workflow.engine.kind_engines import engine_for
from django_workflow.engine.picking import Picking
from django_workflow.model.columns import NEXT_DUE_AT
from django_workflow.models import DeadlineDeclaration, TransitionLog
from django_workflow.worker.schedulers.polling import poll
from tests.deadlines.test_indexes import plan_of
from tests.moments import T
from tests.testapp.models import Consignment, Parcel

pytestmark = pytest.mark.django_db

RECHECK = timedelta(seconds=300)  # DJANGO_WORKFLOW["JOIN_RECHECK"]'s default
WORK = "join:picking"


def picking(parcels=2):
    """A consignment closed for picking with ``parcels`` open parcels."""
    consignment = Consignment.objects.create()
    made = [Parcel.objects.create(consignment=consignment) for _ in range(parcels)]
    consignment.close()
    return consignment, made


def the_worker_polls():
    """The Schedule's poll of the consignments, as the worker runs it."""
    return poll("testapp.Consignment", [work.name for work in Consignment.workflow.works])


def joined(consignment):
    rows = TransitionLog.objects.filter(
        content_type__model="consignment", object_id=str(consignment.pk), triggered_by="join"
    )
    return list(rows.values_list("from_state", "to_state", "data"))


def stored(record):
    return Consignment.objects.get(pk=record.pk)


def pack_by_sql(parcels, how):
    """Move parcels to ``packed`` where no join sees it."""
    if how == "queryset":
        Parcel.objects.filter(pk__in=[p.pk for p in parcels]).update(state="packed")
        return
    keys = ", ".join(str(p.pk) for p in parcels)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE testapp_parcel SET state = 'packed' WHERE id IN ({keys})")


def test_a_parent_that_waits_at_its_entry_is_due_for_a_recheck_one_interval_later(clock):
    consignment, _ = picking()
    assert getattr(stored(consignment), NEXT_DUE_AT) == T + RECHECK
    assert consignment.pending_deadlines() == []  # the worker's own look, no deadline


def test_a_parent_that_moves_on_at_its_entry_is_due_for_nothing(clock):
    consignment, _ = picking(parcels=0)
    assert (stored(consignment).state, getattr(stored(consignment), NEXT_DUE_AT)) == (
        "shipping",
        None,
    )


@pytest.mark.parametrize("how", ["queryset", "cursor"])
def test_children_moved_by_raw_sql_move_the_parent_once_at_the_first_poll_due(clock, how):
    consignment, parcels = picking()
    pack_by_sql(parcels, how)
    clock.move_to(T + RECHECK - timedelta(seconds=1))
    assert the_worker_polls() == {}
    assert stored(consignment).state == "picking"
    clock.move_to(T + RECHECK)
    assert the_worker_polls() == {WORK: 1}
    assert stored(consignment).state == "shipping"
    clock.move_to(T + 3 * RECHECK)
    assert the_worker_polls() == {}
    assert joined(consignment) == [("picking", "shipping", None)]
    assert getattr(stored(consignment), NEXT_DUE_AT) is None


def test_a_child_moved_by_raw_sql_into_an_any_in_step_routes_the_parent(clock):
    consignment, parcels = picking()
    Parcel.objects.filter(pk=parcels[0].pk).update(state="lost")
    clock.move_to(T + RECHECK)
    the_worker_polls()
    assert joined(consignment) == [("picking", "on_hold", None)]


def test_a_parent_whose_join_is_not_complete_is_rearmed_one_interval_after_the_recheck(clock):
    consignment, parcels = picking()
    pack_by_sql(parcels[:1], "queryset")
    checked = T + RECHECK + timedelta(seconds=40)  # the poll comes a little after
    clock.move_to(checked)
    assert the_worker_polls() == {}
    assert stored(consignment).state == "picking"
    assert getattr(stored(consignment), NEXT_DUE_AT) == checked + RECHECK
    pack_by_sql(parcels[1:], "cursor")
    clock.move_to(checked + RECHECK - timedelta(seconds=1))
    assert the_worker_polls() == {}
    clock.move_to(checked + RECHECK)
    assert the_worker_polls() == {WORK: 1}
    assert joined(consignment) == [("picking", "shipping", None)]


def test_a_parent_the_engine_moved_on_is_not_rechecked(clock):
    consignment, parcels = picking()
    for parcel in parcels:
        parcel.pack()
    clock.move_to(T + 2 * RECHECK)
    assert the_worker_polls() == {}
    child = f"testapp.Parcel {parcels[1].pk}"
    assert joined(consignment) == [("picking", "shipping", {"child": child})]


def test_a_parent_moved_out_of_the_step_by_raw_sql_is_not_touched(clock):
    consignment, parcels = picking()
    pack_by_sql(parcels, "cursor")
    with connection.cursor() as cursor:  # leaves the due instant behind, stale
        cursor.execute("UPDATE testapp_consignment SET state = 'on_hold'")
    clock.move_to(T + RECHECK)
    assert the_worker_polls() == {}
    assert stored(consignment).state == "on_hold"
    assert joined(consignment) == []
    assert getattr(stored(consignment), NEXT_DUE_AT) is None  # computed again: nothing due


def test_a_batch_another_worker_rechecked_since_it_was_read_is_left_alone(clock):
    waiting, _ = picking()
    complete, parcels = picking()
    pack_by_sql(parcels, "queryset")
    clock.move_to(T + RECHECK)
    read = list(Consignment.objects.order_by("pk"))  # two workers read the same batch
    work = Consignment.workflow.work(WORK)
    assert engine_for(work).fire(Picking(Consignment, timezone.now()), work, read) == [complete.pk]
    rearmed = getattr(stored(waiting), NEXT_DUE_AT)
    assert engine_for(work).fire(Picking(Consignment, timezone.now()), work, read) == []
    assert joined(complete) == [("picking", "shipping", None)]
    assert getattr(stored(waiting), NEXT_DUE_AT) == rearmed == T + 2 * RECHECK


def test_a_recheck_costs_the_same_queries_however_many_parents_and_children(clock):
    def recheck(parents, children):
        for _ in range(parents):
            _, parcels = picking(children)
            pack_by_sql(parcels[1:], "queryset")  # one parcel open: all keep waiting
        clock.move_to(timezone.now() + RECHECK)
        with CaptureQueriesContext(connection) as seen:
            assert the_worker_polls() == {}
        assert Consignment.objects.filter(**{f"{NEXT_DUE_AT}__gt": timezone.now()}).count() == (
            Consignment.objects.count()
        )  # every parent re-checked and re-armed
        return [query["sql"] for query in seen.captured_queries]

    few = recheck(parents=2, children=2)
    many = recheck(parents=8, children=6)  # the first two are due again with them
    assert len(many) == len(few)
    assert Consignment.objects.filter(state="picking").count() == 10


def test_every_query_of_a_recheck_reads_an_index(clock):
    for _ in range(3):
        picking(parcels=3)
    clock.move_to(T + RECHECK)
    # unprepared, so each statement is captured with its values, to be explained here
    unprepared = override_settings(DJANGO_WORKFLOW={"PREPARE_POLLS": False})
    with unprepared, CaptureQueriesContext(connection) as seen:
        the_worker_polls()
    reads = [
        query["sql"]
        for query in seen.captured_queries
        if query["sql"].lstrip().upper().startswith("SELECT")
        and ("testapp_parcel" in query["sql"] or "testapp_consignment" in query["sql"])
    ]
    assert any('"testapp_parcel"' in sql for sql in reads), reads
    for sql in reads:
        with transaction.atomic():
            plan = plan_of(sql, [])
        scans = [
            part
            for part in plan.split(" | ")
            if ("SCAN testapp_" in part and " USING " not in part) or "Seq Scan" in part
        ]
        assert scans == [], plan


def test_a_parent_waiting_since_before_rechecks_is_armed_when_the_worker_starts(clock):
    consignment, parcels = picking()
    with connection.cursor() as cursor:  # as the migration adding the column left it
        cursor.execute("UPDATE testapp_consignment SET next_due_at = NULL")
    DeadlineDeclaration.objects.all().delete()
    pack_by_sql(parcels, "queryset")
    clock.move_to(T + timedelta(days=2))
    assert deadlines.catch_up([Consignment]) == {"testapp.Consignment": 1}
    assert the_worker_polls() == {WORK: 1}
    assert joined(consignment) == [("picking", "shipping", None)]


def join_workflow():
    class Workflow:
        waiting = Step(Join("items", all_in=["done"], to="done"))
        done = Step()

    return Workflow


def test_the_recheck_interval_is_the_join_recheck_setting(declare):
    with override_settings(DJANGO_WORKFLOW={"JOIN_RECHECK": 60}):
        model = declare(join_workflow())
        work = model.workflow.work(WORK.replace("picking", "waiting"))
    record = model(state="waiting", state_entered_at=T)
    assert work.due_at(record, T) == T + timedelta(seconds=60)
    assert [w.name for w in model.workflow.deadline_works["waiting"]] == [work.name]


@pytest.mark.parametrize("value", [0, -5, "300", True, None])
def test_a_join_recheck_that_is_no_positive_number_is_a_clear_error(declare, value):
    with override_settings(DJANGO_WORKFLOW={"JOIN_RECHECK": value}):
        model = declare(join_workflow())
        with pytest.raises(ImproperlyConfigured, match=r'JOIN_RECHECK"\] must be a positive'):
            model.workflow.works  # noqa: B018
