"""E076 to E078: ``manage.py check --deploy --database`` stops a deploy that would leave
rows the declaration cannot read (docs/checks.md, docs/upgrading.md)."""

import io

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection, models

from django_workflow.checks import check_deploy_records
from tests.testapp.models import Appeal, Decision, Order

pytestmark = pytest.mark.django_db(transaction=True)


def strand(step, count=1):
    """``count`` decisions moved into ``step`` behind the declaration's back."""
    for _ in range(count):
        record = Decision.objects.create()
        Decision.objects.filter(pk=record.pk).update(state=step)


def deploy_errors():
    return [
        message
        for message in checks.run_checks(include_deployment_checks=True, databases=["default"])
        if message.id in {"django_workflow.E076", "django_workflow.E077", "django_workflow.E078"}
    ]


@pytest.fixture
def left_column():
    """``left_column(name)``: a column of a removed deadline, left in Appeal's table as
    the code before the deploy had it; dropped again after the test."""
    added = []

    def add(name):
        column = models.DateTimeField(null=True)
        column.set_attributes_from_name(name)
        with connection.schema_editor() as editor:
            editor.add_field(Appeal, column)
        added.append(column)
        return column

    yield add
    for column in added:
        with connection.schema_editor() as editor:
            editor.remove_field(Appeal, column)


def mark(column, count):
    """``count`` appeals in ``review`` whose ``column`` holds a mark."""
    pks = [Appeal.objects.create().pk for _ in range(count)]
    table, quote = Appeal._meta.db_table, connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(table)} SET {quote(column)} = CURRENT_TIMESTAMP "
            f"WHERE id IN ({', '.join(['%s'] * len(pks))})",
            pks,
        )


def test_a_database_that_declares_what_it_holds_passes():
    Decision.objects.create()
    assert deploy_errors() == []


def test_records_in_an_undeclared_step_are_an_error_on_deploy():
    strand("gone_step", 2)
    [stranded] = deploy_errors()
    assert stranded.level == checks.ERROR
    assert stranded.obj is Decision
    assert "'gone_step' (2)" in stranded.msg
    assert "The worker skips them" in stranded.msg
    assert "RenameStep('testapp.Decision', 'gone_step', new)" in stranded.hint
    with pytest.raises(SystemCheckError, match=r"django_workflow.E076"):
        call_command("check", "--deploy", "--database", "default", stdout=io.StringIO())


def test_a_renamed_state_field_is_named_in_the_hint():
    order = Order.objects.create()
    Order.objects.filter(pk=order.pk).update(status="gone_step")
    [stranded] = deploy_errors()
    assert stranded.obj is Order
    assert "RenameStep('testapp.Order', 'gone_step', new, state_attribute='status')" in (
        stranded.hint
    )


def test_without_deploy_they_stay_the_warning_w010():
    strand("gone_step")
    messages = checks.run_checks(databases=["default"])
    assert "django_workflow.W010" in {message.id for message in messages}
    assert "django_workflow.E076" not in {message.id for message in messages}


def test_the_fired_column_of_a_removed_action_timeout_holding_marks_is_an_error(left_column):
    left_column("review_nudge_fired_at")
    mark("review_nudge_fired_at", 2)
    Appeal.objects.create()
    [left] = deploy_errors()
    assert left.id == "django_workflow.E077"
    assert left.obj is Appeal
    assert left.msg.startswith(
        "column 'review_nudge_fired_at' of a removed action timeout of step 'review' "
        "still holds when it fired for 2 records in database "
        "'default', and no migration waiting to be applied removes or renames the column"
    )
    assert "migrations.RenameField('appeal', 'review_nudge_fired_at'" in left.hint


def test_a_removed_every_says_it_stops_repeating(left_column):
    left_column("waiting_ping_last_fired_at")
    mark("waiting_ping_last_fired_at", 1)
    [left] = deploy_errors()
    assert left.id == "django_workflow.E078"
    assert left.msg.startswith(
        "an every of step 'waiting' is no longer declared: it stops repeating for the "
        "records in that step. Its column 'waiting_ping_last_fired_at' still holds when "
        "it last fired for 1 records"
    )


def test_the_column_of_a_timeout_in_a_removed_step_says_so(left_column):
    left_column("archived_nudge_fired_at")
    mark("archived_nudge_fired_at", 1)
    [left] = deploy_errors()
    assert left.msg.startswith(
        "column 'archived_nudge_fired_at' of a removed action timeout of a removed step still holds"
    )


def test_a_left_column_without_marks_is_no_error(left_column):
    left_column("review_nudge_fired_at")
    Appeal.objects.create()
    assert deploy_errors() == []


def test_plain_check_and_check_deploy_run_no_query(django_assert_num_queries):
    strand("gone_step")
    with django_assert_num_queries(0):
        call_command("check", stdout=io.StringIO())
        call_command("check", "--deploy", stdout=io.StringIO())
    assert check_deploy_records(databases=None) == []
