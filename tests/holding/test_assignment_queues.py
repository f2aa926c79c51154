"""Work queues with holders (docs/holding-work.md): ``actionable_by(user)`` and the inbox
list what the user holds or holds in someone's stead, and what nobody holds that they may
act on (claim it, in a ``claim=True`` step); never a record someone else holds. Still one
SQL query when every policy has a filter."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from django_workflow import inbox
from django_workflow.models import Absence
from tests.testapp.models import Errand

pytestmark = pytest.mark.django_db


@pytest.fixture
def people():
    return {name: User.objects.create_user(name) for name in ("alice", "bob", "carol")}


@pytest.fixture
def errands(people):
    """``open``: in a step nobody need hold; ``unheld``, ``alices``, ``bobs``: working."""
    made = {"open": Errand.objects.create(title="open")}
    for name in ("unheld", "alices", "bobs"):
        made[name] = Errand.objects.create(title=name).start()
    made["alices"].claim(people["alice"])
    made["bobs"].claim(people["bob"])
    made["bobs_open"] = Errand.objects.create(title="bobs_open").claim(people["bob"])
    return made


def titles(rows):
    return sorted(row.title for row in rows)


def test_actionable_by_lists_what_the_user_holds_and_what_nobody_holds(errands, people):
    assert titles(Errand.objects.actionable_by(people["alice"])) == ["alices", "open", "unheld"]
    assert titles(Errand.objects.actionable_by(people["bob"])) == [
        "bobs",
        "bobs_open",
        "open",
        "unheld",
    ]


def test_a_delegate_sees_what_the_absent_user_holds(errands, people):
    now = timezone.now()
    Absence.objects.create(
        user=people["bob"], delegate=people["carol"], starts_at=now, ends_at=now + timedelta(1)
    )
    assert titles(Errand.objects.actionable_by(people["carol"])) == [
        "bobs",
        "bobs_open",
        "open",
        "unheld",
    ]


def test_an_actor_who_is_no_user_sees_only_unheld_records(errands):
    assert titles(Errand.objects.actionable_by("a script")) == ["open", "unheld"]


def test_still_one_query_with_holders_and_absences(errands, people, django_assert_num_queries):
    with django_assert_num_queries(1):
        found = list(Errand.objects.actionable_by(people["carol"]))
    assert titles(found) == ["open", "unheld"]


def test_still_one_query_for_a_delegate_with_an_absence_under_way(
    errands, people, django_assert_num_queries
):
    """The absences are a subquery of the same query, not read before it."""
    now = timezone.now()
    Absence.objects.create(
        user=people["bob"], delegate=people["carol"], starts_at=now, ends_at=now + timedelta(1)
    )
    Absence.objects.create(
        user=people["alice"],
        delegate=people["carol"],
        starts_at=now - timedelta(3),
        ends_at=now - timedelta(1),
    )
    with django_assert_num_queries(1):
        found = list(Errand.objects.actionable_by(people["carol"]))
    assert titles(found) == ["bobs", "bobs_open", "open", "unheld"]


def test_the_inbox_offers_a_claim_on_unheld_work_and_the_transitions_on_held_work(errands, people):
    items = {item.record.title: item.actions for item in inbox(people["alice"], models=[Errand])}
    assert items == {
        "open": ("start", "drop"),
        "unheld": ("claim",),
        "alices": ("finish", "note", "hand_back"),
    }


def test_the_inbox_offers_no_claim_the_policy_would_refuse(people):
    in_review = Errand.objects.create(title="review").start()
    in_review.claim(people["alice"])
    Errand.objects.get(pk=in_review.pk).finish(actor=people["alice"])
    assert inbox(people["alice"], models=[Errand]) == []  # review is for staff
    staff = User.objects.create_user("sam", is_staff=True)
    [item] = inbox(staff, models=[Errand])
    assert (item.record.title, item.actions) == ("review", ("claim",))
