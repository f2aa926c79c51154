"""A workflow model's changelist at a desktop's width, in Chromium (docs/admin.md).

The example project's demo data, as ``make demo`` seeds it, in a 1280 px window with the
admin's navigation sidebar open (as Django opens it) and the filters beside the list:
the columns the mixin adds, the next deadline last, are in view, not scrolled out of
the list's box. Skipped, like tests/admin/test_browser.py, where Chromium is missing.
"""

import io
import os

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse

from example_project.approvals.models import Document
from example_project.dunning.models import Subscription
from example_project.fulfilment.models import Order
from example_project.hiring.models import Candidate
from example_project.support.models import Ticket
from tests.admin.test_browser import ARTIFACTS, DESKTOP, InChromium

#: The height of a laptop's window at ``DESKTOP`` wide.
HEIGHT = 800

#: The list's box and, for the "next deadline" header and each of its cells, where it
#: ends and whether its text is wider than the cell.
NEXT_DEADLINE = """
const box = document.querySelector('#changelist-form .results');
const sidebar = document.getElementById('nav-sidebar');
const cells = [...document.querySelectorAll(
  '#result_list .column-workflow_next_deadline, #result_list .field-workflow_next_deadline'
)].map(cell => ({
  text: cell.innerText.replace(/\\s+/g, ' ').slice(0, 60),
  left: cell.getBoundingClientRect().left,
  right: cell.getBoundingClientRect().right,
  overflows: cell.scrollWidth > cell.clientWidth,
}));
return {
  cells,
  window: window.innerWidth,
  page: document.documentElement.scrollWidth,
  sidebar: sidebar ? sidebar.getBoundingClientRect().width : 0,
  box: {right: box.getBoundingClientRect().right, scroll: box.scrollWidth, client: box.clientWidth},
};
"""


@pytest.mark.django_db(transaction=True)
class TestChangelistAtDesktopWidth(InChromium):
    def test_the_next_deadline_column_is_in_view_beside_the_open_sidebar_at_1280_px(self):
        """Staff saw "Next deadline" cut off on the tickets' and the candidates' lists:
        the list scrolled inside its box, the column's cells past its right edge."""
        from selenium.webdriver.common.by import By

        call_command("seed_demo", stdout=io.StringIO())  # admin / admin, and the records
        # An escalated ticket held by someone: the "held by" column names its holder.
        outage = Ticket.objects.get(subject="Mail server down")
        outage.claim(User.objects.get(username="admin"))

        driver = self.driver
        driver.set_window_size(DESKTOP, HEIGHT)
        driver.get(f"{self.live_server_url}/admin/login/")
        driver.find_element(By.NAME, "username").send_keys("admin")
        driver.find_element(By.NAME, "password").send_keys("admin")
        driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
        driver.find_element(By.ID, "user-tools")
        ARTIFACTS.mkdir(exist_ok=True)
        database = os.environ.get("WORKFLOW_TEST_DB", "sqlite")
        seen = {}
        for model in (Candidate, Ticket, Order, Subscription, Document):
            meta = model._meta
            driver.get(
                self.live_server_url
                + reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
            )
            driver.find_element(By.ID, "footer")
            seen[meta.model_name] = driver.execute_script(NEXT_DEADLINE)
            driver.save_screenshot(
                str(ARTIFACTS / f"changelist-{meta.model_name}-1280-{database}.png")
            )

        cut, hidden = {}, {}
        for name, page in seen.items():
            assert page["window"] == DESKTOP, (name, page)
            assert page["sidebar"] > 200, (name, page)  # open, as Django opens it
            assert len(page["cells"]) > 1, (name, page)  # the header and a row at least
            edge = min(page["window"], page["box"]["right"])
            outside = [c for c in page["cells"] if c["right"] > edge + 0.5 or c["overflows"]]
            if outside:
                cut[name] = (edge, outside[:2])
            # Nothing of the list waits to be scrolled to, in its box or in the page.
            if page["box"]["scroll"] > page["box"]["client"] or page["page"] > page["window"]:
                hidden[name] = (page["box"], page["page"])
        assert not cut, cut
        assert not hidden, hidden
