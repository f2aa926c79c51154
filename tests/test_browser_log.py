"""The transition log's admin fits a 1280 px window (docs/admin.md), in Chromium.

Skipped, like tests/test_browser.py, where Chromium and chromedriver are missing.
"""

import os
import tempfile

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles.testing import StaticLiveServerTestCase

from example_project.hiring.models import Candidate
from example_project.support.models import Ticket
from tests.test_browser import ARTIFACTS, browser


@pytest.mark.django_db(transaction=True)
class TestTheLogAtDesktopWidth(StaticLiveServerTestCase):
    host = "127.0.0.1"

    def test_every_column_of_the_log_is_in_view_at_1280_px(self):
        from selenium.webdriver.common.by import By

        ticket = Ticket.objects.create(subject="The customer portal rejects every password reset")
        ticket.triage(priority="normal", actor="ana.kovacic@example.com")
        ticket.ask_customer(actor="ana.kovacic@example.com")
        Candidate.objects.create(name="Marija Horvat-Novak")
        User.objects.create_superuser("staff", "staff@example.com", "secret")
        with tempfile.TemporaryDirectory(prefix="workflow-chromium-") as profile:
            driver = browser(profile)
            try:
                driver.set_window_size(1280, 900)
                driver.get(f"{self.live_server_url}/admin/login/")
                driver.find_element(By.NAME, "username").send_keys("staff")
                driver.find_element(By.NAME, "password").send_keys("secret")
                driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
                driver.find_element(By.ID, "user-tools")
                driver.get(f"{self.live_server_url}/admin/django_workflow/transitionlog/")
                # The table scrolls inside its own box: a column out of view widens that box.
                box = driver.find_element(By.CSS_SELECTOR, "#changelist .results")
                scroll, width = driver.execute_script(
                    "return [arguments[0].scrollWidth, arguments[0].clientWidth]", box
                )
                actor = driver.find_element(By.CSS_SELECTOR, "#result_list th.column-actor_name")
                right, edge = driver.execute_script(
                    "return [arguments[0].getBoundingClientRect().right,"
                    " arguments[1].getBoundingClientRect().right]",
                    actor,
                    box,
                )
                ARTIFACTS.mkdir(exist_ok=True)
                database = os.environ.get("WORKFLOW_TEST_DB", "sqlite")
                driver.save_screenshot(str(ARTIFACTS / f"admin-log-1280-{database}.png"))
            finally:
                driver.quit()
        assert scroll <= width and right <= edge
