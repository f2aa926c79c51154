"""What a declaration adds to its model: docs/declaring.md."""

import io

import pytest
from django.core.management import call_command
from django.db import models

from django_workflow import Step, Transition
from django_workflow.model.generation import is_generated
from tests.testapp.models import Article, Candidate, Order, Review, UrgentReview


def test_steps_keep_declaration_order():
    assert list(Candidate.workflow.steps) == [
        "screening",
        "interview",
        "fast_track",
        "offer",
        "rejected",
        "screening_failed",
    ]


def test_the_initial_step_is_the_first_non_terminal_one_unless_marked():
    assert Candidate.workflow.initial_step == "screening"
    assert Order.workflow.initial_step == "draft"


def test_a_marked_initial_step_wins_over_declaration_order():
    class Declaration:
        review = Step(Transition("approve", to="done"))
        intake = Step(Transition("submit", to="review"), initial=True)
        done = Step()

    from django_workflow.model.compiled import compile_workflow

    assert compile_workflow(None, Declaration).initial_step == "intake"


def test_step_kinds():
    steps = Candidate.workflow.steps
    assert [steps[n].kind for n in ("screening", "interview", "offer")] == [
        "automatic",
        "manual",
        "terminal",
    ]


def test_the_state_field_has_steps_as_choices_a_default_and_an_index():
    field = Candidate._meta.get_field("state")
    assert isinstance(field, models.CharField)
    assert [value for value, _label in field.choices] == list(Candidate.workflow.steps)
    assert field.default == "screening"
    assert field.db_index


def test_state_attribute_renames_the_field():
    assert Order._meta.get_field("status").default == "draft"
    assert not any(f.name == "state" for f in Order._meta.get_fields())


def test_state_entered_at_is_a_datetime_with_a_default():
    field = Candidate._meta.get_field("state_entered_at")
    assert isinstance(field, models.DateTimeField)
    assert field.has_default()


def test_a_field_the_user_declared_is_kept():
    field = Article._meta.get_field("state")
    assert (field.max_length, field.choices) == (30, None)


def test_transition_methods_are_generated_once_per_name():
    assert is_generated(Candidate.approve) and is_generated(Candidate.triage)
    assert Candidate.workflow.transition_names == [
        "approve",
        "reject",
        "triage",
        "rescreen",
        "hold",
    ]


def test_an_abstract_base_passes_its_workflow_and_fields_to_children():
    assert list(Review.workflow.steps) == ["submitted", "accepted", "refused"]
    assert Review.workflow.model is Review
    assert Review._meta.get_field("state").model is Review


def test_multi_table_children_share_the_parents_columns():
    field = UrgentReview._meta.get_field("state")
    assert field.model is Review
    assert UrgentReview.workflow.model is UrgentReview


@pytest.mark.django_db
def test_multi_table_children_transition(committed):
    urgent = UrgentReview.objects.create(title="t")
    urgent.accept()
    assert Review.objects.get(pk=urgent.pk).state == "accepted"
    assert UrgentReview.objects.get(pk=urgent.pk).state == "accepted"


@pytest.mark.django_db
def test_the_shipped_migrations_match_the_generated_fields():
    out = io.StringIO()
    call_command("makemigrations", "testapp", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


def test_the_shipped_migration_holds_the_state_field_with_its_choices():
    from importlib import import_module

    migration = import_module("tests.testapp.migrations.0001_initial").Migration
    candidate = next(op for op in migration.operations if getattr(op, "name", "") == "Candidate")
    fields = dict(candidate.fields)
    assert fields["state"].choices[0] == ("screening", "Screening")
    assert fields["state"].db_index
    assert "state_entered_at" in fields


@pytest.mark.django_db
def test_a_proxy_shares_the_workflow_and_logs_as_its_concrete_model(recruiter):
    from django_workflow.models import TransitionLog
    from tests.testapp.models import CandidateProxy

    proxy = CandidateProxy.objects.create(resume_words=900)
    assert proxy.state == "screening"
    assert TransitionLog.objects.get(object_id=str(proxy.pk)).record == Candidate.objects.get()
