"""Service levels in the admin (docs/slas.md#in-the-admin): the changelist's "SLA" column
and the change page's panel say how much each clock has left, or that it is paused,
met or breached."""

import pytest
from django.contrib.auth.models import User

from tests.helpers import local
from tests.testapp.models import Inquiry

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/testapp/inquiry/"


@pytest.fixture
def staff(client):
    client.force_login(User.objects.create_superuser("lead", password="pw"))
    return client


def test_the_changelist_shows_what_each_clock_has_left(staff, time_machine):
    time_machine.move_to(local(2026, 12, 1, 9), tick=False)
    running = Inquiry.objects.create()
    paused = Inquiry.objects.create()
    paused.take()
    time_machine.move_to(local(2026, 12, 1, 11, 50), tick=False)
    Inquiry.objects.get(pk=paused.pk).ask()
    time_machine.move_to(local(2026, 12, 1, 12), tick=False)
    html = staff.get(CHANGELIST).content.decode()
    assert '<th scope="col" class="column-workflow_slas">' in html
    assert "Resolution: 13 h left; First answer: 1 h left" in html  # 3 h in, running
    assert "Resolution: paused, 13 h 10 min left; First answer: paused, 4 h left" in html
    assert {running.current_step, Inquiry.objects.get(pk=paused.pk).current_step} == {
        "new",
        "waiting_on_customer",
    }


def test_the_panel_names_a_breached_clock(staff, time_machine):
    time_machine.move_to(local(2026, 12, 1, 9), tick=False)
    inquiry = Inquiry.objects.create()
    time_machine.move_to(local(2026, 12, 1, 14), tick=False)
    html = staff.get(f"{CHANGELIST}{inquiry.pk}/change/").content.decode()
    resolution = '<li data-sla="resolution" data-state="running">SLA “Resolution”: 11 h left'
    first_answer = '<li data-sla="first_answer" data-state="breached">SLA “First answer”: breached'
    assert resolution in html and first_answer in html


def test_the_overview_counts_the_open_clocks(staff, time_machine):
    time_machine.move_to(local(2026, 12, 1, 9), tick=False)
    for _ in range(2):
        Inquiry.objects.create()
    waiting = Inquiry.objects.create()
    waiting.take()
    waiting.ask()
    Inquiry.objects.create().resolve()
    html = staff.get("/admin/django_workflow/workflowoverview/").content.decode()
    assert "SLA “Resolution”: 2 running, 1 paused, 0 breached" in html
    assert "SLA “First answer”: 2 running, 1 paused, 0 breached" in html
