"""The events delivered from outside in the admin (docs/events.md): read-only, filtered
by outcome, each linking to its record."""

import pytest
from django.contrib.auth.models import Permission, User

from django_workflow import deliver
from django_workflow.models import EventDelivery, TransitionLog
from django_workflow.reading.wording import row_label
from tests.testapp.models import Payment

pytestmark = pytest.mark.django_db

PAGE = "/admin/django_workflow/eventdelivery/"


@pytest.fixture
def deliveries():
    payment = Payment.objects.create(psp_ref="pay_1")
    deliver("psp.authorised", "pay_1", id="evt_applied")
    deliver("psp.authorised", "pay_1", id="evt_applied")
    deliver("psp.settled", "pay_early", id="evt_buffered")
    return payment


def test_the_deliveries_filter_by_outcome(admin_client, deliveries):
    page = admin_client.get(PAGE, {"outcome": "buffered"})

    assert [row.event_id for row in page.context["cl"].result_list] == ["evt_buffered"]
    everything = admin_client.get(PAGE).context["cl"].result_list
    assert sorted(row.outcome for row in everything) == ["applied", "buffered", "duplicate"]


def test_a_delivery_links_to_its_record(admin_client, deliveries):
    page = admin_client.get(PAGE, {"outcome": "applied"}).content.decode()

    assert f'href="/admin/testapp/payment/{deliveries.pk}/change/"' in page


def test_nobody_adds_changes_or_deletes_deliveries(admin_client, deliveries):
    row = EventDelivery.objects.first()

    assert admin_client.get(f"{PAGE}add/").status_code == 403
    assert admin_client.post(f"{PAGE}{row.pk}/change/", {"outcome": "applied"}).status_code == 403
    assert admin_client.post(f"{PAGE}{row.pk}/delete/", {"post": "yes"}).status_code == 403
    assert admin_client.get(f"{PAGE}{row.pk}/change/").status_code == 200  # read, not edit
    assert EventDelivery.objects.filter(pk=row.pk, outcome=row.outcome).exists()


def test_deliveries_need_their_own_view_permission(client, deliveries):
    user = User.objects.create_user("staff", is_staff=True)
    client.force_login(user)
    assert client.get(PAGE).status_code == 403

    user.user_permissions.add(Permission.objects.get(codename="view_eventdelivery"))
    assert client.get(PAGE).status_code == 200


def test_the_log_names_an_events_transition_by_its_label(admin_client, deliveries):
    deliver("psp.settled", "pay_1", id="evt_settled")
    row = TransitionLog.objects.get(triggered_by="event", to_state="settled")

    assert row_label(Payment.workflow, row) == "Mark settled"
    page = admin_client.get("/admin/django_workflow/transitionlog/", {"triggered_by": "event"})
    assert "event from outside" in page.content.decode().lower()
