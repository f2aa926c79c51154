"""Who may see and move a record outside the admin, by Django's own permissions: the
model's view (or change) permission to see it, its change permission to move it
(docs/outside-the-admin.md), each granted on the model or on the record (an object
permission backend such as django-rules or django-guardian).

Imports ``registry`` only; nothing here writes.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.http import Http404

from ..model.registry import is_workflow_model


def _holds(user: Any, action: str, model: Any, record: Any = None) -> bool:
    """Whether ``user`` holds ``app.<action>_<model>``, on the model or on ``record``."""
    if user is None or not user.is_active:
        return False
    opts = model._meta
    codename = f"{opts.app_label}.{action}_{opts.model_name}"
    return user.has_perm(codename) or (record is not None and user.has_perm(codename, record))


def may_view(user: Any, record: Any) -> bool:
    """Whether ``user`` may see ``record``: its model's view or change permission."""
    model = type(record)
    return _holds(user, "view", model, record) or _holds(user, "change", model, record)


def may_change(user: Any, record: Any) -> bool:
    """Whether ``user`` may move ``record`` at all (its policies decide the rest)."""
    return _holds(user, "change", type(record), record)


def may_change_some(user: Any, model: Any) -> bool:
    """Whether ``user`` holds the change permission on ``model`` itself."""
    return _holds(user, "change", model)


def find_record(user: Any, app_label: str, model_name: str, pk: str) -> Any:
    """The record a URL names, or ``Http404`` when there is none the user may see: an
    unknown or non-workflow model, a malformed or missing key, or a record the user may
    not view all answer alike, so a URL tells nothing about what exists."""
    try:
        model = apps.get_model(app_label, model_name)
    except (LookupError, ValueError):
        raise Http404 from None
    if not is_workflow_model(model):
        raise Http404
    try:
        record = model._default_manager.get(pk=pk)
    except (ObjectDoesNotExist, ValidationError, ValueError, TypeError, OverflowError):
        raise Http404 from None
    if not may_view(user, record):
        raise Http404
    return record
