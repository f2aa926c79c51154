"""Kinds are types end to end (docs/deadlines.md, "Units of work"): a step's kind, a
work's kind and a pending deadline's kind are string enums, equal to the strings the
docs, the admin and REST show."""

from datetime import timedelta

from django.apps import apps

from django_workflow.declaration import StepKind
from django_workflow.engine import firing  # noqa: F401  (loads every kind's engine)
from django_workflow.engine.kind_engines import engine_for
from django_workflow.model.triggers import PendingKind, WorkKind
from django_workflow.workflow_model import WorkflowModel
from tests.moments import T
from tests.testapp.models import Alarm, Candidate, Monitor


def test_every_step_has_a_step_kind_equal_to_its_word():
    kinds = [step.kind for step in Candidate.workflow.steps.values()]
    assert all(isinstance(kind, StepKind) for kind in kinds)
    assert {str(kind) for kind in kinds} == {"automatic", "manual", "terminal"}


def test_every_work_of_every_model_has_a_work_kind():
    for model in (Candidate, Alarm, Monitor):
        for work in model.workflow.works:
            assert isinstance(work.kind, WorkKind), work.name
            assert work.name.startswith(f"{work.kind}:") or work.kind == WorkKind.EFFECT


def test_a_pending_deadline_kind_is_a_pending_kind_and_reads_as_a_word(db, clock):
    record = Monitor.objects.create()  # no next check yet: its null anchor gives none
    pending = record.workflow.pending_deadlines()
    assert all(isinstance(deadline.kind, PendingKind) for deadline in pending)
    assert [(d.name, f"{d.kind}", d.due_at) for d in pending] == [
        ("quick_look", "action", T + timedelta(seconds=10)),
        ("give_up", "transition", T + timedelta(days=10)),
    ]


def test_every_kind_of_work_declared_has_an_engine_that_runs_it():
    works = [
        work
        for model in apps.get_models()
        if issubclass(model, WorkflowModel) and not model._meta.abstract
        for work in model.workflow.works
    ]
    assert {work.kind for work in works} == set(WorkKind)
    for work in works:
        engine = engine_for(work)
        assert engine.fire or engine.run_alone, work.name
        if work.pending_kind is not None and not work.self_scheduled:
            assert engine.fire is not None, f"{work.name} is a deadline: the walk fires it"
