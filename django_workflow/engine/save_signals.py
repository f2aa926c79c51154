"""The ``pre_save``/``post_save`` signals a step change sends, as ``save()`` would, when the
workflow keeps ``save_signals`` and someone listens (docs: transition log and signals)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_save, pre_save


def sent_by(model: Any) -> bool:
    """Whether step changes send ``pre_save``/``post_save`` (``Workflow.save_signals``)."""
    return model.workflow.save_signals and (
        pre_save.has_listeners(model) or post_save.has_listeners(model)
    )


def pre(model: Any, instance: Any, written: dict[str, Any], db: str) -> None:
    fields = frozenset(written)
    pre_save.send(sender=model, instance=instance, raw=False, using=db, update_fields=fields)


def post(model: Any, instance: Any, written: dict[str, Any], db: str) -> None:
    post_save.send(
        sender=model,
        instance=instance,
        created=False,
        update_fields=frozenset(written),
        raw=False,
        using=db,
    )
