"""``makemigrations`` asks whether a step was renamed (docs/upgrading.md).

Each test runs Django's real commands as subprocesses in a throw-away project (a
temporary directory with its own settings and app), so the question is read from the
command's own stdin. The project's database is a SQLite file, or a fresh PostgreSQL
database with ``WORKFLOW_TEST_DB=postgres``.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import textwrap
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import ROOT

ON_POSTGRES = os.environ.get("WORKFLOW_TEST_DB") == "postgres"

SETTINGS = """
SECRET_KEY = "throw-away"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django_q",
    "django_workflow",
    "shop",
]
DATABASES = {{"default": {database!r}}}
Q_CLUSTER = {{"name": "shop", "orm": "default", "sync": True, "max_attempts": 1, "timeout": 60,
             "retry": 120}}
"""

#: Parcel's steps before the deploy: records wait in ``review``.
PARCEL = """
    class Workflow:
        log = True
        draft = Step(Transition("send", to="review"))
        review = Step(Transition("approve", to="done"))
        done = Step()
"""

REFUND = """
    class Workflow:
        open = Step(Transition("close", to="closed"))
        closed = Step()
"""


def declare(project: Path, parcel: str = PARCEL, refund: str = REFUND) -> None:
    header = "from django_workflow import Step, Timeout, Transition, WorkflowModel\n\n\n"
    models = (
        f"{header}class Parcel(WorkflowModel):{textwrap.indent(textwrap.dedent(parcel), '    ')}"
        f"\n\nclass Refund(WorkflowModel):{textwrap.indent(textwrap.dedent(refund), '    ')}"
    )
    (project / "shop" / "models.py").write_text(models)


def renamed(steps: str, **names: str) -> str:
    """``steps`` with each step ``old`` called ``new``, in the declaration and its targets."""
    for old, new in names.items():
        steps = re.sub(rf"\b{old}\b", new, steps)
    return steps


@pytest.fixture
def project(tmp_path):
    """A project whose app ``shop`` declares ``PARCEL`` and ``REFUND``, migrated."""
    with shop_project(tmp_path):
        declare(tmp_path)
        manage(tmp_path, "makemigrations", "shop", "--noinput")
        manage(tmp_path, "migrate", "--noinput")
        yield tmp_path


@contextmanager
def shop_project(directory: Path):
    """A project in ``directory`` with its settings and an empty app ``shop``, on a
    database of its own while open."""
    app = directory / "shop"
    (app / "migrations").mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "migrations" / "__init__.py").write_text("")
    with _database(directory) as database:
        (directory / "settings.py").write_text(SETTINGS.format(database=database))
        yield app


class _database:
    """The project's database settings: a SQLite file, or a PostgreSQL database made for
    the test and dropped after it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.name = f"shop_{uuid.uuid4().hex[:12]}"

    def __enter__(self) -> dict:
        if not ON_POSTGRES:
            return {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": str(self.directory / "db"),
                "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 20},
            }
        self._server(f'CREATE DATABASE "{self.name}"')
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": self.name,
            "CONN_MAX_AGE": 60,
            **{key: os.environ.get(f"PG{key}", default) for key, default in _SERVER.items()},
        }

    def __exit__(self, *exc: object) -> None:
        if ON_POSTGRES:
            self._server(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')

    @staticmethod
    def _server(statement: str) -> None:
        import psycopg

        server = {key.lower(): os.environ.get(f"PG{key}", v) for key, v in _SERVER.items()}
        with psycopg.connect(dbname="postgres", autocommit=True, **server) as connection:
            connection.execute(statement)


_SERVER = {"HOST": "127.0.0.1", "PORT": "5432", "USER": "postgres", "PASSWORD": ""}


def manage(project: Path, *args: str, answers: str = "", ok: bool = True):
    """``django-admin <args>`` in ``project``, ``answers`` on its stdin."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "settings",
        "PYTHONPATH": os.pathsep.join([str(project), str(ROOT)]),
    }
    result = subprocess.run(
        [sys.executable, "-m", "django", *args],
        cwd=project,
        env=env,
        input=answers,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if ok:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def run(project: Path, code: str):
    """The JSON ``code`` prints last, run by ``manage.py shell`` in the project."""
    printed = manage(project, "shell", "-c", textwrap.dedent(code)).stdout
    return json.loads(printed.strip().splitlines()[-1])


def parcels_in_review(project: Path, count: int) -> None:
    run(
        project,
        f"""
        import json
        from shop.models import Parcel
        for _ in range({count}):
            Parcel.objects.create().send()
        print(json.dumps(None))
        """,
    )


def parcels(project: Path) -> dict:
    """Each parcel's step, and the log rows of the Parcel model as (trigger, from, to)."""
    return run(
        project,
        """
        import json
        from django_workflow.models import TransitionLog
        from shop.models import Parcel
        rows = TransitionLog.objects.order_by("pk").values_list(
            "triggered_by", "from_state", "to_state")
        print(json.dumps({
            "steps": sorted(Parcel._base_manager.values_list("state", flat=True)),
            "log": [list(row) for row in rows],
        }))
        """,
    )


def migration(project: Path, name_start: str) -> str:
    (path,) = (project / "shop" / "migrations").glob(f"{name_start}_*.py")
    return path.read_text()


QUESTION = "Was step 'review' renamed to 'checking'? [y/N]"


def test_a_rename_answered_over_stdin_writes_rename_step_and_migrate_moves_the_records(
    project,
):
    parcels_in_review(project, 3)
    declare(project, renamed(PARCEL, review="checking"))

    answered = manage(project, "makemigrations", "shop", answers="y\n")
    assert QUESTION in answered.stdout
    written = migration(project, "0002")
    rename = "django_workflow.operations.RenameStep(\n            model='Parcel',"
    assert rename in written
    assert "old='review',\n            new='checking'," in written
    assert written.index("RenameStep(") < written.index("migrations.AlterField(")

    manage(project, "migrate", "--noinput")
    after = parcels(project)
    assert after["steps"] == ["checking"] * 3
    # RenameStep writes no log row (MoveRecords writes the `migration` ones); the rows
    # written before keep the step's name of then.
    assert [row for row in after["log"] if row[0] != "initial"] == [
        ["manual", "draft", "review"]
    ] * 3
    assert manage(project, "check", "--deploy", "--database", "default").returncode == 0


def test_noinput_assumes_no_rename_says_so_and_the_deploy_check_stops(project):
    parcels_in_review(project, 2)
    declare(project, renamed(PARCEL, review="checking"))

    result = manage(project, "makemigrations", "shop", "--noinput")
    assert (
        "Step 'review' of Parcel disappeared and 'checking' appeared: assumed not "
        "renamed (--noinput)." in result.stdout
    )
    assert "RenameStep('Parcel', 'review', 'checking')" in result.stdout
    assert "RenameStep" not in migration(project, "0002")
    manage(project, "migrate", "--noinput")
    assert parcels(project)["steps"] == ["review"] * 2

    deploy = manage(project, "check", "--deploy", "--database", "default", ok=False)
    assert deploy.returncode == 1
    assert "shop.Parcel: (django_workflow.E076)" in deploy.stderr
    assert "'review' (2)" in deploy.stderr


def test_a_rename_waiting_in_a_migration_satisfies_the_deploy_check_before_migrate(project):
    parcels_in_review(project, 1)
    declare(project, renamed(PARCEL, review="checking"))
    manage(project, "makemigrations", "shop", answers="y\n")

    assert manage(project, "check", "--deploy", "--database", "default").returncode == 0
    manage(project, "migrate", "--noinput")
    assert parcels(project)["steps"] == ["checking"]


def test_several_renames_are_paired_in_the_order_answered(project):
    declare(project, renamed(PARCEL, review="checking", done="delivered"))

    # review -> checking? no; review -> delivered? yes; done -> checking? yes.
    result = manage(project, "makemigrations", "shop", "--dry-run", "-v", "3", answers="n\ny\ny\n")
    questions = re.findall(r"Was step '(\w+)' renamed to '(\w+)'\?", result.stdout)
    assert questions == [("review", "checking"), ("review", "delivered"), ("done", "checking")]
    assert "model='Parcel',\n            old='review',\n            new='delivered'," in (
        result.stdout
    )
    assert "old='done',\n            new='checking'," in result.stdout


def test_only_the_model_whose_steps_changed_is_asked_about(project):
    declare(project, refund=renamed(REFUND, closed="refunded"))
    other_app = manage(project, "makemigrations", "auth", "--dry-run")
    assert "Was step" not in other_app.stdout

    result = manage(project, "makemigrations", "shop", "--dry-run", "-v", "3", answers="y\n")
    questions = re.findall(r"Was step '(\w+)' renamed to '(\w+)'\?", result.stdout)
    assert questions == [("closed", "refunded")]
    assert "model='Refund'" in result.stdout
    assert "model='Parcel'" not in result.stdout


def test_adding_or_removing_steps_alone_asks_nothing(project):
    added = PARCEL.replace("done = Step()", 'done = Step(Transition("reopen", to="returned"))')
    declare(project, added + "        returned = Step()\n")
    result = manage(project, "makemigrations", "shop")
    assert "Was step" not in result.stdout
    assert "RenameStep" not in migration(project, "0002")

    removed = PARCEL.replace(
        'Transition("approve", to="done")', 'Transition("approve", to="draft")'
    )
    declare(project, removed.replace("        done = Step()\n", ""))
    result = manage(project, "makemigrations", "shop")
    assert "Was step" not in result.stdout
    assert "RenameStep" not in migration(project, "0003")


#: Parcel with an action timeout in ``review``, whose fired column holds marks.
PARCEL_REMINDED = (
    PARCEL.replace(
        'review = Step(Transition("approve", to="done"))',
        "review = Step(\n"
        '            Transition("approve", to="done"),\n'
        '            Timeout("remind", fire_after="1d", action="remind"),\n'
        "        )",
    )
    + "\n    def remind(self):\n        pass\n"
)


def test_a_timeout_renamed_as_removal_and_addition_stops_the_deploy_a_rename_field_not(
    project,
):
    declare(project, PARCEL_REMINDED)
    manage(project, "makemigrations", "shop", "--noinput")
    manage(project, "migrate", "--noinput")
    parcels_in_review(project, 2)
    run(
        project,
        """
        import json
        from django.utils import timezone
        from shop.models import Parcel
        print(json.dumps(Parcel._base_manager.update(review_remind_fired_at=timezone.now())))
        """,
    )
    declare(project, renamed(PARCEL_REMINDED, remind="nudge"))

    manage(project, "makemigrations", "shop", "--noinput")  # Django assumes no field rename
    deploy = manage(project, "check", "--deploy", "--database", "default", ok=False)
    assert deploy.returncode == 1
    assert "shop.Parcel: (django_workflow.E077) column 'review_remind_fired_at'" in deploy.stderr
    assert "removes it and adds 'review_nudge_fired_at'" in deploy.stderr

    # Django offers no rename (the help text names the timeout): the deployer writes it.
    migrations = project / "shop" / "migrations"
    next(migrations.glob("0003_*.py")).unlink()
    previous = next(migrations.glob("0002_*.py")).stem
    (migrations / "0003_rename_remind.py").write_text(
        RENAMED_COLUMN.format(previous=previous, old="remind", new="nudge")
    )
    assert manage(project, "check", "--deploy", "--database", "default").returncode == 0
    manage(project, "migrate", "--noinput")
    assert manage(project, "check", "--deploy", "--database", "default").returncode == 0


def test_a_renamed_steps_reminder_keeps_its_fired_column_and_fires_not_again(project):
    # Release 3 wrote RemoveField and AddField of the column with the RenameStep: the
    # reminder that had fired fired again after migrate, and check --deploy passed.
    declare(project, PARCEL_REMINDED)
    manage(project, "makemigrations", "shop", "--noinput")
    manage(project, "migrate", "--noinput")
    parcels_in_review(project, 2)
    fired = run(
        project,
        """
        import json
        from datetime import timedelta
        import time_machine
        from django.utils import timezone
        from django_workflow.testing import run_due_work
        with time_machine.travel(timezone.now() + timedelta(days=1, minutes=1), tick=False):
            print(json.dumps(run_due_work()))
        """,
    )
    assert fired == {"shop.Parcel:timeout:review.remind": 2}
    declare(project, renamed(PARCEL_REMINDED, review="checking"))

    manage(project, "makemigrations", "shop", answers="y\n")
    written = migration(project, "0003")
    assert "migrations.RenameField(" in written
    assert (
        "old_name='review_remind_fired_at',\n            new_name='checking_remind_fired_at',"
        in written
    )
    assert "migrations.RemoveField(" not in written
    assert manage(project, "check", "--deploy", "--database", "default").returncode == 0

    # As an earlier release wrote it, dropped and added: the deploy stops (E077).
    path = next((project / "shop" / "migrations").glob("0003_*.py"))
    rename = written[written.index("        migrations.RenameField(") :]
    rename = rename[: rename.index("        ),\n") + len("        ),\n")]
    path.write_text(written.replace(rename, DROPPED_AND_ADDED))
    refused = manage(project, "check", "--deploy", "--database", "default", ok=False)
    assert "(django_workflow.E077) column 'review_remind_fired_at'" in refused.stderr
    assert "adds 'checking_remind_fired_at'" in refused.stderr
    path.write_text(written)
    manage(project, "migrate", "--noinput")
    again = run(
        project,
        """
        import json
        from datetime import timedelta
        import time_machine
        from django.utils import timezone
        from django_workflow.testing import run_due_work
        with time_machine.travel(timezone.now() + timedelta(days=2), tick=False):
            print(json.dumps(run_due_work()))
        """,
    )
    assert again == {}  # fired once, in review; the rename kept when


DROPPED_AND_ADDED = """\
        migrations.RemoveField(model_name="parcel", name="review_remind_fired_at"),
        migrations.AddField(
            model_name="parcel",
            name="checking_remind_fired_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
"""

RENAMED_COLUMN = """
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("shop", "{previous}")]
    operations = [
        migrations.RenameField("parcel", "review_{old}_fired_at", "review_{new}_fired_at"),
    ]
"""


def test_the_new_codes_worker_started_before_migrate_waits_for_it(project):
    # Release 3's crashed in its start-up recompute: no such column ..._remind_fired_at.
    declare(project, PARCEL_REMINDED)
    manage(project, "makemigrations", "shop", "--noinput")
    manage(project, "migrate", "--noinput")
    parcels_in_review(project, 1)
    declare(project, renamed(PARCEL_REMINDED, review="checking"))
    manage(project, "makemigrations", "shop", answers="y\n")

    once = manage(project, "workflow_worker", "--once", ok=False)
    assert once.returncode == 1
    assert "1 migration(s) not applied yet (shop.0003_" in once.stderr
    assert "run migrate first; nothing was run" in once.stderr

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "settings", "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(project), str(ROOT)])
    worker = subprocess.Popen(
        [sys.executable, "-m", "django", "workflow_worker"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert "waiting for migrate before starting" in next_line(worker)
        manage(project, "migrate", "--noinput")
        assert next_line(worker).strip() == "Migrations applied: starting."
        assert worker.poll() is None  # it goes on: its summary, its clusters
    finally:
        worker.terminate()
        worker.wait(30)


def next_line(process, seconds=60):
    """The process's next line of output; fails instead of waiting past ``seconds``."""
    ready, _, _ = select.select([process.stdout], [], [], seconds)
    assert ready, f"no output within {seconds} s"
    return process.stdout.readline()
