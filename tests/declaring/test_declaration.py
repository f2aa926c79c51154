"""Declaration objects and the compiled workflow: docs/declaring.md."""

from datetime import timedelta

import pytest
from django.db.models import Q

from django_workflow import Retry, Route, Step, Transition, Undo
from django_workflow.durations import BusinessDays, InvalidDuration, parse_duration, parse_timedelta
from django_workflow.model.compiled import OPTIONS, compile_workflow
from tests.testapp.models import Candidate, Order


@pytest.mark.parametrize(
    "value, expected",
    [
        ("30s", timedelta(seconds=30)),
        ("5m", timedelta(minutes=5)),
        ("4h", timedelta(hours=4)),
        ("2d", timedelta(days=2)),
        ((3, "days"), timedelta(days=3)),
        ((90, "seconds"), timedelta(seconds=90)),
        (timedelta(minutes=2), timedelta(minutes=2)),
        ("3bd", BusinessDays(3)),
        ((2, "business_days"), BusinessDays(2)),
    ],
)
def test_durations_read_every_documented_form(value, expected):
    assert parse_duration(value) == expected


@pytest.mark.parametrize(
    "value", ["soon", "5 parsecs", (3, "weeks"), (2.5, "days"), "0s", -1, None]
)
def test_a_bad_duration_is_an_error_that_quotes_it(value):
    with pytest.raises(InvalidDuration) as caught:
        parse_duration(value)
    assert repr(value) in str(caught.value)


def test_business_days_are_only_for_deadlines():
    with pytest.raises(InvalidDuration, match="'2bd': business days are only for deadlines"):
        parse_timedelta("2bd")


def test_a_transition_has_exactly_the_targets_it_names():
    assert Transition("go", to="done").targets == ("done",)
    routed = Transition("go", Route("a", when=Q(x=1)), Route("b"))
    assert routed.targets == ("a", "b")
    assert Transition("go", accept="reason").accept == ("reason",)


def test_on_success_as_a_name_is_one_unconditional_route():
    assert Step(action="run", on_success="done").routes == (Route("done"),)


@pytest.mark.parametrize(
    "step, kind",
    [
        (Step(action="run", on_success="done"), "automatic"),
        (Step(Transition("go", to="done")), "manual"),
        (Step(), "terminal"),
        (Step(terminal=True), "terminal"),
    ],
)
def test_step_kinds_follow_what_the_step_declares(step, kind):
    assert step.kind == kind


def test_declarations_never_raise_on_bad_arguments():
    Transition("go")
    Transition(7, Route("a"), to="b", accept=3)
    Step("not a transition", retry=3, time_limit="soon")
    Retry(max_attempts=0)
    Undo(within="never")


def test_options_take_their_defaults():
    workflow = Order.workflow
    assert (workflow.check_interval, workflow.scheduler, workflow.time_zone) == (
        "* * * * *",
        "polling",
        "UTC",
    )
    assert (workflow.state_attribute, workflow.queue, workflow.log) == ("status", "orders", True)
    assert set(OPTIONS) >= {"state_attribute", "undo", "policies", "calculations", "holidays"}


def test_unknown_options_are_kept_for_the_checks_not_raised():
    class Declaration:
        stat_attribute = "status"
        start = Step()

    workflow = compile_workflow(None, Declaration)
    assert workflow.unknown_options == ["stat_attribute"]
    assert workflow.state_attribute == "state"


def test_a_workflow_may_extend_another():
    class Base:
        log = True
        start = Step(Transition("go", to="done"))
        done = Step()

    class Extended(Base):
        queue = "special"
        done = Step(Transition("reopen", to="start"))

    workflow = compile_workflow(None, Extended)
    assert list(workflow.steps) == ["start", "done"]
    assert (workflow.log, workflow.queue) == (True, "special")
    assert workflow.steps["done"].is_manual


def test_model_workflow_exposes_the_compiled_declaration():
    workflow = Candidate.workflow
    assert workflow.model is Candidate
    assert workflow.initial_step == "screening"
    assert workflow.transition("interview", "approve").to == "offer"
    assert workflow.transition("screening", "approve") is None
    assert workflow.policy_for("fast_track", "approve") is workflow.policies["approve"]


def test_transitions_are_hashable_as_django_fsm_users_keep_them():
    # Release 3 raised "unhashable type: 'dict'" (its custom data is a dict).
    publish = Transition("publish", to="published", custom={"icon": "send"})
    same = Transition("publish", to="published", custom={"icon": "send"})
    other = Transition("publish", to="archived")
    assert {publish, same, other} == {publish, other}
    assert {publish: "kept"}[same] == "kept"
    voids = [Transition("void", to="x", cascade={"lines": "void"}) for _ in range(2)]
    assert len(set(voids)) == 1
