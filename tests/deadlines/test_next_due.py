"""The stored due instant (``next_due_at``) always equals what ``due_at`` computes
(docs/deadlines.md, "How deadlines are found"): after entry, firing, failure, a
moved anchor, a changed time zone or calendar, bulk writes, and a changed declaration."""

from dataclasses import field, fields, make_dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import models
from django.utils import timezone

from django_workflow import Every, Step, Timeout, Transition, deadlines, run_work
from django_workflow.model.columns import NEXT_DUE_AT
from django_workflow.models import DeadlineDeclaration, WorkAttempt
from django_workflow.testing import run_due_work
from django_workflow.worker.schedulers.polling import poll, queue_waiting_steps
from tests.moments import T
from tests.testapp.models import Appeal, Batch, Claim, Monitor, NationalClaim, Proposal, Sync

pytestmark = pytest.mark.django_db


def stored(record):
    return type(record)._base_manager.values_list(NEXT_DUE_AT, flat=True).get(pk=record.pk)


def expected(record):
    """The soonest pending deadline as the record's own pending_deadlines() computes it."""
    fresh = type(record).objects.get(pk=record.pk)
    pending = [d.due_at for d in fresh.pending_deadlines() if d.name != "quick_look"]
    return min(pending, default=None)


def assert_in_step(record):
    assert stored(record) == expected(record), (stored(record), expected(record))


def test_entering_a_step_stores_its_soonest_deadline(clock):
    proposal = Proposal.objects.create(submitted_at=T + timedelta(hours=5))
    assert stored(proposal) == T + timedelta(hours=6)  # follow_up: 1 h after submitted_at
    assert_in_step(proposal)
    plain = Proposal.objects.create()
    assert stored(plain) == T + timedelta(days=2)  # reminder and the first nag
    proposal.approve()
    assert stored(proposal) is None  # approved has no deadline
    bulk = Proposal.objects.bulk_create([Proposal(respond_by=T + timedelta(minutes=30))])
    assert stored(bulk[0]) == T + timedelta(minutes=30)


def test_saving_a_moved_anchor_stores_the_new_instant_and_a_stale_save_does_not(clock):
    proposal = Proposal.objects.create()
    proposal.respond_by = T + timedelta(hours=3)
    proposal.save()
    assert stored(proposal) == T + timedelta(hours=3)
    stale = Proposal.objects.get(pk=proposal.pk)
    proposal.approve()
    stale.respond_by = T + timedelta(hours=1)
    stale.save()  # loaded in review, which the record has left
    assert stored(proposal) is None


def test_a_calculation_anchor_moves_with_its_fields(clock):
    proposal = Proposal.objects.create()
    proposal.submitted_at = T - timedelta(minutes=90)  # answer due at submitted_at + 2 h
    proposal.save()
    assert stored(proposal) == T - timedelta(minutes=30)  # follow_up, 1 h after submission
    Proposal.objects.filter(pk=proposal.pk).update(submitted_at=T + timedelta(days=1))
    assert stored(proposal) == T + timedelta(days=1, hours=1)
    assert_in_step(proposal)


def test_update_of_the_step_itself_stores_the_new_steps_instant(clock):
    proposal = Proposal.objects.create()
    Proposal.objects.filter(pk=proposal.pk).update(state="approved")
    assert stored(proposal) is None
    Proposal.objects.filter(pk=proposal.pk).update(state="review", state_entered_at=T)
    assert stored(proposal) == T + timedelta(days=2)


def test_firing_moves_it_to_the_next_pending_deadline(clock):
    proposal = Proposal.objects.create()
    clock.move_to(T + timedelta(days=2, minutes=1))
    run_due_work()
    proposal.refresh_from_db()
    assert (proposal.reminders, proposal.nags) == (1, 1)
    assert stored(proposal) == T + timedelta(days=3)  # first_notice
    assert_in_step(proposal)


def test_an_every_past_its_until_leaves_nothing_pending(clock):
    proposal = Proposal.objects.create()
    for day in (2, 3, 4, 5, 6, 8):
        clock.move_to(T + timedelta(days=day, minutes=1))
        run_due_work()
    proposal.refresh_from_db()
    assert proposal.nags == 3  # days 2, 4, 6; the one due on day 8 is past until
    assert stored(proposal) == T + timedelta(days=10)  # only the escalation is left
    assert_in_step(proposal)


def test_business_days_count_the_records_zone_and_holidays_and_follow_their_change(clock):
    zagreb = ZoneInfo("Europe/Zagreb")
    clock.move_to(datetime(2026, 12, 23, 10, 0, tzinfo=zagreb))  # Wednesday
    claim = Claim.objects.create()  # 3 business days: Thursday, then (25th, 26th holidays,
    assert stored(claim) == datetime(2026, 12, 29, 10, 0, tzinfo=zagreb)  # weekend) Mon, Tue
    national = NationalClaim.objects.create(country="HR", tz="Europe/Zagreb")
    assert stored(national) == datetime(2026, 12, 24, 10, 0, tzinfo=zagreb)
    clock.move_to(datetime(2026, 12, 24, 9, 0, tzinfo=zagreb))
    national.tz = "America/New_York"
    national.save()  # Wed 23rd 04:00 in New York: due Thursday 04:00 there
    assert stored(national) == datetime(2026, 12, 24, 4, 0, tzinfo=ZoneInfo("America/New_York"))
    NationalClaim.objects.filter(pk=national.pk).update(country="US")
    assert_in_step(national)


def test_a_failed_deadline_waits_for_its_retry_and_a_halted_one_for_nobody(clock):
    monitor = Monitor.objects.create(next_check_at=T + timedelta(hours=1), fail_checks=True)
    clock.move_to(T + timedelta(hours=1, minutes=1))
    run_work(Monitor, "timeout:monitoring.check")
    assert stored(monitor) == T + timedelta(hours=1, minutes=6)  # backoff 5 min
    for minutes in (6, 16):
        clock.move_to(T + timedelta(hours=1, minutes=minutes + 1))
        run_work(Monitor, "timeout:monitoring.check")
    assert WorkAttempt.objects.get(object_id=str(monitor.pk)).halted
    assert stored(monitor) == T + timedelta(days=10)  # give_up only
    # A save computes it again without the attempts; the next poll puts it right.
    monitor.refresh_from_db()
    monitor.save()
    assert stored(monitor) == T + timedelta(hours=1)
    poll("testapp.Monitor", ["timeout:monitoring.check"])
    assert stored(monitor) == T + timedelta(days=10)


def test_transition_timeouts_store_the_instants_of_the_step_they_enter(clock):
    national = NationalClaim.objects.create(tz="Asia/Tokyo")
    batches = Batch.objects.bulk_create([Batch(), Batch()])
    clock.move_to(T + timedelta(days=2, minutes=1))
    run_due_work()
    assert {b.state for b in Batch.objects.all()} == {"expired"}
    assert [stored(b) for b in batches] == [None, None]
    national.refresh_from_db()
    assert national.state == "escalated" and stored(national) is None


def test_a_poll_finds_every_kind_through_one_index_lookup(clock, django_assert_max_num_queries):
    Proposal.objects.create(submitted_at=T)
    Claim.objects.create()
    clock.move_to(T + timedelta(minutes=30))  # nothing due yet
    with django_assert_max_num_queries(2):  # the probe (and preparing it, on PostgreSQL)
        assert poll("testapp.Proposal", [w.name for w in Proposal.workflow.works]) == {}
    clock.move_to(T + timedelta(hours=1, minutes=1))
    assert poll("testapp.Proposal", ["timeout:review.reminder"]) == {"timeout:review.follow_up": 1}


def test_a_changed_declaration_is_computed_again_when_the_worker_starts(clock):
    proposal = Proposal.objects.create()
    DeadlineDeclaration.objects.all().delete()
    Proposal._base_manager.filter(pk=proposal.pk).update(**{NEXT_DUE_AT: T + timedelta(days=99)})
    assert deadlines.catch_up([Proposal]) == {"testapp.Proposal": 1}
    assert stored(proposal) == T + timedelta(days=2)
    assert deadlines.catch_up([Proposal]) == {}  # the fingerprint is stored
    row = DeadlineDeclaration.objects.get(model="testapp.Proposal")
    row.fingerprint = "an older declaration"
    row.save()
    assert deadlines.catch_up([Proposal]) == {"testapp.Proposal": 0}


def test_a_stale_instant_is_put_right_by_the_poll_that_reads_it(clock):
    proposal = Proposal.objects.create()
    Proposal._base_manager.filter(pk=proposal.pk).update(**{NEXT_DUE_AT: T - timedelta(days=1)})
    assert poll("testapp.Proposal", [w.name for w in Proposal.workflow.works]) == {}
    assert stored(proposal) == T + timedelta(days=2)


def test_the_safety_net_reaches_waiting_records_behind_any_number_of_halted_ones(clock):
    halted = Sync.objects.bulk_create([Sync(broken=True) for _ in range(4)])
    for sync in halted:
        WorkAttempt.objects.create(
            content_type_id=_sync_type(),
            object_id=str(sync.pk),
            work="step:pushing",
            round_key=Sync.objects.get(pk=sync.pk).state_entered_at,
            attempts=2,
            halted=True,
        )
    waiting = Sync.objects.create()
    clock.move_to(T + timedelta(minutes=5))
    assert (
        queue_waiting_steps(
            Sync, Sync.workflow.work("step:pushing"), timezone.now(), "default", limit=2
        )
        == 1
    )
    assert Sync.objects.get(pk=waiting.pk).state == "pushed"  # the test settings run tasks inline
    assert {s.state for s in Sync.objects.filter(pk__in=[s.pk for s in halted])} == {"pushing"}


def _sync_type():
    from django.contrib.contenttypes.models import ContentType

    return ContentType.objects.get_for_model(Sync).pk


def test_instants_are_stored_in_utc_and_compare_on_both_databases(clock):
    proposal = Proposal.objects.create(respond_by=datetime(2026, 6, 1, 12, 0, tzinfo=UTC))
    assert stored(proposal) == datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
    assert Proposal.objects.filter(**{f"{NEXT_DUE_AT}__lte": T + timedelta(hours=4)}).count() == 1


def test_a_field_a_later_release_adds_to_works_with_a_default_keeps_the_fingerprint():
    works = Proposal.workflow.deadline_works["review"]

    def later(work, **more):
        kind = make_dataclass(
            "Later", [("someday", object, field(default=None))], bases=(type(work),), frozen=True
        )
        return kind(**{f.name: getattr(work, f.name) for f in fields(work) if f.init}, **more)

    upgraded = [later(w) for w in works]
    assert deadlines._declared(upgraded) == deadlines._declared(works)
    changed = [later(w, someday=1) for w in works]
    assert deadlines._declared(changed) != deadlines._declared(works)


# Entering a step computes only the deadlines that can come first -------------------


def test_of_timeouts_counted_from_the_entry_only_the_shortest_of_each_kind_is_computed(declare):
    class Workflow:
        holidays = ["2026-06-04"]
        time_zone = "Europe/Zagreb"

        waiting = Step(
            Transition("go", to="waiting"),
            Timeout("soon", fire_after="2d", action="act"),
            Timeout("later", fire_after="5d", transition_to="waiting"),
            Timeout("business_soon", fire_after="1bd", action="act"),
            Timeout("business_later", fire_after="3bd", action="act"),
            Timeout("at", fire_at="due", action="act"),
            Timeout("from_field", fire_after="1h", field="due", action="act"),
            Every("nag", interval="3d", action="act", until="4d"),
        )

    model = declare(Workflow, due=models.DateTimeField(null=True), act=lambda self: None)
    kept = {work.entity for work in model.workflow.entry_deadline_works["waiting"]}
    assert kept == {"soon", "business_soon", "at", "from_field", "nag"}
    # Whatever the entry instant (a weekend, the holiday, a field before or after it),
    # the stored instant equals the soonest of all the step's deadlines.
    for hours in range(0, 24 * 9, 7):
        entered = T + timedelta(hours=hours)
        for due in (None, entered + timedelta(hours=5), entered + timedelta(days=6)):
            record = model(state="waiting", state_entered_at=entered, due=due)
            at_entry = deadlines.next_due(record, now=entered, entry=True)
            assert at_entry == deadlines.next_due(record, now=entered), (entered, due)


def test_a_new_record_carrying_a_fired_mark_has_every_deadline_computed(clock):
    [reminder_fired] = Appeal.workflow.fired_fields("review")  # copied from another record
    appeal = Appeal.objects.create(**{reminder_fired: T})
    # The reminder (1 day) counts as fired, so the escalation (3 days) comes first.
    assert appeal.next_due_at == T + timedelta(days=3) == deadlines.next_due(appeal, T)
    appeal.refresh_from_db()
    assert appeal.next_due_at == T + timedelta(days=3)
