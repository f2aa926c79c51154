"""Two indexes for the time-in-step report, and one fewer for the log's type.

- ``workflow_log_stay_idx`` reads the stays begun in the report's window, so a
  month's report (the admin overview) no longer reads the whole log.
- ``workflow_log_timeout_idx`` holds only timeouts' rows, with every column the
  breach counts read: they come from the index alone.

The index Django made for ``content_type`` alone goes: each index of the log
begins with it. It is found by its column, whatever its name, and dropped: on
SQLite, changing the field instead would copy the whole table.
"""

import django.db.models.deletion
from django.db import migrations, models

LOG = "django_workflow_transitionlog"
#: The name Django gives the index on ``content_type`` alone, to create it again.
TYPE_INDEX = "django_workflow_transitionlog_content_type_id_20ed5b53"


def drop_type_index(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, LOG)
    for name, index in found.items():
        alone = index["columns"] == ["content_type_id"]
        if alone and index["index"] and not (index["unique"] or index["primary_key"]):
            schema_editor.execute(f"DROP INDEX {schema_editor.quote_name(name)}")


def create_type_index(apps, schema_editor):
    quote = schema_editor.quote_name
    schema_editor.execute(f"CREATE INDEX {quote(TYPE_INDEX)} ON {quote(LOG)} (content_type_id)")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("django_workflow", "0007_log_stay_start"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="transitionlog",
            index=models.Index(
                fields=["content_type", "from_state_entered_at"], name="workflow_log_stay_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="transitionlog",
            index=models.Index(
                condition=models.Q(("triggered_by", "timeout")),
                fields=[
                    "content_type",
                    "from_state_entered_at",
                    "from_state",
                    "transition_name",
                    "occurred_at",
                    "object_id",
                    "triggered_by",
                ],
                name="workflow_log_timeout_idx",
            ),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="transitionlog",
                    name="content_type",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        to="contenttypes.contenttype",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop_type_index, create_type_index)],
        ),
    ]
