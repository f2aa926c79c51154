"""Upgrading a release-2 project: its ``<step>_on_enter_fired_at`` columns become owed
effects through the migration ``makemigrations`` writes, attempts spent included
(docs/upgrading.md, "on_enter from release 2").

Each test runs Django's real commands in a throw-away project whose migrations hold the
column as release 2 generated it; the records are put in release 2's state by SQL.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.upgrading.test_step_renames import manage, run, shop_project

MODELS = """
from django.db import models

from django_workflow import Retry, Step, Transition, WorkflowModel


class Box(WorkflowModel):
    notes = models.IntegerField(default=0)

    class Workflow:
        log = True
        packing = Step(
            Transition("ship", to="shipped"), on_enter="note", retry=Retry(max_attempts=3)
        )
        shipped = Step()

    def note(self):
        type(self).objects.filter(pk=self.pk).update(notes=models.F("notes") + 1)
"""

#: The column release 2 generated for ``packing``'s ``on_enter``.
RELEASE_2_COLUMN = """
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("shop", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="box",
            name="packing_on_enter_fired_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
    ]
"""

#: Four boxes in release 2's state: one whose effect ran, one owed it, one that spent an
#: attempt on it (retry due in an hour), one that left the step.
RELEASE_2_RECORDS = """
import json
from datetime import timedelta
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.utils import timezone
from django_workflow.models import PendingEffect, WorkAttempt
from shop.models import Box

now = timezone.now()
ran, owed, failed, left = (Box.objects.create() for _ in range(4))
left.ship()
PendingEffect.objects.all().delete()  # release 2 kept no such rows
Box.objects.update(notes=0)  # what the effects did at creation: the queue runs in sync
with connection.cursor() as cursor:  # the column is release 2's, not the model's
    cursor.execute(
        "UPDATE shop_box SET packing_on_enter_fired_at = %s WHERE id = %s", [now, ran.pk]
    )
entered = Box.objects.get(pk=failed.pk).state_entered_at
WorkAttempt.objects.create(
    content_type=ContentType.objects.get_for_model(Box), object_id=str(failed.pk),
    work="enter:packing", round_key=entered, attempts=1, last_error="ValueError: boom",
    retry_at=now + timedelta(hours=1),
)
print(json.dumps({"ran": ran.pk, "owed": owed.pk, "failed": failed.pk, "left": left.pk}))
"""


@pytest.fixture
def release_2(tmp_path):
    """A project migrated with release 2's column, holding ``RELEASE_2_RECORDS``; the
    models as this release generates them (without the column)."""
    with shop_project(tmp_path) as app:
        (app / "models.py").write_text(MODELS)
        manage(tmp_path, "makemigrations", "shop", "--noinput")
        (app / "migrations" / "0002_release_2.py").write_text(RELEASE_2_COLUMN)
        manage(tmp_path, "migrate", "--noinput")
        yield tmp_path, run(tmp_path, RELEASE_2_RECORDS)


def effects(project: Path) -> dict:
    return run(
        project,
        """
        import json
        from django_workflow.models import PendingEffect, WorkAttempt
        from shop.models import Box
        print(json.dumps({
            "owed": {
                row.object_id: [row.attempts, row.last_error, row.due_at is not None]
                for row in PendingEffect.objects.all()
            },
            "attempt_rows": WorkAttempt.objects.filter(work="enter:packing").count(),
            "notes": {str(box.pk): box.notes for box in Box.objects.all()},
        }))
        """,
    )


def test_makemigrations_carries_the_unran_effects_over_before_removing_the_column(release_2):
    project, boxes = release_2
    manage(project, "makemigrations", "shop", "--noinput", "-n", "release_3")
    written = (project / "shop" / "migrations" / "0003_release_3.py").read_text()
    owe = written.index("django_workflow.operations.OweUnranEffects(")
    remove = written.index("name='packing_on_enter_fired_at'")
    assert owe < remove, written
    assert "('django_workflow', '0" in written  # after the table of owed effects exists
    manage(project, "check", "--deploy", "--database", "default")  # the migration waits

    manage(project, "migrate", "--noinput")
    found = effects(project)
    assert found["owed"] == {
        str(boxes["owed"]): [0, "", True],
        str(boxes["failed"]): [1, "ValueError: boom", True],  # its spent attempt kept
    }
    assert found["attempt_rows"] == 0


def test_the_carried_effects_run_once_each_and_not_for_the_box_that_ran_it(release_2):
    project, boxes = release_2
    manage(project, "makemigrations", "shop", "--noinput")
    manage(project, "migrate", "--noinput")
    ran = run(
        project,
        """
        import json
        from datetime import timedelta
        import time_machine
        from django.utils import timezone
        from django_workflow.testing import run_due_work
        from shop.models import Box
        with time_machine.travel(timezone.now() + timedelta(hours=2), tick=False):
            run_due_work()
            run_due_work()
        print(json.dumps({str(box.pk): box.notes for box in Box.objects.all()}))
        """,
    )
    assert ran == {
        str(boxes["ran"]): 0,
        str(boxes["owed"]): 1,
        str(boxes["failed"]): 1,
        str(boxes["left"]): 0,  # it left the step: release 2 owed it nothing
    }


def test_a_migration_removing_the_column_without_the_carry_over_stops_the_deploy(release_2):
    project, _boxes = release_2
    manage(project, "makemigrations", "shop", "--noinput", "-n", "release_3")
    path = project / "shop" / "migrations" / "0003_release_3.py"
    lines = path.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "OweUnranEffects(" in line)
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith("),"))
    path.write_text("".join(lines[:start] + lines[end + 1 :]))  # as an earlier release wrote it

    refused = manage(project, "check", "--deploy", "--database", "default", ok=False)
    assert refused.returncode == 1
    assert "django_workflow.E079" in refused.stderr
    assert "2 records in step 'packing'" in refused.stderr
    assert "OweUnranEffects('shop.Box', 'packing')" in refused.stderr
