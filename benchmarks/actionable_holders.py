"""``Duty.objects.actionable_by(user)`` with holders and absences, against a hand-written
query of the same meaning.

The model is ``benchapp.Duty`` (``Workflow.assignment = True``): ``open`` is
triaged by whoever holds ``benchapp.change_duty``, anyone claims ``working``
(``claim=True``), staff claim ``review`` (``claim=True``), the owner closes
``done``; ``archived`` is final. ``BENCH_ROWS`` rows (default 1,000,000) are
spread over the steps and built as ``benchmarks/common.py`` builds tables
(``TEMPLATES`` rows made in Python, copied in SQL): most ``working`` and
``review`` rows are held (claimed), a few ``open`` ones (assigned), holders and
owners drawn from ``USERS`` users. ``ABSENCES`` users are away now, each with a
delegate; as many absences are over and as many yet to come.

Three actors, three questions each:

- "holder": no permission, not staff; holds a few thousand rows per million;
- "delegate": the same, and stands in for an absent holder (an active ``Absence``;
  an ended one for a second user must not count);
- "manager": the permission and staff;
- ``count()`` of the whole answer, the first page (50 keys by key), and the first page
  of what the actor holds ("held page": ``.filter(assignee=actor)`` on both sides, the
  "Held by me" list).

The hand-written side is the ORM filter a developer writes for that actor, e.g. for
the holder ``(Q(state="working") | Q(state="done", owner=me)) & (Q(assignee=None) |
Q(assignee=me) | Q(assignee__in=<whom I stand in for now>))``: the absences are read in
the same query, as nobody knows in advance who stands in. Both sides must return the
same keys (checked before timing). Each round runs ``BENCH_CALLS`` calls of each side,
alternated; the figure is the median round's median call, [min-max] over rounds.
Targets: actionable_by / hand-written <= 1.5; on PostgreSQL, a page <= 50 ms. The
pages' plans (``EXPLAIN ANALYZE``) are printed for each actor on PostgreSQL.

    eval "$(scripts/postgres.sh start)"; .venv/bin/python benchmarks/actionable_holders.py
    BENCH_DATABASES=default .venv/bin/python benchmarks/actionable_holders.py   (SQLite only)
"""

import os
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("actionable_holders")

import django
from django.conf import settings


class AuthBesideTheRows:
    """Users, permissions and absences in the database measured, as in a real project: the
    actor's ``has_perm`` reads them there, and the absences are a subquery of the rows'."""

    def db_for_read(self, model, **hints):
        if model._meta.app_label in ("auth", "contenttypes", "django_workflow"):
            return settings.BENCH_DATABASE[0]
        return None

    db_for_write = db_for_read


settings.DATABASE_ROUTERS = [AuthBesideTheRows(), *settings.DATABASE_ROUTERS]
django.setup()

from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.db.models import Q
from django.utils import timezone

from benchmarks import common
from benchmarks.benchapp.models import Duty
from django_workflow.models import Absence

USERS = int(os.environ.get("BENCH_USERS", 2000))
ABSENCES = int(os.environ.get("BENCH_ABSENCES", 50))
CALLS = int(os.environ.get("BENCH_CALLS", 10))
ROUNDS = common.ROUNDS
DATABASES = os.environ.get("BENCH_DATABASES", "postgres,default").split(",")
STEPS = ["open"] * 3 + ["working"] * 3 + ["review"] * 2 + ["done"] * 1 + ["archived"] * 1
#: The share of a step's rows someone holds.
HELD = {"open": 0.1, "working": 0.85, "review": 0.6, "done": 0.0, "archived": 0.0}
#: Keys' places in ``people``: the actors, the holder the delegate stands in for, and a
#: user whose absence is over (what they hold is not the delegate's).
HOLDER, DELEGATE, MANAGER, AWAY, BACK = range(5)
PAGE = 50


def people(alias):
    """``USERS`` users; the manager is staff and may change duties."""
    users = User.objects.using(alias)
    if users.count() != USERS:
        users.all().delete()
        users.bulk_create([User(username=f"user{n}") for n in range(USERS)])
    keys = list(users.order_by("pk").values_list("pk", flat=True))
    manager = users.get(pk=keys[MANAGER])
    if not manager.is_staff:
        manager.is_staff = True
        manager.save(using=alias)
        change = Permission.objects.using(alias).get(codename="change_duty")
        manager.user_permissions.add(change)
    return keys


def absences(alias, keys, now):
    """``ABSENCES`` users away now (the first: ``AWAY``, for the delegate), as many back
    already (the first: ``BACK``, for the delegate too) and as many yet to leave."""
    Absence.objects.using(alias).all().delete()
    day = timedelta(days=1)
    rows = [
        Absence(
            user_id=keys[AWAY], delegate_id=keys[DELEGATE], starts_at=now - day, ends_at=now + day
        ),
        Absence(
            user_id=keys[BACK],
            delegate_id=keys[DELEGATE],
            starts_at=now - 9 * day,
            ends_at=now - day,
        ),
    ]
    for n in range(1, ABSENCES):
        user, delegate = keys[100 + 3 * n], keys[101 + 3 * n]
        rows.append(
            Absence(user_id=user, delegate_id=delegate, starts_at=now - day, ends_at=now + 2 * day)
        )
        rows.append(
            Absence(
                user_id=delegate, delegate_id=user, starts_at=now - 9 * day, ends_at=now - 2 * day
            )
        )
        rows.append(
            Absence(user_id=user + 1, delegate_id=user, starts_at=now + day, ends_at=now + 5 * day)
        )
    Absence.objects.using(alias).bulk_create(rows)


def maker(keys):
    named = [keys[HOLDER], keys[DELEGATE], keys[AWAY], keys[BACK]]

    def make(index, rng):
        state = rng.choice(STEPS)
        values = {"state": state, "owner_id": rng.choice(keys)}
        if rng.random() < HELD[state]:
            # the named users hold a few thousand rows per million, whatever the seed
            place = index % 500
            values["assignee_id"] = named[place] if place < len(named) else rng.choice(keys)
            values["assigned_at"] = common.NOW - timedelta(hours=rng.uniform(1, 48))
        if index % 1000 < 3:
            values["owner_id"] = named[index % 1000]
        return values

    return make


def actors(alias, keys):
    """Fresh instances, their permissions loaded once (as a request's user has them)."""
    found = {}
    for name, place in (("holder", HOLDER), ("delegate", DELEGATE), ("manager", MANAGER)):
        found[name] = User.objects.using(alias).get(pk=keys[place])
        found[name].has_perm("benchapp.change_duty")
    return found


def by_hand(name, actor):
    """What a developer writes for that actor, knowing their permissions."""
    if name == "manager":
        steps = Q(state__in=["open", "working", "review"]) | Q(state="done", owner=actor)
    else:
        steps = Q(state="working") | Q(state="done", owner=actor)
    away = Absence.objects.filter(
        delegate=actor, starts_at__lte=timezone.now(), ends_at__gt=timezone.now()
    )
    holders = Q(assignee=None) | Q(assignee=actor) | Q(assignee__in=away.values("user"))
    return steps & holders


def first_page(rows):
    return list(rows.order_by("pk").values_list("pk", flat=True)[:PAGE])


#: What is asked of each side's rows for an actor.
QUESTIONS = {
    "count": lambda rows, actor: rows.count(),
    "first page": lambda rows, actor: first_page(rows),
    "held page": lambda rows, actor: first_page(rows.filter(assignee=actor)),
}
#: The questions whose answer is a page someone waits for: <= 50 ms on PostgreSQL.
PAGES = ("first page", "held page")


def sides(alias, name, actor, question):
    rows = Duty.objects.using(alias)
    ask = QUESTIONS[question]
    return {
        "actionable_by": lambda: ask(rows.actionable_by(actor), actor),
        "hand-written": lambda: ask(rows.filter(by_hand(name, actor)), actor),
    }


def check_same(alias, name, actor, keys):
    """Both sides list the same keys; a sample has an available action (or a claim)."""
    rows = Duty.objects.using(alias)
    ours = set(rows.actionable_by(actor).values_list("pk", flat=True))
    theirs = set(rows.filter(by_hand(name, actor)).values_list("pk", flat=True))
    assert ours == theirs, f"{name}: {len(ours)} != {len(theirs)}"
    sample = rows.filter(pk__in=sorted(ours)[:300])
    idle = [r.pk for r in sample if not (r.available_actions(actor) or r.assignee_id is None)]
    assert not idle, f"{name}: records without an available action: {idle[:5]}"
    held = rows.actionable_by(actor).exclude(assignee=None).values_list("assignee_id", flat=True)
    mine = {keys[AWAY], actor.pk} if name == "delegate" else {actor.pk}
    held = set(held.distinct())
    assert held <= mine, f"{name}: lists records held by {held - mine}"
    if name == "delegate":
        assert keys[AWAY] in held, "the delegate does not see the absent holder's records"
    return len(ours)


def plan(alias, actor, held=False):
    """A first page's plan, run (``EXPLAIN ANALYZE``), on PostgreSQL."""
    page = Duty.objects.using(alias).actionable_by(actor).order_by("pk")
    if held:
        page = page.filter(assignee=actor)
    return page.values_list("pk", flat=True)[:PAGE].explain(analyze=True)


def measure(alias):
    common.use(alias)
    call_command("migrate", database=alias, run_syncdb=True, verbosity=0)
    keys = people(alias)
    absences(alias, keys, timezone.now())
    seconds = common.load(Duty, alias, common.ROWS, make=maker(keys))
    found = {"plans": {}}
    for name, actor in actors(alias, keys).items():
        found[name] = check_same(alias, name, actor, keys)
        for question in QUESTIONS:
            calls = sides(alias, name, actor, question)
            for call in calls.values():  # warm caches and plans
                call()
            per_round = {
                label: (lambda call=call: common.per_call(call, CALLS))
                for label, call in calls.items()
            }
            found[(name, question)] = common.alternate(per_round, rounds=ROUNDS)
        if alias == "postgres":
            found["plans"][f"{name}, first page"] = plan(alias, actor)
            found["plans"][f"{name}, held page"] = plan(alias, actor, held=True)
    return seconds, found


def report(alias, seconds, found):
    label = "postgresql" if alias == "postgres" else "sqlite"
    print()
    print(
        f"{label}: {common.ROWS:,} duties (built in {seconds:.0f} s), {USERS:,} users, "
        f"{ABSENCES} absences under way; {ROUNDS} rounds x {CALLS} calls, alternated; "
        "median [min-max], ms per call"
    )
    for name in ("holder", "delegate", "manager"):
        print(f"  {name}: {found[name]:,} actionable records")
        for question in QUESTIONS:
            timings = found[(name, question)]
            ours, theirs = timings["actionable_by"], timings["hand-written"]
            ratio = common.med(ours) / common.med(theirs)
            line = (
                f"    {question:<11} actionable_by {common.spread(ours, 1e3, 2):>24}   "
                f"hand-written {common.spread(theirs, 1e3, 2):>24}   ratio {ratio:4.2f}  "
                f"target <= 1.5  {common.verdict(ratio <= 1.5)}"
            )
            if question in PAGES and alias == "postgres":
                fast = common.med(ours) <= 0.050
                line += f"; <= 50 ms  {common.verdict(fast)}"
            print(line)
    for name, text in found["plans"].items():
        print(f"  plan, {name}:")
        for row in text.splitlines():
            print(f"    {row}")


def main():
    print(f"machine: {common.machine()}")
    results = {alias: measure(alias) for alias in DATABASES}
    for alias, (seconds, found) in results.items():
        report(alias, seconds, found)
    print(f"machine at the end: {common.machine()}")


if __name__ == "__main__":
    main()
