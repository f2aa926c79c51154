"""The admin in a real browser: Debian's Chromium driven by Selenium (docs/admin.md).

Screenshots of the change page and of each example's diagram go to ``artifacts/``
(not committed).
"""

import math
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles.testing import StaticLiveServerTestCase

from example_project.approvals.models import Document
from example_project.dunning.models import Subscription
from example_project.fulfilment.models import Order
from example_project.hiring.models import Candidate
from example_project.support.models import Ticket
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

    def screenshot(self, name, element=None):
        """The whole window as ``admin-<name>``, or ``element`` alone as ``diagram-<name>``."""
        database = os.environ.get("WORKFLOW_TEST_DB", "sqlite")
        if element is None:
            self.driver.save_screenshot(str(ARTIFACTS / f"admin-{name}-{database}.png"))
        else:
            element.screenshot(str(ARTIFACTS / f"diagram-{name}-{database}.png"))

    def log_in(self):
        from selenium.webdriver.common.by import By

        User.objects.create_superuser("staff", "staff@example.com", "secret")
        self.driver.get(f"{self.live_server_url}/admin/login/")
        self.driver.find_element(By.NAME, "username").send_keys("staff")
        self.driver.find_element(By.NAME, "password").send_keys("secret")
        self.driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
        self.driver.find_element(By.ID, "user-tools")  # logged in: the admin's header is there

    def test_press_a_transition_button_and_see_the_new_step_and_history(self):
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        decision = Decision.objects.create(note="first review")
        self.log_in()
        self.driver.get(f"{self.live_server_url}/admin/testapp/decision/{decision.pk}/change/")

        diagram = self.driver.find_element(By.CSS_SELECTOR, "svg.workflow-diagram")
        assert diagram.is_displayed() and diagram.size["width"] > 200
        current = self.driver.find_element(By.CSS_SELECTOR, "svg.workflow-diagram g.current rect")
        assert current.value_of_css_property("fill") == "rgb(255, 217, 102)"  # our stylesheet
        self.screenshot("before")

        self.driver.find_element(By.CSS_SELECTOR, "button[data-transition=reject]").click()
        # The page reloads after the POST: an element read just before it goes is stale.
        WebDriverWait(self.driver, 10, ignored_exceptions=(StaleElementReferenceException,)).until(
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

    # The diagram of each example workflow --------------------------------------------

    def open_diagram(self, record):
        """The change page of ``record``, scrolled to its diagram; the diagram's box."""
        from selenium.webdriver.common.by import By

        meta = type(record)._meta
        self.driver.get(
            f"{self.live_server_url}/admin/{meta.app_label}/{meta.model_name}/{record.pk}/change/"
        )
        box = self.driver.find_element(By.CSS_SELECTOR, ".workflow-diagram-box")
        self.driver.execute_script("arguments[0].scrollIntoView()", box)
        return box

    def check_diagram(self, name, record, step):
        from selenium.webdriver.common.by import By

        box = self.open_diagram(record)
        diagram = box.find_element(By.CSS_SELECTOR, "svg.workflow-diagram")
        texts = self.driver.execute_script(TEXT_BOXES, diagram)
        assert len(texts) >= len(type(record).workflow.steps)
        overlapping = [
            (a["text"], b["text"])
            for i, a in enumerate(texts)
            for b in texts[i + 1 :]
            if intersect(a, b)
        ]
        assert not overlapping, overlapping
        for step_box in self.driver.execute_script(STEP_BOXES, diagram):  # text inside its box
            assert inside(step_box["text"], step_box["shape"]), step_box

        sizes = self.driver.execute_script(SIZES, diagram, box)
        assert sizes["svg"] <= sizes["box"] + 0.5, sizes  # never wider than the panel
        assert sizes["scroll"] <= sizes["box"], sizes  # so the box never scrolls sideways
        assert sizes["svg"] >= 300, sizes

        current = diagram.find_element(By.CSS_SELECTOR, "g.current")
        assert current.get_attribute("data-step") == step
        rect = current.find_element(By.CSS_SELECTOR, "rect")
        assert rect.value_of_css_property("fill") == CURRENT_FILL
        self.screenshot(name, box)
        return diagram

    def test_every_example_diagram_is_readable_and_fits_the_panel(self):
        self.log_in()
        for name, model, step, fields in EXAMPLES:
            record = model.objects.create(**fields)
            state = model.workflow.state_attribute
            model.objects.filter(pk=record.pk).update(**{state: step})
            self.check_diagram(name, record, step)

    def test_the_diagram_reads_in_the_dark_theme(self):
        """Chromium asked for ``prefers-color-scheme: dark``: the admin's dark variables."""
        self.log_in()
        order = Order.objects.create(item="teapot")
        Order.objects.filter(pk=order.pk).update(state="packing")
        self.driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
        )
        try:
            diagram = self.check_diagram("fulfilment-dark", order, "packing")
            colours = self.driver.execute_script(COLOURS, diagram)
        finally:
            self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        assert luminance(colours["background"]) < 0.1, colours  # the dark theme is on
        assert_readable(colours)

    def test_the_diagram_reads_in_the_light_theme(self):
        self.log_in()
        order = Order.objects.create(item="teapot")
        Order.objects.filter(pk=order.pk).update(state="packing")
        colours = self.driver.execute_script(COLOURS, self.open_diagram(order))
        assert luminance(colours["background"]) > 0.8, colours
        assert_readable(colours)


def assert_readable(colours):
    """Texts at WCAG AA contrast (4.5) on what is behind them, lines at 3."""
    background = colours["background"]
    for text in ("step", "edge", "error", "legend"):
        assert contrast(colours[text], background) >= 4.5, (text, colours)
    assert contrast(colours["automatic_text"], colours["automatic_fill"]) >= 4.5, colours
    assert contrast(colours["current_text"], colours["current_fill"]) >= 4.5, colours
    for line in ("step_stroke", "edge_stroke", "error_stroke"):
        assert contrast(colours[line], background) >= 3, (line, colours)
    # the current step stands out: another colour than any step's, a thicker edge
    for other in ("automatic_fill", "background"):
        assert math.dist(colours["current_fill"], colours[other]) >= 100, (other, colours)
    assert colours["current_width"] >= 2 * colours["step_width"], colours


#: (name, model, the step to show it in, fields to create it with)
EXAMPLES = [
    ("hiring", Candidate, "decision", {"name": "Ada"}),
    ("approvals", Document, "in_review", {"title": "Budget 2026"}),
    ("fulfilment", Order, "packing", {"item": "teapot"}),
    ("dunning", Subscription, "grace", {"customer": "ACME"}),
    ("support", Ticket, "technical", {"subject": "printer on fire"}),
]
CURRENT_FILL = "rgb(255, 217, 102)"

TEXT_BOXES = """
return Array.from(arguments[0].querySelectorAll("text")).map(text => {
  const r = text.getBoundingClientRect();
  return {text: text.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom};
});
"""
STEP_BOXES = """
const box = e => { const r = e.getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
return Array.from(arguments[0].querySelectorAll("g.step")).map(step => ({
  step: step.dataset.step,
  text: box(step.querySelector("text")),
  shape: box(step.querySelector("rect")),
}));
"""
SIZES = """
const [svg, box] = arguments;
return {svg: svg.getBoundingClientRect().width, box: box.clientWidth, scroll: box.scrollWidth};
"""
COLOURS = """
const svg = arguments[0], canvas = document.createElement("canvas").getContext("2d");
const rgb = colour => {  // any CSS colour (color-mix() included) as [r, g, b]
  canvas.clearRect(0, 0, 1, 1); canvas.fillStyle = colour; canvas.fillRect(0, 0, 1, 1);
  return Array.from(canvas.getImageData(0, 0, 1, 1).data.slice(0, 3));
};
const css = (selector, property) =>
  rgb(getComputedStyle(svg.querySelector(selector)).getPropertyValue(property));
let element = svg, background = "rgba(0, 0, 0, 0)";
while (element && background === "rgba(0, 0, 0, 0)") {
  background = getComputedStyle(element).backgroundColor;
  element = element.parentElement;
}
return {
  background: rgb(background),
  step: css("g.step.manual text", "fill"),
  edge: css("g.edge.transition text", "fill"),
  error: css("g.edge.error text", "fill"),
  legend: css(".legend text", "fill"),
  automatic_text: css("g.step.automatic:not(.current) text", "fill"),
  automatic_fill: css("g.step.automatic:not(.current) rect", "fill"),
  current_text: css("g.current text", "fill"),
  current_fill: css("g.current rect", "fill"),
  step_stroke: css("g.step.manual rect", "stroke"),
  edge_stroke: css("g.edge.transition path", "stroke"),
  error_stroke: css("g.edge.error path", "stroke"),
  current_width: parseFloat(getComputedStyle(svg.querySelector("g.current rect")).strokeWidth),
  step_width: parseFloat(getComputedStyle(svg.querySelector("g.step.manual rect")).strokeWidth),
};
"""


def intersect(a, b, slack=0.5):
    return (
        a["left"] < b["right"] - slack
        and b["left"] < a["right"] - slack
        and a["top"] < b["bottom"] - slack
        and b["top"] < a["bottom"] - slack
    )


def inside(inner, outer):
    return (
        outer["left"] <= inner["left"]
        and inner["right"] <= outer["right"]
        and outer["top"] <= inner["top"]
        and inner["bottom"] <= outer["bottom"]
    )


def luminance(colour):
    """WCAG's relative luminance of an (r, g, b) colour."""

    def linear(channel):
        channel /= 255
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(c) for c in colour)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(one, other):
    """WCAG's contrast ratio of two colours, 1 to 21."""
    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)
