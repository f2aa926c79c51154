"""``EventWebhookView``: events from outside over HTTP (docs/events.md).

``POST {"event", "key", "id", "data", "seq"}``, signed with the hex HMAC-SHA256 of the
body under ``DJANGO_WORKFLOW["EVENT_SECRET"]`` in the ``X-Workflow-Signature`` header
(``sha256=`` before it is allowed), compared in constant time. Answers 401 when unsigned
or badly signed (or no secret is set), 413 for a body over ``EVENT_MAX_BODY`` bytes, 400
for a body that is no JSON object or an event that cannot be delivered, else 202 with
``{"outcome": ..., "record": pk}``. No CSRF token: the signature is the proof.

A thin door: ``deliver`` decides everything.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from ..conf import workflow_settings
from ..errors import InvalidDelivery
from ..model.event_input import deliver_one

SIGNATURE_HEADER = "X-Workflow-Signature"


def signature(body: bytes, secret: str) -> str:
    """The hex HMAC-SHA256 of ``body`` under ``secret``: what a sender puts in the header."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@method_decorator(csrf_exempt, name="dispatch")
class EventWebhookView(View):
    http_method_names = ["post"]

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        limit = workflow_settings.EVENT_MAX_BODY
        declared = str(request.META.get("CONTENT_LENGTH") or "0")
        if not (declared.isascii() and declared.isdigit()):
            return _refused(400, f"The Content-Length header is no number: {declared!r}.")
        # Read from the stream, not request.body: only EVENT_MAX_BODY decides, not Django's
        # DATA_UPLOAD_MAX_MEMORY_SIZE (whose refusal is an HTML 400).
        body = request.read(limit + 1) if int(declared) <= limit else b""
        if int(declared) > limit or len(body) > limit:
            return _refused(413, f"The body is larger than {limit} bytes.")
        if not _signed(request, body):
            refused = _refused(401, f"The {SIGNATURE_HEADER} header is missing or wrong.")
            refused["WWW-Authenticate"] = f'HMAC-SHA256 header="{SIGNATURE_HEADER}"'
            return refused
        try:
            delivery = _delivered(body)
        except InvalidDelivery as problem:
            return _refused(400, str(problem))
        record = None if delivery.record is None else delivery.record.pk
        return JsonResponse({"outcome": delivery.outcome, "record": record}, status=202)


def _signed(request: HttpRequest, body: bytes) -> bool:
    secret = workflow_settings.EVENT_SECRET
    given = request.headers.get(SIGNATURE_HEADER, "").strip()
    given = given.removeprefix("sha256=")
    if not secret or not given:
        return False
    return hmac.compare_digest(given.encode(), signature(body, secret).encode())


def _delivered(body: bytes) -> Any:
    """``deliver`` the event ``body`` holds; ``InvalidDelivery`` when it holds none."""
    from ..engine.receiving import deliver  # the engine loads with the models

    try:
        event = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        raise InvalidDelivery("The body is not JSON.") from None
    except RecursionError:
        raise InvalidDelivery("The body nests too deeply to be read.") from None
    return deliver_one(event, deliver)


def _refused(status: int, reason: str) -> JsonResponse:
    return JsonResponse({"error": reason}, status=status)
