"""The async twins (``atransition``, ``aavailable_actions``, ``apending_deadlines``,
``aundo``): the sync method run through ``sync_to_async`` (docs/transitions.md)."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
import rules
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.core.exceptions import SynchronousOnlyOperation
from django.db import connections

from django_workflow import (
    StaleRecord,
    TransitionNotAllowed,
    UndoNotPermitted,
    WorkflowPermissionDenied,
)
from django_workflow.models import TransitionLog
from django_workflow.signals import step_changed
from tests.moments import T
from tests.testapp.models import Candidate, Decision, Proposal, Ticket

# Real commits: the twins write from the ORM's sync thread, on their own connection.
pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

recruiter = SimpleNamespace(role="recruiter")
intern = SimpleNamespace(role="intern")
ada = SimpleNamespace(name="ada")


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(autouse=True)
async def close_the_sync_threads_connections():
    """Nothing ends a request here, so the sync thread's connection is closed by hand
    (an open one would keep PostgreSQL from dropping the test database)."""
    yield
    await sync_to_async(connections.close_all)()


async def interviewing():
    candidate = await Candidate.objects.acreate(name="Ada", resume_words=700)
    await candidate.arefresh_from_db()  # screened on commit
    assert candidate.state == "interview"
    return candidate


async def stored(record):
    return await type(record).objects.aget(pk=record.pk)


async def test_atransition_moves_the_instance_in_place_and_returns_it():
    candidate = await interviewing()
    result = await candidate.atransition(
        "triage", actor=recruiter, priority="urgent", comment="Referred", data={"ticket": 7}
    )
    assert result is candidate
    assert (candidate.state, candidate.priority) == ("fast_track", "urgent")
    row = await stored(candidate)
    assert (row.state, row.priority, row.state_entered_at) == (
        "fast_track",
        "urgent",
        candidate.state_entered_at,
    )
    log = await TransitionLog.objects.filter(transition_name="triage").aget()
    assert (log.to_state, log.comment, log.data) == ("fast_track", "Referred", {"ticket": 7})


async def test_atransition_sends_step_changed_after_commit():
    candidate = await interviewing()
    heard = []

    def receiver(sender, instance, from_state, to_state, **kwargs):
        heard.append((instance, from_state, to_state))

    step_changed.connect(receiver, sender=Candidate)
    try:
        await candidate.atransition("hold", actor=recruiter)
    finally:
        step_changed.disconnect(receiver, sender=Candidate)
    assert heard == [(candidate, "interview", "interview")]


async def test_atransition_raises_what_transition_raises_and_writes_nothing():
    candidate = await interviewing()
    before = await stored(candidate)
    with pytest.raises(TransitionNotAllowed):
        await candidate.atransition("restock", actor=recruiter)
    with pytest.raises(WorkflowPermissionDenied):
        await candidate.atransition("approve", actor=intern)
    with pytest.raises(TypeError):
        await candidate.atransition("approve", actor=recruiter, score=9)
    await Candidate.objects.filter(pk=candidate.pk).aupdate(state="rejected")
    with pytest.raises(StaleRecord):
        await candidate.atransition("approve", actor=recruiter)
    after = await stored(candidate)
    assert (after.state_entered_at, after.score) == (before.state_entered_at, before.score)
    assert candidate.state == "interview"
    assert await TransitionLog.objects.filter(triggered_by="manual").acount() == 0


async def test_atransition_with_authorize_false_skips_the_policy():
    candidate = await interviewing()
    await candidate.atransition("approve", actor=intern, authorize=False)
    assert (candidate.state, (await stored(candidate)).state) == ("offer", "offer")


async def test_the_sync_method_is_refused_in_async_code_and_the_twin_is_not():
    candidate = await interviewing()
    with pytest.raises(SynchronousOnlyOperation):
        candidate.approve(actor=recruiter)
    assert (await stored(candidate)).state == "interview"
    await candidate.atransition("approve", actor=recruiter)
    assert candidate.state == "offer"


async def test_aavailable_actions_lists_what_available_actions_lists():
    candidate = await interviewing()
    every = ["approve", "reject", "triage", "rescreen", "hold"]
    assert await candidate.aavailable_actions(recruiter) == every
    assert await candidate.aavailable_actions(intern) == []
    assert await candidate.aavailable_actions() == []
    await candidate.atransition("reject", actor=recruiter)
    assert await candidate.aavailable_actions(recruiter) == []  # a terminal step


@rules.predicate
def owns_ticket(user, ticket):
    return ticket is not None and ticket.owner_id == user.pk


async def test_aavailable_actions_with_policies_that_read_the_database():
    """``has_perm`` asks the auth backends, which query; here an object grant too."""
    rules.add_perm("testapp.change_ticket", owns_ticket)
    try:
        ada_user = await User.objects.acreate(username="ada")
        hers = await Ticket.objects.acreate(owner=ada_user)
        theirs = await Ticket.objects.acreate()
        assert await hers.aavailable_actions(ada_user) == ["close", "start"]
        assert await theirs.aavailable_actions(ada_user) == []
        with pytest.raises(WorkflowPermissionDenied):
            await theirs.atransition("start", actor=ada_user)
        await hers.atransition("start", actor=ada_user)
        assert (await stored(hers)).state == "working"
    finally:
        rules.remove_perm("testapp.change_ticket")


async def test_apending_deadlines_returns_what_pending_deadlines_returns(clock):
    proposal = await Proposal.objects.acreate(submitted_at=T)
    pending = [
        (d.name, d.kind, d.due_at - T, d.target) for d in await proposal.apending_deadlines()
    ]
    assert pending == [
        ("follow_up", "action", timedelta(hours=1), "follow_up"),
        ("answer", "action", timedelta(hours=2), "calculate"),
        ("reminder", "action", timedelta(days=2), "remind"),
        ("nag", "every", timedelta(days=2), "nag"),
        ("first_notice", "action", timedelta(days=3), "notify"),
        ("second_notice", "action", timedelta(days=5), "notify"),
        ("escalation", "transition", timedelta(days=10), "escalated"),
    ]
    await proposal.atransition("approve")
    assert await proposal.apending_deadlines() == []


async def test_aundo_rewinds_in_place_and_returns_the_instance(clock):
    decision = await Decision.objects.acreate()
    await decision.atransition("reject", actor=ada)
    clock.move_to(T + timedelta(minutes=5), tick=False)
    result = await decision.aundo(actor=ada)
    assert result is decision
    assert (decision.state, decision.state_entered_at) == ("pending", T + timedelta(minutes=5))
    row = await stored(decision)
    assert (row.state, row.state_entered_at) == ("pending", T + timedelta(minutes=5))
    undo_row = await TransitionLog.objects.filter(triggered_by="undo").aget()
    assert undo_row.to_state == "pending"


async def test_aundo_raises_what_undo_raises():
    decision = await Decision.objects.acreate()
    with pytest.raises(UndoNotPermitted) as caught:
        await decision.aundo(actor=ada)
    assert caught.value.reason == "no_history"
    await decision.atransition("reject", actor=ada)
    with pytest.raises(UndoNotPermitted) as caught:
        await decision.aundo(actor=SimpleNamespace(name="grace"))
    assert caught.value.reason == "different_actor"
    assert (decision.state, (await stored(decision)).state) == ("rejected", "rejected")
