"""System checks rule by rule, on throwaway models declared in an isolated app registry."""

from django.db import models
from django.db.models import Q

from django_workflow import Route, Step, Timeout, Transition, Undo
from django_workflow.checks import check_model


def ids(model):
    return [message.id.removeprefix("django_workflow.") for message in check_model(model)]


def act(self):
    pass


def test_an_automatic_step_with_only_conditional_routes_has_no_way_out_on_failure(declare):
    class Workflow:
        start = Step(action="act", on_success=[Route("done", when=Q(n=1))])
        done = Step()

    model = declare(Workflow, n=models.IntegerField(default=0), act=act)
    assert ids(model) == ["E010"]


def test_a_transition_timeout_is_a_way_out_on_failure(declare):
    class Workflow:
        start = Step(
            Timeout("give_up", fire_after="1d", transition_to="done"),
            action="act",
            on_success=[Route("done", when=Q(n=1))],
        )
        done = Step()

    model = declare(Workflow, n=models.IntegerField(default=0), act=act)
    assert ids(model) == []


def test_an_action_timeout_is_no_way_out_on_failure(declare):
    class Workflow:
        start = Step(
            Timeout("remind", fire_after="1d", action="act"),
            action="act",
            on_success=[Route("done", when=Q(n=1))],
        )
        done = Step()

    model = declare(Workflow, n=models.IntegerField(default=0), act=act)
    assert ids(model) == ["E010"]


def test_undo_with_no_undoable_transition_is_warned_about(declare):
    class Workflow:
        log = True
        undo = Undo(within="30m")
        start = Step(Transition("go", to="done"))
        done = Step()

    model = declare(Workflow)
    assert ids(model) == ["W006"]
    [warning] = check_model(model)
    assert "`Workflow.undo` is set but no step has an undoable=True transition" in warning.msg
    assert warning.hint.startswith("Mark the transitions")


def test_undo_with_an_undoable_transition_is_accepted(declare):
    class Workflow:
        log = True
        undo = Undo(within="30m")
        start = Step(Transition("go", to="done", undoable=True))
        done = Step()

    assert ids(declare(Workflow)) == []


def test_an_undoable_transition_without_undo_is_an_error(declare):
    class Workflow:
        log = True
        start = Step(Transition("go", to="done", undoable=True))
        done = Step()

    [error] = check_model(declare(Workflow))
    assert error.id == "django_workflow.E030"
    assert "step 'start', transition 'go' is undoable=True but the workflow has no `undo`" in (
        error.msg
    )
    assert error.hint.startswith("Set `undo = Undo(...)`")


def test_an_undo_of_the_wrong_type_is_reported_once_not_as_missing(declare):
    class Workflow:
        log = True
        undo = "30m"
        start = Step(Transition("go", to="done", undoable=True))
        done = Step()

    assert ids(declare(Workflow)) == ["E027"]


def test_a_label_that_is_not_text_is_an_error(declare):
    class Workflow:
        start = Step(Transition("go", to="done", label=3), label=["Start"])
        done = Step()

    errors = check_model(declare(Workflow))
    assert [e.id for e in errors] == ["django_workflow.E031", "django_workflow.E031"]
    assert "step 'start' has label=['Start']" in errors[0].msg
    assert "step 'start', transition 'go' has label=3" in errors[1].msg


def test_lazy_translations_are_labels(declare):
    from django.utils.translation import gettext_lazy

    class Workflow:
        start = Step(Transition("go", to="done", label=gettext_lazy("Go on")), label="Begin")
        done = Step()

    assert ids(declare(Workflow)) == []


def test_accepting_a_name_reserved_for_the_log_row_is_an_error(declare):
    class Workflow:
        start = Step(Transition("go", to="done", accept=["comment"]))
        done = Step()

    model = declare(Workflow, comment=models.TextField())
    [error] = check_model(model)
    assert error.id == "django_workflow.E020" and "reserves for its log row" in error.msg


def test_a_when_that_is_no_q_nor_callable_or_reads_no_field_is_an_error(declare):
    class Workflow:
        start = Step(
            Transition("go", to="done", when="yes"),
            Transition("run", to="done", when=Q(sponsor__name="Fast")),
        )
        done = Step()

    errors = check_model(declare(Workflow))
    assert [e.id for e in errors] == ["django_workflow.E032", "django_workflow.E032"]
    assert "when reads 'sponsor'" in errors[1].msg


def test_a_transition_action_that_is_no_method_is_an_error(declare):
    class Workflow:
        start = Step(Transition("go", to="done", action="stamp"))
        done = Step()

    [error] = check_model(declare(Workflow))
    assert error.id == "django_workflow.E033" and "action 'stamp'" in error.msg


def test_from_any_step_naming_an_unknown_step_or_of_the_wrong_type_is_an_error(declare):
    class Workflow:
        from_any_step = [Transition("cancel", to="binned")]
        start = Step(Transition("go", to="done"))
        done = Step()

    [error] = check_model(declare(Workflow))
    assert error.id == "django_workflow.E012" and error.msg.startswith("from_any_step, transition")

    class Wrong:
        from_any_step = Transition("cancel", to="done")
        start = Step(Transition("go", to="done"))
        done = Step()

    assert ids(declare(Wrong)) == ["E027"]


def test_a_route_or_when_following_a_relation_is_an_error_with_a_hint(declare):
    class Workflow:
        start = Step(
            Transition(
                "route",
                Route("done", when=Q(owner__username="ana")),
                Route("done"),
            ),
            Transition("guarded", to="done", when=Q(owner__isnull=False)),  # the FK itself
            Transition("other", to="done", when=Q(owner__email__endswith="@x.org")),
        )
        done = Step()

    errors = check_model(declare(Workflow, owner=models.ForeignKey("auth.User", models.CASCADE)))
    assert [e.id for e in errors] == ["django_workflow.E035", "django_workflow.E035"]
    assert "'owner__username' follows the relation 'owner'" in errors[0].msg
    assert errors[0].hint.startswith("Use a callable instead")


def test_a_time_limit_bounds_an_on_enter_too_and_needs_one_of_action_or_on_enter(declare):
    class Workflow:
        waiting = Step(Transition("go", to="done"), on_enter="act", time_limit="30s")
        done = Step(time_limit="30s")

    model = declare(Workflow, act=act)
    assert ids(model) == ["E022"]
