"""Events from outside (docs/events.md): ``deliver`` correlates an event to its record by
key and applies it through the record's transition once, buffers it when it came early,
and stores every delivery with its outcome."""

from datetime import timedelta

import pytest
from django.db import IntegrityError
from django.db.models.signals import pre_save

from django_workflow import InvalidDelivery, deliver
from django_workflow.models import EventDelivery, TransitionLog
from tests.helpers import fresh
from tests.testapp.models import Meter, Payment

pytestmark = pytest.mark.django_db


def log_of(payment):
    return list(
        TransitionLog.objects.filter(object_id=str(payment.pk)).values_list(
            "triggered_by", "transition_name", "to_state"
        )
    )


@pytest.fixture
def payment():
    return Payment.objects.create(psp_ref="pay_1")


@pytest.fixture
def authorised(payment):
    deliver("psp.authorised", "pay_1", id="evt_a")
    return fresh(payment)


@pytest.fixture
def settled(authorised):
    deliver("psp.settled", "pay_1", id="evt_s")
    return fresh(authorised)


def test_an_event_moves_its_record_through_the_transition_logged_as_an_event(payment):
    delivery = deliver("psp.authorised", "pay_1", id="evt_1")

    assert delivery.outcome == "applied"
    assert delivery.record.pk == payment.pk and delivery.record.state == "authorised"
    assert fresh(payment).state == "authorised"
    row = TransitionLog.objects.get(object_id=str(payment.pk), to_state="authorised")
    assert row.triggered_by == "event" and row.transition_name == "authorise"
    assert row.data == {"event": "psp.authorised", "id": "evt_1"}
    assert row.actor_id is None and row.actor_repr == ""


def test_every_delivery_is_stored_with_its_outcome_and_record(payment):
    deliver("psp.authorised", "pay_1", id="evt_1", data={"note": "x"}, seq=4)

    stored = EventDelivery.objects.get()
    assert (stored.event, stored.event_id, stored.key, stored.outcome) == (
        "psp.authorised",
        "evt_1",
        "pay_1",
        "applied",
    )
    assert stored.record == payment and stored.data == {"note": "x"} and stored.seq == 4
    assert stored.applied_at is not None


def test_the_transitions_policy_is_not_asked(authorised):
    assert authorised.available_actions(actor=None) == []  # the step asks for staff

    assert deliver("psp.settled", "pay_1", id="evt_2").outcome == "applied"
    assert fresh(authorised).state == "settled"


def test_accepted_values_are_taken_from_data_and_the_rest_is_left(authorised):
    data = {"settled_amount": "1200", "fee": 30}
    deliver("psp.settled", "pay_1", id="evt_2", data=data)

    assert fresh(authorised).settled_amount == 1200


def test_a_second_delivery_of_one_event_is_a_duplicate_and_changes_nothing(payment):
    deliver("psp.authorised", "pay_1", id="evt_1")
    again = deliver("psp.authorised", "pay_1", id="evt_1")

    assert again.outcome == "duplicate" and again.record.pk == payment.pk
    assert log_of(payment) == [("initial", "", "pending"), ("event", "authorise", "authorised")]
    outcomes = EventDelivery.objects.order_by("pk").values_list("outcome", flat=True)
    assert list(outcomes) == ["applied", "duplicate"]


def test_one_id_under_two_event_names_is_two_events(authorised):
    assert deliver("psp.settled", "pay_1", id="evt_a").outcome == "applied"


def test_an_event_the_records_step_does_not_offer_is_ignored_without_a_buffer(payment):
    delivery = deliver("psp.refunded", "pay_1", id="evt_1")

    assert delivery.outcome == "ignored" and delivery.record.pk == payment.pk
    assert fresh(payment).state == "pending"
    assert EventDelivery.objects.get().object_id == str(payment.pk)


def test_an_event_for_no_record_is_unmatched_without_a_buffer():
    delivery = deliver("psp.refunded", "pay_404", id="evt_1")

    assert delivery.outcome == "unmatched" and delivery.record is None
    assert EventDelivery.objects.get().outcome == "unmatched"


def test_an_early_event_is_buffered_and_applied_when_its_record_is_created():
    delivery = deliver("psp.authorised", "pay_1", id="evt_1")
    assert delivery.outcome == "buffered" and delivery.record is None

    payment = Payment.objects.create(psp_ref="pay_1")

    assert payment.state == "authorised"  # the creating instance follows its record
    assert fresh(payment).state == "authorised"
    stored = EventDelivery.objects.get()
    assert stored.outcome == "applied" and stored.record == payment
    assert log_of(payment) == [("initial", "", "pending"), ("event", "authorise", "authorised")]


def test_buffered_events_are_applied_oldest_first_each_when_a_step_offers_it():
    deliver("psp.settled", "pay_1", id="evt_s", data={"settled_amount": 90})
    deliver("psp.authorised", "pay_1", id="evt_a")
    deliver("psp.authorised", "pay_1", id="evt_a2")  # a second authorisation: never offered

    payment = Payment.objects.create(psp_ref="pay_1")

    # Created in pending: only authorise is offered there; entering authorised, settle is.
    assert fresh(payment).state == "settled" and fresh(payment).settled_amount == 90
    assert log_of(payment) == [
        ("initial", "", "pending"),
        ("event", "authorise", "authorised"),
        ("event", "settle", "settled"),
    ]
    outcomes = dict(EventDelivery.objects.values_list("event_id", "outcome"))
    assert outcomes == {"evt_s": "applied", "evt_a": "applied", "evt_a2": "buffered"}


def test_a_buffered_event_is_applied_when_the_record_enters_a_step_offering_it(payment):
    assert deliver("psp.settled", "pay_1", id="evt_s").outcome == "buffered"

    payment.authorise()

    assert payment.state == "settled"  # the caller's instance follows its record
    assert log_of(payment)[-2:] == [
        ("manual", "authorise", "authorised"),
        ("event", "settle", "settled"),
    ]


def test_a_buffered_event_past_its_buffer_expires_instead(time_machine):
    time_machine.move_to("2026-03-02 09:00Z", tick=False)
    deliver("psp.authorised", "pay_1", id="evt_1")
    time_machine.move_to("2026-03-03 09:00:01Z", tick=False)

    payment = Payment.objects.create(psp_ref="pay_1")

    assert fresh(payment).state == "pending"
    assert EventDelivery.objects.get().outcome == "expired"


def test_a_buffered_event_within_its_buffer_is_applied(time_machine):
    time_machine.move_to("2026-03-02 09:00Z", tick=False)
    deliver("psp.authorised", "pay_1", id="evt_1")
    time_machine.move_to("2026-03-03 08:59Z", tick=False)

    assert Payment.objects.create(psp_ref="pay_1").state == "authorised"


def test_an_event_older_in_its_senders_order_than_one_applied_is_stale(settled):
    assert deliver("psp.amount", "pay_1", id="e2", seq=2, data={"settled_amount": 200}).outcome == (
        "applied"
    )
    late = deliver("psp.amount", "pay_1", id="e1", seq=1, data={"settled_amount": 100})
    same = deliver("psp.amount", "pay_1", id="e2b", seq=2, data={"settled_amount": 150})
    newer = deliver("psp.amount", "pay_1", id="e3", seq=3, data={"settled_amount": 300})

    assert (late.outcome, same.outcome, newer.outcome) == ("stale", "stale", "applied")
    assert fresh(settled).settled_amount == 300


def test_seq_is_counted_per_record(settled):
    deliver("psp.amount", "pay_1", id="e5", seq=5)
    other = Payment.objects.create(psp_ref="pay_2")
    deliver("psp.authorised", "pay_2", id="a2")
    deliver("psp.settled", "pay_2", id="s2")

    assert deliver("psp.amount", "pay_2", id="e1", seq=1).outcome == "applied"
    assert deliver("psp.amount", "pay_1", id="e4", seq=4).outcome == "stale"
    assert fresh(other).state == "settled"


@pytest.mark.parametrize(
    "event, key, values, said",
    [
        ("psp.unknown", "pay_1", {"id": "e"}, "No workflow receives the event 'psp.unknown'"),
        ("psp.settled", "pay_1", {"id": ""}, "id"),
        ("psp.settled", "pay_1", {"id": "x" * 256}, "id"),
        ("psp.settled", "x" * 256, {"id": "e"}, "key"),
        ("psp.settled", "pay_1", {"id": "e", "seq": "2"}, "seq"),
        ("psp.settled", "pay_1", {"id": "e", "seq": 2**63}, "seq"),
        ("psp.settled", "pay_1", {"id": "e", "data": [1]}, "data"),
        ("psp.settled", "", {"id": "e"}, "needs a key"),
        ("psp.settled", "pay_1", {"id": "e", "data": {"settled_amount": "lots"}}, "lots"),
    ],
)
def test_an_unreadable_delivery_is_refused_and_nothing_is_stored(
    authorised, event, key, values, said
):
    with pytest.raises(InvalidDelivery, match=said):
        deliver(event, key, **values)

    assert EventDelivery.objects.count() == 1  # the authorisation's own
    assert fresh(authorised).state == "authorised"


def test_a_record_entering_a_step_without_buffered_events_costs_one_query(
    payment, django_assert_num_queries
):
    from django_workflow.engine.buffering import after_moves

    with django_assert_num_queries(1):  # the buffered events for its key
        after_moves(Payment, [payment.pk], "default", "pending")


def test_a_delivery_timestamp_orders_the_buffer(time_machine):
    time_machine.move_to("2026-03-02 09:00Z", tick=False)
    deliver("psp.authorised", "pay_1", id="late_id_first")
    time_machine.move_to(timedelta(minutes=1))
    deliver("psp.authorised", "pay_1", id="a_second")

    Payment.objects.create(psp_ref="pay_1")

    applied = EventDelivery.objects.get(outcome="applied")
    assert applied.event_id == "late_id_first"


def test_an_integrity_error_of_the_move_itself_is_raised_not_taken_for_a_duplicate(payment):
    def refuse(sender, instance, **kwargs):
        raise IntegrityError("a constraint of the project's own")

    pre_save.connect(refuse, sender=Payment)
    try:
        with pytest.raises(IntegrityError, match="the project's own"):
            deliver("psp.authorised", "pay_1", id="evt_1")
    finally:
        pre_save.disconnect(refuse, sender=Payment)

    assert not EventDelivery.objects.exists() and fresh(payment).state == "pending"


def test_a_kept_reading_older_than_the_one_applied_is_stale_not_applied_after_it():
    """A reading buffered while the meter refused it, then a newer one applied: the move of
    the newer one lets the kept one in, and it is older in its sender's order."""
    meter = Meter.objects.create(ref="m1")
    kept = deliver("meter.read", "m1", id="r1", seq=1, data={"reading": 100})
    Meter.objects.filter(pk=meter.pk).update(accepting=True)
    newer = deliver("meter.read", "m1", id="r2", seq=2, data={"reading": 200})

    assert (kept.outcome, newer.outcome) == ("buffered", "applied")
    assert EventDelivery.objects.get(event_id="r1").outcome == "stale"
    assert Meter.objects.get(pk=meter.pk).reading == 200
    assert [row.data["id"] for row in meter.history().filter(triggered_by="event")] == ["r2"]
