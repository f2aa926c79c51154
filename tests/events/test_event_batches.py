"""Events delivered in batches (``deliver_many``, docs/events.md): in order, in one
transaction, each as ``deliver`` would; and the statements a delivery is made of."""

import re

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.models.signals import pre_save
from django.test.utils import CaptureQueriesContext

from django_workflow import InvalidDelivery, deliver, deliver_many
from django_workflow.engine import buffering
from django_workflow.engine.sql import delivery_statements
from django_workflow.engine.sql.once import kept
from django_workflow.models import EventDelivery, TransitionLog
from tests.helpers import fresh
from tests.races import race
from tests.testapp.models import Payment

pytestmark = pytest.mark.django_db


def event(name, key, id, **more):
    return {"event": name, "key": key, "id": id, **more}


def test_a_batch_is_delivered_in_order_each_event_as_deliver_would():
    payment = Payment.objects.create(psp_ref="pay_1")
    Payment.objects.create(psp_ref="pay_2")

    deliveries = deliver_many(
        [
            event("psp.settled", "pay_1", "s1", data={"settled_amount": 1200}),
            event("psp.authorised", "pay_1", "a1"),
            event("psp.authorised", "pay_1", "a1"),
            event("psp.authorised", "pay_9", "a9"),
            event("psp.refunded", "pay_2", "r2"),
        ]
    )

    # The settlement came early: buffered, then let in by the authorisation after it.
    outcomes = [str(delivery.outcome) for delivery in deliveries]
    assert outcomes == ["buffered", "applied", "duplicate", "buffered", "ignored"]
    assert deliveries[1].record.pk == payment.pk and deliveries[3].record is None
    stored = fresh(payment)
    assert stored.state == "settled" and stored.settled_amount == 1200
    rows = EventDelivery.objects.order_by("pk").values_list("event_id", "outcome")
    assert list(rows) == [
        ("s1", "applied"),
        ("a1", "applied"),
        ("a1", "duplicate"),
        ("a9", "buffered"),
        ("r2", "ignored"),
    ]
    assert [d.row.pk for d in deliveries] == list(
        EventDelivery.objects.order_by("pk").values_list("pk", flat=True)
    )


def test_a_batch_is_one_transaction_an_error_undoes_all_of_it():
    first = Payment.objects.create(psp_ref="pay_1")
    second = Payment.objects.create(psp_ref="pay_2")

    def refuse(sender, instance, **kwargs):
        if instance.psp_ref == "pay_2":
            raise RuntimeError("the project's own refusal")

    pre_save.connect(refuse, sender=Payment)
    try:
        with pytest.raises(RuntimeError, match="own refusal"):
            deliver_many(
                [event("psp.authorised", "pay_1", "a1"), event("psp.authorised", "pay_2", "a2")]
            )
    finally:
        pre_save.disconnect(refuse, sender=Payment)

    assert fresh(first).state == "pending" and fresh(second).state == "pending"
    assert not EventDelivery.objects.exists()
    assert not TransitionLog.objects.filter(triggered_by="event").exists()


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ({"event": "psp.nothing", "key": "pay_1", "id": "x"}, "No workflow receives"),
        ({"event": "psp.authorised", "key": "pay_1"}, "missing: id,"),
        ("psp.authorised", "is a JSON object"),
        ({"event": "psp.authorised", "key": "pay_1", "id": "x", "seq": "7"}, "seq"),
    ],
)
def test_a_batch_with_an_unreadable_event_names_it_and_stores_nothing(bad, says):
    Payment.objects.create(psp_ref="pay_1")

    with pytest.raises(InvalidDelivery, match=rf"Event 1 of the batch: .*{re.escape(says)}"):
        deliver_many([event("psp.authorised", "pay_1", "a1"), bad])

    assert not EventDelivery.objects.exists()
    assert Payment.objects.get().state == "pending"


def test_an_empty_batch_delivers_nothing():
    assert deliver_many([]) == []


def test_an_event_keyed_by_an_integer_field_is_buffered_and_let_in_by_the_move():
    payment = Payment.objects.create(psp_ref="pay_1")

    early = deliver("psp.captured", payment.pk, id="c1", data={"settled_amount": 7})
    payment.authorise()

    assert early.outcome == "buffered"
    assert payment.state == "settled" and fresh(payment).settled_amount == 7
    assert EventDelivery.objects.get(event_id="c1").outcome == "applied"


def statements(seen):
    return [query["sql"].split()[0] for query in seen.captured_queries]


def test_an_applied_delivery_is_a_few_statements_and_no_savepoint_of_its_own():
    Payment.objects.create(psp_ref="pay_1")
    deliver("psp.authorised", "pay_1", id="warm")  # the compiled statements, once
    Payment.objects.create(psp_ref="pay_2")

    with CaptureQueriesContext(connection) as seen:
        deliver("psp.authorised", "pay_2", id="a2")

    # In the test's transaction, the delivery's own is a savepoint (BEGIN and COMMIT
    # otherwise). Inside: the row, the record locked, the move with its log row and the
    # delivery's outcome (one statement on PostgreSQL, which also answers whether events
    # its new step lets in are buffered: none are), elsewhere the buffered events looked
    # up (one statement per key field: "settle" is received by psp_ref and by id).
    postgresql = connection.vendor == "postgresql"
    move = ["WITH"] if postgresql else ["INSERT", "UPDATE", "UPDATE", "SELECT", "SELECT"]
    stored = ["WITH"] if postgresql else ["INSERT"]
    assert statements(seen) == ["SAVEPOINT", *stored, "SELECT", *move, "RELEASE"]
    if postgresql:
        assert "EXISTS" in seen.captured_queries[3]["sql"]


def test_a_move_whose_statement_finds_buffered_events_looks_them_up_and_applies_them():
    payment = Payment.objects.create(psp_ref="pay_1")
    early = deliver("psp.settled", "pay_1", id="s1", data={"settled_amount": 7})
    assert early.outcome == "buffered"

    with CaptureQueriesContext(connection) as seen:
        applied = deliver("psp.authorised", "pay_1", id="a1")

    assert applied.outcome == "applied"
    assert fresh(payment).state == "settled" and fresh(payment).settled_amount == 7
    assert EventDelivery.objects.get(event_id="s1").outcome == "applied"
    # the move's answer said an event waits: it is read, locked and applied
    assert statements(seen).count("SELECT") >= 3


def test_a_duplicate_is_its_insert_the_duplicate_row_and_the_record_read():
    Payment.objects.create(psp_ref="pay_1")
    deliver("psp.authorised", "pay_1", id="a1")

    with CaptureQueriesContext(connection) as seen:
        assert deliver("psp.authorised", "pay_1", id="a1").outcome == "duplicate"

    # On PostgreSQL the duplicate's row is inserted in the same statement (a WITH).
    stored = ["WITH"] if connection.vendor == "postgresql" else ["INSERT", "INSERT"]
    assert statements(seen) == ["SAVEPOINT", *stored, "SELECT", "RELEASE"]
    rows = EventDelivery.objects.order_by("pk").values_list("event_id", "outcome")
    assert list(rows) == [("a1", "applied"), ("a1", "duplicate")]


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row-level concurrency")
def test_one_batch_replayed_by_two_processes_at_once_applies_each_event_once():
    for number in range(20):
        Payment.objects.create(psp_ref=f"pay_{number}")
    batch = [event("psp.authorised", f"pay_{n}", f"a{n}") for n in range(20)]

    first = Payment.objects.get(psp_ref="pay_0")
    done = race(Payment, first.pk, [lambda record: deliver_many(batch)] * 2, refusals=())

    assert done == ["done", "done"]
    outcomes = list(EventDelivery.objects.values_list("outcome", flat=True))
    assert sorted(outcomes) == ["applied"] * 20 + ["duplicate"] * 20
    assert TransitionLog.objects.filter(triggered_by="event").count() == 20
    assert set(Payment.objects.values_list("state", flat=True)) == {"authorised"}


def test_an_event_keyed_by_an_integer_field_is_let_in_by_an_event():
    # The event-driven move asks in its own statement whether events wait: the key
    # compared as text, for a key held by an integer field too.
    payment = Payment.objects.create(psp_ref="pay_1")
    early = deliver("psp.captured", payment.pk, id="c1", data={"settled_amount": 7})

    applied = deliver("psp.authorised", "pay_1", id="a1")

    assert (early.outcome, applied.outcome) == ("buffered", "applied")
    assert fresh(payment).state == "settled" and fresh(payment).settled_amount == 7
    assert EventDelivery.objects.get(event_id="c1").outcome == "applied"


def generic_plan(sql, params):
    """PostgreSQL's generic plan of ``sql`` (``%s`` placeholders), as a prepared statement
    comes to run on once it has run a few times in a session."""
    numbered = iter(range(1, 100))
    prepared = re.sub("%s", lambda _: f"${next(numbered)}", sql)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"PREPARE generic AS {prepared}")
        values = ", ".join(["%s"] * len(params))
        cursor.execute(f"EXPLAIN EXECUTE generic({values})", params)
        plan = " ".join(row[0] for row in cursor.fetchall())
        cursor.execute("DEALLOCATE generic")
    return plan


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared on PostgreSQL")
def test_the_delivery_statements_are_served_by_their_partial_indexes_in_a_generic_plan():
    # Prepared once per session, a statement may run on a generic plan: the partial
    # indexes of buffered and applied deliveries must still serve it (a bound outcome
    # would not match an index's condition, and each would read the deliveries whole).
    payment = Payment.objects.create(psp_ref="pay_1")
    question = buffering.waiting(Payment, "authorised", "default")
    asked = generic_plan(f"SELECT ({question.sql}) FROM testapp_payment", question.params)
    assert "workflow_event_buffered" in asked

    kind = ContentType.objects.get_for_model(Payment).pk
    delivery_statements.buffered_for(Payment, payment.pk, "psp_ref", ["psp.settled"], "default")
    delivery_statements.highest_seq(kind, str(payment.pk), "psp.amount", "default")
    lookup = kept(delivery_statements._buffered_sql, (Payment, "psp_ref", 1, "default"))[0]
    assert "workflow_event_buffered" in generic_plan(lookup, ["psp.settled", payment.pk])
    highest = kept(delivery_statements._seq_sql, "default")
    params = [kind, str(payment.pk), "psp.amount"]
    assert "workflow_event_applied" in generic_plan(highest, params)
