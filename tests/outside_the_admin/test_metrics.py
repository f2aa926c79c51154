"""``django_workflow.metrics.MetricsView`` (docs/traces-and-metrics.md#metrics): gauges equal to the
Workflows overview and to counts taken here from the records, counters of events and
attempts, the lateness histogram, the gauges' cache, who may read it, and what a
scrape shows of a worker process."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from prometheus_client import Counter
from prometheus_client.parser import text_string_to_metric_families

from django_workflow import StaleRecord
from django_workflow.engine import run_step
from django_workflow.model.columns import NEXT_DUE_AT
from django_workflow.model.registry import workflow_models
from django_workflow.model.triggers import Event, Trigger
from django_workflow.models import WorkAttempt
from django_workflow.process import meters
from django_workflow.report import gauges
from django_workflow.testing import run_due_work
from django_workflow.web import prometheus
from tests.admin.test_admin import OVERVIEW, overview_rows
from tests.conftest import workflow_database
from tests.processes import run_once
from tests.testapp.models import Batch, Decision, Job, Proposal, Quiet, Sync

pytestmark = pytest.mark.django_db

START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
TOKEN = "scrape-me"


@pytest.fixture(autouse=True)
def fresh_figures(settings):
    """Gauges read on every scrape (the cache has its own test), no gauges left over."""
    settings.DJANGO_WORKFLOW = {
        "METRICS_CACHE": 0,
        "METRICS_TERMINAL_CACHE": 0,
        "METRICS_TOKEN": TOKEN,
    }
    gauges.figures.clear()
    yield
    gauges.figures.clear()


def scrape(rf, **headers):
    request = rf.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}", **headers})
    return prometheus.MetricsView.as_view()(request)


def samples(rf):
    """Every sample of a scrape: ``{(name, ((label, value), ...)): value}``."""
    response = scrape(rf)
    assert response.status_code == 200
    found = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def series(found, name, **labels):
    """The value of one sample (0 when absent: a counter not yet counted)."""
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def named(found, name):
    """``{labels: value}`` of every sample called ``name``."""
    return {dict(labels).get("model", "") + "|" + dict(labels).get("step", ""): value
            for (sample, labels), value in found.items() if sample == name}  # fmt: skip


# Gauges ---------------------------------------------------------------------------------


def make_records(time_machine):
    """Overdue proposals and a fresh one, a halted sync and a pushed one, a decision in a
    step no longer declared."""
    time_machine.move_to(START, tick=False)
    Proposal.objects.create()
    Proposal.objects.create()
    halted = Sync.objects.create(broken=True)
    run_step(Sync, halted.pk, "pushing")
    time_machine.move_to(START + timedelta(seconds=10), tick=False)
    run_step(Sync, halted.pk, "pushing")
    pushed = Sync.objects.create()
    run_step(Sync, pushed.pk, "pushing")
    archived = Decision.objects.create()
    Decision.objects.filter(pk=archived.pk).update(state="archived")
    Decision.objects.create()
    time_machine.move_to(START + timedelta(days=3), tick=False)
    Proposal.objects.create()  # entered now: nothing due yet


def counted_here(now):
    """The gauges, counted from the records themselves: per model and step its records
    and those whose stored due instant has passed; per model the records halted in their
    automatic step and the age of its oldest passed due instant."""
    records, overdue, halted, lag = {}, {}, {}, {}
    for model in workflow_models():
        label, state = model._meta.label, model.workflow.state_attribute
        rows = list(model._base_manager.all())
        declared = [name for name, _label in model.workflow.choices()]  # every version's
        steps = [*declared, *sorted({getattr(r, state) for r in rows})]
        for step in dict.fromkeys(steps):
            in_step = [r for r in rows if getattr(r, state) == step]
            due = [getattr(r, NEXT_DUE_AT, None) for r in in_step]
            records[f"{label}|{step}"] = len(in_step)
            overdue[f"{label}|{step}"] = sum(1 for at in due if at is not None and at <= now)
        stuck = WorkAttempt.objects.filter(halted=True, work__startswith="step:")
        stuck = {(a.object_id, a.work) for a in stuck if a.content_type.model_class() is model}
        halted[f"{label}|"] = sum(
            1 for r in rows if (str(r.pk), f"step:{getattr(r, state)}") in stuck
        )
        passed = [getattr(r, NEXT_DUE_AT, None) for r in rows]
        passed = [at for at in passed if at is not None and at <= now]
        lag[f"{label}|"] = (now - min(passed)).total_seconds() if passed else 0.0
    return records, overdue, halted, lag


def test_every_gauge_equals_the_counts_taken_from_the_records(rf, time_machine):
    make_records(time_machine)
    now = START + timedelta(days=3)
    found = samples(rf)
    records, overdue, halted, lag = counted_here(now)
    assert named(found, "workflow_records") == records
    assert named(found, "workflow_overdue") == overdue
    assert named(found, "workflow_halted") == halted
    assert named(found, "workflow_due_lag_seconds") == lag
    # the figures are not all zero: the records above show in them
    assert records["testapp.Decision|archived"] == 1
    assert overdue["testapp.Proposal|review"] == 2
    assert halted["testapp.Sync|"] == 1
    assert lag["testapp.Proposal|"] == timedelta(days=1).total_seconds()  # the 2d reminder


def test_every_gauge_equals_the_overview_figures(rf, admin_client, time_machine):
    make_records(time_machine)
    found = samples(rf)
    page = admin_client.get(OVERVIEW)
    shown = 0
    for model in workflow_models():
        name = str(model._meta.verbose_name_plural).capitalize()
        if not any(m["name"] == name for m in page.context["models"]):
            continue
        label = model._meta.label
        rows = overview_rows(page, name)
        for step, row in rows.items():
            figures = row["row"]
            assert series(found, "workflow_records", model=label, step=step) == figures.records
            assert series(found, "workflow_overdue", model=label, step=step) == figures.overdue
        halted = sum(row["row"].halted for row in rows.values())
        assert series(found, "workflow_halted", model=label) == halted
        shown += 1
    assert shown >= 3  # Proposals, Syncs and Decisions at least


def test_a_scrape_sends_three_queries_whatever_the_number_of_models_and_steps(rf, time_machine):
    """The terminal steps' counts (``METRICS_TERMINAL_CACHE`` is 0 here), the attempts and
    effects that ran out, then every model's counts: one statement each for the database."""
    make_records(time_machine)
    samples(rf)  # the content types are read once, then kept by Django
    models = workflow_models()
    assert len(models) >= 10 and sum(len(m.workflow.steps) for m in models) >= 30
    with CaptureQueriesContext(connection) as scraped:
        found = samples(rf)
    assert len(scraped) == 3, [query["sql"] for query in scraped]
    assert named(found, "workflow_halted")["testapp.Sync|"] == 1  # read, not skipped
    assert named(found, "workflow_overdue")["testapp.Proposal|review"] == 2


def test_the_statement_kept_between_scrapes_reads_at_each_scrape_s_instant(rf, time_machine):
    gauges.statements.clear()
    time_machine.move_to(START, tick=False)
    Proposal.objects.create()
    assert series(samples(rf), "workflow_overdue", model="testapp.Proposal", step="review") == 0
    assert gauges.statements  # compiled once, then kept
    time_machine.move_to(START + timedelta(days=3), tick=False)  # the 2d reminder came due
    found = samples(rf)
    assert series(found, "workflow_overdue", model="testapp.Proposal", step="review") == 1
    lag = series(found, "workflow_due_lag_seconds", model="testapp.Proposal")
    assert lag == timedelta(days=1).total_seconds()


def test_a_model_without_deadlines_has_no_overdue_and_no_lag(rf):
    Quiet.objects.create()
    found = samples(rf)
    assert series(found, "workflow_due_lag_seconds", model="testapp.Quiet") == 0.0
    overdue = [
        v for k, v in named(found, "workflow_overdue").items() if k.startswith("testapp.Quiet|")
    ]
    assert overdue and set(overdue) == {0.0}


# The cache ------------------------------------------------------------------------------


def test_gauges_are_kept_for_metrics_cache_seconds_then_read_again(rf, settings, time_machine):
    settings.DJANGO_WORKFLOW = {"METRICS_CACHE": 5, "METRICS_TOKEN": TOKEN}
    time_machine.move_to(START, tick=False)
    Decision.objects.create()
    assert series(samples(rf), "workflow_records", model="testapp.Decision", step="pending") == 1
    Decision.objects.create()
    time_machine.move_to(START + timedelta(seconds=4.9), tick=False)
    assert series(samples(rf), "workflow_records", model="testapp.Decision", step="pending") == 1
    time_machine.move_to(START + timedelta(seconds=5), tick=False)
    assert series(samples(rf), "workflow_records", model="testapp.Decision", step="pending") == 2


def test_records_in_terminal_steps_are_kept_for_metrics_terminal_cache_seconds(
    rf, settings, time_machine
):
    cache = {"METRICS_CACHE": 0, "METRICS_TERMINAL_CACHE": 60}
    settings.DJANGO_WORKFLOW = {**cache, "METRICS_TOKEN": TOKEN}
    time_machine.move_to(START, tick=False)
    Proposal.objects.create()
    samples(rf)
    Proposal.objects.create().approve()  # one more in review, then in the terminal step
    Proposal.objects.create()
    time_machine.move_to(START + timedelta(seconds=59), tick=False)
    found = samples(rf)
    assert series(found, "workflow_records", model="testapp.Proposal", step="review") == 2
    assert series(found, "workflow_records", model="testapp.Proposal", step="approved") == 0
    time_machine.move_to(START + timedelta(seconds=60), tick=False)
    found = samples(rf)
    assert series(found, "workflow_records", model="testapp.Proposal", step="approved") == 1


@pytest.mark.parametrize("name", ["METRICS_CACHE", "METRICS_TERMINAL_CACHE"])
@pytest.mark.parametrize("value", [-1, "5", None, True])
def test_a_metrics_cache_that_is_no_number_of_seconds_is_refused(rf, settings, name, value):
    settings.DJANGO_WORKFLOW = {name: value, "METRICS_TOKEN": TOKEN}
    with pytest.raises(ImproperlyConfigured, match=name):
        scrape(rf)


# Counters and the histogram -------------------------------------------------------------


def transitions(found, model, name, trigger):
    return series(
        found, "workflow_transitions_total", model=model, transition=name, trigger=trigger
    )


def test_each_committed_event_counts_once_and_a_refused_one_not_at_all(rf, committed):
    before = samples(rf)
    with committed():
        decision = Decision.objects.create()
        Quiet.objects.create()  # a workflow keeping no log counts all the same
    stale = Decision.objects.get(pk=decision.pk)
    with committed():
        decision.approve()
    with pytest.raises(StaleRecord), committed():
        stale.reject()
    with committed(), transaction.atomic():
        Decision.objects.create().hold()
        transaction.set_rollback(True)  # rolled back: never committed, never counted
    after = samples(rf)

    def added(model, name, trigger):
        return transitions(after, model, name, trigger) - transitions(before, model, name, trigger)

    assert added("testapp.Decision", "", "initial") == 1
    assert added("testapp.Quiet", "", "initial") == 1
    assert added("testapp.Decision", "approve", "manual") == 1
    assert added("testapp.Decision", "reject", "manual") == 0
    assert added("testapp.Decision", "hold", "manual") == 0


def test_a_count_that_fails_never_fails_the_move(committed, monkeypatch, caplog):
    unfit = Counter("workflow_unfit", "One label where three come.", ["model"], registry=None)
    monkeypatch.setattr(meters, "TRANSITIONS", unfit, raising=True)
    decision = Decision.objects.create()
    with committed():
        decision.hold()
    assert Decision.objects.get(pk=decision.pk).state == "held"
    assert "Incorrect label count" in caplog.text


def count_holds():
    """A "hold" of ``Decision`` counted, as the engine counts a move, in this transaction."""
    meters.moved(Decision, Event("pending", "held", "hold", Trigger.MANUAL), workflow_database())


def holds_counted(rf, block):
    """How many holds ``block()`` added to the transitions counter."""
    before = samples(rf)
    block()
    after = samples(rf)
    return transitions(after, "testapp.Decision", "hold", "manual") - transitions(
        before, "testapp.Decision", "hold", "manual"
    )


def test_a_count_made_in_a_rolled_back_savepoint_is_dropped_and_those_around_it_kept(rf, committed):
    def block():
        with committed():
            count_holds()
            with pytest.raises(RuntimeError), transaction.atomic(using=workflow_database()):
                count_holds()  # dropped with its savepoint
                raise RuntimeError("rolled back")
            count_holds()

    assert holds_counted(rf, block) == 2


def test_counts_in_two_capture_blocks_count_once_each(rf, committed):
    def block():
        count_holds()  # before the blocks: never committed here
        for _ in range(2):
            with committed():
                count_holds()

    assert holds_counted(rf, block) == 2


def test_a_count_that_fails_leaves_the_firing_s_other_counts(
    rf, committed, monkeypatch, caplog, time_machine
):
    unfit = Counter("workflow_unfit", "One label where three come.", ["model"], registry=None)
    time_machine.move_to(START, tick=False)
    Batch.objects.create()
    before = samples(rf)
    monkeypatch.setattr(meters, "TRANSITIONS", unfit, raising=True)
    time_machine.move_to(START + timedelta(days=1, seconds=30), tick=False)  # ping + 30 s
    with committed():
        run_due_work()
    after = samples(rf)
    ping = {"model": "testapp.Batch", "work": "timeout:waiting.ping", "outcome": "succeeded"}
    attempts = "workflow_work_attempts_total"
    assert series(after, attempts, **ping) - series(before, attempts, **ping) == 1
    late = "workflow_firing_lateness_seconds_sum"
    assert (
        series(after, late, model="testapp.Batch") - series(before, late, model="testapp.Batch")
        == 30
    )
    assert "Incorrect label count" in caplog.text


def test_fired_deadlines_count_their_attempts_events_and_lateness(rf, committed, time_machine):
    time_machine.move_to(START, tick=False)
    Proposal.objects.create()
    Proposal.objects.create()
    before = samples(rf)
    time_machine.move_to(START + timedelta(days=2, seconds=90), tick=False)  # reminder + 90 s
    with committed():
        run_due_work()
    after = samples(rf)

    def added(name, **labels):
        return series(after, name, **labels) - series(before, name, **labels)

    proposal = "testapp.Proposal"
    work = "timeout:review.reminder"
    assert (
        added("workflow_work_attempts_total", model=proposal, work=work, outcome="succeeded") == 2
    )
    assert (
        transitions(after, proposal, "reminder", "timeout")
        - transitions(before, proposal, "reminder", "timeout")
        == 2
    )
    # the reminder and the nag (due at 2 d too) fired 90 s late, twice each
    late = "workflow_firing_lateness_seconds"
    assert added(f"{late}_count", model=proposal) == 4
    assert added(f"{late}_sum", model=proposal) == 4 * 90
    assert added(f"{late}_bucket", model=proposal, le="60.0") == 0
    assert added(f"{late}_bucket", model=proposal, le="120.0") == 4


def test_an_action_and_a_transition_timeout_count_their_firings_and_lateness(
    rf, committed, time_machine
):
    time_machine.move_to(START, tick=False)
    Batch.objects.create()
    Batch.objects.create()
    before = samples(rf)
    time_machine.move_to(START + timedelta(days=1, seconds=30), tick=False)  # ping + 30 s
    with committed():
        run_due_work()
    pinged = samples(rf)
    time_machine.move_to(START + timedelta(days=2, seconds=45), tick=False)  # expire + 45 s
    with committed():
        run_due_work()
    after = samples(rf)

    def added(found, earlier, name, **labels):
        return series(found, name, **labels) - series(earlier, name, **labels)

    model, late = "testapp.Batch", "workflow_firing_lateness_seconds"
    ping = {"model": model, "work": "timeout:waiting.ping", "outcome": "succeeded"}
    assert added(pinged, before, "workflow_work_attempts_total", **ping) == 2
    assert (
        transitions(pinged, model, "ping", "timeout")
        - transitions(before, model, "ping", "timeout")
        == 2
    )
    assert added(pinged, before, f"{late}_sum", model=model) == 2 * 30
    assert (
        transitions(after, model, "expire", "timeout")
        - transitions(pinged, model, "expire", "timeout")
        == 2
    )
    assert added(after, pinged, f"{late}_count", model=model) == 2
    assert added(after, pinged, f"{late}_sum", model=model) == 2 * 45
    # a transition timeout runs no action: it is no attempt
    expire = {"model": model, "work": "timeout:waiting.expire", "outcome": "succeeded"}
    assert added(after, pinged, "workflow_work_attempts_total", **expire) == 0


def test_failed_attempts_count_as_failed_then_halted_or_error_path(
    rf, settings, committed, time_machine, tmp_path
):
    settings.DJANGO_WORKFLOW = {**settings.DJANGO_WORKFLOW, "ENQUEUE_AUTOMATIC_STEPS": False}
    time_machine.move_to(START, tick=False)
    before = samples(rf)
    sync = Sync.objects.create(broken=True)
    pushed = Sync.objects.create()
    job = Job.objects.create(trace=str(tmp_path / "missing" / "trace"))  # work() cannot write
    with committed():
        run_step(Sync, sync.pk, "pushing")
        run_step(Sync, pushed.pk, "pushing")
        run_step(Job, job.pk, "running")
    time_machine.move_to(START + timedelta(seconds=10), tick=False)
    with committed():
        run_step(Sync, sync.pk, "pushing")
    after = samples(rf)

    def added(model, work, outcome):
        labels = {"model": model, "work": work, "outcome": outcome}
        name = "workflow_work_attempts_total"
        return series(after, name, **labels) - series(before, name, **labels)

    assert added("testapp.Sync", "step:pushing", "failed") == 1
    assert added("testapp.Sync", "step:pushing", "halted") == 1
    assert added("testapp.Sync", "step:pushing", "succeeded") == 1
    assert added("testapp.Job", "step:running", "error_path") == 1
    assert Job.objects.get(pk=job.pk).state == "failed"


# What a scrape shows of the worker ------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_worker_s_counts_show_in_the_web_scrape_only_through_the_multiprocess_folder(
    rf, monkeypatch, tmp_path
):
    proposal = Proposal.objects.create()
    old = datetime.now(UTC) - timedelta(days=2, minutes=1)
    Proposal.objects.filter(pk=proposal.pk).update(state_entered_at=old)  # its reminder is due
    work = {"model": "testapp.Proposal", "work": "timeout:review.reminder", "outcome": "succeeded"}
    before = series(samples(rf), "workflow_work_attempts_total", **work)
    folder = tmp_path / "prometheus"
    folder.mkdir()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(folder))
    result = run_once()
    assert result.returncode == 0, result.stderr
    assert "done: 2 fired" in result.stdout  # the reminder and the nag
    assert "testapp.Proposal:timeout:review.reminder: 1 fired" in result.stdout

    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")
    alone = samples(rf)  # this process's own counts: it fired nothing
    assert series(alone, "workflow_work_attempts_total", **work) == before

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(folder))
    prometheus.registry.cache_clear()
    try:
        shared = samples(rf)
    finally:
        prometheus.registry.cache_clear()
    assert series(shared, "workflow_work_attempts_total", **work) == 1
    assert series(shared, "workflow_firing_lateness_seconds_count", model="testapp.Proposal") >= 1
    # the gauges are read from the database, whichever the mode
    assert series(shared, "workflow_records", model="testapp.Proposal", step="review") == 1


# Who may read it ------------------------------------------------------------------------


def test_metrics_are_refused_to_anonymous_and_non_staff_users_and_a_wrong_token(rf, settings):
    anonymous = rf.get("/metrics")
    assert prometheus.MetricsView.as_view()(anonymous).status_code == 403
    wrong = rf.get("/metrics", headers={"Authorization": "Bearer guess"})
    assert prometheus.MetricsView.as_view()(wrong).status_code == 403
    member = rf.get("/metrics")
    member.user = User.objects.create_user("member")
    assert prometheus.MetricsView.as_view()(member).status_code == 403
    settings.DJANGO_WORKFLOW = {}  # no token set: no token opens it
    empty = rf.get("/metrics", headers={"Authorization": "Bearer "})
    assert prometheus.MetricsView.as_view()(empty).status_code == 403


def test_metrics_are_served_to_staff_and_to_the_token(rf, admin_user):
    staff = rf.get("/metrics")
    staff.user = admin_user
    response = prometheus.MetricsView.as_view()(staff)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    assert "# TYPE workflow_records gauge" in response.content.decode()
    assert scrape(rf).status_code == 200
    openmetrics = scrape(rf, Accept="application/openmetrics-text; version=1.0.0")
    assert openmetrics["Content-Type"].startswith("application/openmetrics-text")
