"""What the admin's own pages say: counts in the singular and plural, one sign for nothing
(docs/admin.md, "The Workflows overview")."""

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from django_workflow.testing import run_due_work
from example_project.approvals.models import Document
from example_project.fulfilment.models import Order

pytestmark = pytest.mark.django_db

OVERVIEW = "/admin/django_workflow/workflowoverview/"
T = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def time_in_step(page, model_name, step):
    model = next(m for m in page.context["models"] if m["name"] == model_name)
    return next(s["time"] for s in model["steps"] if s["row"].step == step)


@pytest.fixture
def shipped(admin_client, time_machine):
    """One order through the whole chain: a stay in each step, one entry into "shipped"."""
    time_machine.move_to(T, tick=False)
    order = Order.objects.create(item="teapot")
    time_machine.move_to(T + timedelta(hours=2), tick=False)
    order.checkout()
    run_due_work()
    assert Order.objects.get(pk=order.pk).state == "shipped"
    time_machine.move_to(T + timedelta(hours=3), tick=False)
    return order


def test_one_stay_and_one_entry_read_in_the_singular(admin_client, shipped):
    page = admin_client.get(OVERVIEW)
    assert time_in_step(page, "Orders", "cart")["hint"].startswith("1 stay;")
    shipped = time_in_step(page, "Orders", "shipped")["hint"]
    assert shipped == "1 record entered; a terminal step has no time in step"


def test_more_stays_and_entries_read_in_the_plural(admin_client, shipped, time_machine):
    again = Order.objects.create(item="kettle")
    again.checkout()
    run_due_work()
    time_machine.move_to(T + timedelta(hours=4), tick=False)
    page = admin_client.get(OVERVIEW)
    assert time_in_step(page, "Orders", "cart")["hint"].startswith("2 stays;")
    assert time_in_step(page, "Orders", "shipped")["hint"].startswith("2 records entered;")


def test_nothing_reads_as_the_admins_hyphen_on_every_workflow_page(admin_client, shipped):
    document = Document.objects.create(title="Budget")  # a draft: no deadline
    order_page = reverse("admin:fulfilment_order_change", args=[shipped.pk])
    pages = {
        "overview": OVERVIEW,
        "my work": reverse("admin:django_workflow_my_work"),
        "change page": order_page,
        "changelist": reverse("admin:approvals_document_changelist"),
    }
    overview = admin_client.get(OVERVIEW)
    assert time_in_step(overview, "Orders", "shipped")["median"] == "-"
    for name, url in pages.items():
        text = admin_client.get(url).content.decode()
        assert "\N{EN DASH}" not in text and "\N{EM DASH}" not in text, name
    my_work = admin_client.get(pages["my work"]).content.decode()
    row = my_work[my_work.index(f'<a href="/admin/approvals/document/{document.pk}/change/"') :]
    assert '<td data-label="Next deadline">-</td>' in row.split("</tr>")[0]
