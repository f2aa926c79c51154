"""Deliveries racing on PostgreSQL (docs/events.md): one event delivered by several
processes at once is applied once — the unique ``(event, id)`` decides in the database —
and a buffered event meets its record's move exactly once."""

import pytest
from django.db import connection

from django_workflow import deliver
from django_workflow.models import EventDelivery, TransitionLog
from tests.races import at_once
from tests.testapp.models import Payment

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-level concurrency needs PostgreSQL"
    ),
]


def outcome_of(event, key, **values):
    return lambda: str(deliver(event, key, **values).outcome)


def step_after_authorising(pk):
    return lambda: Payment.objects.get(pk=pk).authorise().state


def test_one_event_from_eight_threads_at_once_is_applied_once():
    for round_ in range(5):
        payment = Payment.objects.create(psp_ref=f"pay_{round_}")
        outcomes = at_once([outcome_of("psp.authorised", payment.psp_ref, id=f"evt_{round_}")] * 8)

        assert sorted(outcomes) == ["applied"] + ["duplicate"] * 7
        moves = TransitionLog.objects.filter(object_id=str(payment.pk), triggered_by="event")
        assert moves.count() == 1
        stored = EventDelivery.objects.filter(key=payment.psp_ref)
        assert sorted(stored.values_list("outcome", flat=True)) == ["applied"] + ["duplicate"] * 7


def test_an_early_event_and_the_move_that_lets_it_in_at_once_apply_it_once():
    for round_ in range(10):
        payment = Payment.objects.create(psp_ref=f"pay_{round_}")
        settle = outcome_of("psp.settled", payment.psp_ref, id=f"s{round_}")
        outcomes = at_once([settle, step_after_authorising(payment.pk)])

        # Either the event was buffered and the move took it, or the move came first and
        # the event found the record able to take it.
        assert outcomes[0] in ("buffered", "applied") and outcomes[1] in ("authorised", "settled")
        stored = Payment.objects.get(pk=payment.pk)
        settles = TransitionLog.objects.filter(object_id=str(payment.pk), to_state="settled")
        assert stored.state == "settled" and settles.count() == 1, outcomes
        assert EventDelivery.objects.get(event_id=f"s{round_}").outcome == "applied"


def test_an_early_event_and_the_event_that_lets_it_in_at_once_apply_it_once():
    # The letting-in move is itself an event's: its statement, on the locked record,
    # answers whether an event waits for the step it enters (docs/events.md, "Speed").
    for round_ in range(10):
        payment = Payment.objects.create(psp_ref=f"pay_{round_}")
        settle = outcome_of("psp.settled", payment.psp_ref, id=f"s{round_}")
        authorise = outcome_of("psp.authorised", payment.psp_ref, id=f"a{round_}")
        outcomes = at_once([settle, authorise])

        assert outcomes[0] in ("buffered", "applied") and outcomes[1] == "applied", outcomes
        stored = Payment.objects.get(pk=payment.pk)
        settles = TransitionLog.objects.filter(object_id=str(payment.pk), to_state="settled")
        assert stored.state == "settled" and settles.count() == 1, outcomes
        assert EventDelivery.objects.get(event_id=f"s{round_}").outcome == "applied"
