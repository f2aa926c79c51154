"""``record.workflow``: every call the library offers on a record, under one name that
no transition can take; a transition named like one of the shortcuts takes the name on
its model (docs: declaring.md, "Names on a record")."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User

from django_workflow.checks import check_model
from django_workflow.model.compiled import CompiledWorkflow
from django_workflow.record_workflow import SHORTCUTS, RecordWorkflow
from django_workflow.testing import run_due_work
from tests.testapp.models import Notice, Ticket

pytestmark = pytest.mark.django_db


@pytest.fixture
def editor():
    return User.objects.create_user("editor")


def test_on_the_class_it_is_the_declaration_on_a_record_the_record_calls():
    assert isinstance(Notice.workflow, CompiledWorkflow)
    record = Notice(title="x")
    assert isinstance(record.workflow, RecordWorkflow)
    assert record.workflow.steps is Notice.workflow.steps  # the declaration's attributes
    assert record.workflow.current_step == "draft"


def test_transitions_named_like_library_calls_pass_check():
    assert check_model(Notice) == []


def test_a_transition_takes_the_name_of_a_library_call(editor):
    record = Notice.objects.create(title="x")
    record.release(actor=editor)
    assert record.workflow.current_step == "published"
    record.history(actor=editor)
    assert record.workflow.current_step == "archived"
    names = [row.transition_name for row in record.workflow.history()]
    assert names == ["", "release", "history"]


def test_a_transition_named_retract_or_undo_runs_the_transition(editor):
    withdrawn = Notice.objects.create(title="x")
    withdrawn.retract(actor=editor, comment="changed our mind")
    assert withdrawn.workflow.current_step == "withdrawn"
    assert withdrawn.workflow.history().last().comment == "changed our mind"

    back = Notice.objects.create(title="y")
    back.release(actor=editor)
    back.undo(actor=editor)
    assert back.workflow.current_step == "draft"
    assert back.workflow.history().last().transition_name == "undo"


def test_a_transition_named_current_step_leaves_the_step_readable(editor):
    record = Notice.objects.create(title="x")
    record.current_step(actor=editor)  # the transition, a self-loop
    assert record.workflow.current_step == "draft"
    assert record.workflow.history().last().transition_name == "current_step"


def test_the_holder_calls_stay_reachable_beside_transitions_of_their_names(editor):
    record = Notice.objects.create(title="x")
    record.workflow.claim(editor)
    assert record.assignee == editor
    record.workflow.release(editor)
    assert record.assignee is None
    assert record.workflow.current_step == "draft"  # the release transition did not run
    record.release(actor=editor)  # the transition
    record.assign(actor=editor)  # the transition: back to draft
    assert record.workflow.current_step == "draft"


def test_every_shortcut_on_a_model_is_a_call_of_record_workflow():
    for name in SHORTCUTS:
        assert callable(getattr(RecordWorkflow, name)), name
    ticket = Ticket.objects.create()
    assert ticket.available_actions() == ticket.workflow.available_actions()
    assert list(ticket.history()) == list(ticket.workflow.history())
    assert ticket.pending_deadlines() == ticket.workflow.pending_deadlines()


def test_undo_passes_over_the_reminders_an_every_sent_in_the_stay(clock, editor):
    # Release 3 refused it: "the work of the step the move entered has already started".
    record = Notice.objects.create(title="x")
    record.release(actor=editor)
    clock.shift(timedelta(hours=2, minutes=1))
    run_due_work()
    record.refresh_from_db()
    assert record.reminders >= 1
    record.workflow.undo(editor)
    assert record.workflow.current_step == "draft"
    undone = record.workflow.history().last()
    assert (undone.triggered_by, undone.reverses.transition_name) == ("undo", "release")


def test_a_transition_cannot_take_the_name_workflow(declare):
    from django_workflow import Step, Transition

    class Workflow:
        start = Step(Transition("workflow", to="done"))
        done = Step()

    model = declare(Workflow)
    assert [error.id for error in check_model(model)] == ["django_workflow.E017"]
    assert isinstance(model(pk=1).workflow, RecordWorkflow)  # the calls stay reachable


def test_templates_never_call_the_calls_that_change_data(editor):
    from django.template import Context, Template

    record = Notice.objects.create(title="x")
    record.release(actor=editor)
    page = Template(
        "{{ record.workflow.undo }}|{{ record.workflow.transition }}|{{ record.history }}|"
        "{{ record.workflow.current_step }}"
    ).render(Context({"record": record}))
    assert page.endswith("|published")
    assert Notice.objects.get(pk=record.pk).state == "published"  # nothing undone, nothing run


def test_the_declarations_lookup_through_a_record_still_answers_and_warns():
    # Before release 4, record.workflow was the declaration: transition(step, name) a lookup.
    record = Ticket.objects.create()
    with pytest.warns(DeprecationWarning, match="type\\(record\\).workflow.transition"):
        found = record.workflow.transition("new", "start")
    assert found is Ticket.workflow.transition("new", "start")
    assert record.workflow.current_step == "new"


def test_a_models_own_transition_override_is_called_by_the_transition_methods(monkeypatch):
    # A project overriding transition() saw every call before release 4; it still does.
    calls = []

    def transition(self, name, actor=None, **kwargs):
        calls.append(name)
        return super(Ticket, self).transition(name, actor, **kwargs)

    monkeypatch.setattr(Ticket, "transition", transition, raising=False)
    ticket = Ticket.objects.create()
    ticket.start(authorize=False)
    ticket.workflow.transition("close", authorize=False)
    assert calls == ["start", "close"]
    assert Ticket.objects.get(pk=ticket.pk).state == "resolved"
