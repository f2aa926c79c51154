"""Each log row keeps when its record had entered ``from_state``, so the time-in-step
report reads a stay from one row. Rows written before are filled in from the log
itself: the record's latest entry into a step before the row.

The log alone cannot tell a transition timeout back into its own step from an
action timeout firing in place (both log the step twice); the fill treats both as
in place. Rows written from now on carry what the engine knew.
"""

from django.db import migrations, models

#: A row that begins a stay: not a failure or a halt, not a timeout that fired in place.
ENTRY = (
    "{row}.triggered_by NOT IN ('failed', 'halted') "
    "AND NOT ({row}.triggered_by = 'timeout' AND {row}.from_state = {row}.to_state)"
)
LOG = "django_workflow_transitionlog"
#: PostgreSQL: one pass, each record's rows in order.
WINDOWED = f"""
UPDATE {LOG} SET from_state_entered_at = prior.began
FROM (
    SELECT id, MAX(CASE WHEN {ENTRY.format(row=LOG)} THEN occurred_at END) OVER (
        PARTITION BY content_type_id, object_id ORDER BY occurred_at, id
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
    ) AS began
    FROM {LOG}
) AS prior
WHERE {LOG}.id = prior.id AND prior.began IS NOT NULL AND {LOG}.from_state <> ''
"""
#: SQLite (any version Django supports: ``UPDATE … FROM`` needs 3.33): per row, the
#: latest earlier entry of its record, through the log's index on the record.
CORRELATED = f"""
UPDATE {LOG} SET from_state_entered_at = (
    SELECT MAX(e.occurred_at) FROM {LOG} e
    WHERE e.content_type_id = {LOG}.content_type_id AND e.object_id = {LOG}.object_id
        AND (e.occurred_at < {LOG}.occurred_at
            OR (e.occurred_at = {LOG}.occurred_at AND e.id < {LOG}.id))
        AND {ENTRY.format(row="e")}
)
WHERE from_state <> ''
"""


def fill_stay_starts(connection):
    """One statement on the databases the report runs on; elsewhere old rows stay
    empty and only rows written from now on carry the instant."""
    statement = {"postgresql": WINDOWED, "sqlite": CORRELATED}.get(connection.vendor)
    if statement is not None:
        with connection.cursor() as cursor:
            cursor.execute(statement)


def backfill(apps, schema_editor):
    fill_stay_starts(schema_editor.connection)


class Migration(migrations.Migration):

    dependencies = [
        ('django_workflow', '0006_log_comment_and_data'),
    ]

    operations = [
        migrations.AddField(
            model_name='transitionlog',
            name='from_state_entered_at',
            field=models.DateTimeField(blank=True, help_text='When the record had entered from_state: the start of the stay this row ends, or happens in.', null=True),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True),
    ]
