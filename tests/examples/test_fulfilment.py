"""Order fulfilment, end to end with time travel."""

from datetime import timedelta

import pytest

from example_project.fulfilment.models import Order
from tests.helpers import fresh


def test_checkout_runs_the_whole_chain(clock):
    order = Order.objects.create(item="Kettle")
    order.checkout()
    clock.after(timedelta(0))
    stored = fresh(order)
    assert (stored.state, stored.charged, stored.reserved, stored.packed) == (
        "shipped",
        True,
        True,
        True,
    )
    assert stored.tracking_number == f"TRK{order.pk:06d}"


def test_an_order_of_version_1_skips_the_vetting_version_2_added(clock):
    old = Order.objects.create(item="Kettle", workflow_version=1)
    new = Order.objects.create(item="Kettle")
    for order in (old, new):
        order.checkout()
    clock.after(timedelta(0))
    assert (fresh(old).state, fresh(new).state) == ("shipped", "shipped")
    assert "vetting" not in [row.to_state for row in fresh(old).workflow.history()]
    assert "vetting" in [row.to_state for row in fresh(new).workflow.history()]


@pytest.mark.parametrize(
    "link, error_step, recovery",
    [
        ("charge", "payment_failed", "retry_payment"),
        ("vet", "payment_failed", "retry_payment"),
        ("reserve", "awaiting_stock", "restocked"),
        ("pack", "packing_failed", "repack"),
        ("ship", "shipping_failed", "reship"),
    ],
)
def test_each_link_has_its_error_step_and_a_way_back_into_the_chain(
    clock, link, error_step, recovery
):
    order = Order.objects.create(item="Lamp", fail_next=link)
    order.checkout()
    clock.after(timedelta(0))
    assert fresh(order).state == error_step
    Order.objects.filter(pk=order.pk).update(fail_next="")
    fresh(order).transition(recovery)
    clock.after(timedelta(0))
    assert fresh(order).state == "shipped"


def test_a_cart_left_for_three_days_is_abandoned(clock):
    order = Order.objects.create(item="Chair")
    clock.after(timedelta(days=3) - timedelta(seconds=1))
    assert fresh(order).state == "cart"
    clock.after(timedelta(seconds=1))
    assert fresh(order).state == "abandoned"


def test_the_supplier_is_chased_every_two_days_while_stock_is_awaited(clock):
    order = Order.objects.create(item="Desk", fail_next="reserve")
    order.checkout()
    clock.after(timedelta(0))
    for _ in range(3):
        clock.after(timedelta(days=2))
    assert (fresh(order).state, fresh(order).supplier_chases) == ("awaiting_stock", 3)
    fresh(order).cancel()
    assert fresh(order).state == "cancelled"
