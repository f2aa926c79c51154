"""``Model.objects.actionable_by(actor)`` is exactly the records on which
``available_actions(actor)`` is not empty, on randomized data, for every shipped policy
alone and combined, relation paths, ``when`` guards, ``from_any_step`` and a custom
policy asked record by record (docs/work-queues.md)."""

import random
from types import SimpleNamespace

import pytest
import rules
from django.contrib.auth.models import Group, Permission, User
from django.db.models import Q

from django_workflow.policies import (
    EVERYTHING,
    NOTHING,
    NotExpressible,
    actor_attribute_equals,
    all_of,
    any_of,
    either,
    has_perm,
    is_staff,
    narrowing,
    relates_to_actor_via,
)
from django_workflow.reading import actionable
from django_workflow.reading.actionable import plan_for
from tests.testapp.models import Candidate, Case, Expense, Team, Ticket, in_the_region

pytestmark = pytest.mark.django_db

SEED = 20261130
MODEL_BACKEND_ONLY = ["django.contrib.auth.backends.ModelBackend"]


def slow_path(model, actor):
    """The definition: every record asked, one by one."""
    return {record.pk for record in model.objects.all() if record.available_actions(actor)}


def fast_path(model, actor, rows=None):
    keys = list((rows or model.objects).actionable_by(actor).values_list("pk", flat=True))
    assert len(keys) == len(set(keys)), f"{model.__name__}: a record returned twice"
    return set(keys)


def place(model, rng, count, steps, **fields):
    """``count`` records spread at random over ``steps``, each with random ``fields``."""
    records = model.objects.bulk_create(
        [model(**{name: pick(rng) for name, pick in fields.items()}) for _ in range(count)]
    )
    by_step = {}
    for record in records:
        by_step.setdefault(rng.choice(steps), []).append(record.pk)
    for step, keys in by_step.items():
        model.objects.filter(pk__in=keys).update(**{model.workflow.state_attribute: step})
    return records


def permission(codename):
    return Permission.objects.get(codename=codename, content_type__app_label="testapp")


@pytest.fixture
def people():
    """Users of every kind a policy tells apart, reloaded so no cache lingers."""
    clerks = Group.objects.create(name="clerks")
    clerks.permissions.add(permission("change_case"), permission("change_ticket"))
    made = {
        "boss": User.objects.create_user("boss", is_staff=True),
        "staffer": User.objects.create_user("staffer", is_staff=True, last_name="north"),
        "lead": User.objects.create_user("lead", first_name="lead", last_name="south"),
        "member": User.objects.create_user("member", last_name="north"),
        "grouped": User.objects.create_user("grouped"),
        "root": User.objects.create_superuser("root"),
        "gone": User.objects.create_user("gone", is_staff=True, is_active=False),
        "nobody": User.objects.create_user("nobody"),
    }
    made["boss"].user_permissions.add(permission("change_case"), permission("change_ticket"))
    made["gone"].user_permissions.add(permission("change_case"))
    made["grouped"].groups.add(clerks)
    return {name: User.objects.get(pk=user.pk) for name, user in made.items()}


@rules.predicate
def in_its_region(user, case):
    return case is not None and case.region == user.last_name


@rules.predicate
def owns(user, ticket):
    return ticket is not None and ticket.owner_id == user.pk


@pytest.fixture
def object_grants():
    """django-rules grants (the test settings install its backend): a case to the users
    of its region, a ticket to its owner. No filter can list them."""
    rules.add_perm("testapp.change_case", in_its_region)
    rules.add_perm("testapp.change_ticket", rules.is_active & owns)
    yield
    rules.remove_perm("testapp.change_case")
    rules.remove_perm("testapp.change_ticket")


@pytest.fixture
def cases(people):
    rng = random.Random(SEED)
    users = list(people.values())
    teams = []
    for _ in range(4):
        team = Team.objects.create(lead=rng.choice([None, *users]))
        team.members.set(rng.sample(users, rng.randint(0, 4)))
        teams.append(team)
    records = place(
        Case,
        rng,
        300,
        list(Case.workflow.steps),
        owner=lambda r: r.choice([None, *users]),
        team=lambda r: r.choice([None, *teams]),
        priority=lambda r: r.randint(0, 4),
        amount=lambda r: r.randint(0, 100),
        region=lambda r: r.choice(["north", "south", ""]),
        urgent=lambda r: r.random() < 0.3,
    )
    for record in records:
        record.watchers.set(rng.sample(users, rng.choice([0, 0, 1, 3])))
    return records


def everyone(people):
    return [None, *people.values()]


def test_cases_equal_the_slow_path_with_object_grants(cases, people, object_grants):
    for actor in everyone(people):
        assert fast_path(Case, actor) == slow_path(Case, actor), actor


def test_cases_equal_the_slow_path_with_model_backend_only(cases, people, settings):
    settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    for actor in everyone(people):
        assert fast_path(Case, actor) == slow_path(Case, actor), actor


def test_the_data_reaches_every_kind_of_branch(cases, people, object_grants):
    """Not a vacuous comparison: each step has records someone can act on and records
    someone cannot, and object grants add records the global check does not give."""
    for step in ("triage", "working", "escalated", "review", "checking", "resolved"):
        acted = [a for a in everyone(people) if fast_path(Case, a, Case.objects.filter(state=step))]
        assert acted and len(acted) < len(everyone(people)), step
    member = people["member"]
    granted = Case.objects.filter(state="resolved", region="north")
    assert granted.exists() and fast_path(Case, member, granted) == set(
        granted.values_list("pk", flat=True)
    )


def test_a_filtered_queryset_stays_filtered(cases, people):
    rows = Case.objects.filter(priority__gte=3)
    for actor in everyone(people):
        wanted = {c.pk for c in rows if c.available_actions(actor)}
        assert fast_path(Case, actor, rows) == wanted


def test_one_query_when_every_policy_has_a_filter(
    tickets, people, settings, django_assert_num_queries
):
    settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    member = people["member"]
    member.has_perm("testapp.change_ticket")  # the user's permissions, loaded once and cached
    with django_assert_num_queries(1):
        found = list(Ticket.objects.actionable_by(member))
    assert {t.pk for t in found} == slow_path(Ticket, member) != set()


def test_the_fallback_reads_its_candidates_in_one_more_query(
    cases, people, settings, django_assert_num_queries
):
    """Review's custom policy is asked per record, but the rows come in one query."""
    settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    member = people["member"]
    member.has_perm("testapp.change_case")
    with django_assert_num_queries(2):
        found = list(Case.objects.actionable_by(member))
    assert {c.pk for c in found} == slow_path(Case, member)
    assert any(c.state == "review" for c in found)


def test_to_many_paths_go_into_subqueries(people, settings):
    """``watchers`` and ``team__members`` would repeat a row once per related row in an OR."""
    settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    member = people["member"]
    case = Case.objects.create(owner=member)
    Case.objects.filter(pk=case.pk).update(state="working")
    case.watchers.set([member, people["lead"], people["boss"]])
    sql = str(Case.objects.actionable_by(member).query)
    # the query, and a subquery for each branch through a to-many relation: triage's
    # team__members and working's watchers
    assert sql.count("SELECT") == 3
    assert list(Case.objects.actionable_by(member).values_list("pk", flat=True)) == [case.pk]


def test_only_uncertain_steps_are_asked_record_by_record(people, object_grants):
    """The custom policy (review's sign_off) and has_perm under django-rules (resolved,
    and triage for staff) are asked; the rest is said in SQL."""
    staffer, member = people["staffer"], people["member"]
    assert set(plan_for(Case, member).asked) == {"review", "resolved", "working"}
    assert set(plan_for(Case, staffer).asked) == {"review", "resolved", "working", "triage"}
    assert set(plan_for(Case, people["boss"]).asked) == {"review", "working"}


def test_the_fallback_asks_only_what_sql_left_open(cases, people, object_grants):
    """Records another transition already makes certain are not read again."""
    member = people["member"]
    plan = plan_for(Case, member)
    rows = actionable._aliased(Case.objects.all(), Case, plan.calculations)
    certain = set(rows.filter(plan.exact).values_list("pk", flat=True))
    survivors = set(actionable._survivors(rows, plan, member))
    assert certain and survivors and not certain & survivors
    assert certain | survivors == slow_path(Case, member)


def test_a_callable_when_is_asked_and_a_q_when_is_read_in_sql(people, settings):
    settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    plan = plan_for(Case, people["member"])
    assert [t.name for t, _ in plan.asked["working"]] == ["escalate"]
    assert [t.name for t, _ in plan.asked["review"]] == ["sign_off"]
    assert "triage" not in plan.asked and "weight" in plan.calculations


@pytest.fixture
def tickets(people):
    rng = random.Random(SEED + 1)
    users = list(people.values())
    return place(
        Ticket, rng, 250, list(Ticket.workflow.steps), owner=lambda r: r.choice([None, *users])
    )


def test_tickets_equal_the_slow_path(tickets, people, object_grants):
    for actor in everyone(people):
        assert fast_path(Ticket, actor) == slow_path(Ticket, actor), actor


def test_tickets_equal_the_slow_path_with_model_backend_only(tickets, people, settings):
    settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    for actor in everyone(people):
        assert fast_path(Ticket, actor) == slow_path(Ticket, actor), actor


def test_expenses_equal_the_slow_path():
    """``when`` guards (a ``Q`` and a callable) and ``from_any_step`` without policies."""
    rng = random.Random(SEED + 2)
    place(
        Expense,
        rng,
        250,
        list(Expense.workflow.steps),
        amount=lambda r: r.randint(0, 100),
        receipt=lambda r: r.random() < 0.5,
    )
    for actor in (None, SimpleNamespace(name="anyone")):
        assert fast_path(Expense, actor) == slow_path(Expense, actor)
    assert Expense.objects.filter(state="cancelled").exists()  # excluded: terminal


def test_candidates_equal_the_slow_path():
    """``actor_attribute_equals``, ``is_staff`` and ``Workflow.policies`` over step policies."""
    rng = random.Random(SEED + 3)
    place(Candidate, rng, 250, list(Candidate.workflow.steps), name=lambda r: "c")
    actors = [
        None,
        SimpleNamespace(role="recruiter", is_staff=False),
        SimpleNamespace(role="intern", is_staff=True, is_active=True),
        SimpleNamespace(role="intern", is_staff=True, is_active=False),
        SimpleNamespace(role="intern", is_staff=False),
    ]
    found = [fast_path(Candidate, actor) for actor in actors]
    assert found == [slow_path(Candidate, actor) for actor in actors]
    assert found[0] == set() and found[1]


# Each policy's filter --------------------------------------------------------------------


def test_a_missing_actor_matches_nothing():
    for policy in (
        actor_attribute_equals("role", None),
        has_perm("testapp.change_case"),
        is_staff,
        relates_to_actor_via("owner"),
        any_of(is_staff, relates_to_actor_via("owner")),
    ):
        assert policy.q(None) == NOTHING, policy
    assert all_of().q(None) == EVERYTHING  # nothing to refuse: as its call allows


def test_attribute_and_staff_policies_are_all_or_nothing():
    staff = SimpleNamespace(role="x", is_staff=True, is_active=True)
    assert actor_attribute_equals("role", "x").q(staff) == EVERYTHING
    assert actor_attribute_equals("role", "y").q(staff) == NOTHING
    assert is_staff.q(staff) == EVERYTHING
    assert is_staff.q(SimpleNamespace(is_staff=True, is_active=False)) == NOTHING


def test_is_staff_is_still_one_policy_that_compares_equal_to_itself():
    from django_workflow import policies

    assert (
        policies.is_staff is is_staff and Candidate.workflow.steps["fast_track"].policy == is_staff
    )
    assert repr(is_staff) == "is_staff"
    assert any_of(is_staff) == any_of(is_staff)


def test_relates_to_actor_via_is_a_lookup_on_the_actor(people):
    member = people["member"]
    assert relates_to_actor_via("team__lead").q(member) == Q(team__lead=member)
    assert relates_to_actor_via("owner").q(SimpleNamespace(pk=None)) == NOTHING


def test_has_perm_says_all_for_a_global_grant(people):
    assert has_perm("testapp.change_case").q(people["grouped"]) == EVERYTHING
    assert has_perm("testapp.change_case").q(people["root"]) == EVERYTHING


def test_has_perm_without_a_grant_depends_on_the_backends(people, settings):
    nobody = people["nobody"]
    with pytest.raises(NotExpressible, match="object-permission backend"):
        has_perm("testapp.change_case").q(nobody)  # django-rules may grant some records
    settings.AUTHENTICATION_BACKENDS = MODEL_BACKEND_ONLY
    assert has_perm("testapp.change_case").q(User.objects.get(pk=nobody.pk)) == NOTHING


def test_an_actor_with_its_own_has_perm_cannot_be_listed():
    actor = SimpleNamespace(has_perm=lambda perm, obj=None: False)
    assert narrowing(has_perm("a.b"), actor).exact is False


def test_any_of_is_exact_when_an_exact_part_allows_everything(people):
    nobody = people["nobody"]
    staff = SimpleNamespace(is_staff=True, is_active=True, has_perm=lambda *a: False, pk=1)
    assert any_of(is_staff, in_the_region).q(staff) == EVERYTHING
    assert narrowing(any_of(relates_to_actor_via("owner"), in_the_region), nobody).exact is False
    with pytest.raises(NotExpressible):
        any_of(relates_to_actor_via("owner"), in_the_region).q(nobody)


def test_all_of_is_exact_when_an_exact_part_allows_nothing(people):
    nobody = people["nobody"]
    assert all_of(is_staff, in_the_region).q(nobody) == NOTHING
    assert all_of(relates_to_actor_via("owner"), is_staff).q(people["staffer"]) == Q(
        owner=people["staffer"]
    )
    narrowed = narrowing(all_of(relates_to_actor_via("owner"), in_the_region), nobody)
    assert (narrowed.q, narrowed.exact) == (Q(owner=nobody), False)


def test_a_policy_without_q_narrows_nothing():
    assert narrowing(in_the_region, None) == narrowing(lambda a, r, n: True, None)
    assert narrowing(in_the_region, None).exact is False


def test_either_keeps_everything_where_django_would_drop_it():
    """``Q() | Q(x=1)`` is ``Q(x=1)`` in Django; "anyone, or the owner" is anyone."""
    assert either(EVERYTHING, Q(owner=1)) == EVERYTHING
    assert either(NOTHING, Q(owner=1)) == Q(owner=1)
    assert either() == NOTHING
