"""The admin in a real browser: Debian's Chromium driven by Selenium (docs/admin.md).

Screenshots of the change page go to ``artifacts/`` (not committed).
"""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles.testing import StaticLiveServerTestCase

from tests.testapp.models import Decision

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "artifacts"
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
REQUIRED = os.environ.get("WORKFLOW_REQUIRE_BROWSER") == "1"

if not (CHROMIUM and CHROMEDRIVER) and not REQUIRED:
    pytest.skip("Chromium and chromedriver are not installed", allow_module_level=True)


def browser(profile):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1400",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@pytest.mark.django_db(transaction=True)
class TestAdminInABrowser(StaticLiveServerTestCase):
    host = "127.0.0.1"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.profile = tempfile.TemporaryDirectory(prefix="workflow-chromium-")
        cls.driver = browser(cls.profile.name)
        cls.driver.implicitly_wait(10)
        ARTIFACTS.mkdir(exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.profile.cleanup()
        super().tearDownClass()

    def screenshot(self, name):
        database = os.environ.get("WORKFLOW_TEST_DB", "sqlite")
        self.driver.save_screenshot(str(ARTIFACTS / f"admin-{name}-{database}.png"))

    def test_press_a_transition_button_and_see_the_new_step_and_history(self):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        User.objects.create_superuser("staff", "staff@example.com", "secret")
        decision = Decision.objects.create(note="first review")
        self.driver.get(f"{self.live_server_url}/admin/login/")
        self.driver.find_element(By.NAME, "username").send_keys("staff")
        self.driver.find_element(By.NAME, "password").send_keys("secret")
        self.driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
        self.driver.find_element(By.ID, "user-tools")  # logged in: the admin's header is there
        self.driver.get(f"{self.live_server_url}/admin/testapp/decision/{decision.pk}/change/")

        diagram = self.driver.find_element(By.CSS_SELECTOR, "svg.workflow-diagram")
        assert diagram.is_displayed() and diagram.size["width"] > 200
        current = self.driver.find_element(By.CSS_SELECTOR, "svg.workflow-diagram g.current rect")
        assert current.value_of_css_property("fill") == "rgb(255, 217, 102)"  # our stylesheet
        self.screenshot("before")

        self.driver.find_element(By.CSS_SELECTOR, "button[data-transition=reject]").click()
        WebDriverWait(self.driver, 10).until(
            lambda driver: (
                driver.find_element(By.CSS_SELECTOR, ".workflow-current").text == "Rejected"
            )
        )
        current = self.driver.find_element(By.CSS_SELECTOR, "svg.workflow-diagram g.current")
        assert current.get_attribute("data-step") == "rejected"
        newest = self.driver.find_element(By.CSS_SELECTOR, ".workflow-history tbody tr")
        assert "reject" in newest.text and "staff" in newest.text
        self.screenshot("after")
        assert Decision.objects.get(pk=decision.pk).state == "rejected"
