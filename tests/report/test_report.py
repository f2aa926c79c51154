"""Time in step: the report read from the transition log (docs/report.md).

The fixture moves three appeals through their steps at known instants (the log's
times come from the travelled clock), so every figure below is worked out by hand
in the comments. The week: Monday 2026-06-01 to Wednesday 2026-06-10; Thursday
2026-06-04 is the appeals' holiday; Zagreb is UTC+2, New York UTC-4 in June.
"""

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from django_workflow import run_work
from django_workflow.model.triggers import Trigger
from django_workflow.models import TransitionLog
from django_workflow.report import ReportError, non_working_spans, time_in_step
from django_workflow.report.working_days import calendar_days
from tests.moments import T
from tests.testapp.models import Appeal, Claim, Proposal, Recheck, Shipment, Ticket, Voyage

pytestmark = pytest.mark.django_db

NEW_YORK = "America/New_York"
#: The report's end in most tests: Wednesday 2026-06-10 09:00 UTC.
END = T + timedelta(days=9)


def at(day, hour, minute=0):
    """An instant of June 2026, in UTC."""
    return datetime(2026, 6, day, hour, minute, tzinfo=UTC)


def fire_due(clock, instant):
    clock.move_to(instant, tick=False)
    for work in Appeal.workflow.works:
        run_work(Appeal, work.name)


@pytest.fixture
def week(clock):
    """Three appeals through one week; returns them by name.

    a (Zagreb, the workflow's zone): review Mon 09:00 → waiting Mon 11:00 → review
      Fri 09:00 → decided Tue 06-09 09:00, still there at the end.
    b (New York): review Mon 09:00; the reminder fires Tue 09:00; the escalation moves
      it Thu 09:00 → escalated; decided Mon 06-08 13:00.
    c (Zagreb, named on the record): review Fri 12:00 → decided Mon 06-08 12:00.
    """
    a = Appeal.objects.create()
    b = Appeal.objects.create(tz=NEW_YORK)
    clock.move_to(at(1, 11), tick=False)
    a.ask()
    fire_due(clock, at(2, 9))  # b's reminder, one day after it entered review
    fire_due(clock, at(4, 9))  # b's escalation, three days after
    clock.move_to(at(5, 9), tick=False)
    a.answer()
    clock.move_to(at(5, 12), tick=False)
    c = Appeal.objects.create(tz="Europe/Zagreb")
    clock.move_to(at(8, 12), tick=False)
    c.decide()
    clock.move_to(at(8, 13), tick=False)
    b.refresh_from_db()
    b.decide()
    clock.move_to(at(9, 9), tick=False)
    a.decide()
    clock.move_to(END, tick=False)
    return {"a": a, "b": b, "c": c}


def by_step(report):
    return {figures.step: figures for figures in report.steps}


def test_the_week_in_calendar_hours(week):
    steps = by_step(time_in_step(Appeal, since=T, until=END))
    review = steps["review"]
    # a 2 h and 96 h, b 72 h, c 72 h: sorted 2, 72, 72, 96.
    assert (review.stays, review.open) == (4, 0)
    assert review.median_hours == pytest.approx(72)
    assert review.p90_hours == pytest.approx(72 + 0.7 * 24)  # rank 1 + 3 * 0.9 = 3.7
    assert (steps["waiting"].stays, steps["waiting"].median_hours) == (1, pytest.approx(94))
    assert steps["escalated"].median_hours == pytest.approx(100)  # Thu 09:00 to Mon 13:00


def test_business_hours_leave_out_the_weekend_and_the_holiday_in_each_records_zone(week):
    steps = by_step(time_in_step(Appeal, since=T, until=END))
    # Zagreb's holiday is Wed 22:00 to Thu 22:00 UTC, its weekend Fri 22:00 to Sun 22:00;
    # New York's holiday Thu 04:00 to Fri 04:00 UTC, its weekend Sat 04:00 to Mon 04:00.
    # review: a 2 h; a again 96 - 48 (weekend); b 72 - 5 (Thu 04:00-09:00, New York);
    # c 72 - 48: sorted 2, 24, 48, 67. In Zagreb b would have lost 11 h, not 5.
    review = steps["review"]
    assert review.median_business_hours == pytest.approx((24 + 48) / 2)
    assert review.p90_business_hours == pytest.approx(48 + 0.7 * (67 - 48))
    # waiting: a, Mon 11:00 to Fri 09:00 = 94 h, less Zagreb's holiday.
    assert steps["waiting"].median_business_hours == pytest.approx(94 - 24)
    # escalated: b, Thu 09:00 to Mon 13:00 = 100 h, less 19 h of holiday and 48 h of weekend.
    assert steps["escalated"].p90_business_hours == pytest.approx(100 - 19 - 48)


def test_a_record_without_a_zone_of_its_own_counts_in_the_workflows_zone(clock):
    Appeal.objects.create(tz="")  # Zagreb: Thursday is Wed 22:00 to Thu 22:00 UTC
    Appeal.objects.create(tz=NEW_YORK)  # New York: Thu 04:00 to Fri 04:00 UTC
    until = at(4, 12)  # both still in review, Mon 09:00 to Thu 12:00: 75 h
    review = by_step(time_in_step(Appeal, since=T, until=until))["review"]
    assert (review.stays, review.open) == (2, 2)
    assert review.median_hours == review.p90_hours == pytest.approx(75)
    # Zagreb 75 - 14 (Wed 22:00 to Thu 12:00), New York 75 - 8 (Thu 04:00 to 12:00).
    assert review.median_business_hours == pytest.approx((61 + 67) / 2)


def test_breach_rate_is_the_share_of_stays_in_which_each_timeout_fired(week):
    review = by_step(time_in_step(Appeal, since=T, until=END))["review"]
    rates = {t.name: (t.kind, t.fired, t.breach_rate) for t in review.timeouts}
    # Only b stayed a day (the reminder fires in place) and three (the escalation moves it).
    assert rates == {"reminder": ("action", 1, 0.25), "escalation": ("transition", 1, 0.25)}


def test_stays_left_after_the_reports_end_count_up_to_it(week):
    steps = by_step(time_in_step(Appeal, since=T, until=at(4, 12)))
    # By Thursday 12:00 a has waited since Mon 11:00 (73 h; it answers on Friday), b has
    # been escalated since 09:00 (3 h; decided on Monday); both reviews had ended.
    waiting, escalated = steps["waiting"], steps["escalated"]
    assert (waiting.stays, waiting.open, waiting.median_hours) == (1, 1, pytest.approx(73))
    assert waiting.median_business_hours == pytest.approx(73 - 14)  # Zagreb's Thursday
    assert (escalated.stays, escalated.open, escalated.p90_hours) == (1, 1, pytest.approx(3))
    assert (steps["review"].stays, steps["review"].open) == (2, 0)


def test_a_terminal_step_counts_its_stays_without_figures(week):
    decided = by_step(time_in_step(Appeal, since=T, until=END))["decided"]
    # Time in a step no record leaves is only the time since it got there.
    assert (decided.stays, decided.open) == (3, 3)
    assert [decided.median_hours, decided.p90_hours, decided.median_business_hours] == [None] * 3


def test_until_defaults_to_now(clock):
    Appeal.objects.create()
    clock.move_to(T + timedelta(hours=20), tick=False)
    review = by_step(time_in_step(Appeal, since=T))["review"]
    assert (review.open, review.median_hours) == (1, pytest.approx(20))


def test_the_window_holds_the_stays_that_began_in_it_as_they_stood_at_its_end(week):
    since, until = at(5, 0), at(8, 12, 30)
    steps = by_step(time_in_step(Appeal, since=since, until=until))
    # a's second review (Fri 09:00, open at the end: 75.5 h) and c's (Fri 12:00 to Mon
    # 12:00); b's escalated stay began Thursday, before the window; b's decision after it.
    review = steps["review"]
    assert (review.stays, review.open) == (2, 1)
    assert review.median_hours == pytest.approx((72 + 75.5) / 2)
    assert (steps["escalated"].stays, steps["escalated"].median_hours) == (0, None)
    assert (steps["decided"].stays, steps["decided"].median_hours) == (1, None)
    assert {t.name: t.fired for t in review.timeouts} == {"reminder": 0, "escalation": 0}


def test_a_timeout_that_fired_after_the_end_did_not_breach(week):
    review = by_step(time_in_step(Appeal, since=T, until=at(4, 8)))["review"]
    # a's first review and b's, open at Thu 08:00: the reminder fired Tuesday, the
    # escalation only at 09:00.
    assert (review.stays, review.open) == (2, 1)
    assert {t.name: t.breach_rate for t in review.timeouts} == {
        "reminder": 0.5,
        "escalation": 0.0,
    }


def test_the_bounds_are_inclusive_at_the_start_and_exclusive_at_the_end(week):
    starting = by_step(time_in_step(Appeal, since=at(5, 12), until=at(8, 12)))
    assert starting["review"].stays == 1  # c, entered at the start; its decision at the end
    assert starting["decided"].stays == 0


def test_a_step_nobody_entered_has_no_figures(week):
    steps = by_step(time_in_step(Appeal, since=at(9, 10), until=END))
    assert [f.step for f in time_in_step(Appeal, since=T, until=END).steps] == [
        "review",
        "waiting",
        "escalated",
        "decided",
    ]
    review = steps["review"]
    assert (review.stays, review.median_hours, review.p90_business_hours) == (0, None, None)
    assert [t.breach_rate for t in review.timeouts] == [None, None]


def test_failures_and_halts_logged_in_a_step_do_not_end_the_stay(clock):
    appeal = Appeal.objects.create()
    for hours, trigger in ((1, Trigger.FAILED), (2, Trigger.HALTED)):
        clock.move_to(T + timedelta(hours=hours), tick=False)
        TransitionLog.objects.create(
            record=appeal, from_state="review", to_state="review", triggered_by=trigger
        )
    clock.move_to(T + timedelta(hours=3), tick=False)
    appeal.decide()
    review = by_step(time_in_step(Appeal, since=T, until=T + timedelta(hours=4)))["review"]
    assert (review.stays, review.median_hours) == (1, pytest.approx(3))


def test_a_transition_back_into_the_same_step_begins_a_new_stay(clock):
    proposal = Proposal.objects.create()
    clock.move_to(T + timedelta(hours=2), tick=False)
    proposal.bounce()
    clock.move_to(T + timedelta(hours=3), tick=False)
    proposal.approve()
    review = by_step(time_in_step(Proposal, since=T, until=T + timedelta(hours=4)))["review"]
    assert (review.stays, review.median_hours, review.p90_hours) == (
        2,
        pytest.approx(1.5),
        pytest.approx(1 + 0.9 * 1),
    )


def test_non_working_spans_merge_a_weekend_and_follow_the_local_midnight():
    from zoneinfo import ZoneInfo

    from django_workflow.durations import holiday_calendar

    spans = non_working_spans(
        ZoneInfo(NEW_YORK), holiday_calendar(["2026-06-04"]), at(1, 0).date(), at(8, 0).date()
    )
    stamp = lambda instant: int(instant.timestamp())  # noqa: E731
    assert spans == [
        (stamp(at(4, 4)), stamp(at(5, 4))),
        (stamp(at(6, 4)), stamp(at(8, 4))),
    ]


def test_a_window_without_a_day_off_counts_every_hour_as_business(clock):
    clock.move_to(at(9, 9), tick=False)  # Tuesday; no day off from Monday to Thursday
    Appeal.objects.create(tz="")
    review = by_step(time_in_step(Appeal, since=at(9, 0), until=at(10, 12)))["review"]
    assert review.median_hours == review.median_business_hours == pytest.approx(27)


@pytest.mark.parametrize(
    "since, until, pieces",
    [
        (at(9, 0), at(10, 12), 0),  # Tuesday to Wednesday: every day worked
        (at(5, 0), at(8, 12), 1),  # a weekend: Zagreb's Saturday and Sunday in one piece
    ],
)
def test_the_day_table_carries_only_the_pieces_a_day_of_the_window_needs(since, until, pieces):
    rows = calendar_days(Appeal, ["Europe/Zagreb"], since, until)
    assert {len(row) for row in rows} == {2 + 2 * pieces}


def test_a_calendar_read_per_record_leaves_business_hours_out_and_says_why(week, monkeypatch):
    monkeypatch.setattr(Appeal.workflow, "holidays", "national_holidays")
    report = time_in_step(Appeal, since=T, until=END)
    review = by_step(report)["review"]
    assert review.median_hours == pytest.approx(72)
    assert (review.median_business_hours, review.p90_business_hours) == (None, None)
    assert "national_holidays" in report.business_hours_note
    assert time_in_step(Ticket, since=T, until=END).business_hours_note is None


@pytest.mark.parametrize(
    "model, since, until, message",
    [
        (Claim, T, END, "keeps no transition log"),
        (User, T, END, "declares no workflow"),
        (Appeal, END, T, "must come before"),
        (Appeal, T, T, "must come before"),
        (Appeal, T.replace(tzinfo=None), END, "aware datetimes"),
    ],
)
def test_a_report_that_cannot_be_made_says_why(model, since, until, message):
    with pytest.raises(ReportError, match=message):
        time_in_step(model, since=since, until=until)


def test_a_record_naming_an_unknown_zone_is_reported(clock):
    Appeal.objects.create(tz="Mars/Olympus")
    with pytest.raises(ReportError, match="'Mars/Olympus' is not a time zone"):
        time_in_step(Appeal, since=T, until=END)


# The command ---------------------------------------------------------------------------


def report_output(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("workflow_report", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_command_prints_a_table_per_step(week):
    out, err = report_output(
        "testapp.Appeal", "--since", "2026-06-01T09:00Z", "--until", "2026-06-10T09:00Z"
    )
    title, header, *rows = out.splitlines()
    assert title.startswith("testapp.Appeal: stays that began from 2026-06-01T09:00:00+00:00")
    assert header.split() == [
        "step", "stays", "open", "median", "h", "p90", "h", "median", "bh", "p90", "bh",
        "reminder", "breach", "escalation", "breach",
    ]  # fmt: skip
    cells = {row.split()[0]: row.split()[1:] for row in rows}
    assert cells["review"] == ["4", "0", "72.0", "88.8", "36.0", "61.3", "25%", "(1)", "25%", "(1)"]
    assert cells["decided"] == ["3", "3", "-", "-", "-", "-", "-", "-"]
    assert err == ""


def test_the_command_writes_csv(week):
    out, _ = report_output(
        "Appeal", "--since", "2026-06-01T09:00Z", "--until", "2026-06-10T09:00Z", "--format", "csv"
    )
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [row["step"] for row in rows] == ["review", "waiting", "escalated", "decided"]
    review = rows[0]
    assert (review["stays"], review["median_hours"], review["p90_business_hours"]) == (
        "4",
        "72.0",
        "61.3",
    )
    assert (review["breach_rate:reminder"], review["breach_rate:escalation"]) == ("0.25", "0.25")
    assert rows[1]["breach_rate:reminder"] == ""  # waiting has no such timeout


def csv_stays(*args):
    out, _ = report_output("testapp.Appeal", *args, "--format", "csv")
    return {row["step"]: int(row["stays"]) for row in csv.DictReader(io.StringIO(out))}


def test_a_date_is_midnight_in_the_workflows_zone(clock):
    clock.move_to(at(4, 23), tick=False)  # June 5th, 01:00 in Zagreb
    Appeal.objects.create()
    assert csv_stays("--since", "2026-06-05", "--until", "2026-06-06")["review"] == 1
    assert csv_stays("--since", "2026-06-05T00:00Z", "--until", "2026-06-06")["review"] == 0


@pytest.mark.parametrize(
    "since, decided",
    [
        ("2026-06-08T12:30", 3),  # no offset: Zagreb, 10:30 UTC, before c's and b's decision
        ("2026-06-08T12:30+02:00", 3),
        ("2026-06-08T12:30Z", 2),  # after c's decision at 12:00 UTC
    ],
)
def test_a_date_time_without_an_offset_is_read_in_the_workflows_zone(week, since, decided):
    assert csv_stays("--since", since, "--until", "2026-06-11")["decided"] == decided


def test_the_command_says_when_business_hours_are_left_out(week, monkeypatch):
    monkeypatch.setattr(Appeal.workflow, "holidays", "national_holidays")
    out, err = report_output("testapp.Appeal", "--since", "2026-06-01", "--format", "csv")
    assert "national_holidays" in err
    assert next(csv.DictReader(io.StringIO(out)))["median_business_hours"] == ""


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["testapp.Nothing", "--since", "2026-06-01"],
            "is not a model.*Workflow models: .*testapp.Appeal",
        ),
        (["Nothing", "--since", "2026-06-01"], "No workflow model is called 'Nothing'"),
        (["auth.User", "--since", "2026-06-01"], "auth.User declares no workflow"),
        (["testapp.Appeal", "--since", "2026-13-01"], "--since: '2026-13-01' is not a date"),
        (["testapp.Appeal", "--since", "June"], "--since: 'June' is not a date"),
        (["testapp.Appeal", "--since", "2026-06-01", "--until", "soon"], "--until: 'soon'"),
        (["testapp.Appeal", "--since", "2026-06-02", "--until", "2026-06-01"], "must come before"),
        (["testapp.Claim", "--since", "2026-06-01"], "keeps no transition log"),
    ],
)
def test_the_command_refuses_what_it_cannot_report(args, message):
    with pytest.raises(CommandError, match=message):
        report_output(*args)


# The admin's overview --------------------------------------------------------------------

OVERVIEW = "/admin/django_workflow/workflowoverview/"


def test_the_overview_shows_median_and_p90_time_in_step_over_the_last_30_days(admin_client, clock):
    clock.move_to(T - timedelta(days=40), tick=False)
    old = Proposal.objects.create()  # began before the window: left out
    clock.move_to(T - timedelta(days=39), tick=False)
    old.approve()
    clock.move_to(T, tick=False)
    quick, slow = Proposal.objects.create(), Proposal.objects.create()
    clock.move_to(T + timedelta(hours=2), tick=False)
    quick.approve()
    clock.move_to(T + timedelta(hours=6), tick=False)
    slow.approve()
    clock.move_to(T + timedelta(days=1), tick=False)

    page = admin_client.get(OVERVIEW)
    html = page.content.decode()
    assert "<th>Median in step (30 d)</th><th>p90 in step</th>" in html
    proposals = next(m for m in page.context["models"] if m["name"] == "Proposals")
    times = {step["row"].step: step["time"] for step in proposals["steps"]}
    # review: 2 h and 6 h; approved is terminal: counted, not timed.
    assert (times["review"]["median"], times["review"]["p90"]) == ("4 h", "5 h 36 min")
    assert times["approved"] == {
        "median": "-",
        "p90": "-",
        "hint": "2 records entered; a terminal step has no time in step",
    }
    assert times["escalated"] is None  # nobody entered it
    assert (
        'title="2 stays; in business hours: median 4 h, p90 5 h 36 min" '
        'data-label="Median in step">4 h</td>' in html
    )
    claims = next(m for m in page.context["models"] if m["name"] == "Claims")
    assert all(step["time"] is None for step in claims["steps"])  # Claim keeps no log


def test_rows_written_at_the_same_instant_follow_the_logs_order(clock):
    appeal = Appeal.objects.create()
    appeal.ask()  # the clock stands still: both rows at T
    clock.move_to(T + timedelta(hours=1), tick=False)
    appeal.answer()
    steps = by_step(time_in_step(Appeal, since=T, until=T + timedelta(hours=3)))
    assert (steps["review"].stays, steps["review"].open) == (2, 1)
    assert steps["review"].median_hours == pytest.approx((0 + 2) / 2)
    assert (steps["waiting"].stays, steps["waiting"].median_hours) == (1, pytest.approx(1))


def test_a_record_keyed_by_a_uuid_counts_in_its_own_zone(clock):
    clock.move_to(at(5, 12), tick=False)  # Friday
    voyage = Voyage.objects.create(tz=NEW_YORK)
    clock.move_to(at(7, 23), tick=False)  # Sunday: 59 h
    voyage.dock()
    sailing = by_step(time_in_step(Voyage, since=T, until=at(8, 0)))["sailing"]
    # New York's weekend from Sat 04:00 UTC: 43 h of the stay. Zagreb's, from
    # Fri 22:00 to Sun 22:00 UTC, would have left 11 h.
    assert sailing.median_business_hours == pytest.approx(59 - 43)


def test_a_step_the_workflow_no_longer_declares_keeps_its_figures(clock):
    """Stays in a step an earlier declaration had: one ended (logged), one still open."""
    left, staying = Appeal.objects.create(), Appeal.objects.create()
    TransitionLog.objects.create(
        record=left,
        from_state="triage",
        to_state="review",
        triggered_by=Trigger.MANUAL,
        transition_name="accept",
        from_state_entered_at=T,
        occurred_at=T + timedelta(hours=5),
    )
    Appeal.objects.filter(pk=staying.pk).update(
        state="triage", state_entered_at=T + timedelta(hours=1)
    )
    triage = by_step(time_in_step(Appeal, since=T, until=T + timedelta(hours=10)))["triage"]
    assert (triage.declared, triage.stays, triage.open) == (False, 2, 1)
    assert triage.median_hours == triage.median_business_hours == pytest.approx((5 + 9) / 2)


def test_a_timeout_that_fires_twice_in_one_stay_breaches_it_once(clock):
    proposal = Proposal.objects.create(respond_by=T + timedelta(hours=1))
    clock.move_to(T + timedelta(hours=2), tick=False)
    run_work(Proposal, "timeout:review.chase")
    proposal.refresh_from_db()
    proposal.respond_by = T + timedelta(hours=3)  # the anchor moved: a new round
    proposal.save()
    clock.move_to(T + timedelta(hours=4), tick=False)
    run_work(Proposal, "timeout:review.chase")
    assert TransitionLog.objects.filter(transition_name="chase").count() == 2
    review = by_step(time_in_step(Proposal, since=T, until=T + timedelta(hours=5)))["review"]
    chase = next(t for t in review.timeouts if t.name == "chase")
    assert (chase.fired, chase.breach_rate) == (1, 1.0)


def test_a_deleted_records_ended_stays_still_count_its_open_one_is_gone(week):
    week["a"].delete()  # a: two reviews and a wait ended, in decided since Tuesday
    steps = by_step(time_in_step(Appeal, since=T, until=END))
    assert (steps["review"].stays, steps["waiting"].stays) == (4, 1)
    assert (steps["decided"].stays, steps["decided"].open) == (2, 2)


def test_a_workflow_without_a_terminal_step(clock):
    shipment = Shipment.objects.create()
    clock.move_to(T + timedelta(hours=3), tick=False)
    shipment.ship()
    steps = by_step(time_in_step(Shipment, since=T, until=T + timedelta(hours=5)))
    assert (steps["packing"].stays, steps["packing"].median_hours) == (1, pytest.approx(3))
    assert (steps["shipped"].open, steps["shipped"].median_hours) == (1, pytest.approx(2))


def test_a_timeout_back_into_its_own_step_ends_one_stay_and_begins_the_next(clock):
    record = Recheck.objects.create()
    clock.move_to(T + timedelta(days=1), tick=False)
    run_work(Recheck, "timeout:checking.recheck")
    clock.move_to(T + timedelta(days=1, hours=6), tick=False)
    record.refresh_from_db()
    record.pass_check()
    checking = by_step(time_in_step(Recheck, since=T, until=T + timedelta(days=2)))["checking"]
    assert (checking.stays, checking.open) == (2, 0)
    assert (checking.median_hours, checking.p90_hours) == (pytest.approx(15), pytest.approx(22.2))
    assert [(t.fired, t.breach_rate) for t in checking.timeouts] == [(1, 0.5)]
