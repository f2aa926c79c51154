"""A join beside the other ways children move (docs/transitions.md, "Joins: a parent
waiting for its children"): the parent's own cascade out of the join step, and children
moved by a transition timeout, fired in batches by the worker."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_workflow import run_work
from django_workflow.models import TransitionLog
from django_workflow.worker.schedulers.polling import poll
from tests.moments import T
from tests.testapp.models import Bottle, Crate

pytestmark = pytest.mark.django_db

SPOIL = "timeout:open.spoil"


def packing(bottles, filled=0):
    """A crate closed for packing with ``bottles`` bottles, the first ``filled`` filled."""
    crate = Crate.objects.create()
    made = [Bottle.objects.create(crate=crate) for _ in range(bottles)]
    for bottle in made[:filled]:
        bottle.fill()
    crate.close()
    return crate, made


def moves_out_of_packing(crates):
    """``{crate pk: [(trigger, to_state, data)]}`` of the crates' moves out of ``packing``."""
    rows = TransitionLog.objects.filter(
        content_type__model="crate",
        object_id__in=[str(crate.pk) for crate in crates],
        from_state="packing",
    )
    found = {crate.pk: [] for crate in crates}
    for pk, trigger, to, data in rows.values_list("object_id", "triggered_by", "to_state", "data"):
        found[int(pk)].append((trigger, to, data))
    return found


def states(records):
    model = type(records[0])
    return list(
        model.objects.filter(pk__in=[r.pk for r in records]).values_list("state", flat=True)
    )


def test_a_cancel_out_of_a_join_step_voids_the_last_children_without_completing_the_join():
    crate, bottles = packing(bottles=3, filled=1)
    crate.cancel()  # voiding the two open bottles leaves every bottle in all_in
    assert crate.state == "cancelled" and states([crate]) == ["cancelled"]
    assert states(bottles) == ["filled", "void", "void"]
    counts = {"cascaded": 2, "cascade": {"bottles": {"moved": 2, "stayed": 1}}}
    assert moves_out_of_packing([crate]) == {crate.pk: [("manual", "cancelled", counts)]}


def test_a_crate_the_join_moved_first_refuses_the_cancel_and_changes_nothing():
    crate, bottles = packing(bottles=2, filled=1)
    loaded = Crate.objects.get(pk=crate.pk)
    bottles[1].fill()  # completes the join: the crate is sealed
    with pytest.raises(Exception) as raised:
        loaded.cancel()
    assert type(raised.value).__name__ == "StaleRecord"
    assert states([crate]) == ["sealed"] and states(bottles) == ["filled", "filled"]
    assert moves_out_of_packing([crate])[crate.pk] == [
        ("join", "sealed", {"child": f"testapp.Bottle {bottles[1].pk}"})
    ]


def crate_reads(queries):
    """The statements of a run that read a crate: each join evaluation locks and reads one."""
    return [
        q for q in queries if q["sql"].startswith("SELECT") and 'FROM "testapp_crate"' in q["sql"]
    ]


@pytest.mark.parametrize("fire", ["poll", "run_work"])
def test_bottles_spoiled_in_one_batch_move_each_crate_exactly_once(time_machine, fire):
    time_machine.move_to(T, tick=False)
    crates = [packing(bottles=3)[0] for _ in range(4)]
    time_machine.move_to(T + timedelta(hours=1, minutes=1), tick=False)
    if fire == "poll":  # the worker's polling task: every due deadline of the model
        assert poll("testapp.Bottle", [SPOIL]) == {SPOIL: 12}
    else:
        assert run_work(Bottle, SPOIL) == 12
    assert set(states(crates)) == {"sealed"}
    moved = moves_out_of_packing(crates)
    for crate in crates:  # one join row each, naming the crate's first bottle moved
        first = crate.bottles.order_by("pk").first()
        assert moved[crate.pk] == [("join", "sealed", {"child": f"testapp.Bottle {first.pk}"})]


def test_batches_splitting_a_crates_bottles_move_it_once_when_its_last_batch_fires(time_machine):
    time_machine.move_to(T, tick=False)
    crates = [packing(bottles=3)[0] for _ in range(3)]
    time_machine.move_to(T + timedelta(hours=2), tick=False)
    # Batches of 2: the second crate's bottles are spoiled by two batches.
    assert run_work(Bottle, SPOIL, batch_size=2) == 9
    assert set(states(crates)) == {"sealed"}
    moved = moves_out_of_packing(crates)
    for crate in crates:  # one join row each, naming a bottle of the batch completing it
        [(trigger, to, data)] = moved[crate.pk]
        assert (trigger, to) == ("join", "sealed")
        assert data["child"] in {f"testapp.Bottle {b.pk}" for b in crate.bottles.all()}


def spoiled_queries(time_machine, crates, bottles, start):
    """The statements of one batch spoiling ``bottles`` bottles of each of ``crates``
    crates; the crates are made at ``start``."""
    time_machine.move_to(start, tick=False)
    made = [packing(bottles=bottles)[0] for _ in range(crates)]
    time_machine.move_to(start + timedelta(hours=1, minutes=1), tick=False)
    with CaptureQueriesContext(connection) as queries:
        assert run_work(Bottle, SPOIL) == crates * bottles
    assert set(states(made)) == {"sealed"}
    return queries.captured_queries


def test_a_batch_adds_no_statement_per_child(time_machine):
    spoiled_queries(time_machine, crates=1, bottles=1, start=T)  # warm the caches
    few = spoiled_queries(time_machine, crates=3, bottles=2, start=T + timedelta(days=1))
    many = spoiled_queries(time_machine, crates=3, bottles=6, start=T + timedelta(days=2))
    assert len(many) == len(few), [q["sql"][:80] for q in many]
    assert len(crate_reads(many)) == 3  # each crate evaluated once
