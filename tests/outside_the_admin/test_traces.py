"""OpenTelemetry spans: a span per step change and per unit of work the worker runs, the
worker's span continuing the trace of the transaction that queued it
(docs/traces-and-metrics.md)."""

import json
import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.test import override_settings
from django.utils import timezone
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from django_workflow.process import traces
from django_workflow.worker.schedulers.polling import poll
from django_workflow.worker.transport import run_automatic_steps
from tests.helpers import ROOT
from tests.processes import wait_for, worker
from tests.testapp.models import Batch, Order, Proposal

EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def provider():
    """The SDK's provider, once per process (OpenTelemetry allows one), into memory. The
    exporter stays open: pytest-django runs this module's transactional test after every
    other test, after this fixture's teardown and set-up again."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        sdk = TracerProvider()
        sdk.add_span_processor(SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(sdk)
    yield
    EXPORTER.clear()


@pytest.fixture
def spans():
    """The spans ended during the test, by name."""
    EXPORTER.clear()

    def ended(name=None):
        found = EXPORTER.get_finished_spans()
        return [span for span in found if name is None or span.name == name]

    yield ended
    EXPORTER.clear()


def one(found):
    assert len(found) == 1, [span.name for span in found]
    return found[0]


@pytest.mark.django_db
def test_a_manual_transition_is_a_span_naming_the_record_its_steps_and_trigger(spans, committed):
    order = Order.objects.create()
    with committed():
        order.place()
    place = one(spans("workflow.transition place"))
    assert dict(place.attributes) == {
        "workflow.model": "testapp.Order",
        "workflow.pk": str(order.pk),
        "workflow.from_step": "draft",
        "workflow.to_step": "charge",
        "workflow.transition": "place",
        "workflow.trigger": "manual",
    }


@pytest.mark.django_db
def test_the_worker_task_continues_the_trace_of_the_transition_that_queued_it(spans, committed):
    order = Order.objects.create()
    with committed():  # tasks run in this process (sync): the chain runs to its end
        order.place()
    place = one(spans("workflow.transition place"))
    first = spans("workflow.task run_automatic_steps")[0]
    assert first.parent.span_id == place.context.span_id
    assert [link.context.span_id for link in first.links] == [place.context.span_id]
    assert first.attributes["workflow.model"] == "testapp.Order"
    assert first.attributes["workflow.step"] == "charge"
    charge = one(spans("workflow.transition do_charge"))
    assert charge.parent.span_id == first.context.span_id
    assert charge.attributes["workflow.trigger"] == "automatic"
    assert charge.attributes["workflow.attempt"] == 1
    assert (charge.attributes["workflow.from_step"], charge.attributes["workflow.to_step"]) == (
        "charge",
        "reserve",
    )
    moves = [s for s in spans() if s.name.startswith("workflow.transition")]
    assert [s.attributes["workflow.to_step"] for s in moves] == [
        "charge",
        "reserve",
        "pack",
        "ship",
        "shipped",
    ]
    assert {s.context.trace_id for s in moves} == {place.context.trace_id}


@pytest.mark.django_db
def test_an_automatic_steps_action_runs_in_a_span_naming_its_record(spans, committed, monkeypatch):
    """What the action calls (an HTTP client's span) is a child of the record's span."""
    seen = []
    charge = Order.do_charge

    def do_charge(order):
        with trace.get_tracer("a client").start_as_current_span("POST /charges") as call:
            seen.append(call)
        return charge(order)

    monkeypatch.setattr(Order, "do_charge", do_charge)
    order = Order.objects.create()
    with committed():
        order.place()
    action = one(spans("workflow.action step:charge"))
    assert dict(action.attributes) == {
        "workflow.model": "testapp.Order",
        "workflow.pk": str(order.pk),
        "workflow.step": "charge",
        "workflow.work": "step:charge",
        "workflow.trigger": "automatic",
        "workflow.attempt": 1,
    }
    assert seen[0].parent.span_id == action.context.span_id
    task = spans("workflow.task run_automatic_steps")[0]
    assert action.parent.span_id == task.context.span_id


@pytest.mark.django_db
def test_a_deadlines_action_runs_in_a_span_naming_its_record_and_attempt(spans, committed):
    proposal = Proposal.objects.create()
    Proposal.objects.filter(pk=proposal.pk).update(
        state_entered_at=timezone.now() - timedelta(days=3)
    )
    with committed():
        poll("testapp.Proposal", [work.name for work in Proposal.workflow.works])
    action = one(spans("workflow.action timeout:review.reminder"))
    assert action.attributes["workflow.pk"] == str(proposal.pk)
    assert action.attributes["workflow.trigger"] == "timeout"
    assert action.attributes["workflow.attempt"] == 1
    run = one(spans("workflow.work timeout:review.reminder"))
    assert action.parent.span_id == run.context.span_id


@pytest.mark.django_db
def test_a_transition_rolled_back_leaves_no_span(spans, committed):
    order = Order.objects.create()
    with committed(), transaction.atomic():
        order.place()
        transaction.set_rollback(True)
    assert spans("workflow.transition place") == []
    assert spans("workflow.task run_automatic_steps") == []


@pytest.mark.django_db
def test_a_failed_attempt_is_an_error_span_and_its_error_path_a_transition(spans, committed):
    order = Order.objects.create(fail_at="charge")
    with committed():
        order.place()
    failed = one(spans("workflow.attempt step:charge"))
    assert failed.status.status_code == trace.StatusCode.ERROR
    assert failed.attributes["workflow.attempt"] == 1
    assert [event.name for event in failed.events] == ["exception"]
    assert failed.events[0].attributes["exception.message"] == "charge failed"
    error_path = one(spans("workflow.transition charge"))
    assert error_path.attributes["workflow.trigger"] == "error_path"
    assert error_path.attributes["workflow.to_step"] == "payment_failed"


@pytest.mark.django_db
def test_a_timeout_fired_by_a_poll_is_a_unit_of_work_holding_its_moves(spans, committed):
    Batch.objects.bulk_create([Batch(), Batch()])
    Batch.objects.update(state_entered_at=timezone.now() - timedelta(days=3))
    with committed():
        poll("testapp.Batch", [work.name for work in Batch.workflow.works])
    run = one(spans("workflow.work timeout:waiting.expire"))
    assert dict(run.attributes) == {
        "workflow.model": "testapp.Batch",
        "workflow.work": "timeout:waiting.expire",
        "workflow.step": "waiting",
        "workflow.kind": "timeout",
        "workflow.records": 2,
    }
    moves = spans("workflow.transition expire")
    assert len(moves) == 2
    assert {s.parent.span_id for s in moves} == {run.context.span_id}
    assert {s.attributes["workflow.trigger"] for s in moves} == {"timeout"}


@pytest.mark.django_db
def test_a_task_queued_without_a_trace_context_starts_a_trace_of_its_own(spans):
    """As queued by the release before, or by a process that does not trace."""
    order = Order.objects.create()
    Order.objects.filter(pk=order.pk).update(status="charge")
    run_automatic_steps("testapp.Order", "charge")
    task = one(spans("workflow.task run_automatic_steps"))
    assert (task.parent, list(task.links)) == (None, [])
    assert Order.objects.get(pk=order.pk).status == "reserve"


def test_a_task_carries_a_trace_context_only_when_a_span_is_current():
    """Queued with no span current (a poll's safety net), a task takes no keyword a worker
    of the release before would refuse."""
    assert traces.carried() == {}
    with trace.get_tracer(__name__).start_as_current_span("request") as request:
        carried = traces.carried()
    context = request.get_span_context()
    ids = f"{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"
    assert carried == {"trace_context": {"traceparent": f"00-{ids}"}}


# A real worker ------------------------------------------------------------------------


def written_spans(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_manual_transition_and_the_worker_automatic_step_form_one_linked_trace(tmp_path, spans):
    exported = tmp_path / "spans.jsonl"
    env = {"DJANGO_SETTINGS_MODULE": "tests.settings_traces", "WORKFLOW_TRACES_FILE": str(exported)}
    for_the_worker = override_settings(DJANGO_WORKFLOW={"TASK_OPTIONS": {"sync": False}})
    with worker(tmp_path, env=env), for_the_worker:
        order = Order.objects.create()
        order.place()
        wait_for(lambda: Order.objects.get(pk=order.pk).status == "shipped", 30, "the chain")
        ship = "workflow.transition do_ship"
        wait_for(lambda: any(s["name"] == ship for s in written_spans(exported)), 10, ship)
    place = one(spans("workflow.transition place"))
    trace_id = f"0x{place.context.trace_id:032x}"
    place_id = f"0x{place.context.span_id:016x}"
    theirs = written_spans(exported)
    task = next(
        s
        for s in theirs
        if s["attributes"].get("workflow.step") == "charge"
        and s["name"] == "workflow.task run_automatic_steps"
    )
    assert (task["context"]["trace_id"], task["parent_id"]) == (trace_id, place_id)
    assert [link["context"]["span_id"] for link in task["links"]] == [place_id]
    by_id = {s["context"]["span_id"]: s for s in theirs}
    charge = next(s for s in theirs if s["name"] == "workflow.transition do_charge")
    assert by_id[charge["parent_id"]] is task
    action = next(s for s in theirs if s["name"] == "workflow.action step:charge")
    assert by_id[action["parent_id"]] is task
    assert action["attributes"]["workflow.pk"] == str(order.pk)
    assert charge["attributes"]["workflow.trigger"] == "automatic"
    assert charge["attributes"]["workflow.attempt"] == 1
    moves = [s for s in theirs if s["name"].startswith("workflow.transition")]
    assert [m["attributes"]["workflow.to_step"] for m in moves] == [
        "reserve",
        "pack",
        "ship",
        "shipped",
    ]
    orders = [s for s in theirs if s["attributes"].get("workflow.model") == "testapp.Order"]
    assert {s["context"]["trace_id"] for s in orders} == {trace_id}


# Without OpenTelemetry ----------------------------------------------------------------

WITHOUT_OPENTELEMETRY = """
import sys

class NoOpenTelemetry:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ImportError(f"No module named {name!r}")

sys.meta_path.insert(0, NoOpenTelemetry())

import django
django.setup()

from django.db import transaction
from django.test import override_settings

from django_workflow import traces
from django_workflow.models import TransitionLog
from django_workflow.worker.transport import run_automatic_steps
from tests.testapp.models import Order

with override_settings(DJANGO_WORKFLOW={"TASK_OPTIONS": {"sync": True}}):
    with transaction.atomic():
        order = Order.objects.create()
        order.place()
chained = Order.objects.get(pk=order.pk)
logged = list(
    TransitionLog.objects.filter(object_id=str(order.pk)).values_list("to_state", "attempt")
)
# a task queued by a process that traces, and one queued by the release before
for extra in ({"trace_context": {"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}}, {}):
    stuck = Order.objects.create()
    Order.objects.filter(pk=stuck.pk).update(status="charge")
    run_automatic_steps("testapp.Order", "charge", **extra)
print(repr({
    "tracer": traces._tracer,
    "carried": traces.carried(),
    "imported": sorted(m for m in sys.modules if m.startswith("opentelemetry")),
    "visited": chained.visited,
    "status": chained.status,
    "logged": logged,
    "charged": Order.objects.filter(status="reserve").count(),
}))
"""


@pytest.mark.django_db(transaction=True)
def test_without_opentelemetry_nothing_is_imported_and_the_engine_runs_as_before():
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "WORKFLOW_DB_NAME": str(connection.settings_dict["NAME"]),  # the test database
    }
    connections.close_all()
    ran = subprocess.run(
        [sys.executable, "-c", WITHOUT_OPENTELEMETRY],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    seen = eval(ran.stdout.strip().splitlines()[-1])
    assert seen == {
        "tracer": None,
        "carried": {},
        "imported": [],
        "visited": "charge,reserve,pack,ship,",
        "status": "shipped",
        "logged": [
            ("draft", None),
            ("charge", None),
            ("reserve", 1),
            ("pack", 1),
            ("ship", 1),
            ("shipped", 1),
        ],
        "charged": 2,
    }
