"""Service-level clocks across steps (docs/slas.md): an ``Sla`` runs in its ``runs_in``
steps, pauses in the others, stops at a terminal step, and is never restarted by
re-entering a step; its warning and breach fire once per record.

``Inquiry`` counts resolution in business hours, 09:00-17:00 in Zagreb (CET in
December, UTC+1), running while new, worked on or escalated, paused while waiting on
the customer; the lead is warned at 12 of 16 hours and the inquiry escalated at 16.
"""

from datetime import timedelta

import pytest

from django_workflow import Sla, StaleRecord, Step, Transition, run_work
from django_workflow.checks import check_model
from django_workflow.models import TransitionLog
from django_workflow.testing import run_due_work
from tests.helpers import fresh, local
from tests.testapp.models import Inquiry

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


@pytest.fixture
def at(time_machine):
    """``at(instant)``: stop the clock there."""

    def move(instant):
        time_machine.move_to(instant, tick=False)

    return move


def resolution(inquiry):
    return fresh(inquiry).sla("resolution")


def arrived(at, instant):
    at(instant)
    return Inquiry.objects.create()


def test_a_new_inquirys_clock_runs_in_working_hours(at):
    inquiry = arrived(at, local(2026, 12, 1, 10))  # a Tuesday
    at(local(2026, 12, 1, 20))
    clock = resolution(inquiry)
    assert clock.state == "running"
    assert clock.consumed == 7 * HOUR  # 10:00 to closing
    assert clock.remaining == 9 * HOUR
    assert clock.due_at == local(2026, 12, 3, 10)  # Tue 7 h, Wed 8 h, Thu 1 h


def test_the_clock_pauses_while_waiting_on_the_customer(at):
    inquiry = arrived(at, local(2026, 12, 1, 10))
    at(local(2026, 12, 1, 11))
    inquiry.take()
    at(local(2026, 12, 1, 12))
    inquiry.ask()
    at(local(2026, 12, 7, 15))  # days later
    clock = resolution(inquiry)
    assert (clock.state, clock.consumed, clock.due_at) == ("paused", 2 * HOUR, None)
    assert clock.remaining == 14 * HOUR
    inquiry = fresh(inquiry).reply()
    at(local(2026, 12, 7, 16))
    clock = resolution(inquiry)
    assert (clock.state, clock.consumed) == ("running", 3 * HOUR)
    assert clock.due_at == local(2026, 12, 9, 13)  # Mon 15-17, Tue 8 h, Wed 4 h


def test_re_entering_a_step_never_restarts_the_clock(at):
    inquiry = arrived(at, local(2026, 12, 1, 9))
    at(local(2026, 12, 1, 10))
    inquiry.take()
    for hour in (11, 12, 13):
        at(local(2026, 12, 1, hour))
        inquiry = fresh(inquiry).note()  # a self-loop: the step is entered again
    at(local(2026, 12, 1, 14))
    inquiry = fresh(inquiry).ask()
    at(local(2026, 12, 2, 9))
    inquiry = fresh(inquiry).reply()
    at(local(2026, 12, 2, 10))
    assert resolution(inquiry).consumed == 6 * HOUR  # 09-14 Tuesday, 09-10 Wednesday
    assert fresh(inquiry).sla("first_answer").consumed == HOUR  # new, left at 10:00


def test_a_terminal_step_stops_the_clock_and_meets_it(at):
    inquiry = arrived(at, local(2026, 12, 1, 9))
    at(local(2026, 12, 1, 13))
    inquiry.resolve()
    at(local(2026, 12, 10, 9))
    clock = resolution(inquiry)
    assert (clock.state, clock.consumed, clock.remaining, clock.due_at) == (
        "met",
        4 * HOUR,
        12 * HOUR,
        None,
    )


def test_the_warning_fires_once_at_its_share_of_the_target(at):
    inquiry = arrived(at, local(2026, 12, 1, 9))
    warning = local(2026, 12, 2, 13)  # 12 business hours: Tue 8 h, Wed 4 h
    assert fresh(inquiry).next_due_at == local(2026, 12, 1, 13)  # the nudge comes first
    at(warning - timedelta(seconds=1))
    run_due_work()
    assert fresh(inquiry).warnings == 0
    at(warning)
    run_due_work()
    run_due_work()
    inquiry = fresh(inquiry)
    assert (inquiry.warnings, inquiry.sla_resolution_warned_at) == (1, warning)
    assert inquiry.sla("resolution").state == "running"
    rows = TransitionLog.objects.filter(transition_name="resolution.warn")
    assert list(rows.values_list("triggered_by", "to_state")) == [("timeout", "new")]


def test_two_firing_passes_at_the_same_instant_fire_once(at):
    inquiry = arrived(at, local(2026, 12, 1, 9))
    at(local(2026, 12, 3, 9))  # past both the warning and the breach
    assert run_work(Inquiry, "sla:new.resolution.warn") == 1
    assert run_work(Inquiry, "sla:new.resolution.warn") == 0
    assert run_work(Inquiry, "sla:new.resolution.breach") == 1
    assert run_work(Inquiry, "sla:new.resolution.breach") == 0
    run_due_work()
    inquiry = fresh(inquiry)
    assert (inquiry.warnings, inquiry.state) == (1, "escalated")
    assert TransitionLog.objects.filter(transition_name="escalate").count() == 1


def test_the_breach_calls_its_transition_once(at):
    inquiry = arrived(at, local(2026, 12, 1, 9))
    breach = local(2026, 12, 2, 17)  # 16 business hours
    at(breach - timedelta(seconds=1))
    run_due_work()
    assert fresh(inquiry).state == "new"
    at(breach)
    run_due_work()
    run_due_work()
    inquiry = fresh(inquiry)
    assert (inquiry.state, inquiry.sla_resolution_breached_at) == ("escalated", breach)
    at(local(2026, 12, 4, 12))  # escalated: the clock still runs; nothing fires again
    run_due_work()
    clock = resolution(inquiry)
    assert (clock.state, clock.consumed, clock.remaining) == ("breached", 27 * HOUR, timedelta(0))
    rows = TransitionLog.objects.filter(object_id=str(inquiry.pk), transition_name="escalate")
    assert list(rows.values_list("triggered_by", "data")) == [
        ("timeout", {"sla": "resolution", "alarm": "breach"})
    ]
    inquiry.resolve()
    assert resolution(inquiry).state == "breached"


def test_a_breach_with_no_handler_is_marked_once_and_moves_nothing(at):
    inquiry = arrived(at, local(2026, 12, 5, 10))  # a Saturday: calendar hours count
    at(local(2026, 12, 5, 14))
    run_due_work()
    run_due_work()
    inquiry = fresh(inquiry)
    assert inquiry.state == "new"
    assert inquiry.sla_first_answer_breached_at == local(2026, 12, 5, 14)
    assert inquiry.sla("first_answer").state == "breached"
    rows = TransitionLog.objects.filter(transition_name="first_answer.breach")
    assert rows.count() == 1


def test_time_paused_does_not_bring_the_alarms_nearer(at):
    inquiry = arrived(at, local(2026, 12, 1, 9))
    at(local(2026, 12, 1, 10))
    inquiry.take()
    at(local(2026, 12, 1, 11))
    inquiry = fresh(inquiry).ask()
    assert fresh(inquiry).next_due_at is None  # paused: nothing pending
    at(local(2026, 12, 14, 9))
    run_due_work()
    assert (fresh(inquiry).warnings, fresh(inquiry).state) == (0, "waiting_on_customer")
    inquiry = fresh(inquiry).reply()
    assert fresh(inquiry).next_due_at == local(2026, 12, 15, 11)  # 10 h more: warned


def test_a_batch_moved_by_a_timeout_adds_each_records_own_stay(at):
    zagreb = arrived(at, local(2026, 12, 1, 9))
    at(local(2026, 12, 1, 10))
    zagreb.take()
    new_york = arrived(at, local(2026, 12, 1, 16))  # 10:00 in its zone
    new_york.zone = "America/New_York"
    new_york.save()
    at(local(2026, 12, 1, 17))
    new_york = fresh(new_york).take()
    at(local(2026, 12, 6, 17))  # five days on: both are parked in one UPDATE
    assert run_work(Inquiry, "timeout:working.park") == 2
    assert {fresh(zagreb).state, fresh(new_york).state} == {"waiting_on_customer"}
    # Zagreb: 1 h new, then Tuesday 10-17 and Wednesday to Friday, 8 h each
    assert resolution(zagreb).consumed == 32 * HOUR
    # New York: 1 h new, then Tuesday 11-17 there and Wednesday to Friday
    assert resolution(new_york).consumed == 31 * HOUR


def test_an_unknown_sla_name_says_which_there_are(at):
    inquiry = arrived(at, local(2026, 12, 1, 9))
    with pytest.raises(LookupError, match="resolution, first_answer"):
        inquiry.sla("reply")


def messages(model):
    return [(m.id.removeprefix("django_workflow."), m.msg) for m in check_model(model)]


def declared(declare, **sla):
    class Workflow:
        working_hours = "09:00-17:00"
        slas = {"resolution": Sla(**{"target": "8bh", "runs_in": ["open"], **sla})}
        open = Step(Transition("close", to="closed"))
        closed = Step()

    return declare(Workflow, tell_lead=lambda self: None)


def test_a_correct_sla_passes_the_checks(declare):
    assert messages(declared(declare, warn_at=0.5, on_warn="tell_lead", on_breach="close")) == []


@pytest.mark.parametrize(
    "sla, code, text",
    [
        ({"runs_in": ["opne"]}, "E069", "'opne', not a step"),
        ({"runs_in": ["open", "closed"]}, "E069", "terminal step 'closed'"),
        ({"runs_in": []}, "E069", "never runs"),
        ({"target": "soon"}, "E070", "'soon'"),
        ({"target": "2bd"}, "E070", "business days"),
        ({"warn_at": 1.5}, "E071", "1.5"),
        ({"warn_at": 0}, "E071", "0"),
        ({"on_warn": "tell_lead"}, "E071", "without warn_at"),
        ({"warn_at": 0.5, "on_warn": "shout"}, "E072", "'shout' is neither"),
        ({"on_breach": "reopen"}, "E072", "'reopen' is neither"),
    ],
)
def test_a_wrong_sla_is_an_error(declare, sla, code, text):
    [(found, message)] = messages(declared(declare, **sla))
    assert found == code and text in message


def test_an_sla_name_that_cannot_name_columns_is_an_error(declare):
    class Workflow:
        slas = {"first answer": Sla("4h", runs_in=["open"])}
        open = Step(Transition("close", to="closed"))
        closed = Step()

    assert [code for code, _ in messages(declare(Workflow))] == ["E069"]


def test_an_sla_in_business_hours_needs_working_hours(declare):
    class Workflow:
        slas = {"resolution": Sla("8bh", runs_in=["open"])}
        open = Step(Transition("close", to="closed"))
        closed = Step()

    [(code, message)] = messages(declare(Workflow))
    assert code == "E068" and "slas['resolution']" in message


def test_a_stale_instance_cannot_count_a_stay_twice(at):
    inquiry = arrived(at, local(2026, 12, 1, 9))
    at(local(2026, 12, 1, 10))
    inquiry.take()
    stale = fresh(inquiry)
    at(local(2026, 12, 1, 11))
    fresh(inquiry).note()
    at(local(2026, 12, 1, 12))
    with pytest.raises(StaleRecord):
        stale.ask()
    assert resolution(inquiry).consumed == 3 * HOUR


def test_a_clock_past_both_alarms_warns_then_breaches_at_the_next_poll(at):
    inquiry = arrived(at, local(2026, 12, 1, 9))
    at(local(2026, 12, 7, 9))  # the worker was down
    run_due_work()
    inquiry = fresh(inquiry)
    assert (inquiry.warnings, inquiry.state) == (1, "escalated")
    assert inquiry.sla_resolution_warned_at == inquiry.sla_resolution_breached_at


def test_an_alarm_a_stay_reached_still_fires_after_another_moved_the_record(at):
    inquiry = arrived(at, local(2026, 12, 1, 9))
    at(local(2026, 12, 7, 9))  # the first answer's breach was due on the first day
    assert run_work(Inquiry, "sla:new.resolution.breach") == 1  # escalated first
    assert fresh(inquiry).sla_first_answer_breached_at is None
    run_due_work()  # escalated: the first answer's clock no longer runs, its breach is owed
    inquiry = fresh(inquiry)
    assert inquiry.sla_first_answer_breached_at == local(2026, 12, 7, 9)
    assert TransitionLog.objects.filter(transition_name="first_answer.breach").count() == 1


def test_saving_a_stale_instance_leaves_the_clock_alone(at):
    inquiry = arrived(at, local(2026, 12, 1, 9))
    stale = fresh(inquiry)
    at(local(2026, 12, 1, 12))
    fresh(inquiry).take()
    stale.zone = "Europe/Zagreb"
    stale.save()
    assert fresh(inquiry).sla_resolution_consumed == 3 * 3600
    assert resolution(inquiry).consumed == 3 * HOUR


def test_short_stays_are_rounded_to_whole_seconds_never_truncated(at):
    # Release 3 truncated each stay: ten self-loops of 0.9 s added nothing.
    start = local(2026, 12, 1, 10)
    inquiry = arrived(at, start)
    at(start + timedelta(seconds=1))
    inquiry = fresh(inquiry).take()
    for loop in range(1, 11):
        at(start + timedelta(seconds=1 + 0.9 * loop))
        inquiry = fresh(inquiry).note()
    # 1 s in new, then ten stays of 0.9 s, each rounded to 1 s: 11 s stored for 10 s of
    # clock time (truncated, it was 1 s); a stay is off by half a second at most.
    assert fresh(inquiry).sla_resolution_consumed == 11
