"""The instants of the upgrade scenario and a JSON snapshot of every record's workflow state.

Only Django's ORM and the package's models, looked up by name, so the same code reads
the database under the release upgraded from and under the checkout.
"""

import json
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from django.apps import apps
from django.contrib.contenttypes.models import ContentType

#: When the scenario starts (a Monday) and the upgrade's "now": the old release's last
#: instant, and the new one's first.
T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=3)

#: Each scratch model and the field that names its records in messages.
KEY_FIELDS = {
    "Reminder": "name",
    "Digest": "name",
    "Job": "name",
    "Parcel": "name",
    "Document": "title",
    "Ticket": "subject",
    "Case": "title",
    "Payment": "psp_ref",
    "Article": "title",
}


def package_model(name):
    return apps.get_model("django_workflow", name)


def record(model_name, key):
    """The scratch record ``Model:key`` (``Reminder``, ``"early"``)."""
    model = apps.get_model("scratch", model_name)
    return model.objects.get(**{KEY_FIELDS[model_name]: key})


def plain(value):
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


def _rows(model_name, content_type, pk, wanted):
    model = package_model(model_name)
    rows = model.objects.filter(content_type=content_type, object_id=str(pk)).order_by("pk")
    return [{name: plain(getattr(row, name)) for name in wanted} for row in rows]


def log_rows(obj):
    content_type = ContentType.objects.get_for_model(type(obj))
    return _rows(
        "TransitionLog",
        content_type,
        obj.pk,
        ["triggered_by", "transition_name", "from_state", "to_state", "occurred_at", "attempt"],
    )


def snapshot():
    """Every scratch record's state: its columns (the step, the fired columns, next_due_at,
    the SLA and holder columns among them), its log, owed effects, attempts and votes;
    the event deliveries, and the tasks waiting in django-q2's ORM broker."""
    records = {}
    for model_name, key_field in KEY_FIELDS.items():
        model = apps.get_model("scratch", model_name)
        content_type = ContentType.objects.get_for_model(model)
        for obj in model.objects.order_by("pk"):
            fields = {
                f.attname: plain(getattr(obj, f.attname)) for f in model._meta.concrete_fields
            }
            log = log_rows(obj)
            records[f"{model_name}:{getattr(obj, key_field)}"] = {
                "pk": obj.pk,
                "step": obj.current_step,
                "fields": fields,
                "log_rows": len(log),
                "log": log,
                "pending_effects": _rows(
                    "PendingEffect",
                    content_type,
                    obj.pk,
                    ["step", "entered_at", "due_at", "attempts", "last_error", "interruptions"],
                ),
                "attempts": _rows(
                    "WorkAttempt",
                    content_type,
                    obj.pk,
                    ["work", "round_key", "attempts", "retry_at", "halted", "interruptions"],
                ),
                "votes": _rows(
                    "WorkflowVote",
                    content_type,
                    obj.pk,
                    ["transition", "step", "entered_at", "actor_key", "actor_repr"],
                ),
            }
    deliveries = [
        {
            name: plain(getattr(row, name))
            for name in ["event", "event_id", "key", "seq", "outcome", "object_id", "delivered_at"]
        }
        for row in package_model("EventDelivery").objects.order_by("pk")
    ]
    queued = apps.get_model("django_q", "OrmQ").objects.count()
    return {"records": records, "deliveries": deliveries, "queued_tasks": queued}


def summary(state):
    """One line per record: what a person checking the upgrade reads first."""
    lines = []
    for name, rec in state["records"].items():
        fields = rec["fields"]
        marks = {
            column: value
            for column, value in fields.items()
            if value not in (None, 0)
            and (
                column.endswith(("_fired_at", "_fired_count"))
                or column.startswith("sla_")
                or column in ("assignee_id",)
            )
        }
        parts = [
            f"{name:<22} step={rec['step']:<11}",
            f"next_due={fields.get('next_due_at')}",
            f"log={rec['log_rows']}",
        ]
        if marks:
            parts.append("marks=" + json.dumps(marks))
        if rec["pending_effects"]:
            owed = [f"{e['step']}(attempts {e['attempts']})" for e in rec["pending_effects"]]
            parts.append("owed=" + ",".join(owed))
        if rec["attempts"]:
            spent = [
                f"{a['work']}:{a['attempts']}{' halted' if a['halted'] else ''}"
                f"{' retry ' + a['retry_at'] if a['retry_at'] and not a['halted'] else ''}"
                for a in rec["attempts"]
            ]
            parts.append("attempts=" + ",".join(spent))
        if rec["votes"]:
            parts.append("votes=" + ",".join(v["actor_repr"] for v in rec["votes"]))
        lines.append("  " + " ".join(parts))
    for delivery in state["deliveries"]:
        lines.append(
            f"  delivery {delivery['event']} {delivery['event_id']} for {delivery['key']}: "
            f"{delivery['outcome']}"
        )
    lines.append(f"  tasks waiting in the ORM broker: {state['queued_tasks']}")
    return "\n".join(lines)


def differences(before, after, path="state"):
    """Where ``after`` lost or changed what ``before`` held (keys only in ``after`` are
    what the new release adds, and are not differences)."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key, value in before.items():
            if key not in after:
                found.append(f"{path}.{key}: gone (was {json.dumps(value)})")
            else:
                found.extend(differences(value, after[key], f"{path}.{key}"))
        return found
    if before != after:
        return [f"{path}: {json.dumps(before)} -> {json.dumps(after)}"]
    return []
