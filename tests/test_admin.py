"""The transition log is read-only in the admin."""

import pytest

from django_workflow.models import TransitionLog
from tests.testapp.models import Routed

pytestmark = pytest.mark.django_db


def test_the_log_lists_rows_and_filters_by_trigger(admin_client):
    Routed.objects.create(amount=3).size()
    page = admin_client.get("/admin/django_workflow/transitionlog/", {"triggered_by": "manual"})
    assert page.status_code == 200
    assert b"small" in page.content and page.context["cl"].result_count == 1


def test_nobody_may_add_change_or_delete_log_rows(admin_client):
    Routed.objects.create()
    entry = TransitionLog.objects.get()
    assert admin_client.get("/admin/django_workflow/transitionlog/add/").status_code == 403
    response = admin_client.post(
        f"/admin/django_workflow/transitionlog/{entry.pk}/change/", {"to_state": "forged"}
    )
    assert response.status_code == 403
    response = admin_client.post(
        f"/admin/django_workflow/transitionlog/{entry.pk}/delete/", {"post": "yes"}
    )
    assert response.status_code == 403
    assert TransitionLog.objects.get().to_state == "open"
