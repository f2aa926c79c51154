"""Each log row keeps when its record had entered ``from_state``, so the time-in-step
report reads a stay from one row. Rows written before are filled in from the log
itself: the record's latest entry into a step before the row."""

from django.db import migrations, models

#: A row that begins a stay: not a failure or a halt, not a timeout that fired in place.
ENTRY = (
    "triggered_by NOT IN ('failed', 'halted') "
    "AND NOT (triggered_by = 'timeout' AND from_state = to_state)"
)
BACKFILL = f"""
UPDATE django_workflow_transitionlog SET from_state_entered_at = prior.began
FROM (
    SELECT id, MAX(CASE WHEN {ENTRY} THEN occurred_at END) OVER (
        PARTITION BY content_type_id, object_id ORDER BY occurred_at, id
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
    ) AS began
    FROM django_workflow_transitionlog
) AS prior
WHERE django_workflow_transitionlog.id = prior.id
    AND prior.began IS NOT NULL
    AND django_workflow_transitionlog.from_state <> ''
"""


def fill_stay_starts(connection):
    """One statement on the databases the report runs on; elsewhere old rows stay
    empty and only rows written from now on carry the instant."""
    if connection.vendor in ("sqlite", "postgresql"):
        with connection.cursor() as cursor:
            cursor.execute(BACKFILL)


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
