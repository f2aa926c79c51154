"""An event as the webhook, ``deliver_many`` and ``workflow_deliver`` take it: a JSON
object with ``event``, ``key`` and ``id``, and perhaps ``data`` and ``seq``."""

from __future__ import annotations

from typing import Any

from django.utils.text import get_text_list

from ..errors import InvalidDelivery

FIELDS = ("event", "key", "id", "data", "seq")


def deliver_one(event: Any, deliver: Any) -> Any:
    """``deliver`` one event read from JSON: an object with ``event``, ``key`` and ``id``,
    and perhaps ``data`` and ``seq``; ``InvalidDelivery`` for anything else."""
    if not isinstance(event, dict):
        raise InvalidDelivery("An event is a JSON object.")
    missing = [name for name in ("event", "key", "id") if name not in event]
    unknown = sorted(set(event) - set(FIELDS))
    if missing or unknown:
        raise InvalidDelivery(
            f"An event has the members {', '.join(FIELDS)} (data and seq optional); "
            f"missing: {get_text_list(missing, 'and') or 'none'}, "
            f"unknown: {get_text_list(unknown, 'and') or 'none'}."
        )
    return deliver(
        event["event"], event["key"], id=event["id"], data=event.get("data"), seq=event.get("seq")
    )
