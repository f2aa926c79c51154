"""The transition log: docs/log-and-signals.md (rows written by the engine)."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db import connections
from django.db.models.signals import post_save

from django_workflow.models import TransitionLog
from django_workflow.testing import run_due_work
from example_project.support.models import Ticket as SupportTicket
from tests.conftest import workflow_database
from tests.moments import T
from tests.testapp.models import Candidate, Decision, Import, Order, Proposal, Routed

pytestmark = pytest.mark.django_db


def log_of(record):
    return TransitionLog.objects.filter(
        content_type=ContentType.objects.get_for_model(record), object_id=str(record.pk)
    )


def test_creation_writes_an_initial_row():
    record = Routed.objects.create()
    [initial] = log_of(record)
    assert (initial.triggered_by, initial.from_state, initial.to_state) == ("initial", "", "open")
    assert initial.record == record


def test_a_manual_transition_writes_its_row_with_the_actor_text():
    record = Routed.objects.create(amount=3)
    record.size(actor=SimpleNamespace(role="x"))
    last = log_of(record).last()
    assert (last.triggered_by, last.transition_name) == ("manual", "size")
    assert (last.from_state, last.to_state) == ("open", "small")
    assert last.actor is None and "role='x'" in last.actor_repr
    assert last.occurred_at is not None


def test_a_user_actor_is_stored_as_a_foreign_key():
    user = User.objects.create_user("ada")
    record = Routed.objects.create(amount=300)
    record.size(actor=user)
    last = log_of(record).last()
    assert (last.actor, last.actor_repr) == (user, "ada")


def test_automatic_rows_name_the_action(committed):
    with committed():
        candidate = Candidate.objects.create(resume_words=900)
    last = log_of(candidate).last()
    assert (last.triggered_by, last.transition_name, last.attempt) == (
        "automatic",
        "run_screening",
        1,
    )


def test_a_uuid_key_is_stored_as_text_and_resolves():
    order = Order.objects.create()
    [initial] = log_of(order)
    assert initial.object_id == str(order.pk)
    assert initial.record == order


def test_a_failed_call_writes_no_row():
    record = Routed.objects.create(amount=None)
    with pytest.raises(Exception):  # noqa: B017 - NoRouteMatched, asserted elsewhere
        record.size()
    assert log_of(record).count() == 1


def test_workflows_without_log_write_nothing():
    Import.objects.create()
    assert not TransitionLog.objects.exists()


def test_a_call_stores_its_comment_and_data_on_the_log_row_and_the_admin_shows_them(
    admin_client,
):
    decision = Decision.objects.create()
    decision.hold(actor="ops", comment="waiting for legal", data={"ticket": 4711})
    row = decision.history().last()
    assert (row.comment, row.data, row.transition_name) == (
        "waiting for legal",
        {"ticket": 4711},
        "hold",
    )
    page = admin_client.get(f"/admin/testapp/decision/{decision.pk}/change/")
    assert '<td class="workflow-comment">waiting for legal</td>' in page.content.decode()
    found = admin_client.get("/admin/django_workflow/transitionlog/", {"q": "legal"})
    assert found.context["cl"].result_count == 1


def test_comment_and_data_are_no_accepted_values():
    decision = Decision.objects.create()
    decision.hold(comment="")
    assert Decision.objects.get(pk=decision.pk).state == "held"
    assert decision.history().last().data is None


def test_receivers_of_the_logs_save_signals_get_each_row_the_worker_writes(clock):
    proposal = Proposal.objects.create()
    saved = []

    def receiver(sender, instance, created, **kwargs):
        saved.append((instance.pk, created, instance.transition_name))

    post_save.connect(receiver, sender=TransitionLog)
    try:
        clock.move_to(T + timedelta(days=2), tick=False)
        run_due_work()
    finally:
        post_save.disconnect(receiver, sender=TransitionLog)
    rows = log_of(proposal).filter(triggered_by="timeout")
    assert sorted(saved) == sorted((row.pk, True, row.transition_name) for row in rows)
    assert {name for _, _, name in saved} == {"nag", "reminder"}


LOG = "/admin/django_workflow/transitionlog/"


def parameters_sent(db):
    """Records the parameter count of every statement sent to ``db`` in ``sent``."""
    sent = []

    def count(execute, sql, params, many, context):
        sent.append(len(params or ()))
        return execute(sql, params, many, context)

    return sent, connections[db].execute_wrapper(count)


def test_searching_the_log_by_name_among_many_records_sends_no_list_of_their_keys(
    admin_client,
):
    """The records an admin search finds stay in the database: a subquery, not one
    parameter per record (SQLite and PostgreSQL cap a statement's parameters). The most
    a statement sends is one page's keys, to show those records' names."""
    SupportTicket.objects.bulk_create(SupportTicket(subject=f"Printer {n}") for n in range(1200))
    SupportTicket.objects.create(subject="Password reset")
    sent, counting = parameters_sent(workflow_database())
    with counting:
        page = admin_client.get(LOG, {"q": "printer"})
    assert page.context["cl"].result_count == 1200  # each ticket's initial row
    assert max(sent) <= admin.site._registry[TransitionLog].list_per_page  # a page's records


class OrderSearch(admin.ModelAdmin):
    search_fields = ("visited",)


@pytest.fixture
def searchable_orders():
    """Orders (a UUID key) with an admin that searches them."""
    admin.site.register(Order, OrderSearch)
    yield
    admin.site.unregister(Order)


def test_searching_the_log_finds_the_rows_of_records_with_a_uuid_key(
    admin_client, searchable_orders
):
    wanted = [Order.objects.create(visited="harbour") for _ in range(3)]
    Order.objects.create(visited="airport")
    page = admin_client.get(LOG, {"q": "harbour"})
    rows = list(page.context["cl"].result_list)
    assert sorted(row.object_id for row in rows) == sorted(str(order.pk) for order in wanted)


def test_a_receiver_of_the_logs_save_signals_hears_every_row_of_a_bulk_move():
    heard = []

    def hearing(sender, instance, created, **kwargs):
        heard.append((instance.from_state, instance.to_state, created))

    post_save.connect(hearing, sender=TransitionLog)
    try:
        created = Candidate.objects.bulk_create([Candidate(name=n) for n in "ab"])
        Candidate.objects.filter(pk__in=[c.pk for c in created]).update(resume_words=700)
        run_due_work()
        moved = Candidate.objects.filter(pk__in=[c.pk for c in created])
        outcomes = moved.transition("reject", authorize=False)
    finally:
        post_save.disconnect(hearing, sender=TransitionLog)
    assert sorted(outcomes.values()) == ["rejected", "rejected"]
    assert heard.count(("", "screening", True)) == 2  # created in bulk
    assert heard.count(("interview", "rejected", True)) == 2  # moved in bulk
