"""Subscription dunning, end to end with time travel."""

from datetime import timedelta

from example_project.dunning.models import Subscription


def fresh(subscription):
    return Subscription.objects.get(pk=subscription.pk)


def failed_payment(clock, grace=timedelta(days=5)):
    subscription = Subscription.objects.create(customer="ACME")
    subscription.payment_failed(grace_ends_at=clock.now + grace)
    return subscription


def test_grace_ends_on_the_date_the_record_holds(clock):
    subscription = failed_payment(clock)
    grace_end = fresh(subscription).grace_ends_at
    clock.at(grace_end + timedelta(minutes=59))
    assert fresh(subscription).state == "grace"
    clock.at(grace_end + timedelta(hours=1))
    assert fresh(subscription).state == "dunning"


def test_dunning_escalates_to_suspension_and_cancellation_after_30_days(clock):
    subscription = failed_payment(clock)
    dunning_from = fresh(subscription).grace_ends_at + timedelta(hours=1)
    clock.at(dunning_from)
    for day in (3, 6):
        clock.at(dunning_from + timedelta(days=day))
    assert fresh(subscription).dunning_emails == 2
    clock.at(dunning_from + timedelta(days=9))
    assert fresh(subscription).state == "suspended"
    clock.at(dunning_from + timedelta(days=9 + 14))
    assert fresh(subscription).final_notices == 1
    clock.at(dunning_from + timedelta(days=30) - timedelta(seconds=1))
    assert fresh(subscription).state == "suspended"
    clock.at(dunning_from + timedelta(days=30))
    assert fresh(subscription).state == "cancelled"


def test_paying_during_dunning_reactivates(clock):
    subscription = failed_payment(clock, grace=timedelta(days=1))
    clock.after(timedelta(days=2))
    assert fresh(subscription).state == "dunning"
    fresh(subscription).pay()
    assert fresh(subscription).state == "active"
