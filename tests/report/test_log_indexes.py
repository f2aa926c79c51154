"""The log's indexes for the time-in-step report (migration 0008; docs/report.md)."""

import re
from datetime import timedelta

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor

from django_workflow.models import TransitionLog
from django_workflow.report.statement import statement
from django_workflow.report.working_days import calendar_days, zones_in_play
from tests.helpers import ROOT
from tests.moments import T
from tests.testapp.models import Appeal

LOG = TransitionLog._meta.db_table
APP = "django_workflow"


def indexes():
    """Each index of the log, by its columns."""
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, LOG)
    return {tuple(c["columns"]) for c in found.values() if c["index"] and not c["primary_key"]}


def migrate_to(name):
    MigrationExecutor(connection).migrate([(APP, name)])


def latest():
    return MigrationExecutor(connection).loader.graph.leaf_nodes(APP)[0][1]


def declared():
    """Each index the log's model declares, by its columns."""
    column = lambda name: TransitionLog._meta.get_field(name).column  # noqa: E731
    return {index.name: tuple(map(column, index.fields)) for index in TransitionLog._meta.indexes}


@pytest.mark.django_db
def test_the_log_is_indexed_for_the_reports_window_and_its_timeouts():
    found = indexes()
    assert {"workflow_log_stay_idx", "workflow_log_timeout_idx"} <= set(declared())
    assert set(declared().values()) <= found
    assert ("content_type_id",) not in found  # each index begins with it


@pytest.mark.django_db(transaction=True)
def test_the_migration_goes_back_to_the_index_on_the_type_alone():
    last = latest()
    try:
        migrate_to("0007_log_stay_start")
        before = indexes()
        assert ("content_type_id",) in before
        assert ("content_type_id", "from_state_entered_at") not in before
    finally:
        migrate_to(last)
    assert ("content_type_id",) not in indexes()


def definitions():
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [LOG])
        return dict(cursor.fetchall())


def recipe():
    """The statements docs/upgrading.md gives for building 0008's indexes by hand."""
    page = (ROOT / "docs" / "upgrading.md").read_text()
    block = re.search(r"```sql\n(.*?)```", page[page.index("Migration `0008`") :], re.S)
    return [statement.strip() for statement in block.group(1).split(";") if statement.strip()]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="CREATE INDEX CONCURRENTLY")
@pytest.mark.django_db(transaction=True)
def test_the_upgrading_pages_concurrent_recipe_builds_what_the_migration_does():
    migrated = definitions()
    last = latest()
    try:
        migrate_to("0007_log_stay_start")
        with connection.cursor() as cursor:
            for statement in recipe():
                cursor.execute(statement)
        MigrationExecutor(connection).migrate([(APP, "0008_log_report_indexes")], fake=True)
        migrate_to(last)  # the migrations after 0008 add indexes of their own
        assert definitions() == migrated
    finally:
        migrate_to(last)


def two_years_of_log(rows=4000):
    """Log rows from a year before the report's window to a year after it, a quarter of
    them timeouts' rows: the window is a small part of the log, as it is in production."""
    kind = ContentType.objects.get_for_model(Appeal)
    TransitionLog.objects.bulk_create(
        TransitionLog(
            content_type=kind,
            object_id=str(n % 200),
            from_state="review",
            to_state="decided",
            transition_name="escalation" if n % 4 == 0 else "decide",
            triggered_by="timeout" if n % 4 == 0 else "manual",
            occurred_at=T + timedelta(days=-365, hours=4 * n + 1),
            from_state_entered_at=T + timedelta(days=-365, hours=4 * n),
        )
        for n in range(rows)
    )


def plan_of(sql, params):
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            return " ".join(str(row) for row in cursor.fetchall())
        # A log as production keeps it: rows settled and vacuumed, so the heap's pages
        # are all visible and the statistics are this table's, not an earlier test's.
        cursor.execute(f"VACUUM ANALYZE {LOG}")
        with transaction.atomic():
            cursor.execute("SET LOCAL enable_seqscan = off")  # a few thousand rows fit a few pages
            cursor.execute(f"EXPLAIN {sql}", params)
            return " ".join(str(row) for row in cursor.fetchall())


@pytest.mark.django_db(transaction=True)
def test_the_report_reads_the_log_through_its_indexes():
    two_years_of_log()
    since, until = T, T + timedelta(days=30)
    zones = zones_in_play(Appeal, "default")
    days = calendar_days(Appeal, zones, since, until)
    plan = plan_of(*statement(Appeal, "default", since, until, zones, days))
    assert "workflow_log_stay_idx" in plan
    covering = "Index Only Scan using" if connection.vendor == "postgresql" else "COVERING INDEX"
    assert f"{covering} workflow_log_timeout_idx" in plan
