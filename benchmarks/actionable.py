"""``Model.objects.actionable_by(actor)`` against a hand-written query of the same meaning.

The model is ``benchapp.Assignment``: five steps, each guarded by a different
shipped policy (``has_perm`` with a ``when=Q(priority__gte=2)`` guard on
``open``, the owner on ``working``, ``any_of(reviewer, is_staff)`` on
``review``, ``all_of(owner, has_perm)`` on ``done``; ``archived`` is final).
``BENCH_ROWS`` rows (default 1,000,000) are spread over the steps, their
owner and reviewer drawn from ``USERS`` users (a tenth have none), built as
``benchmarks/common.py`` builds tables: ``TEMPLATES`` rows made in Python,
copied in SQL.

Two actors, two questions each:

- "worker": no permission, not staff: what they own in ``working`` and
  review in ``review`` — a few hundred rows found through the indexes;
- "manager": the permission and staff: every ``open`` row with priority
  >= 2, every ``review`` row, what they own in ``working`` and ``done`` —
  hundreds of thousands of rows, the worst case for the size of the answer;
- ``count()`` of the whole answer, and the first page (50 keys by key).

The hand-written side is the ORM filter a developer would write for that
actor, e.g. for the worker ``Q(state="working", owner=worker) |
Q(state="review", reviewer=worker)``; both sides must return the same keys
(checked before timing). ``actionable_by`` builds its filter from the
declaration on every call (the actor's permissions cached as Django caches
them). Each round runs ``BENCH_CALLS`` calls of each side, alternated; the
figure is the median round's median call, [min-max] over rounds.
Target: actionable_by / hand-written <= 1.5.

    make bench BENCHMARKS=benchmarks/actionable.py          (starts PostgreSQL)
    BENCH_DATABASES=default .venv/bin/python benchmarks/actionable.py   (SQLite only)
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from benchmarks import database

database.own("actionable")

import django
from django.conf import settings


class AuthBesideTheRows:
    """Users, groups and permissions in the database measured, as in a real project: the
    actor's ``has_perm`` reads them there (``ModelBackend`` asks the default otherwise)."""

    def db_for_read(self, model, **hints):
        if model._meta.app_label in ("auth", "contenttypes"):
            return settings.BENCH_DATABASE[0]
        return None

    db_for_write = db_for_read


settings.DATABASE_ROUTERS = [AuthBesideTheRows(), *settings.DATABASE_ROUTERS]
django.setup()

from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.db.models import Q

from benchmarks import common
from benchmarks.benchapp.models import Assignment

USERS = int(os.environ.get("BENCH_USERS", 2000))
CALLS = int(os.environ.get("BENCH_CALLS", 10))
ROUNDS = common.ROUNDS
DATABASES = os.environ.get("BENCH_DATABASES", "postgres,default").split(",")
STEPS = ["open"] * 3 + ["working"] * 3 + ["review"] * 2 + ["done"] * 1 + ["archived"] * 1


def people(alias):
    """``USERS`` users; the first is the worker, the second the manager."""
    users = User.objects.using(alias)
    if users.count() != USERS:
        users.all().delete()
        users.bulk_create([User(username=f"user{n}") for n in range(USERS)])
    keys = list(users.order_by("pk").values_list("pk", flat=True))
    manager = users.get(pk=keys[1])
    if not manager.is_staff:
        manager.is_staff = True
        manager.save(using=alias)
        change = Permission.objects.using(alias).get(codename="change_assignment")
        manager.user_permissions.add(change)
    return keys


def maker(keys):
    def make(index, rng):
        def someone():
            if index % 500 == 0:
                return keys[0]  # the worker: a few hundred rows per million, whatever the seed
            return None if rng.random() < 0.1 else rng.choice(keys)

        return {
            "state": rng.choice(STEPS),
            "owner_id": someone(),
            "reviewer_id": someone(),
            "priority": rng.randint(0, 4),
        }

    return make


def actors(alias, keys):
    """Fresh instances, their permissions loaded once (as a request's user has them)."""
    worker = User.objects.using(alias).get(pk=keys[0])
    manager = User.objects.using(alias).get(pk=keys[1])
    for actor in (worker, manager):
        actor.has_perm("benchapp.change_assignment")
    return {"worker": worker, "manager": manager}


def by_hand(name, actor):
    """What a developer writes for that actor, knowing who they are."""
    if name == "worker":
        return Q(state="working", owner=actor) | Q(state="review", reviewer=actor)
    return (
        Q(state="open", priority__gte=2)
        | Q(state="working", owner=actor)
        | Q(state="review")
        | Q(state="done", owner=actor)
    )


QUESTIONS = {
    "count": lambda rows: rows.count(),
    "first page": lambda rows: list(rows.order_by("pk").values_list("pk", flat=True)[:50]),
}


def sides(alias, name, actor, question):
    rows = Assignment.objects.using(alias)
    ask = QUESTIONS[question]
    return {
        "actionable_by": lambda: ask(rows.actionable_by(actor)),
        "hand-written": lambda: ask(rows.filter(by_hand(name, actor))),
    }


def check_same(alias, name, actor):
    rows = Assignment.objects.using(alias)
    ours = set(rows.actionable_by(actor).values_list("pk", flat=True))
    theirs = set(rows.filter(by_hand(name, actor)).values_list("pk", flat=True))
    slow = {r.pk for r in rows.filter(pk__in=list(ours)[:300]) if r.available_actions(actor)}
    assert ours == theirs, f"{name}: {len(ours)} != {len(theirs)}"
    assert slow == set(list(ours)[:300]), f"{name}: a record without an available action"
    return len(ours)


def measure(alias):
    common.use(alias)
    call_command("migrate", database=alias, run_syncdb=True, verbosity=0)
    keys = people(alias)
    seconds = common.load(Assignment, alias, common.ROWS, make=maker(keys))
    found = {}
    for name, actor in actors(alias, keys).items():
        found[name] = check_same(alias, name, actor)
        for question in QUESTIONS:
            calls = sides(alias, name, actor, question)
            for call in calls.values():  # warm caches and plans
                call()
            per_round = {
                label: (lambda call=call: common.per_call(call, CALLS))
                for label, call in calls.items()
            }
            found[(name, question)] = common.alternate(per_round, rounds=ROUNDS)
    return seconds, found


def report(alias, seconds, found):
    label = "postgresql" if alias == "postgres" else "sqlite"
    print()
    print(
        f"{label}: {common.ROWS:,} assignments (built in {seconds:.0f} s), {USERS:,} users; "
        f"{ROUNDS} rounds x {CALLS} calls, alternated; median [min-max], ms per call"
    )
    for name in ("worker", "manager"):
        print(f"  {name}: {found[name]:,} actionable records")
        for question in QUESTIONS:
            timings = found[(name, question)]
            ours, theirs = timings["actionable_by"], timings["hand-written"]
            ratio = common.med(ours) / common.med(theirs)
            print(
                f"    {question:<11} actionable_by {common.spread(ours, 1e3, 2):>24}   "
                f"hand-written {common.spread(theirs, 1e3, 2):>24}   ratio {ratio:4.2f}  "
                f"target <= 1.5  {common.verdict(ratio <= 1.5)}"
            )


def main():
    print(f"machine: {common.machine()}")
    results = {alias: measure(alias) for alias in DATABASES}
    for alias, (seconds, found) in results.items():
        report(alias, seconds, found)
    print(f"machine at the end: {common.machine()}")


if __name__ == "__main__":
    main()
