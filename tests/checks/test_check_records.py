"""W010: ``manage.py check --database`` counts records in steps the declaration lacks."""

import io

import pytest
from django.core.management import call_command
from django.test.utils import isolate_apps

from django_workflow import Step, Transition, WorkflowModel
from django_workflow.checks import check_records
from django_workflow.checks.records_checks import undeclared_steps
from tests.testapp.models import Decision, Order

pytestmark = pytest.mark.django_db


def strand(step, count=1, model=Decision):
    """``count`` records moved into ``step`` behind the declaration's back."""
    for _ in range(count):
        record = model.objects.create()
        model.objects.filter(pk=record.pk).update(**{model.workflow.state_attribute: step})


def check(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("check", *args, stdout=out, stderr=err)
    return out.getvalue() + err.getvalue()


def test_records_in_declared_steps_are_no_warning():
    Decision.objects.create()
    assert check_records(databases=["default"]) == []


def test_one_warning_per_model_counts_the_records_per_unknown_step():
    strand("gone_step", 2)
    strand("older_step")
    Decision.objects.create()
    [warning] = check_records(databases=["default"])
    assert warning.id == "django_workflow.W010"
    assert warning.obj is Decision
    assert warning.msg == (
        "records in database 'default' are in steps the declaration "
        "no longer has: 'gone_step' (2), 'older_step' (1)."
    )
    assert "RenameStep('testapp.Decision', 'gone_step', new)" in warning.hint
    assert "MoveRecords('testapp.Decision', 'gone_step', to_step)" in warning.hint


def test_a_renamed_state_field_is_counted_and_named_in_the_hint():
    strand("gone_step", model=Order)
    [warning] = check_records(databases=["default"])
    assert warning.obj is Order
    assert "'gone_step' (1)" in warning.msg
    assert "RenameStep('testapp.Order', 'gone_step', new, state_attribute='status')" in (
        warning.hint
    )


def test_check_with_a_database_reports_it():
    strand("gone_step", 3)
    output = check("--database", "default")
    assert "testapp.Decision: (django_workflow.W010) records in database 'default'" in output
    assert "'gone_step' (3)" in output


def test_a_plain_check_does_not_query_the_records():
    strand("gone_step")
    assert "W010" not in check()
    assert check_records(databases=None) == []


def test_the_app_labels_given_to_check_limit_it():
    strand("gone_step")
    assert "W010" not in check("auth", "--database", "default")


def test_a_table_not_migrated_yet_holds_no_stray_records():
    with isolate_apps("tests.testapp"):

        class Unmigrated(WorkflowModel):
            class Meta:
                app_label = "testapp"

            class Workflow:
                start = Step(Transition("go", to="done"))
                done = Step()

        assert undeclared_steps(Unmigrated, "default") == {}
    Decision.objects.create()  # the failed query left the transaction usable
    assert Decision.objects.count() == 1
