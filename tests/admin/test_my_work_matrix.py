"""The admin's "My work" page lists, for every record, exactly the actions its change page
offers the same user (docs/admin.md#my-work): every example model, in every step, for a
superuser, view-only staff, staff who may change two of the models only, and staff whom
the workflows' policies let act or refuse.

Both pages are rendered through the test client and read as a person would: the
transitions named on each My work row against the transition buttons and links of the
record's change page.
"""

import re
from html.parser import HTMLParser

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from example_project.approvals.models import Document
from example_project.dunning.models import Subscription
from example_project.fulfilment.models import Order
from example_project.hiring.models import Candidate
from example_project.support.models import Ticket

pytestmark = pytest.mark.django_db

MY_WORK = "/admin/django_workflow/workflowoverview/mine/"
EXAMPLES = (Document, Subscription, Order, Candidate, Ticket)
#: The user kinds, by the permissions they hold (``app_label.codename``).
KINDS = {
    "superuser": None,
    "viewer": [f"{m._meta.app_label}.view_{m._meta.model_name}" for m in EXAMPLES],
    "two_models": ["dunning.change_subscription", "fulfilment.change_order"],
    "passing": [
        *(f"{m._meta.app_label}.change_{m._meta.model_name}" for m in EXAMPLES),
        "hiring.screen_candidate",
        "hiring.decide_candidate",
    ],
    "failing": [f"{m._meta.app_label}.change_{m._meta.model_name}" for m in EXAMPLES],
}
TRANSITION_URL = re.compile(r"/workflow/([^/?]+)/")
#: How a row's Claim or Release button is listed beside its transitions: not a transition,
#: so not on the change page (docs/holding-work.md), but something the row offers.
HOLD = "hold:"


def make_user(kind):
    if kind == "superuser":
        return User.objects.create_superuser(kind, password="pw")
    user = User.objects.create_user(kind, password="pw", is_staff=True)
    for permission in KINDS[kind]:
        app_label, codename = permission.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return user


def in_step(model, step, **fields):
    """A record put straight into ``step``, as records of every step are found in a
    running project."""
    record = model.objects.create(**fields)
    model.objects.filter(pk=record.pk).update(**{model.workflow.state_attribute: step})
    return model.objects.get(pk=record.pk)


@pytest.fixture
def records():
    """One record in every step of every example, and approvals' documents in review that
    someone, the passing user and the failing one will have approved once."""
    made = [
        in_step(model, step, **_named(model, f"{model.__name__} {step}"))
        for model in EXAMPLES
        for step in model.workflow.steps
    ]
    for voter in ("someone", "passing", "failing"):
        made.append(in_step(Document, "in_review", title=f"approved by {voter}"))
    return made


def _named(model, text):
    field = {Document: "title", Subscription: "customer", Order: "item"}.get(model, "name")
    return {"subject" if model is Ticket else field: text}


class Actions(HTMLParser):
    """The transition names a page offers: on My work, per row (``data-transition`` of
    each listed action, the row keyed by its record link); on a change page, its
    transition buttons and links (the name taken from the URL they reach)."""

    def __init__(self):
        super().__init__()
        self.rows: dict[str, list[str]] = {}
        self.buttons: list[str] = []
        self._row: list[str] | None = None
        self._form_action = ""

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "tr" and "workflow-my-work-item" in classes:
            self._row = []
        elif tag == "a" and self._row is not None and not self._row and attrs.get("href"):
            self._row.append(attrs["href"])  # the row's record link comes first
        elif tag == "form":
            self._form_action = attrs.get("action") or ""
        if "workflow-my-work-action" in classes and self._row is not None:
            self._row.append(attrs["data-transition"])
        if "workflow-hold" in classes and self._row is not None:  # Claim or Release
            self._row.append(f"{HOLD}{attrs['data-hold']}")
        if "workflow-transition" in classes:
            url = attrs.get("href") or self._form_action
            self.buttons.append(TRANSITION_URL.search(url).group(1))

    def handle_endtag(self, tag):
        if tag == "tr" and self._row:
            link, *names = self._row
            self.rows[link] = names
            self._row = None


def transitions(listed, record):
    """The transitions a My work row lists for ``record``, its Claim or Release left out."""
    return sorted(name for name in listed.get(change_url(record), []) if not name.startswith(HOLD))


def read(response):
    parser = Actions()
    parser.feed(response.content.decode())
    return parser


def change_url(record):
    info = record._meta.app_label, record._meta.model_name
    return reverse(f"admin:{info[0]}_{info[1]}_change", args=[quote(record.pk)])


def offered_on_change_page(client, record):
    """The transitions the record's change page offers (none where it is refused)."""
    response = client.get(change_url(record))
    assert response.status_code in (200, 403)
    return sorted(read(response).buttons) if response.status_code == 200 else []


@pytest.mark.parametrize("kind", KINDS)
def test_my_work_lists_exactly_what_each_change_page_offers(kind, records, client):
    client.force_login(make_user(kind))
    page = client.get(MY_WORK)
    assert page.status_code == 200
    listed = read(page).rows
    assert all(listed.values()), f"{kind}: a row offers nothing: {listed}"
    for record in records:
        offered = offered_on_change_page(client, record)
        shown = transitions(listed, record)
        assert shown == offered, f"{kind}: {record._meta.label} {record} ({record.state})"


@pytest.mark.parametrize(
    "kind, model, step, expected",
    [
        # offered to everyone who may change the model: the rows exist in the matrix
        ("superuser", Subscription, "grace", ["pay"]),
        ("passing", Ticket, "new", ["triage"]),
        ("passing", Candidate, "decision", ["make_offer", "reject"]),
        ("two_models", Order, "awaiting_stock", ["cancel", "restocked"]),
        # approvals are votes: anyone who has not approved yet may
        ("superuser", Document, "in_review", ["approve", "request_changes"]),
        # policies refusing
        ("failing", Candidate, "decision", []),
        ("failing", Candidate, "screening_failed", []),
        # no change permission: nothing, though the workflows' policies allow
        ("viewer", Subscription, "grace", []),
        ("two_models", Ticket, "new", []),
    ],
)
def test_the_matrix_holds_what_each_kind_should_see(kind, model, step, expected, records, client):
    client.force_login(make_user(kind))
    listed = read(client.get(MY_WORK)).rows
    record = next(r for r in records if type(r) is model and r.state == step)
    assert transitions(listed, record) == expected
    assert offered_on_change_page(client, record) == expected


@pytest.mark.parametrize(
    "kind, voter, expected",
    [
        ("passing", "someone", ["approve", "request_changes"]),
        ("passing", "passing", ["request_changes"]),  # one approval per person
        ("failing", "someone", ["approve", "request_changes"]),
        ("failing", "failing", ["request_changes"]),
    ],
)
def test_an_approval_is_listed_for_anyone_who_has_not_given_one(
    kind, voter, expected, records, client
):
    user = make_user(kind)
    document = Document.objects.get(title=f"approved by {voter}")
    document.approve(actor=user if voter == kind else User.objects.create_user(voter))
    client.force_login(user)
    listed = read(client.get(MY_WORK)).rows
    assert transitions(listed, document) == expected
    assert offered_on_change_page(client, document) == expected
