"""The change page panel of a parent waiting in a join step (docs/admin.md, "The panel"):
"3 of 5 parcels done", linking to the parcels' changelist filtered to this consignment
when that model is in the admin and the user may view it; one query, however many
parcels."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.testapp.models import Consignment, Parcel

pytestmark = pytest.mark.django_db


def consignment_with(packed=0, void=0, open_=0):
    """A consignment waiting in ``picking`` for its parcels in those steps."""
    consignment = Consignment.objects.create()
    parcels = [Parcel.objects.create(consignment=consignment) for _ in range(packed + void + open_)]
    consignment.close()
    for parcel in parcels[:packed]:
        parcel.pack()
    for parcel in parcels[packed : packed + void]:
        parcel.void()
    consignment.refresh_from_db()
    assert consignment.state == "picking"
    return consignment


def page(client, consignment):
    return client.get(f"/admin/testapp/consignment/{consignment.pk}/change/")


def test_the_panel_counts_the_parcels_done_and_links_to_this_consignments_parcels(
    admin_client,
):
    consignment = consignment_with(packed=2, void=1, open_=2)
    consignment_with(open_=3)  # another consignment's parcels, not linked to
    response = page(admin_client, consignment)
    url = f"/admin/testapp/parcel/?consignment__id__exact={consignment.pk}"
    assert response.context["workflow"]["joins"] == [
        {"related_name": "parcels", "text": "3 of 5 parcels done", "url": url}
    ]
    assert f'<a href="{url}">3 of 5 parcels done</a>' in response.content.decode()
    listed = admin_client.get(url)
    assert listed.status_code == 200
    assert {p.consignment_id for p in listed.context["cl"].result_list} == {consignment.pk}
    assert listed.context["cl"].result_count == 5


def test_a_consignment_not_in_a_join_step_shows_no_count(admin_client):
    filling = Consignment.objects.create()
    Parcel.objects.create(consignment=filling)
    response = page(admin_client, filling)
    assert response.context["workflow"]["joins"] == []
    assert "parcels done" not in response.content.decode()


def test_no_link_for_a_user_who_may_not_view_the_parcels(client):
    consignment = consignment_with(packed=1, open_=1)
    clerk = User.objects.create_user("clerk", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_consignment"))
    client.force_login(clerk)
    [join] = page(client, consignment).context["workflow"]["joins"]
    assert (join["text"], join["url"]) == ("1 of 2 parcels done", "")
    clerk.user_permissions.add(Permission.objects.get(codename="view_parcel"))
    client.force_login(User.objects.get(pk=clerk.pk))  # permissions read afresh
    [join] = page(client, consignment).context["workflow"]["joins"]
    assert join["url"].startswith("/admin/testapp/parcel/?")


def test_no_link_when_the_parcels_are_not_in_the_admin(admin_client, monkeypatch):
    consignment = consignment_with(open_=1)
    monkeypatch.delitem(admin.site._registry, Parcel)
    [join] = page(admin_client, consignment).context["workflow"]["joins"]
    assert (join["text"], join["url"]) == ("0 of 1 parcels done", "")


def test_the_count_costs_the_same_queries_for_two_parcels_or_twelve(admin_client):
    few, many = consignment_with(packed=1, open_=1), consignment_with(packed=6, void=2, open_=4)
    page(admin_client, few)  # content types, sessions: read once and cached
    counted = []
    for consignment in (few, many):
        with CaptureQueriesContext(connection) as queries:
            response = page(admin_client, consignment)
        assert response.status_code == 200
        counted.append(len(queries))
    assert counted[0] == counted[1]
    [join] = response.context["workflow"]["joins"]
    assert join["text"] == "8 of 12 parcels done"
