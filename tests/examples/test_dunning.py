"""Subscription dunning, end to end with time travel."""

from datetime import timedelta

from example_project.dunning.models import Subscription
from tests.examples.conftest import T
from tests.helpers import fresh


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


def payment_failed_in_the_admin(client, subscription, grace_ends_at):
    url = f"/admin/dunning/subscription/{subscription.pk}/workflow/payment_failed/"
    date, time = grace_ends_at.split(" ")
    return client.post(url, {"grace_ends_at_0": date, "grace_ends_at_1": time})


def test_the_admin_refuses_a_grace_that_already_ended_and_changes_nothing(clock, admin_client):
    subscription = Subscription.objects.create(customer="ACME")
    page = payment_failed_in_the_admin(admin_client, subscription, "2020-01-15 12:00:00")
    assert page.status_code == 200  # the form again, with the error
    assert "The grace period must end in the future: 2020-01-15 12:00 UTC has passed." in (
        page.content.decode()
    )
    stored = fresh(subscription)
    assert (stored.state, stored.grace_ends_at) == ("active", None)


def test_the_admin_accepts_a_grace_ending_later(clock, admin_client):
    subscription = Subscription.objects.create(customer="ACME")
    page = payment_failed_in_the_admin(admin_client, subscription, "2026-06-06 12:00:00")
    assert page.status_code == 302
    assert fresh(subscription).state == "grace"


def test_a_record_whose_grace_has_passed_can_still_be_edited(clock, admin_client):
    subscription = failed_payment(clock, grace=timedelta(days=1))
    clock.after(timedelta(days=2))
    url = f"/admin/dunning/subscription/{subscription.pk}/change/"
    grace = {"grace_ends_at_0": "2026-06-02", "grace_ends_at_1": "09:00:00"}  # passed
    fields = {"customer": "ACME Ltd", "dunning_emails": 0, "final_notices": 0, **grace}
    page = admin_client.post(url, fields)
    assert page.status_code == 302 and fresh(subscription).customer == "ACME Ltd"
    assert fresh(subscription).grace_ends_at == T + timedelta(days=1)
