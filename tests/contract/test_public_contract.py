"""The public contract, as a project reaches it: only names the documentation gives
(``django_workflow``, ``django_workflow.testing``, ``.models``, ``.signals``, ``.policies``),
never the package's rooms (tests/house/test_house_rules.py keeps this folder so).

Each test is one promise of docs/transitions.md, docs/deadlines.md and docs/testing.md:
a transition moves and logs; a refused call raises the documented error and leaves the
row as it was; an automatic step runs through ``run_due_work``; a deadline fires at its
instant and not before; a transition named like a library method leaves the method at
``record.workflow.<name>``.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from django_workflow import (
    StaleRecord,
    TransitionNotAllowed,
    WorkflowPermissionDenied,
)
from django_workflow.models import TransitionLog
from django_workflow.signals import step_changed
from django_workflow.testing import advance_to_next_deadline, run_due_work
from tests.helpers import fresh
from tests.testapp.models import Candidate, Monitor, Order

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_transition_moves_the_record_logs_it_and_announces_it_after_commit(recruiter):
    candidate = Candidate.objects.create(name="Ana", resume_words=700)
    run_due_work()
    candidate = fresh(candidate)
    heard = []

    def hear(to_state, **kwargs):
        heard.append(to_state)

    step_changed.connect(hear, sender=Candidate)
    try:
        candidate.approve(actor=recruiter)
    finally:
        step_changed.disconnect(hear, sender=Candidate)
    assert fresh(candidate).state == "offer"
    assert candidate.workflow.current_step == "offer"
    assert heard == ["offer"]
    last = candidate.workflow.history().order_by("-id").first()
    assert (last.from_state, last.to_state, last.transition_name) == (
        "interview",
        "offer",
        "approve",
    )


def test_refused_calls_raise_the_documented_error_and_leave_the_row_as_it_was(recruiter, outsider):
    candidate = Candidate.objects.create(name="Bo", resume_words=700)
    run_due_work()
    candidate = fresh(candidate)
    entered, logged = candidate.state_entered_at, TransitionLog.objects.count()
    with pytest.raises(WorkflowPermissionDenied):
        candidate.approve(actor=outsider)
    with pytest.raises(TransitionNotAllowed):
        candidate.transition("restock", actor=recruiter)
    stale = fresh(candidate)
    candidate.reject(actor=recruiter)
    with pytest.raises(StaleRecord):
        stale.approve(actor=recruiter)
    assert fresh(candidate).state == "rejected"
    assert TransitionLog.objects.count() == logged + 1
    assert fresh(stale).state_entered_at > entered


def test_routes_decide_on_the_record_with_the_accepted_values(recruiter):
    candidate = Candidate.objects.create(name="Cy", resume_words=700)
    run_due_work()
    candidate = fresh(candidate)
    candidate.triage(actor=recruiter, priority="urgent")
    assert (fresh(candidate).state, fresh(candidate).priority) == ("fast_track", "urgent")
    with pytest.raises(TransitionNotAllowed):
        candidate.triage(actor=recruiter, priority="normal")
    assert fresh(candidate).priority == "urgent"


def test_automatic_steps_run_through_run_due_work_and_follow_their_routes():
    order = Order.objects.create()
    order.place()  # queued after commit: django-q2 in sync mode runs the chain at once
    run_due_work()
    order = fresh(order)
    assert order.status == "shipped"
    assert order.visited == "charge,reserve,pack,ship,"
    failing = Order.objects.create(fail_at="pack")
    failing.place()
    run_due_work()
    assert fresh(failing).status == "out_of_stock"


def test_a_deadline_fires_at_its_instant_and_not_before(clock):
    monitor = Monitor.objects.create(next_check_at=timezone.now() + timedelta(hours=2))
    kinds = {deadline.name: deadline.kind for deadline in monitor.workflow.pending_deadlines()}
    assert kinds["check"] == "action" and kinds["give_up"] == "transition"
    clock.move_to(timezone.now() + timedelta(hours=1))
    run_due_work()
    assert fresh(monitor).checks == 0
    assert advance_to_next_deadline(monitor) == monitor.next_check_at - timedelta(days=1)
    assert (monitor.checks, monitor.state) == (1, "monitoring")


def test_the_library_methods_are_reachable_through_record_workflow(recruiter):
    candidate = Candidate.objects.create(name="Di", resume_words=700)
    assert candidate.workflow.steps is Candidate.workflow.steps
    run_due_work()
    candidate = fresh(candidate)
    assert candidate.workflow.available_actions(recruiter) == [
        "approve",
        "reject",
        "triage",
        "rescreen",
        "hold",
    ]
    steps = [(row.from_state, row.to_state) for row in candidate.workflow.history().order_by("id")]
    assert steps == [("", "screening"), ("screening", "interview")]
