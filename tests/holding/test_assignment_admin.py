"""Holders in the admin (docs/holding-work.md, docs/admin.md#my-work): "My work" sorts the
user's records into "Held by me", "Unclaimed" and "Held by others I stand in for", with
Claim and Release buttons posting with CSRF; the changelist has a "held by" column and
filter; absences are edited in the admin."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from django_workflow.models import Absence, TransitionLog
from tests.testapp.models import Errand

pytestmark = pytest.mark.django_db

MY_WORK = "/admin/django_workflow/workflowoverview/mine/"
CHANGELIST = "/admin/testapp/errand/"


def staff(name):
    user = User.objects.create_user(name, password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="change_errand"))
    return User.objects.get(pk=user.pk)


@pytest.fixture
def alice():
    return staff("alice")


@pytest.fixture
def bob():
    return staff("bob")


def hold_url(errand, action):
    return reverse("admin:django_workflow_hold", args=["testapp", "errand", errand.pk, action])


def sections(html):
    """Section title -> the record names listed under it, in page order."""
    found, current = {}, ""
    for line in html.splitlines():
        if 'class="workflow-my-work-section"' in line:
            current = line.split(">")[1].split("<")[0]
            found[current] = []
        elif '<th scope="row">' in line:
            found.setdefault(current, []).append(line.split('">')[-1].split("<")[0])
    return found


def test_my_work_sorts_records_by_who_holds_them(client, alice, bob):
    mine = Errand.objects.create(title="mine").start().claim(alice)
    Errand.objects.create(title="free").start()
    Errand.objects.create(title="bobs").start().claim(bob)
    Errand.objects.create(title="carols").start().claim(staff("carol"))
    now = timezone.now()
    Absence.objects.create(
        user=bob, delegate=alice, starts_at=now - timedelta(hours=1), ends_at=now + timedelta(1)
    )
    client.force_login(alice)
    page = client.get(MY_WORK).content.decode()
    assert sections(page) == {
        "Held by me": ["mine"],
        "Unclaimed": ["free"],
        "Held by others I stand in for": ["bobs"],
    }
    assert f'action="{hold_url(mine, "release")}"' in page
    assert 'data-hold="claim"' in page


def test_claim_from_my_work_makes_the_user_the_holder(client, alice):
    errand = Errand.objects.create(title="free").start()
    client.force_login(alice)
    response = client.post(hold_url(errand, "claim"), follow=True)
    assert response.redirect_chain[-1][0] == MY_WORK
    assert Errand.objects.get(pk=errand.pk).assignee == alice
    assert sections(response.content.decode()) == {"Held by me": ["free"]}


def test_a_lost_claim_shows_who_holds_it_and_changes_nothing(client, alice, bob):
    errand = Errand.objects.create(title="free").start().claim(bob)
    client.force_login(alice)
    response = client.post(hold_url(errand, "claim"), follow=True)
    assert response.status_code == 200
    assert "bob holds it" in response.content.decode()
    assert Errand.objects.get(pk=errand.pk).assignee == bob
    assert TransitionLog.objects.filter(triggered_by="assignment").count() == 1


def test_release_from_my_work_lets_go(client, alice):
    errand = Errand.objects.create(title="mine").start().claim(alice)
    client.force_login(alice)
    client.post(hold_url(errand, "release"))
    assert Errand.objects.get(pk=errand.pk).assignee is None


def test_claiming_needs_a_post_with_its_csrf_token_and_the_change_permission(alice):
    errand = Errand.objects.create(title="free").start()
    guarded = Client(enforce_csrf_checks=True)
    guarded.force_login(alice)
    assert guarded.post(hold_url(errand, "claim")).status_code == 403
    viewer = User.objects.create_user("viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_errand"))
    client = Client()
    client.force_login(viewer)
    assert client.post(hold_url(errand, "claim")).status_code == 403
    client.force_login(alice)
    assert client.get(hold_url(errand, "claim")).status_code == 405
    assert client.post(hold_url(errand, "steal")).status_code == 404
    assert Errand.objects.get(pk=errand.pk).assignee is None
    assert not TransitionLog.objects.filter(triggered_by="assignment").exists()


def test_the_changelist_shows_and_filters_the_holder(client, alice, bob):
    Errand.objects.create(title="mine").start().claim(alice)
    Errand.objects.create(title="bobs").start().claim(bob)
    Errand.objects.create(title="free").start()
    client.force_login(alice)
    page = client.get(CHANGELIST)
    assert "held by" in page.content.decode().lower()
    assert [e.title for e in page.context["cl"].result_list.order_by("title")] == [
        "bobs",
        "free",
        "mine",
    ]
    for choice, expected in (("me", ["mine"]), ("nobody", ["free"]), ("others", ["bobs"])):
        listed = client.get(CHANGELIST, {"holder": choice}).context["cl"].result_list
        assert [e.title for e in listed] == expected


def test_absences_are_edited_in_the_admin(client):
    admin = User.objects.create_superuser("root", password="pw")
    away, stand_in = User.objects.create_user("mia"), User.objects.create_user("sam")
    client.force_login(admin)
    response = client.post(
        "/admin/django_workflow/absence/add/",
        {
            "user": away.pk,
            "delegate": stand_in.pk,
            "starts_at_0": "2026-06-01",
            "starts_at_1": "09:00:00",
            "ends_at_0": "2026-06-08",
            "ends_at_1": "09:00:00",
        },
    )
    assert response.status_code == 302
    assert Absence.objects.get().delegate == stand_in
    refused = client.post(
        "/admin/django_workflow/absence/add/",
        {
            "user": away.pk,
            "delegate": away.pk,
            "starts_at_0": "2026-06-08",
            "starts_at_1": "09:00:00",
            "ends_at_0": "2026-06-01",
            "ends_at_1": "09:00:00",
        },
    )
    assert refused.status_code == 200 and Absence.objects.count() == 1
    errors = refused.context["adminform"].form.errors
    assert errors["delegate"] == ["A user cannot stand in for themselves: choose someone else."]


def test_the_absence_form_searches_people_by_name_and_names_its_time_zone(client):
    client.force_login(User.objects.create_superuser("root", password="pw"))
    form = client.get("/admin/django_workflow/absence/add/").context["adminform"].form
    assert type(form.fields["user"].widget).__name__ == "AutocompleteSelect"
    assert type(form.fields["delegate"].widget).__name__ == "AutocompleteSelect"
    assert form.fields["starts_at"].help_text == "Times in UTC."


def test_the_change_page_says_who_holds_the_record_and_claims_it_there(client, alice, bob):
    errand = Errand.objects.create(title="free").start()
    page = f"/admin/testapp/errand/{errand.pk}/change/"
    client.force_login(alice)
    html = client.get(page).content.decode()
    assert "Nobody holds it. Only its holder may call this step&#x27;s transitions." in html
    response = client.post(hold_url(errand, "claim"), {"next": page})
    assert response.status_code == 302 and response["Location"] == page
    assert "Held by alice." in client.get(page).content.decode()
    client.force_login(bob)  # may change errands: the default assign policy lets him release
    html = client.get(page).content.decode()
    assert "Held by alice." in html and 'data-hold="release"' in html
    response = client.post(hold_url(errand, "release"), {"next": "https://elsewhere.example/"})
    assert response["Location"] == MY_WORK  # never sent off the site
    assert Errand.objects.get(pk=errand.pk).assignee is None


def test_a_user_the_assign_policy_refuses_gets_no_release_button(client, alice):
    errand = Errand.objects.create(title="held").start().claim(alice)
    clerk = User.objects.create_user("clerk", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="change_errand"))
    Errand.workflow.policies["assign"] = lambda actor, record, name: actor.username == "lead"
    try:
        client.force_login(clerk)
        html = client.get(f"/admin/testapp/errand/{errand.pk}/change/").content.decode()
        assert "Held by alice." in html and "data-hold" not in html
        client.post(hold_url(errand, "release"))
        assert Errand.objects.get(pk=errand.pk).assignee == alice
    finally:
        del Errand.workflow.policies["assign"]


def test_my_work_offers_no_claim_or_release_on_a_model_without_holders(client):
    from tests.testapp.models import Ticket

    clerk = staff("clerk")
    clerk.user_permissions.add(
        Permission.objects.get(content_type__app_label="testapp", codename="change_ticket")
    )
    ticket = Ticket.objects.create()
    client.force_login(User.objects.get(pk=clerk.pk))
    page = client.get(MY_WORK).content.decode()
    assert f"/admin/testapp/ticket/{ticket.pk}/change/" in page  # listed, with its actions
    assert "data-hold" not in page


@pytest.mark.parametrize("key", ["abc", "1.5", str(10**30)])
def test_a_hold_url_with_a_malformed_key_is_not_found(client, alice, key):
    # Release 3 answered 500 (ValueError) where the template tags' views answer 404.
    client.force_login(alice)
    url = reverse("admin:django_workflow_hold", args=["testapp", "errand", key, "claim"])
    response = client.post(url)
    assert response.status_code == 404
