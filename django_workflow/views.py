"""``EventWebhookView``, events from outside over HTTP (docs/events.md), at the path the
documentation gives; it lives with the other web surfaces in ``web.webhook``."""

from .web.webhook import EventWebhookView

__all__ = ["EventWebhookView"]
