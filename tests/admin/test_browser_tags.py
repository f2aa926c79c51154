"""The template tags in a real browser (docs/outside-the-admin.md): a support agent, not
staff, works the example project's queue at /agent/ with JavaScript off (plain form
posts, pages of their own) and on (htmx swapping the answer in place), sees refusals
where they acted, and never scrolls sideways at a phone's width.

htmx is the page's own, not shipped, and the tests run offline: with JavaScript on,
each page gets tests/htmx_imitation.js, which does what the forms ask of htmx.
"""

import pytest
from django.contrib.auth.models import Permission, User

from django_workflow.models import TransitionLog
from example_project.support.models import Ticket
from tests.admin.test_browser import PAGE_WIDTH, PHONE, InChromium
from tests.helpers import ROOT

HTMX_IMITATION = (ROOT / "tests" / "htmx_imitation.js").read_text()


@pytest.mark.django_db(transaction=True)
class TestTagsInABrowser(InChromium):
    element_wait = 5

    def setUp(self):
        from selenium.webdriver.common.by import By

        agent = User.objects.create_user("agent", password="secret")
        agent.user_permissions.add(
            *Permission.objects.filter(
                content_type__app_label="support", codename__in=["view_ticket", "change_ticket"]
            )
        )
        self.driver.delete_all_cookies()
        self.driver.get(f"{self.live_server_url}/accounts/login/?next=/agent/")
        self.driver.find_element(By.NAME, "username").send_keys("agent")
        self.driver.find_element(By.NAME, "password").send_keys("secret")
        self.driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        self.driver.find_element(By.CSS_SELECTOR, ".workflow-inbox")  # logged in, at /agent/

    def javascript(self, on):
        """JavaScript on or off for the pages opened from now on."""
        self.driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": not on})
        self.addCleanup(
            self.driver.execute_cdp_cmd, "Emulation.setScriptExecutionDisabled", {"value": False}
        )
        self.driver.get("data:text/html,<title>off</title><script>document.title='on'</script>")
        assert self.driver.title == ("on" if on else "off")  # the page's own scripts obey

    def at_phone_width(self):
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": PHONE, "height": 900, "deviceScaleFactor": 1, "mobile": False},
        )
        self.addCleanup(self.driver.execute_cdp_cmd, "Emulation.clearDeviceMetricsOverride", {})

    def open(self, path, htmx=False):
        self.driver.get(f"{self.live_server_url}{path}")
        if htmx:
            self.driver.execute_script(HTMX_IMITATION)

    def ticket_page(self, ticket, htmx=False):
        self.open(f"/agent/tickets/{ticket.pk}/", htmx)

    def press(self, transition):
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.CSS_SELECTOR, f"button[data-transition={transition}]").click()

    def text_of(self, selector):
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, selector).text

    def resolve_after_confirming(self):
        """Resolve: a final step, so a page asks to confirm first."""
        self.press("resolve")
        self.wait_for_text(".workflow-confirm", "a final step")
        self.press("resolve")
        self.wait_for_text(".workflow-current", "Resolved")

    def moves_by_agent(self):
        rows = TransitionLog.objects.filter(actor__username="agent")
        return list(rows.values_list("transition_name", flat=True))

    def fits_the_width(self):
        sizes = self.driver.execute_script(PAGE_WIDTH)
        assert sizes["scroll"] <= min(sizes["inner"], sizes["client"]), sizes

    # Without JavaScript -----------------------------------------------------------------

    def test_without_javascript_an_agent_acts_confirms_and_comes_back(self):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select

        ticket = Ticket.objects.create(subject="Printer on fire")
        self.javascript(on=False)
        self.ticket_page(ticket)
        Select(self.driver.find_element(By.NAME, "values-priority")).select_by_value("urgent")
        self.press("triage")
        self.wait_for_text(".workflow-current", "Urgent")
        assert self.driver.current_url.endswith(f"/agent/tickets/{ticket.pk}/")
        assert "Triage: Printer on fire is now in Urgent." in self.text_of(".messages")
        assert "Triage" in self.text_of(".workflow-history")
        assert self.driver.find_elements(By.CSS_SELECTOR, "button[data-transition=escalate]") == []

        self.press("resolve")  # into a final step: a page confirming it first
        self.wait_for_text(".workflow-confirm", "a final step")
        assert Ticket.objects.get(pk=ticket.pk).state == "urgent"
        self.press("resolve")
        self.wait_for_text(".workflow-current", "Resolved")
        assert Ticket.objects.get(pk=ticket.pk).state == "resolved"
        assert self.moves_by_agent() == ["triage", "resolve"]

    def test_without_javascript_a_refusal_shows_on_the_page_it_answers(self):
        ticket = Ticket.objects.create(subject="Invoice question")
        Ticket.objects.get(pk=ticket.pk).triage()
        self.javascript(on=False)
        self.ticket_page(ticket)
        Ticket.objects.get(pk=ticket.pk).ask_customer()  # someone else, meanwhile
        self.press("resolve")
        self.wait_for_text(".workflow-note", "changed since the page was shown")
        assert "Waiting on customer now" in self.text_of(".workflow-note")
        assert Ticket.objects.get(pk=ticket.pk).state == "waiting_on_customer"

    def test_without_javascript_an_agent_claims_an_escalated_ticket_then_resolves_it(self):
        from selenium.webdriver.common.by import By

        ticket = Ticket.objects.create(subject="Mail server down")
        Ticket.objects.get(pk=ticket.pk).triage(priority="urgent")
        Ticket.objects.get(pk=ticket.pk).escalate(authorize=False)  # by staff, meanwhile
        self.javascript(on=False)
        self.open("/agent/")
        assert "Unclaimed" in self.text_of(".workflow-inbox")
        self.driver.find_element(By.CSS_SELECTOR, "button[data-hold=claim]").click()
        self.wait_for_text(".messages", "You hold Mail server down.")
        assert Ticket.objects.get(pk=ticket.pk).assignee.username == "agent"
        assert "Held by me" in self.text_of(".workflow-inbox")
        self.ticket_page(ticket)
        assert "Held by agent." in self.text_of(".workflow-holder")
        self.resolve_after_confirming()
        resolved = Ticket.objects.get(pk=ticket.pk)
        assert (resolved.state, resolved.assignee) == ("resolved", None)
        assert self.moves_by_agent() == ["claim", "resolve"]

    # With JavaScript: the answer swaps in place -----------------------------------------

    def test_with_htmx_an_agent_acts_in_place(self):
        ticket = Ticket.objects.create(subject="Laptop")
        Ticket.objects.get(pk=ticket.pk).triage()
        self.javascript(on=True)
        self.ticket_page(ticket, htmx=True)
        page = self.driver.current_url
        self.press("ask_customer")
        self.wait_for_text(".workflow-current", "Waiting on customer")
        assert "is now in Waiting on customer" in self.text_of(".workflow-note")
        assert self.driver.execute_script("return document.body.dataset.swaps") == "1"
        assert self.driver.current_url == page  # swapped, not reloaded
        self.resolve_after_confirming()  # the confirmation swaps in too, then the move
        assert self.driver.execute_script("return document.body.dataset.swaps") == "3"
        assert Ticket.objects.get(pk=ticket.pk).state == "resolved"

    def test_with_htmx_refusals_show_in_place(self):
        from selenium.webdriver.common.by import By

        ticket = Ticket.objects.create(subject="VPN")
        self.javascript(on=True)
        self.open("/agent/", htmx=True)
        Ticket.objects.get(pk=ticket.pk).triage()  # someone else, meanwhile
        self.driver.find_element(By.NAME, "values-priority").send_keys("Urgent")
        self.press("triage")
        self.wait_for_text(".workflow-note", "changed since the page was shown")
        assert self.driver.current_url.endswith("/agent/")
        assert Ticket.objects.get(pk=ticket.pk).state == "technical"

    # A phone's width --------------------------------------------------------------------

    def test_at_a_phone_s_width_no_page_scrolls_sideways(self):
        from selenium.webdriver.common.by import By

        ticket = Ticket.objects.create(subject="A very long subject " * 5)
        Ticket.objects.get(pk=ticket.pk).triage(comment="word " * 60)
        self.at_phone_width()
        self.open("/agent/")
        self.fits_the_width()
        self.ticket_page(ticket)
        for details in self.driver.find_elements(By.CSS_SELECTOR, "details.workflow-comment"):
            details.click()  # the comment fields open
        self.fits_the_width()
        self.press("resolve")
        self.wait_for_text(".workflow-confirm", "a final step")  # the confirmation page
        self.fits_the_width()
