"""A replay of many deliveries, repeated and out of order (docs/events.md): each intended
transition is applied exactly once, repeats change nothing, and with ``seq`` no record
ever goes backwards."""

import json
import random

import pytest
from django.core.management import call_command
from django.db.models import Count

from django_workflow.models import EventDelivery, TransitionLog
from tests.testapp.models import Payment

pytestmark = pytest.mark.django_db

PAYMENTS = 150
AMENDS = 4


def intended(number):
    """One payment's events in the sender's order: authorised, settled, then amended
    amounts, each a higher ``seq``."""
    ref = f"pay_{number}"
    events = [
        {"event": "psp.authorised", "key": ref, "id": f"a{number}"},
        {"event": "psp.settled", "key": ref, "id": f"s{number}", "data": {"settled_amount": 1}},
    ]
    for seq in range(1, AMENDS + 1):
        data = {"settled_amount": 100 * seq}
        events.append(
            {"event": "psp.amount", "key": ref, "id": f"m{number}.{seq}", "seq": seq, "data": data}
        )
    return events


def shuffled(deliveries, rng, duplicates=0.2, reordered=0.3):
    """``deliveries`` with a fifth repeated at random places, then about three in ten moved
    (swapped with another)."""
    stream = list(deliveries)
    for _ in range(int(len(deliveries) * duplicates)):
        stream.insert(rng.randrange(len(stream) + 1), rng.choice(deliveries))
    for _ in range(int(len(stream) * reordered / 2)):
        i, j = rng.randrange(len(stream)), rng.randrange(len(stream))
        stream[i], stream[j] = stream[j], stream[i]
    return stream


@pytest.mark.django_db(transaction=True)
def test_a_replay_with_repeats_and_reordering_applies_each_event_once(tmp_path, capsys):
    rng = random.Random(25)
    deliveries = [event for n in range(PAYMENTS) for event in intended(n)]
    stream = shuffled(deliveries, rng)
    # Half the payments exist before their events come; the others are created half-way.
    early = [Payment.objects.create(psp_ref=f"pay_{n}") for n in range(0, PAYMENTS, 2)]
    half = len(stream) // 2
    for part, lines in (("one", stream[:half]), ("two", stream[half:])):
        path = tmp_path / f"{part}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        call_command("workflow_deliver", str(path))
        if part == "one":
            for n in range(1, PAYMENTS, 2):
                Payment.objects.create(psp_ref=f"pay_{n}")
    capsys.readouterr()

    # Every payment was authorised and settled exactly once, by its events.
    assert Payment.objects.count() == PAYMENTS and len(early) == PAYMENTS // 2
    assert set(Payment.objects.values_list("state", flat=True)) == {"settled"}
    moves = TransitionLog.objects.filter(triggered_by="event").exclude(transition_name="amend")
    per_payment = moves.values("object_id", "transition_name").annotate(n=Count("id"))
    assert {row["n"] for row in per_payment} == {1} and len(per_payment) == 2 * PAYMENTS
    # Each event id was applied at most once; every repeat is stored as a duplicate.
    stored = EventDelivery.objects.exclude(outcome="duplicate")
    assert stored.count() == len(deliveries)
    assert EventDelivery.objects.filter(outcome="duplicate").count() == len(stream) - len(
        deliveries
    )
    # The stream did what it was built for: late amendments found newer ones applied.
    outcomes = set(EventDelivery.objects.values_list("outcome", flat=True))
    assert {"stale", "ignored", "duplicate", "applied"} <= outcomes and "buffered" not in outcomes
    # No amount ever went back: applied amendments rose in seq, and the last one holds.
    for payment in Payment.objects.all():
        applied = EventDelivery.objects.filter(
            event="psp.amount", object_id=str(payment.pk), outcome="applied"
        ).order_by("applied_at", "pk")
        seqs = list(applied.values_list("seq", flat=True))
        assert seqs == sorted(set(seqs))
        expected = 100 * seqs[-1] if seqs else 1
        assert payment.settled_amount == expected
