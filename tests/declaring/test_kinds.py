"""Kinds are types end to end (docs/deadlines.md, "Units of work"): a step's kind, a
work's kind and a pending deadline's kind are string enums, equal to the strings the
docs, the admin and REST show."""

from datetime import UTC, datetime

from django_workflow.declaration import StepKind
from django_workflow.model.triggers import PendingKind, WorkKind
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


def test_a_pending_deadline_kind_is_a_pending_kind_and_reads_as_a_word(db):
    record = Monitor.objects.create()
    pending = record.workflow.pending_deadlines()
    assert pending, "Monitor waits on a deadline in its first step"
    assert all(isinstance(deadline.kind, PendingKind) for deadline in pending)
    assert f"{pending[0].kind}" in {"action", "transition", "every", "sla"}
    assert pending[0].due_at > datetime(2000, 1, 1, tzinfo=UTC)
