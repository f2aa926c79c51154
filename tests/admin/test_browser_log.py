"""The transition log's admin fits a 1280 px window (docs/admin.md), in Chromium.

Skipped, like tests/admin/test_browser.py, where Chromium and chromedriver are missing.
"""

import os
import tempfile
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles.testing import StaticLiveServerTestCase
from django.utils import timezone

from django_workflow.testing import run_due_work
from example_project.dunning.models import Subscription
from example_project.fulfilment.models import Order
from example_project.support.models import Ticket
from tests.admin.test_browser import ARTIFACTS, browser

CLERK = "margareta.horvat-novakovic@accounts-receivable.example.com"
AGENT = "first-line-support.zagreb.night-shift@helpdesk.example.com"

#: Each word (a run of letters and digits) of the log's table that the page breaks across
#: lines. A line may end at a space, a hyphen, or an e-mail address's dot or "@"; never
#: inside a word, as "assign-ment" once did.
BROKEN_WORDS = """
const broken = [];
for (const cell of document.querySelectorAll('#result_list th, #result_list td')) {
  const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let text = texts.nextNode(); text; text = texts.nextNode()) {
    for (const word of text.data.matchAll(/[\\p{L}\\p{N}]+/gu)) {
      const range = document.createRange();
      range.setStart(text, word.index);
      range.setEnd(text, word.index + word[0].length);
      const lines = new Set([...range.getClientRects()].map(box => Math.round(box.top)));
      if (lines.size > 1) broken.push({column: cell.className, word: word[0], lines: lines.size});
    }
  }
}
return broken;
"""
#: The trigger column's words, as the page shows them.
TRIGGERS = """
return [...document.querySelectorAll('#result_list td.field-trigger')].map(cell => cell.innerText);
"""

#: Each cell of the log's table: where its right edge is, whether its text overflows it.
CELLS = """
const box = document.querySelector('#changelist .results');
return [...document.querySelectorAll('#result_list th, #result_list td')].map(cell => ({
  column: cell.className,
  text: cell.innerText.slice(0, 40),
  right: cell.getBoundingClientRect().right,
  boxRight: box.getBoundingClientRect().right,
  overflows: cell.scrollWidth > cell.clientWidth,
}));
"""


def seed_long_rows():
    """Log rows as a real site has them: long records, long usernames, comments, and
    the deadlines, error paths and worker of the example project, three weeks ago."""
    import time_machine

    start = timezone.now() - timedelta(days=21)
    with time_machine.travel(start, tick=False) as clock:
        subscription = Subscription.objects.create(
            customer="Horvat-Novaković Građevinarstvo d.o.o. (annual plan, 240 seats)"
        )
        subscription.payment_failed(
            grace_ends_at=start + timedelta(days=1),
            actor=CLERK,
            comment="Card declined twice; the customer asked for a week to replace it",
        )
        abandoned = Order.objects.create(item="Ergonomic standing desk frame, walnut", quantity=12)
        stuck = Order.objects.create(
            item="Replacement hydraulic pump assembly", fail_next="reserve"
        )
        stuck.checkout(actor=CLERK)
        run_due_work()  # charged; reserving fails: awaiting stock by the error path
        clock.move_to(start + timedelta(days=4))
        run_due_work()  # the grace is over (dunning), the cart is abandoned
        Order.objects.get(pk=stuck.pk).cancel(
            actor=CLERK, comment="The supplier discontinued the part; refunded in full"
        )
        ticket = Ticket.objects.create(
            subject="The customer portal rejects every password reset since the upgrade"
        )
        ticket.triage(priority="normal", actor=AGENT)
        # The agent holds the ticket a while: rows triggered by "assignment", a long word.
        agent = User.objects.create_user(AGENT)
        ticket.claim(agent)
        ticket.release(agent, comment="Back to the queue until the customer answers")
        ticket.ask_customer(actor=AGENT, comment="Asked which browser and version they use")
    steps = {
        "subscription": Subscription.objects.get(pk=subscription.pk).state,
        "abandoned": Order.objects.get(pk=abandoned.pk).state,
        "stuck": Order.objects.get(pk=stuck.pk).state,
        "ticket": Ticket.objects.get(pk=ticket.pk).state,
    }
    assert steps == {
        "subscription": "dunning",
        "abandoned": "abandoned",
        "stuck": "cancelled",
        "ticket": "waiting_on_customer",
    }, steps


@pytest.mark.django_db(transaction=True)
class TestTheLogAtDesktopWidth(StaticLiveServerTestCase):
    host = "127.0.0.1"

    def open_the_log(self, *scripts):
        """The log of ``seed_long_rows`` at 1280 px, as a fresh profile opens it: whether
        the navigation sidebar is open, what each of ``scripts`` returns there, the
        table's text and [the box's scroll width, its width, the page's, the window's]."""
        from selenium.webdriver.common.by import By

        seed_long_rows()
        User.objects.create_superuser("staff", "staff@example.com", "secret")
        with tempfile.TemporaryDirectory(prefix="workflow-chromium-") as profile:
            driver = browser(profile)
            # A click returns before the page it submits has loaded: each lookup waits
            # for its element, as the other browser tests' do (InChromium.element_wait).
            driver.implicitly_wait(10)
            try:
                driver.set_window_size(1280, 900)
                driver.get(f"{self.live_server_url}/admin/login/")
                driver.find_element(By.NAME, "username").send_keys("staff")
                driver.find_element(By.NAME, "password").send_keys("secret")
                driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
                driver.find_element(By.ID, "user-tools")
                driver.get(f"{self.live_server_url}/admin/django_workflow/transitionlog/")
                # A fresh profile: the navigation sidebar as Django opens it by default.
                sidebar = driver.find_element(By.ID, "nav-sidebar")
                sidebar_open = sidebar.is_displayed() and sidebar.size["width"] > 200
                found = [driver.execute_script(script) for script in scripts]
                # The table scrolls inside its own box; the page must not scroll either.
                box = driver.find_element(By.CSS_SELECTOR, "#changelist .results")
                widths = driver.execute_script(
                    "return [arguments[0].scrollWidth, arguments[0].clientWidth,"
                    " document.documentElement.scrollWidth, window.innerWidth]",
                    box,
                )
                texts = driver.find_element(By.ID, "result_list").text
                ARTIFACTS.mkdir(exist_ok=True)
                database = os.environ.get("WORKFLOW_TEST_DB", "sqlite")
                driver.save_screenshot(str(ARTIFACTS / f"admin-log-1280-{database}.png"))
                table = driver.find_element(By.ID, "result_list")
                table.screenshot(str(ARTIFACTS / f"admin-log-1280-table-{database}.png"))
            finally:
                driver.quit()
        return sidebar_open, found, texts, widths

    def test_every_column_of_the_log_is_in_view_beside_the_open_sidebar_at_1280_px(self):
        sidebar_open, (cells,), texts, widths = self.open_the_log(CELLS)
        box_scroll, box_width, page_scroll, window = widths
        assert sidebar_open
        assert len(cells) > 6 * 10  # headers and rows of every seeded record
        outside = [c for c in cells if c["right"] > min(window, c["boxRight"]) + 0.5]
        assert not outside, outside
        overflowing = [c for c in cells if c["overflows"]]
        assert not overflowing, overflowing
        assert box_scroll <= box_width and page_scroll <= window
        for words in ("Subscription", "Abandonment", "Card declined twice", CLERK[:20]):
            assert words in texts.replace("\n", " ")

    def test_words_wrap_between_words_never_inside_one(self):
        """Staff saw "assignment" broken in two in the trigger column: a line of a cell
        ends between words (or at an e-mail address's dot or "@"), whatever the column."""
        sidebar_open, (broken, triggers), texts, _ = self.open_the_log(BROKEN_WORDS, TRIGGERS)
        assert sidebar_open
        assert "assignment" in triggers, triggers  # the claim and the release
        assert AGENT[:20] in texts.replace("\n", ""), texts
        assert not broken, broken
