"""Reading the effects entries owe (``PendingEffect`` rows): what the admin and the
overview show. Writing them is the engine's (``engine.owed_effects``, ``engine.effects``).
"""

from __future__ import annotations

from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import router

from ..models import PendingEffect


def pending(model: Any, db: str) -> Any:
    """The effects owed to records of ``model``."""
    content_type = ContentType.objects.db_manager(db).get_for_model(model)
    return PendingEffect.objects.using(db).filter(content_type=content_type)


def halted(record: Any) -> Any:
    """The effects ``record`` owes whose attempts ran out, oldest entry first."""
    db = record._state.db or router.db_for_read(type(record), instance=record)
    owed = pending(type(record), db).filter(object_id=str(record.pk), due_at__isnull=True)
    return owed.order_by("entered_at", "id")
