"""``manage.py seed_demo``: the demo's records, their past played through their workflows.

Seeding takes seconds, so one test seeds once and checks everything.
"""

import io
import re
from datetime import timedelta
from itertools import pairwise

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from django_workflow.models import TransitionLog, WorkAttempt
from django_workflow.work.sla_clocks_read import later
from example_project.fulfilment.models import Order
from example_project.hiring.management.commands.seed_demo import MODELS, WORKER_STOPPED
from example_project.hiring.models import Candidate
from example_project.support.models import Ticket

pytestmark = pytest.mark.django_db


def seed(*args):
    out = io.StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def test_the_demo_is_seeded_through_the_workflows_once():
    seeded = seed("--address", "demo.example:9000")
    every_app_has_records_in_several_steps()
    each_record_is_where_its_history_leads()
    people_moved_records_in_the_past_and_deadlines_fired_there()
    the_unanswered_ticket_breached_its_sla_in_the_past()
    each_app_has_a_deadline_already_due_for_the_worker()
    a_halted_record_shows_its_panel_with_retry_now()
    the_agent_may_claim_an_escalated_ticket()
    orders_run_on_both_versions()
    assert "Already due, for the worker to fire as it starts (10):" in seeded
    assert "the worker logs a WARNING for each of Alan Example's screening attempts" in seeded
    the_summary_reads_in_labels(seeded)
    assert seeded.rstrip().endswith("Log in at http://demo.example:9000/admin/ as admin / admin")

    counts, rows = [model.objects.count() for model in MODELS], TransitionLog.objects.count()
    again = seed()
    assert [model.objects.count() for model in MODELS] == counts
    assert TransitionLog.objects.count() == rows
    assert "Demo data already present (8 hiring.Candidate, " in again
    assert "nothing seeded" in again


def orders_run_on_both_versions():
    """Orders placed before fraud vetting finished on version 1, without it; later ones
    were vetted (docs/versions.md)."""
    kettle, mirror, piano = (Order.objects.get(item=i) for i in ("Kettle", "Mirror", "Piano"))
    assert (kettle.workflow_version, kettle.state) == (1, "shipped")
    assert "vetting" not in kettle.workflow.history().values_list("to_state", flat=True)
    assert (mirror.workflow_version, mirror.state) == (2, "shipped")
    assert "vetting" in mirror.workflow.history().values_list("to_state", flat=True)
    assert (piano.workflow_version, piano.state) == (2, "payment_failed")


def the_agent_may_claim_an_escalated_ticket():
    """The agent's queue (/agent/) offers to claim a ticket in a claim step."""
    agent = get_user_model().objects.get(username="agent")
    client = Client()
    client.force_login(agent)
    queue = client.get("/agent/").content.decode()
    outage = Ticket.objects.get(subject="Mail server down")
    assert outage.state == "management" and outage.assignee is None
    assert f'data-record="support.ticket:{outage.pk}"' in queue
    assert 'data-hold="claim"' in queue


def the_summary_reads_in_labels(seeded):
    """Steps and deadlines as the admin shows them, never their names in the code."""
    assert "Candidates: 1 Hired, 1 Rejected, 1 Offer sent, 1 Awaiting a decision, " in seeded
    assert "  Candidate Katherine Example (Offer sent): Offer reminder, due 1 h 30 min ago" in (
        seeded
    )
    assert "  Ticket Site down (Urgent): SLA warning, due 20 min ago" in seeded
    summary = seeded[: seeded.index("Log in at")]
    assert not re.findall(r"\b[a-z]+_[a-z_]+\b", summary)  # offer_sent, offer_reminder


def every_app_has_records_in_several_steps():
    for model in MODELS:
        steps = set(model.objects.values_list(model.workflow.state_attribute, flat=True))
        assert len(steps) >= 3, (model, steps)


def each_record_is_where_its_history_leads():
    for model in MODELS:
        for record in model.objects.all():
            rows = list(record.history())
            assert rows[0].triggered_by == TransitionLog.Trigger.INITIAL, record
            moves = [row for row in rows if row.from_state != row.to_state]
            assert moves[-1].to_state == record.current_step, record
            entered = moves[-1].occurred_at - record.state_entered_at
            assert abs(entered) < timedelta(seconds=1), record
            for before, after in pairwise(moves):
                assert after.from_state == before.to_state, record  # no jump between steps
                assert after.occurred_at >= before.occurred_at, record
            assert all(row.occurred_at <= timezone.now() for row in rows)


def people_moved_records_in_the_past_and_deadlines_fired_there():
    stopped = timezone.now() - WORKER_STOPPED
    manual = TransitionLog.objects.filter(triggered_by=TransitionLog.Trigger.MANUAL)
    assert manual.filter(actor__username="admin", occurred_at__lt=stopped - timedelta(days=7))
    assert manual.filter(actor__username="alice").exists()
    fired = TransitionLog.objects.filter(
        triggered_by=TransitionLog.Trigger.TIMEOUT, occurred_at__lt=stopped
    )
    assert {row.content_type.model for row in fired} == {m._meta.model_name for m in MODELS}


def the_unanswered_ticket_breached_its_sla_in_the_past():
    """The simulated worker fires SLA alarms too: three working days unanswered, the
    ticket was escalated to urgent, then four hours later breached."""
    jammed = Ticket.objects.get(subject="Printer jammed")
    rows = [row for row in jammed.history() if row.from_state]
    assert [(row.to_state, row.transition_name) for row in rows] == [
        ("technical", "triage"),
        ("technical", "resolution.warn"),
        ("urgent", "escalate"),  # the breach
        ("urgent", "sla_warning"),
        ("breached", "sla_breach"),
    ]
    # Each at its instant: 16 and 24 working hours after the ticket came in.
    sla, came = Ticket.workflow.slas["resolution"], rows[0].occurred_at
    assert rows[1].occurred_at == later(jammed, sla, came, timedelta(hours=16))
    assert rows[2].occurred_at == later(jammed, sla, came, timedelta(hours=24))
    assert jammed.sla("resolution").state == "breached"
    assert rows[-1].occurred_at < timezone.now() - WORKER_STOPPED


def each_app_has_a_deadline_already_due_for_the_worker():
    now = timezone.now()
    for model in MODELS:
        due = [
            deadline
            for record in model.objects.all()
            for deadline in record.pending_deadlines()
            if now - WORKER_STOPPED < deadline.due_at <= now
        ]
        assert due, model


def a_halted_record_shows_its_panel_with_retry_now():
    [halted] = WorkAttempt.objects.filter(halted=True)
    candidate = Candidate.objects.get(pk=halted.object_id)
    assert (candidate.name, candidate.current_step) == ("Edsger Example", "scheduling")
    assert halted.last_error == "ConnectionError: the interview calendar did not answer"
    client = Client()
    client.force_login(get_user_model().objects.get(username="admin"))
    page = client.get(f"/admin/hiring/candidate/{candidate.pk}/change/").content.decode()
    assert "Halted after 1 attempt(s)" in page and ">Retry now</button>" in page
