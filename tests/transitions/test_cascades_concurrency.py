"""A cascade beside children changing on other connections, on PostgreSQL
(docs/transitions.md, "Cascades: a parent moving its children"): the cascade locks the
children, waits for one another connection holds, then reads it as committed; the
outcome is always one of the two orders, never a deadlock error."""

import threading
import time

import pytest
from django.db import connection, connections, transaction

from django_workflow import StaleRecord
from django_workflow.models import TransitionLog
from tests.testapp.models import Purchase, PurchaseLine

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row-level concurrency needs PostgreSQL"
    ),
]


def with_lines(inspected):
    """A purchase with one open line and ``inspected`` lines in step ``checked``."""
    purchase = Purchase.objects.create()
    PurchaseLine.objects.create(purchase=purchase)
    for _ in range(inspected):
        PurchaseLine.objects.create(purchase=purchase).inspect()
    return purchase


def parent_rows(purchase):
    """The purchase's own log rows (a line may share its key)."""
    rows = TransitionLog.objects.filter(object_id=str(purchase.pk), triggered_by="manual")
    return list(rows.filter(content_type__model="purchase"))


def in_thread(work):
    """Run ``work`` on a connection of its own; the thread and what it returned or raised."""
    outcome = {}

    def run():
        try:
            outcome["value"] = work()
        except Exception as error:  # the test says which, deadlocks included
            outcome["error"] = error
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def wait_until_a_connection_waits_for_a_lock():
    deadline = time.monotonic() + 10
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.02)
    raise AssertionError("the cascade never waited for the child's lock")


def test_a_child_packed_on_another_connection_during_the_cascade_stays_packed():
    purchase = with_lines(inspected=2)
    racing = purchase.lines.filter(state="checked").first()
    packing, release = threading.Event(), threading.Event()

    def pack_and_hold():
        with transaction.atomic():
            PurchaseLine.objects.get(pk=racing.pk).pack()
            packing.set()
            release.wait(10)  # the child's row stays locked until the cascade waits for it

    holder, held = in_thread(pack_and_hold)
    assert packing.wait(10)
    canceller, cancelled = in_thread(lambda: Purchase.objects.get(pk=purchase.pk).cancel())
    wait_until_a_connection_waits_for_a_lock()
    release.set()
    holder.join(10)
    canceller.join(10)
    assert "error" not in held and "error" not in cancelled, (held, cancelled)
    lines = dict(purchase.lines.values_list("pk", "state"))
    assert lines.pop(racing.pk) == "packed"
    assert set(lines.values()) == {"void"}
    [row] = parent_rows(purchase)
    assert row.data["cascade"] == {"lines": {"moved": 2, "stayed": 1}}


def test_a_child_racing_the_cascade_ends_in_one_of_the_two_orders_without_deadlock():
    for _ in range(20):
        purchase = with_lines(inspected=3)
        racing = purchase.lines.filter(state="checked").last()
        line = PurchaseLine.objects.get(pk=racing.pk)
        parent = Purchase.objects.get(pk=purchase.pk)
        barrier = threading.Barrier(2)

        def pack(line=line, barrier=barrier):
            barrier.wait()
            return line.pack()

        def cancel(parent=parent, barrier=barrier):
            barrier.wait()
            return parent.cancel()

        (packer, packed), (canceller, cancelled) = in_thread(pack), in_thread(cancel)
        packer.join(20)
        canceller.join(20)
        assert "error" not in cancelled, cancelled
        racing.refresh_from_db()
        [logged] = parent_rows(purchase)
        if racing.state == "packed":  # the pack committed first: the line stayed
            assert "error" not in packed
            assert logged.data["cascade"] == {"lines": {"moved": 3, "stayed": 1}}
        else:  # the cascade voided it first: the pack found it moved
            assert racing.state == "void"
            assert isinstance(packed.get("error"), StaleRecord), packed
            assert logged.data["cascade"] == {"lines": {"moved": 4, "stayed": 0}}
