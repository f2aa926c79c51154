"""A step renamed in the code, deployed before ``migrate`` has run ``RenameStep``: the
deadlines of the records still under the old name survive (docs/upgrading.md,
"Renaming a step")."""

from datetime import timedelta

import pytest
from django.apps import apps
from django.db import connection
from django.db.migrations.state import ProjectState
from django.utils import timezone

from django_workflow.model.columns import NEXT_DUE_AT
from django_workflow.models import DeadlineDeclaration
from django_workflow.operations import RenameStep
from django_workflow.testing import run_due_work
from django_workflow.work.due_instants import next_due
from tests.processes import run_once
from tests.testapp.models import Appeal

pytestmark = pytest.mark.django_db(transaction=True)


def under_the_old_name(count):
    """Records of the step ``review`` as the rows stand before the rename is migrated."""
    for _ in range(count):
        Appeal.objects.create()
    Appeal._base_manager.update(state="reviewing")
    return {a.pk: a.next_due_at for a in Appeal.objects.all()}


def stored_due():
    return dict(Appeal._base_manager.values_list("pk", NEXT_DUE_AT))


def rename_migrated():
    before = ProjectState.from_apps(apps)
    after = before.clone()
    operation = RenameStep("testapp.Appeal", "reviewing", "review")
    operation.state_forwards("testapp", after)
    with connection.schema_editor() as editor:
        operation.database_forwards("testapp", editor, before, after)


def test_the_new_codes_worker_leaves_the_due_instants_of_an_undeclared_step_alone():
    due = under_the_old_name(3)
    DeadlineDeclaration.objects.all().delete()  # the deploy changed the declaration:
    DeadlineDeclaration.objects.create(model="testapp.Appeal", fingerprint="before the deploy")
    result = run_once()
    assert result.returncode == 0, result.stderr
    assert "testapp.Appeal: its deadlines changed" in result.stdout  # the catch-up ran
    assert None not in due.values() and stored_due() == due


def test_rename_step_computes_again_the_due_instants_of_the_records_it_renames():
    due = under_the_old_name(3)
    Appeal._base_manager.update(**{NEXT_DUE_AT: None})  # as an older worker left them
    rename_migrated()
    run_due_work()  # the poll after the migration
    assert stored_due() == due
    assert all(next_due(record) == due[record.pk] for record in Appeal.objects.all())
    assert set(Appeal.objects.values_list("state", flat=True)) == {"review"}


def test_an_escalation_due_during_the_deploy_fires_after_the_rename(time_machine):
    under_the_old_name(2)
    Appeal._base_manager.update(**{NEXT_DUE_AT: None})
    rename_migrated()
    time_machine.move_to(timezone.now() + timedelta(days=5))
    run_due_work()
    assert set(Appeal.objects.values_list("state", flat=True)) == {"escalated"}
