"""Where people see a record's version: the admin's panel, filter and overview, and REST
(docs/versions.md)."""

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from tests.testapp.models import Decision, Tender
from tests.versions.test_versions import on_version_1

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff(client):
    admin = User.objects.create_superuser("boss", "boss@example.com", "pw")
    client.force_login(admin)
    return client


def test_the_change_page_says_which_version_the_record_runs_on(staff):
    old = on_version_1()
    page = staff.get(f"/admin/testapp/tender/{old.pk}/change/").content.decode()
    assert 'data-version="1"' in page
    assert "Runs on version 1 of the workflow (new records start on version 2)." in page
    assert 'data-transition="shelve"' in page  # only version 1 offers it
    new = Tender.objects.create()
    page = staff.get(f"/admin/testapp/tender/{new.pk}/change/").content.decode()
    assert "Runs on version 2 of the workflow." in page
    assert 'data-transition="submit"' in page
    assert 'data-transition="shelve"' not in page


def test_the_changelist_filters_by_version(staff):
    old, new = on_version_1(), Tender.objects.create()
    page = staff.get("/admin/testapp/tender/", {"workflow_version__exact": 1}).content.decode()
    assert f"/admin/testapp/tender/{old.pk}/change/" in page
    assert f"/admin/testapp/tender/{new.pk}/change/" not in page
    assert "By workflow version" in page


def test_the_overview_counts_the_records_of_each_version(staff):
    on_version_1()
    on_version_1()
    Tender.objects.create()
    page = staff.get("/admin/django_workflow/workflowoverview/").content.decode()
    assert "version 1: 2 records</a>; " in page
    assert "version 2 (current): 1 record</a>" in page
    assert "?workflow_version__exact=1" in page


def test_the_changelist_of_a_model_without_versions_has_no_version_filter(staff):
    Decision.objects.create()
    assert "By workflow version" not in staff.get("/admin/testapp/decision/").content.decode()


def test_rest_answers_with_the_records_version():
    api = APIClient()
    api.force_authenticate(User.objects.create_user("ann"))
    old = on_version_1()
    state = api.get(f"/api/tenders/{old.pk}/workflow/").json()
    assert (state["step"], state["version"]) == ("draft", 1)
    assert [a["name"] for a in state["available_actions"]] == ["submit", "shelve"]
    decision = Decision.objects.create()
    assert api.get(f"/api/decisions/{decision.pk}/workflow/").json()["version"] is None
