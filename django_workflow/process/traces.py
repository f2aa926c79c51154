"""OpenTelemetry spans: one per step change, one per unit of work the worker runs.

Used only when ``opentelemetry-api`` is installed (``dj-workflow[otel]``); whether
it is, is read once, when this module is imported. Without it every hook here
returns at its first line, and a task's carried context is taken and dropped.
The spans go to whatever tracer provider the project configures (none: the API's
no-op); this module never configures one.

- ``moved``: a span per step change, from the write to the commit (a change rolled
  back leaves none). ``within`` runs what the change queues after commit inside it.
- ``carried``: the keyword arguments a queued task takes the current trace context in.
- ``task``: the worker's span of a queued task, continuing the carried context (its
  parent) and linked to it.
- ``unit_of_work``: the worker's span of a work it fires (a deadline, a poll's run).
- ``action``: a span per record whose action runs (an automatic step, a deadline, an
  ``on_enter``), current while the action runs: what the action calls is its child.
- ``failed``: a span per failed attempt, its error recorded.

A low module: it imports nothing of the package.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable
from typing import Any

from django.db import transaction

try:
    from opentelemetry import context as otel_context
    from opentelemetry import propagate, trace
except ImportError:  # the otel extra is not installed: every hook returns at once
    trace = None

#: The task keyword a queued task's trace context travels in (W3C ``traceparent``).
CONTEXT_KEYWORD = "trace_context"

_tracer = trace.get_tracer("django_workflow") if trace is not None else None


# Step changes ---------------------------------------------------------------------------


def moved(model: Any, pk: Any, event: Any, db: str) -> Any:
    """A span for the step change ``event`` of record ``pk``, ended when its transaction
    commits; the span, for ``within``, or ``None`` when nothing records it."""
    if _tracer is None:
        return None
    name = f"workflow.transition {event.name or event.to_state}"
    span = _tracer.start_span(name, attributes=_move_attributes(model, pk, event))
    if not span.is_recording():
        return None
    transaction.on_commit(span.end, using=db)
    return span


def _move_attributes(model: Any, pk: Any, event: Any) -> dict[str, Any]:
    attributes = {
        "workflow.model": model._meta.label,
        "workflow.pk": str(pk),
        "workflow.from_step": event.from_state or "",
        "workflow.to_step": event.to_state,
        "workflow.transition": event.name or "",
        "workflow.trigger": str(event.trigger),
    }
    if event.attempt is not None:
        attributes["workflow.attempt"] = event.attempt
    return attributes


def within(span: Any, function: Callable[[], Any]) -> Callable[[], Any]:
    """``function`` run with ``span`` current (``moved``'s span, or ``None``: as it is), so
    the work it queues after commit carries the step change's context."""
    if span is None:
        return function
    context = trace.set_span_in_context(span)

    def in_span() -> Any:
        token = otel_context.attach(context)
        try:
            return function()
        finally:
            otel_context.detach(token)

    return in_span


#: What ``action`` returns without a tracer: enters and leaves at no cost.
_NO_SPAN = contextlib.nullcontext()


def action(record: Any, work: Any, trigger: str, attempt: int) -> Any:
    """The span of ``record``'s action of ``work`` (a context manager), current while it
    runs; an error the action raises is recorded on it."""
    if _tracer is None:
        return _NO_SPAN
    attributes = {
        "workflow.model": type(record)._meta.label,
        "workflow.pk": str(record.pk),
        "workflow.step": work.step,
        "workflow.work": work.name,
        "workflow.trigger": str(trigger),
        "workflow.attempt": attempt,
    }
    return _tracer.start_as_current_span(f"workflow.action {work.name}", attributes=attributes)


def failed(record: Any, work: Any, attempt: int, error: BaseException) -> None:
    """A span for a failed attempt of ``work`` (no step change: the record stays)."""
    if _tracer is None:
        return
    span = _tracer.start_span(f"workflow.attempt {work.name}")
    if span.is_recording():
        span.set_attributes(
            {
                "workflow.model": type(record)._meta.label,
                "workflow.pk": str(record.pk),
                "workflow.step": work.step,
                "workflow.work": work.name,
                "workflow.attempt": attempt,
            }
        )
        span.record_exception(error)
        span.set_status(trace.StatusCode.ERROR, f"{type(error).__name__}: {error}")
    span.end()


# Queued tasks ---------------------------------------------------------------------------


def carried() -> dict[str, Any]:
    """The keywords that carry the current trace context with a task (none without one:
    a worker of the release before knows no such keyword)."""
    if _tracer is None or not trace.get_current_span().get_span_context().is_valid:
        return {}
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return {CONTEXT_KEYWORD: carrier}


def task(function: Callable[..., Any]) -> Callable[..., Any]:
    """The worker's span of a queued task: a child of the context the task carries (the
    transaction that queued it), with a link to it. Takes the ``trace_context`` keyword,
    which tasks queued without tracing do not have."""
    name = f"workflow.task {function.__name__}"
    signature = inspect.signature(function)

    @functools.wraps(function)
    def traced(*args: Any, trace_context: dict[str, str] | None = None, **kwargs: Any) -> Any:
        if _tracer is None:
            return function(*args, **kwargs)
        parent = propagate.extract(trace_context) if trace_context else None
        origin = trace.get_current_span(parent).get_span_context() if parent else None
        links = [trace.Link(origin)] if origin is not None and origin.is_valid else None
        attributes = _named_attributes(signature, args, kwargs)
        with _tracer.start_as_current_span(
            name, context=parent, links=links, kind=trace.SpanKind.CONSUMER, attributes=attributes
        ):
            return function(*args, **kwargs)

    return traced


def unit_of_work(function: Callable[..., Any]) -> Callable[..., Any]:
    """The worker's span of running a work (``model`` and ``work`` among the arguments)."""
    signature = inspect.signature(function)
    if _tracer is None:
        return function

    @functools.wraps(function)
    def traced(*args: Any, **kwargs: Any) -> Any:
        attributes = _named_attributes(signature, args, kwargs)
        name = f"workflow.work {attributes.get('workflow.work', function.__name__)}"
        with _tracer.start_as_current_span(name, attributes=attributes):
            return function(*args, **kwargs)

    return traced


def _named_attributes(signature: inspect.Signature, args: Any, kwargs: Any) -> dict[str, Any]:
    """The span attributes a task's or a run's arguments name, by the argument's name."""
    bound = signature.bind_partial(*args, **kwargs).arguments
    attributes: dict[str, Any] = {}
    if "model_label" in bound:
        attributes["workflow.model"] = bound["model_label"]
    holder = bound.get("self", bound.get("picking"))
    model = bound["model"] if "model" in bound else getattr(holder, "model", None)
    if model is not None:  # a run's model, or the ``Picking`` of one
        attributes["workflow.model"] = model._meta.label
    if "pk" in bound:
        attributes["workflow.pk"] = str(bound["pk"])
    if "step" in bound:
        attributes["workflow.step"] = bound["step"]
    if "work" in bound:
        work = bound["work"]
        attributes["workflow.work"] = work.name
        attributes["workflow.step"] = work.step
        attributes["workflow.kind"] = str(work.kind)
    if "records" in bound:
        attributes["workflow.records"] = len(bound["records"])
    if "effect" in bound:
        attributes["workflow.effect"] = bound["effect"]
    return attributes
