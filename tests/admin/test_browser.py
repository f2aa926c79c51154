"""The admin in a real browser: Debian's Chromium driven by Selenium (docs/admin.md).

Screenshots of the change page, of each example's diagram and of every page at a
desktop's and a phone's width go to ``artifacts/`` (not committed).
"""

import base64
import math
import os
import re
import shutil
import tempfile
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles.testing import StaticLiveServerTestCase
from django.urls import reverse
from django.utils import timezone

from django_workflow.models import TransitionLog
from django_workflow.testing import run_due_work
from example_project.approvals.models import Document
from example_project.dunning.models import Subscription
from example_project.fulfilment.models import Order
from example_project.hiring.models import Candidate
from example_project.support.models import Ticket
from tests.helpers import ROOT
from tests.testapp.models import Decision

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


class InChromium(StaticLiveServerTestCase):
    """A live server and one headless Chromium (its own profile) for the class's tests."""

    host = "127.0.0.1"
    #: Seconds a lookup waits for its element to appear.
    element_wait = 10

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.profile = tempfile.TemporaryDirectory(prefix="workflow-chromium-")
        cls.driver = browser(cls.profile.name)
        cls.driver.implicitly_wait(cls.element_wait)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.profile.cleanup()
        super().tearDownClass()

    def wait_for_text(self, selector, words, seconds=10):
        """Wait until the element at ``selector`` shows ``words``. After a click that posts,
        an element read as the page is replaced goes with the old page: Selenium calls it
        stale, or Chromium says its node no longer belongs to the document. Either way,
        look again on the new page."""
        from selenium.common.exceptions import (
            NoSuchElementException,
            StaleElementReferenceException,
            TimeoutException,
            WebDriverException,
        )
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        seen = []

        def shown(driver):
            try:
                seen[:] = [driver.find_element(By.CSS_SELECTOR, selector).text]
            except WebDriverException as error:
                if "does not belong to the document" in str(error.msg):
                    return False
                raise
            return words in seen[0]

        gone = (StaleElementReferenceException, NoSuchElementException)
        try:
            WebDriverWait(self.driver, seconds, ignored_exceptions=gone).until(shown)
        except TimeoutException:
            last = repr(seen[0]) if seen else "nothing"
            raise AssertionError(f"no {words!r} in {selector} after {seconds} s: {last}") from None


@pytest.mark.django_db(transaction=True)
class TestAdminInABrowser(InChromium):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        ARTIFACTS.mkdir(exist_ok=True)

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
        from selenium.webdriver.common.by import By

        decision = Decision.objects.create(note="first review")
        self.log_in()
        self.driver.get(f"{self.live_server_url}/admin/testapp/decision/{decision.pk}/change/")

        diagram = self.driver.find_element(By.CSS_SELECTOR, "svg.workflow-diagram")
        assert diagram.is_displayed() and diagram.size["width"] > 200
        current = self.driver.find_element(By.CSS_SELECTOR, "svg.workflow-diagram g.current rect")
        assert current.value_of_css_property("fill") == "rgb(255, 217, 102)"  # our stylesheet
        self.screenshot("before")

        self.driver.find_element(By.CSS_SELECTOR, "button[data-transition=reject]").click()
        self.wait_for_text(".workflow-current", "Rejected")
        assert self.driver.find_element(By.CSS_SELECTOR, ".workflow-current").text == "Rejected"
        current = self.driver.find_element(By.CSS_SELECTOR, "svg.workflow-diagram g.current")
        assert current.get_attribute("data-step") == "rejected"
        newest = self.driver.find_element(By.CSS_SELECTOR, ".workflow-history tbody tr")
        assert "Reject" in newest.text and "staff" in newest.text  # the label
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
        assert sizes["svg"] == pytest.approx(sizes["natural"], abs=0.5), sizes  # never shrunk
        assert sizes["svg"] >= 300, sizes
        if self.driver.execute_script("return window.innerWidth") >= DESKTOP:
            assert sizes["scroll"] <= sizes["box"], sizes  # the panel holds it whole
        assert_diagram_text_readable(self.driver, diagram)

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

    # Every page at a desktop's and a phone's width -------------------------------------

    def at_width(self, width, height=900):
        """The window's layout width in CSS px, as a phone of that width lays it out."""
        self.width = width
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.addCleanup(self.driver.execute_cdp_cmd, "Emulation.clearDeviceMetricsOverride", {})

    def in_scheme(self, scheme):
        """``prefers-color-scheme`` as ``scheme``: the admin's light or dark variables."""
        self.driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
        )
        self.addCleanup(self.driver.execute_cdp_cmd, "Emulation.setEmulatedMedia", {"features": []})

    def visit(self, url):
        from selenium.webdriver.common.by import By

        self.driver.get(f"{self.live_server_url}{url}")
        self.driver.find_element(By.ID, "footer")  # the page is there, down to its end

    def page_screenshot(self, name):
        """The whole page as a window as tall as the page shows it, as
        ``<name>-<database>.png``; then the window as it was."""
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        self.at_width(self.width, height)
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
        self.at_width(self.width)
        database = os.environ.get("WORKFLOW_TEST_DB", "sqlite")
        (ARTIFACTS / f"{name}-{database}.png").write_bytes(base64.b64decode(shot["data"]))

    def pages(self, records):
        """(name, url) of the overview, My work and each example's change page."""
        yield "overview", reverse("admin:django_workflow_workflowoverview_changelist")
        yield "my-work", reverse("admin:django_workflow_my_work")
        for name, record in records.items():
            meta = type(record)._meta
            yield (
                name,
                reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[record.pk]),
            )

    def test_every_page_fits_a_phone_and_a_desktop_without_scrolling_sideways(self):
        from selenium.webdriver.common.by import By

        records = seed_examples()
        self.log_in()
        for width in (DESKTOP, PHONE):
            self.at_width(width)
            for name, url in self.pages(records):
                self.visit(url)
                self.page_screenshot(f"{name}-{width}px")
                sizes = self.driver.execute_script(PAGE_WIDTH)
                assert sizes["inner"] == width, sizes
                assert sizes["scroll"] <= min(sizes["inner"], sizes["client"]), (name, width, sizes)
                for diagram in self.driver.find_elements(By.CSS_SELECTOR, "svg.workflow-diagram"):
                    assert_diagram_text_readable(self.driver, diagram)

    def test_a_change_page_shows_what_a_phone_user_needs(self):
        """At 390 px the seeded change pages hold buttons, deadlines, history and the diagram,
        each within the window (the diagram and the history scroll inside their own box)."""
        from selenium.webdriver.common.by import By

        records = seed_examples()
        self.log_in()
        self.at_width(PHONE)
        for name, url in list(self.pages(records))[2:]:
            self.visit(url)
            for part in (
                ".workflow-actions .button",
                ".workflow-pending .workflow-overdue",
                ".workflow-history tbody tr",
                ".workflow-diagram-box svg.workflow-diagram",
            ):
                element = self.driver.find_element(By.CSS_SELECTOR, part)
                assert element.is_displayed(), (name, part)
                box = self.driver.execute_script(SHOWN_IN, element)
                assert box["left"] >= 0 and box["right"] <= PHONE, (name, part, box)
            current = self.driver.find_element(By.CSS_SELECTOR, "svg.workflow-diagram g.current")
            seen = self.driver.execute_script(IN_VIEW, current)  # the box scrolled to it
            assert seen["box_left"] <= seen["left"] and seen["right"] <= seen["box_right"], seen

    def test_link_buttons_are_the_size_of_the_buttons_that_post(self):
        """A transition that asks first is a link styled as a button: the same height and
        text as the buttons beside it, at both widths."""
        from selenium.webdriver.common.by import By

        order = seed_examples()["fulfilment"]
        self.log_in()
        for width in (DESKTOP, PHONE):
            self.at_width(width)
            self.visit(reverse("admin:fulfilment_order_change", args=[order.pk]))
            link = self.driver.find_element(By.CSS_SELECTOR, ".workflow-actions a.button")
            button = self.driver.find_element(By.CSS_SELECTOR, ".workflow-actions button.button")
            sizes = [self.driver.execute_script(BUTTON, element) for element in (link, button)]
            assert "Cancel" in link.text, sizes
            assert sizes[0]["height"] == pytest.approx(sizes[1]["height"], abs=1), (width, sizes)
            for style in ("font", "padding"):
                assert sizes[0][style] == sizes[1][style], (width, sizes)

    def test_overdue_text_reads_in_the_light_and_the_dark_theme(self):
        from selenium.webdriver.common.by import By

        records = seed_examples()
        self.log_in()
        changelists = [
            reverse(f"admin:{type(r)._meta.app_label}_{type(r)._meta.model_name}_changelist")
            for r in records.values()
        ]
        self.at_width(DESKTOP)
        for scheme in ("light", "dark"):
            self.in_scheme(scheme)
            seen = 0
            for name, url in [*self.pages(records), *(("changelist", u) for u in changelists)]:
                self.visit(url)
                for element in self.driver.find_elements(By.CSS_SELECTOR, ".workflow-overdue"):
                    colours = self.driver.execute_script(TEXT_ON_BACKGROUND, element)
                    ratio = contrast(colours["text"], colours["background"])
                    assert ratio >= 4.5, (scheme, name, element.text, colours, ratio)
                    seen += 1
            self.visit(reverse("admin:django_workflow_my_work"))
            self.page_screenshot(f"my-work-{scheme}")
            assert seen >= 2 * len(records), seen  # each record's deadline, twice at least

    # Confirmations and zones ----------------------------------------------------------

    def test_the_back_out_control_is_a_link_not_a_second_cancel_button(self):
        """On "Cancel…" (a move to a final step) the page's only button is the transition;
        going back is a plain link named "Back"."""
        from selenium.webdriver.common.by import By

        order = seed_examples()["fulfilment"]
        self.log_in()
        self.at_width(DESKTOP)
        self.visit(reverse("admin:fulfilment_order_change", args=[order.pk]))
        self.driver.find_element(By.CSS_SELECTOR, ".workflow-actions a.button").click()
        form = self.driver.find_element(By.CSS_SELECTOR, "#content form")
        assert "a final step" in form.find_element(By.CSS_SELECTOR, ".workflow-confirm").text
        submits = form.find_elements(By.CSS_SELECTOR, "input[type=submit], button")
        assert [element.get_attribute("value") for element in submits] == ["Cancel"]
        back = form.find_element(By.CSS_SELECTOR, ".submit-row a")
        assert back.text == "Back"
        looks = self.driver.execute_script(LOOKS, back, submits[0])
        assert looks["back"]["background"] != looks["submit"]["background"], looks
        assert looks["back"]["decoration"] == "underline" or looks["back"]["border"] == "0px", looks
        self.page_screenshot("cancel-confirmation-1280px")

    def test_a_bulk_move_into_a_final_step_shows_who_moves_first(self):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select

        waiting = [Order.objects.create(item=f"teapot {n}") for n in range(2)]
        Order.objects.filter(pk__in=[o.pk for o in waiting]).update(state="awaiting_stock")
        delivered = Order.objects.create(item="kettle")
        Order.objects.filter(pk=delivered.pk).update(state="shipped")
        self.log_in()
        self.at_width(DESKTOP)
        self.visit(reverse("admin:fulfilment_order_changelist"))
        for order in (*waiting, delivered):
            self.driver.find_element(
                By.CSS_SELECTOR, f"input.action-select[value='{order.pk}']"
            ).click()
        Select(self.driver.find_element(By.NAME, "action")).select_by_value("workflow_cancel")
        self.driver.find_element(By.CSS_SELECTOR, "button[name=index]").click()

        moving = self.driver.find_element(By.CSS_SELECTOR, ".workflow-moving").text
        staying = self.driver.find_element(By.CSS_SELECTOR, ".workflow-staying").text
        assert all(str(order) in moving for order in waiting), moving
        assert str(delivered) in staying, staying
        self.page_screenshot("bulk-confirmation-1280px")
        assert set(Order.objects.values_list("state", flat=True)) != {"cancelled"}  # not yet

        self.driver.find_element(By.ID, "id_workflow-comment").send_keys("customer called")
        self.driver.find_element(By.CSS_SELECTOR, ".submit-row input[type=submit]").click()
        self.driver.find_element(By.CSS_SELECTOR, "ul.messagelist")
        states = {o.pk: o.state for o in Order.objects.all()}
        assert [states[o.pk] for o in waiting] == ["cancelled", "cancelled"], states
        assert states[delivered.pk] == "shipped", states
        comments = {
            row.record.pk: row.comment for row in TransitionLog.objects.filter(to_state="cancelled")
        }
        assert comments == {o.pk: "customer called" for o in waiting}, comments

    def test_each_page_names_one_time_zone(self):
        """A workflow counted in Europe/Zagreb: its change page and changelist show every
        time in that zone and name it once, never beside UTC. My work, with rows of every
        example, shows them all in the site's zone (UTC here), named once."""
        from selenium.webdriver.common.by import By

        ticket = seed_examples()["support"]
        self.log_in()
        self.at_width(DESKTOP)
        for url in (
            reverse("admin:support_ticket_change", args=[ticket.pk]),
            reverse("admin:support_ticket_changelist"),
        ):
            self.visit(url)
            named = self.driver.find_elements(By.CSS_SELECTOR, ".workflow-zone")
            assert len(named) == 1 and "Europe/Zagreb" in named[0].text, url
            text = self.driver.find_element(By.ID, "content").text
            zones = set(re.findall(r"\b(UTC|GMT|CES?T|EES?T)\b", text))
            assert len(zones) == 1 and zones <= {"CET", "CEST"}, (url, zones)
        self.visit(reverse("admin:django_workflow_my_work"))
        named = self.driver.find_elements(By.CSS_SELECTOR, ".workflow-zone")
        assert [element.text for element in named] == ["Times in UTC."]
        text = self.driver.find_element(By.ID, "content").text
        assert set(re.findall(r"\b(UTC|GMT|CES?T|EES?T)\b", text)) == {"UTC"}, text
        assert len(self.driver.find_elements(By.CSS_SELECTOR, ".workflow-my-work-item")) == 5


def seed_examples():
    """One record of each example in a step with buttons, overdue deadlines and history.

    Everything happens three weeks ago, so each step's deadlines are overdue now.
    """
    import time_machine

    start = timezone.now() - timedelta(days=21)
    with time_machine.travel(start, tick=False) as clock:
        candidate = Candidate.objects.create(name="Ada", resume="python django sql review")
        run_due_work()  # screened, an interview booked two days ahead
        clock.move_to(Candidate.objects.get(pk=candidate.pk).interview_at)
        run_due_work()  # the interview is held: a decision is due
        document = Document.objects.create(title="Budget 2026")
        document.submit()
        order = Order.objects.create(item="teapot", fail_next="reserve")
        order.checkout()
        run_due_work()  # charged; reserving fails: awaiting stock
        subscription = Subscription.objects.create(customer="ACME")
        subscription.payment_failed(grace_ends_at=start + timedelta(days=3))
        ticket = Ticket.objects.create(subject="The printer on the third floor is on fire")
        ticket.triage(priority="urgent")  # its four hours' deadlines (technical has none)
    records = {
        "hiring": candidate,
        "approvals": document,
        "fulfilment": order,
        "dunning": subscription,
        "support": ticket,
    }
    steps = {name: type(r).objects.get(pk=r.pk).state for name, r in records.items()}
    assert steps == {
        "hiring": "decision",
        "approvals": "in_review",
        "fulfilment": "awaiting_stock",
        "dunning": "grace",
        "support": "urgent",
    }, steps
    return {name: type(r).objects.get(pk=r.pk) for name, r in records.items()}


def assert_diagram_text_readable(driver, diagram):
    """Every text of the diagram at least ``MIN_DIAGRAM_TEXT`` px as drawn: its font size
    times the scale the SVG is drawn at."""
    texts = driver.execute_script(TEXT_SIZES, diagram)
    small = [t for t in texts if t["px"] < MIN_DIAGRAM_TEXT - 0.01]
    assert texts and not small, small


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
#: The widths pages are laid out at (CSS px): a desktop window and a phone's.
DESKTOP, PHONE = 1280, 390
#: The smallest text of a diagram as drawn, in px.
MIN_DIAGRAM_TEXT = 11

PAGE_WIDTH = """
const root = document.documentElement;
return {scroll: root.scrollWidth, client: root.clientWidth, inner: window.innerWidth};
"""
SHOWN_IN = """
const box = arguments[0].closest(".workflow-scroll-box, .workflow-diagram-box") || arguments[0];
const r = box.getBoundingClientRect();
return {box: box.getAttribute("class"), left: r.left, right: r.right};
"""
IN_VIEW = """
const r = arguments[0].getBoundingClientRect();
const box = arguments[0].closest(".workflow-diagram-box").getBoundingClientRect();
return {left: r.left, right: r.right, box_left: box.left, box_right: box.right};
"""
BUTTON = """
const style = getComputedStyle(arguments[0]);
return {
  height: arguments[0].getBoundingClientRect().height,
  font: `${style.fontSize} ${style.fontWeight} ${style.lineHeight}`,
  padding: style.padding,
};
"""
TEXT_SIZES = """
const svg = arguments[0], scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
return Array.from(svg.querySelectorAll("text")).map(text => ({
  text: text.textContent, px: parseFloat(getComputedStyle(text).fontSize) * scale,
}));
"""
TEXT_ON_BACKGROUND = """
const canvas = document.createElement("canvas").getContext("2d");
const rgb = colour => {
  canvas.clearRect(0, 0, 1, 1); canvas.fillStyle = colour; canvas.fillRect(0, 0, 1, 1);
  return Array.from(canvas.getImageData(0, 0, 1, 1).data.slice(0, 3));
};
let element = arguments[0], background = "rgba(0, 0, 0, 0)";
while (element && background === "rgba(0, 0, 0, 0)") {
  background = getComputedStyle(element).backgroundColor;
  element = element.parentElement;
}
if (background === "rgba(0, 0, 0, 0)") background = "white";  // the canvas's own
return {text: rgb(getComputedStyle(arguments[0]).color), background: rgb(background)};
"""

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
return {
  svg: svg.getBoundingClientRect().width, natural: svg.viewBox.baseVal.width,
  box: box.clientWidth, scroll: box.scrollWidth,
};
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


LOOKS = """
const look = (element) => {
  const style = getComputedStyle(element);
  return {background: style.backgroundColor, border: style.borderTopWidth,
          decoration: style.textDecorationLine};
};
return {back: look(arguments[0]), submit: look(arguments[1])};
"""
