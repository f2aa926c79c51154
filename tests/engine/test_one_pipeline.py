"""One pipeline writes a step change, one function writes log rows (docs/decisions.md,
"The map"): every statement that writes a record's step comes from ``engine/moves.py``'s
writes, and every log row from ``log_rows.write`` or a move's own statement. Read off
SQLite's own trace of the statements each connection runs, so the engine's statements
that skip Django's cursor are seen too."""

import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import IntegrityError, connection
from django.db.backends.signals import connection_created
from django.db.models.signals import pre_save

import django_workflow
from django_workflow.testing import run_due_work
from tests.testapp.models import Candidate

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        os.environ.get("WORKFLOW_TEST_DB") == "postgres", reason="SQLite's statement trace"
    ),
]

PACKAGE = Path(django_workflow.__file__).resolve().parent
#: Rooms that send statements for others: the writer is the caller that asked them.
SENDERS = ("engine/sql/", "process/")

#: The functions that write a record's step, and those that write a log row.
MOVES = {("engine/moves.py", "write"), ("engine/moves.py", "write_columns")}
MOVES |= {("engine/moves.py", "move_many")}
LOGS = {("engine/log_rows.py", "write"), ("engine/moves.py", "write_columns")}

STEP_WRITE = re.compile(r'^\s*UPDATE "testapp_candidate" SET .*"state" =', re.I | re.S)
LOG_INSERT = re.compile(r'\bINSERT INTO "django_workflow_transitionlog"', re.I)


def writer():
    """The package's function that sent the statement being traced, as ``(room, name)``."""
    frame = sys._getframe(2)
    while frame is not None:
        path = Path(frame.f_code.co_filename).resolve()
        if path.is_relative_to(PACKAGE):
            room = path.relative_to(PACKAGE).as_posix()
            if not room.startswith(SENDERS):
                return room, frame.f_code.co_name
        frame = frame.f_back
    return None


@contextmanager
def traced():
    """``(kind, writer)`` of each step write and log row sent on the default database."""
    seen = []

    def trace(sql):
        if STEP_WRITE.search(sql):
            seen.append(("step", writer()))
        elif LOG_INSERT.search(sql):
            seen.append(("log", writer()))

    def on_every_connection(connection, **kwargs):  # a worker's run opens its own
        connection.connection.set_trace_callback(trace)

    connection.ensure_connection()
    connection.connection.set_trace_callback(trace)
    connection_created.connect(on_every_connection)
    try:
        yield seen
    finally:
        connection_created.disconnect(on_every_connection)
        connection.connection.set_trace_callback(None)


def test_every_step_write_and_log_row_comes_from_the_pipeline(django_user_model):
    with traced() as seen:
        screened = [Candidate.objects.create(name=n, resume_words=700) for n in "ab"]
        failing = Candidate.objects.create(name="c", resume_words=-1)
        run_due_work()  # automatic steps: moved, and one failed attempt logged in place
        screened[0].refresh_from_db()
        screened[0].workflow.transition("reject", authorize=False)
        Candidate.objects.filter(pk=screened[1].pk).transition("approve", authorize=False)
    # The compiled move (automatic and manual), the bulk move; each way of logging.
    assert (
        {writer for kind, writer in seen if kind == "step"}
        == {
            ("engine/moves.py", "write_columns"),
            ("engine/moves.py", "move_many"),
        }
        <= MOVES
    )
    assert {writer for kind, writer in seen if kind == "log"} == LOGS
    failing.refresh_from_db()
    assert Candidate.objects.filter(state="rejected").count() == 1
    assert Candidate.objects.filter(state="offer").count() == 1


def test_the_trace_names_a_writer_outside_the_pipeline():
    """The check above can fail: a log row written by hand elsewhere is named."""
    with traced() as seen, pytest.raises(IntegrityError), connection.cursor() as cursor:
        cursor.execute('INSERT INTO "django_workflow_transitionlog" (object_id) VALUES (%s)', ["1"])
    assert seen == [("log", None)]


def test_a_move_with_save_signals_is_the_same_pipeline_through_the_orm():
    heard = []

    def listening(sender, instance, **kwargs):
        heard.append(instance.state)

    pre_save.connect(listening, sender=Candidate)
    try:
        with traced() as seen:
            candidate = Candidate.objects.create(name="a", resume_words=700)
            run_due_work()
            candidate.refresh_from_db()
            candidate.workflow.transition("reject", authorize=False)
    finally:
        pre_save.disconnect(listening, sender=Candidate)
    assert heard[-1] == "rejected"
    assert {writer for kind, writer in seen if kind == "step"} == {("engine/moves.py", "write")}
    assert {writer for kind, writer in seen if kind == "log"} == {("engine/log_rows.py", "write")}
