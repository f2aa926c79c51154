"""The events delivered from outside, each stored with what became of it: a table of the
package, imported by ``models`` (storage only: nothing here imports the engine)."""

from __future__ import annotations

from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.utils import timezone

from ..model.triggers import Outcome


class EventDelivery(models.Model):
    """One delivery of an event from outside (``django_workflow.deliver``), with what
    became of it.

    Idempotency lives in the database: the first delivery of an ``(event, event_id)``
    inserts its row before anything else, and the unique constraint makes a second one,
    from any connection and even at the same instant, insert nothing there (it waits for
    the first's commit on PostgreSQL); that one is stored as a ``duplicate`` row.
    """

    Outcome = Outcome

    event = models.CharField(max_length=200)
    event_id = models.CharField("id", max_length=255, help_text="The sender's id of the event.")
    key = models.CharField(max_length=255, help_text="The value of the Receive's key field.")
    data = models.JSONField(null=True, blank=True)
    seq = models.BigIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE, db_index=False)
    object_id = models.CharField(max_length=255, blank=True)
    record = GenericForeignKey("content_type", "object_id")
    delivered_at = models.DateTimeField(default=timezone.now)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["delivered_at", "id"]
        verbose_name = "event delivery"
        verbose_name_plural = "event deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["event", "event_id"],
                condition=~models.Q(outcome=Outcome.DUPLICATE),
                name="workflow_event_once",
            )
        ]
        indexes = [
            # The buffered events a record entering a step may take, oldest first.
            models.Index(
                fields=["event", "key", "delivered_at"],
                condition=models.Q(outcome=Outcome.BUFFERED),
                name="workflow_event_buffered",
            ),
            # The highest applied ``seq`` of an event for a record (``stale``).
            models.Index(
                fields=["content_type", "object_id", "event", "seq"],
                condition=models.Q(outcome=Outcome.APPLIED),
                name="workflow_event_applied",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event} {self.event_id}: {self.outcome}"
