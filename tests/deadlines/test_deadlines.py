"""Deadlines: timeouts, every, anchors and firing semantics (docs/deadlines.md)."""

from datetime import timedelta

import pytest

from django_workflow.models import TransitionLog
from django_workflow.scheduling import due_at
from django_workflow.testing import advance_to_next_deadline, run_due_work
from tests.helpers import fresh
from tests.moments import T
from tests.testapp.models import Monitor, Proposal

pytestmark = pytest.mark.django_db

SECOND = timedelta(seconds=1)


def at(clock, offset):
    clock.move_to(T + offset, tick=False)
    run_due_work()


def test_not_due_one_second_before_the_instant_and_due_at_it(clock):
    proposal = Proposal.objects.create()
    at(clock, timedelta(days=2) - SECOND)
    assert fresh(proposal).reminders == 0
    at(clock, timedelta(days=2))
    assert fresh(proposal).reminders == 1


def test_an_action_timeout_fires_once_per_round(clock):
    proposal = Proposal.objects.create()
    for offset in (2, 2.5, 3, 6, 9.9):
        at(clock, timedelta(days=offset))
    stored = fresh(proposal)
    assert stored.reminders == 1
    assert stored.review_reminder_fired_at == T + timedelta(days=2)
    assert (stored.state, stored.state_entered_at) == ("review", T)


def test_every_fires_each_interval_and_never_at_until(clock):
    proposal = Proposal.objects.create()
    fired = []
    for hours in range(0, 24 * 9 + 1, 6):
        at(clock, timedelta(hours=hours))
        if fresh(proposal).nags > len(fired):
            fired.append(hours // 24)
    assert fired == [2, 4, 6]
    stored = fresh(proposal)
    assert stored.review_nag_last_fired_at == T + timedelta(days=6)
    assert stored.state_entered_at == T


def test_a_timeout_anchored_on_another_field(clock):
    proposal = Proposal.objects.create(submitted_at=T + timedelta(hours=5))
    at(clock, timedelta(hours=6) - SECOND)
    assert fresh(proposal).follow_ups == 0
    at(clock, timedelta(hours=6))
    assert fresh(proposal).follow_ups == 1


def test_fire_at_moved_later_by_save_re_arms(clock):
    proposal = Proposal.objects.create(respond_by=T + timedelta(days=1))
    at(clock, timedelta(days=1))
    proposal = fresh(proposal)
    assert proposal.chases == 1
    proposal.respond_by = T + timedelta(days=3)
    proposal.save()
    at(clock, timedelta(days=3) - SECOND)
    assert fresh(proposal).chases == 1
    at(clock, timedelta(days=3))
    assert fresh(proposal).chases == 2


def test_fire_at_moved_later_by_queryset_update_re_arms(clock):
    proposal = Proposal.objects.create(respond_by=T + timedelta(days=1))
    at(clock, timedelta(days=1))
    Proposal.objects.filter(pk=proposal.pk).update(respond_by=T + timedelta(days=2))
    at(clock, timedelta(days=2))
    assert fresh(proposal).chases == 2


def test_save_with_update_fields_re_arms_too(clock):
    proposal = Proposal.objects.create(respond_by=T + timedelta(days=1))
    at(clock, timedelta(days=1))
    proposal = fresh(proposal)
    proposal.respond_by = T + timedelta(days=2)
    proposal.save(update_fields=["respond_by"])
    assert fresh(proposal).review_chase_fired_at is None
    at(clock, timedelta(days=2))
    assert fresh(proposal).chases == 2


def test_a_refreshed_instance_does_not_re_arm_what_another_process_moved(clock):
    proposal = Proposal.objects.create(respond_by=T + timedelta(days=1))
    stale = fresh(proposal)
    Proposal.objects.filter(pk=proposal.pk).update(respond_by=T + timedelta(days=2))
    at(clock, timedelta(days=2))
    assert fresh(proposal).chases == 1
    stale.refresh_from_db()
    stale.save()  # nothing moved since it was reloaded
    at(clock, timedelta(days=3))
    assert fresh(proposal).chases == 1


def test_moving_the_anchor_earlier_does_not_re_arm(clock):
    proposal = Proposal.objects.create(respond_by=T + timedelta(days=1))
    at(clock, timedelta(days=1))
    proposal = fresh(proposal)
    proposal.respond_by = T + timedelta(hours=12)
    proposal.save()
    Proposal.objects.filter(pk=proposal.pk).update(respond_by=T + timedelta(hours=6))
    at(clock, timedelta(days=2))
    assert fresh(proposal).chases == 1


def test_a_re_entered_step_gets_fresh_clocks_for_timeouts_and_every(clock):
    proposal = Proposal.objects.create()
    at(clock, timedelta(days=2))
    assert (fresh(proposal).reminders, fresh(proposal).nags) == (1, 1)
    clock.move_to(T + timedelta(days=3), tick=False)
    fresh(proposal).bounce()
    at(clock, timedelta(days=4))  # the old every clock would fire here
    assert (fresh(proposal).reminders, fresh(proposal).nags) == (1, 1)
    at(clock, timedelta(days=5) - SECOND)
    assert (fresh(proposal).reminders, fresh(proposal).nags) == (1, 1)
    at(clock, timedelta(days=5))
    assert (fresh(proposal).reminders, fresh(proposal).nags) == (2, 2)


def test_two_timeouts_sharing_an_action_write_their_columns_together(clock):
    proposal = Proposal.objects.create()
    at(clock, timedelta(days=3))
    stored = fresh(proposal)
    assert stored.notices == 1
    assert stored.review_first_notice_fired_at == stored.review_second_notice_fired_at
    assert stored.review_second_notice_fired_at == T + timedelta(days=3)
    at(clock, timedelta(days=5))
    assert fresh(proposal).notices == 1


def test_a_null_anchor_never_fires_and_is_not_pending(clock):
    proposal = Proposal.objects.create()
    names = {deadline.name for deadline in proposal.pending_deadlines()}
    assert names == {"reminder", "escalation", "nag", "first_notice", "second_notice"}
    at(clock, timedelta(days=9))
    stored = fresh(proposal)
    assert (stored.chases, stored.follow_ups, stored.calculated) == (0, 0, 0)


def test_a_calculation_anchor(clock):
    proposal = Proposal.objects.create(submitted_at=T)
    [answer] = [d for d in proposal.pending_deadlines() if d.name == "answer"]
    assert answer.due_at == T + timedelta(hours=2)
    at(clock, timedelta(hours=2) - SECOND)
    assert fresh(proposal).calculated == 0
    at(clock, timedelta(hours=2))
    assert fresh(proposal).calculated == 1


def test_a_calculation_moved_later_by_save_re_arms(clock):
    proposal = Proposal.objects.create(submitted_at=T)
    at(clock, timedelta(hours=2))
    proposal = fresh(proposal)
    proposal.submitted_at = T + timedelta(hours=3)
    proposal.save()
    at(clock, timedelta(hours=5))
    assert fresh(proposal).calculated == 2


def test_a_transition_timeout_moves_the_record_and_resets_entry(clock):
    proposal = Proposal.objects.create()
    at(clock, timedelta(days=10))
    stored = fresh(proposal)
    assert (stored.state, stored.state_entered_at) == ("escalated", T + timedelta(days=10))
    row = TransitionLog.objects.filter(object_id=str(proposal.pk)).last()
    assert (row.triggered_by, row.transition_name) == ("timeout", "escalation")
    assert (row.from_state, row.to_state) == ("review", "escalated")


def test_action_timeouts_and_every_log_from_equal_to(clock):
    proposal = Proposal.objects.create()
    at(clock, timedelta(days=2))
    rows = TransitionLog.objects.filter(object_id=str(proposal.pk), triggered_by="timeout")
    assert sorted(rows.values_list("transition_name", "from_state", "to_state")) == [
        ("nag", "review", "review"),
        ("reminder", "review", "review"),
    ]


def test_pending_deadlines_are_soonest_first_with_kind_and_target(clock):
    proposal = Proposal.objects.create(submitted_at=T)
    pending = [(d.name, d.kind, d.due_at - T, d.target) for d in proposal.pending_deadlines()]
    assert pending == [
        ("follow_up", "action", timedelta(hours=1), "follow_up"),
        ("answer", "action", timedelta(hours=2), "calculate"),
        ("reminder", "action", timedelta(days=2), "remind"),
        ("nag", "every", timedelta(days=2), "nag"),
        ("first_notice", "action", timedelta(days=3), "notify"),
        ("second_notice", "action", timedelta(days=5), "notify"),
        ("escalation", "transition", timedelta(days=10), "escalated"),
    ]


def test_a_fired_timeout_and_a_terminal_step_have_no_pending_deadline(clock):
    proposal = Proposal.objects.create()
    at(clock, timedelta(days=2))
    names = [d.name for d in fresh(proposal).pending_deadlines()]
    assert "reminder" not in names and "nag" in names
    proposal = fresh(proposal)
    proposal.approve()
    assert proposal.pending_deadlines() == []


def test_every_stops_being_pending_at_until(clock):
    proposal = Proposal.objects.create()
    at(clock, timedelta(days=6))
    assert "nag" not in {d.name for d in fresh(proposal).pending_deadlines()}


def test_an_every_whose_until_passed_unfired_is_not_pending(clock):
    proposal = Proposal.objects.create()  # no worker ran while it waited
    nag = Proposal.workflow.work("every:review.nag")
    clock.move_to(T + timedelta(days=7), tick=False)
    assert due_at(nag, proposal) == T + timedelta(days=2)  # overdue, still before until
    clock.move_to(T + timedelta(days=8), tick=False)
    assert due_at(nag, proposal) is None
    assert "nag" not in {d.name for d in proposal.pending_deadlines()}


def test_due_at_for_each_kind(clock):
    proposal = Proposal.objects.create()
    works = {work.entity: work for work in Proposal.workflow.works}
    assert due_at(works["reminder"], proposal) == T + timedelta(days=2)
    assert due_at(works["escalation"], proposal) == T + timedelta(days=10)
    assert due_at(works["nag"], proposal) == T + timedelta(days=2)
    assert due_at(works["chase"], proposal) is None
    proposal.approve()
    assert due_at(works["reminder"], proposal) is None


def test_an_action_that_moves_its_own_anchor_later_re_arms_itself(clock):
    monitor = Monitor.objects.create(next_check_at=T + timedelta(hours=1))
    at(clock, timedelta(hours=1))
    stored = fresh(monitor)
    assert (stored.checks, stored.monitoring_check_fired_at) == (1, None)
    at(clock, timedelta(days=1, hours=1))
    assert fresh(monitor).checks == 2


def test_a_failing_action_is_not_marked_fired_and_runs_again_after_its_backoff(clock):
    monitor = Monitor.objects.create(next_check_at=T + timedelta(hours=1), fail_checks=True)
    at(clock, timedelta(hours=1))
    assert fresh(monitor).monitoring_check_fired_at is None
    Monitor.objects.filter(pk=monitor.pk).update(fail_checks=False)
    at(clock, timedelta(hours=1, minutes=5) - SECOND)
    assert fresh(monitor).checks == 0
    at(clock, timedelta(hours=1, minutes=5))
    assert fresh(monitor).checks == 1


def test_advance_to_next_deadline_moves_the_clock_and_fires(clock):
    proposal = Proposal.objects.create()
    assert advance_to_next_deadline(proposal) == T + timedelta(days=2)
    assert (proposal.reminders, proposal.nags) == (1, 1)
    assert advance_to_next_deadline(proposal, clock) == T + timedelta(days=3)
    assert proposal.notices == 1


def test_advance_to_next_deadline_needs_a_clock(db):
    with pytest.raises(RuntimeError, match="time_machine"):
        advance_to_next_deadline(Proposal.objects.create())


def test_works_have_stable_names_and_the_documented_shape():
    works = {work.name: work for work in Proposal.workflow.works}
    reminder = works["timeout:review.reminder"]
    assert (reminder.kind, reminder.step, reminder.fired_field) == (
        "timeout",
        "review",
        "review_reminder_fired_at",
    )
    assert reminder.deadline.field == "state_entered_at"
    assert reminder.deadline.fire_after == timedelta(days=2)
    assert reminder.retry.max_attempts == 1
    chase = works["timeout:review.chase"]
    assert (chase.deadline.field, chase.deadline.fire_after) == ("respond_by", None)
    nag = works["every:review.nag"]
    assert (nag.until, nag.fired_field, nag.last_fired_field) == (
        timedelta(days=8),
        None,
        "review_nag_last_fired_at",
    )
    assert works["timeout:review.escalation"].fired_field is None
