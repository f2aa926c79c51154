"""What ``workflow_worker`` logs and how: its loggers set up by verbosity (docs/worker.md)."""

import io
import logging
from datetime import timedelta

import pytest
from _pytest.logging import LogCaptureHandler
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone
from django_q.models import OrmQ

from django_workflow.engine.firing import named
from django_workflow.management.commands.workflow_worker import (
    LOG_FORMAT,
    QUEUE_LOGGER,
    configure_logging,
)
from django_workflow.model.columns import NEXT_DUE_AT
from django_workflow.models import DeadlineDeclaration
from django_workflow.worker.schedulers.polling import poll
from tests.testapp.models import Batch, Proposal, Sync

Q_CLUSTER = {"name": "workflow", "orm": "default"}


@pytest.fixture
def project(monkeypatch):
    """The project's ``LOGGING`` and ``Q_CLUSTER``, set without ``override_settings``,
    which makes Django 6 configure logging anew."""

    def set_up(logging_setting=None, q_cluster=Q_CLUSTER):
        monkeypatch.setattr(settings, "LOGGING", logging_setting or {})
        monkeypatch.setattr(settings, "Q_CLUSTER", q_cluster)

    set_up()
    return set_up


@pytest.fixture
def loggers(monkeypatch):
    """The two loggers as a worker process starts with them (django-q2's with its own
    handler), put back as they were afterwards."""
    ours, queue = logging.getLogger("django_workflow"), logging.getLogger(QUEUE_LOGGER)
    for logger in (ours, queue):
        monkeypatch.setattr(logger, "handlers", [])
        monkeypatch.setattr(logger, "level", logger.level)
    own = logging.StreamHandler(io.StringIO())  # what django-q2 installs when nothing handles it
    own.setFormatter(logging.Formatter("%(asctime)s [Q] %(levelname)s %(message)s", "%H:%M:%S"))
    queue.addHandler(own)
    queue.setLevel(logging.INFO)
    return ours, queue


def django_q2_own(queue):
    [own] = [h for h in queue.handlers if not isinstance(h, LogCaptureHandler)]
    return own


def configure(verbosity, stream=None, root_handlers=()):
    """``configure_logging`` as in a worker process: the root logger has ``root_handlers``
    only, and pytest's capturing handlers (on the root and on django-q2's logger, which
    does not propagate) are out of the way meanwhile."""
    queue = logging.getLogger(QUEUE_LOGGER)
    saved = logging.root.handlers[:], queue.handlers[:]
    logging.root.handlers[:] = root_handlers
    queue.handlers[:] = [h for h in saved[1] if not isinstance(h, LogCaptureHandler)]
    try:
        configure_logging(verbosity, stream or io.StringIO())
    finally:
        logging.root.handlers[:], queue.handlers[:] = saved


def test_by_default_django_q2_chatter_is_off_and_both_share_one_format(loggers, project):
    ours, queue = loggers
    out = io.StringIO()
    configure(1, out)
    assert (ours.level, queue.level) == (logging.INFO, logging.WARNING)
    [handler] = ours.handlers
    assert [h.formatter._fmt for h in (handler, django_q2_own(queue))] == [LOG_FORMAT] * 2
    logging.getLogger("django_workflow.engine").warning("a line")
    queue.info("idle")  # like django-q2's dozen lines a minute: hidden
    assert django_q2_own(queue).stream.getvalue() == ""
    date, time, rest = out.getvalue().split(" ", 2)
    assert len(date) == 10 and date[4] == date[7] == "-"  # 2026-11-30
    assert len(time) == 12 and time[8] == ","  # 05:40:12,123
    assert rest == "WARNING django_workflow.engine: a line\n"


def test_verbosity_2_keeps_django_q2_info_lines_and_3_shows_tracebacks(loggers, project):
    ours, queue = loggers
    configure(2)
    assert (ours.level, queue.level) == (logging.INFO, logging.INFO)
    configure(3)
    assert ours.level == logging.DEBUG
    assert len(ours.handlers) == 1  # never a second handler


def test_verbosity_0_keeps_the_warnings_of_both(loggers, project):
    ours, queue = loggers
    configure(0)
    assert (ours.level, queue.level) == (logging.WARNING, logging.WARNING)


def test_a_project_root_handler_gets_the_lines_once(loggers, project):
    ours, _queue = loggers
    configure(1, root_handlers=[logging.NullHandler()])
    assert ours.handlers == [] and ours.level == logging.INFO


def test_q_cluster_log_level_keeps_its_level_in_our_format(loggers, project):
    project(q_cluster={**Q_CLUSTER, "log_level": "INFO"})
    _ours, queue = loggers
    configure(1)
    assert queue.level == logging.INFO
    assert django_q2_own(queue).formatter._fmt == LOG_FORMAT


def test_loggers_configured_in_logging_are_left_as_configured(loggers, project):
    levels = {QUEUE_LOGGER: {"level": "ERROR"}, "django_workflow": {"level": "ERROR"}}
    project({"version": 1, "loggers": levels})
    ours, queue = loggers
    ours.setLevel(logging.ERROR)
    configure(2)
    assert ours.level == logging.ERROR and ours.handlers == []
    assert queue.level == logging.ERROR  # django-q2 had put its Q_CLUSTER level over it
    assert django_q2_own(queue).formatter._fmt != LOG_FORMAT


# What a poll logs: one line per work that fired, naming the records -------------------


@pytest.fixture
def info_lines(caplog):
    caplog.set_level(logging.INFO, logger="django_workflow")
    return lambda: [r.getMessage() for r in caplog.records if r.name.startswith("django_workflow")]


@pytest.mark.django_db
def test_a_poll_that_fires_is_one_line_naming_the_records(info_lines):
    batches = Batch.objects.bulk_create([Batch() for _ in range(2)])
    Batch.objects.update(state_entered_at=timezone.now() - timedelta(hours=30))
    poll("testapp.Batch", [w.name for w in Batch.workflow.works])
    first, second = sorted(batch.pk for batch in batches)
    assert info_lines() == [f"testapp.Batch: timeout:waiting.ping fired for #{first}, #{second}"]


@pytest.mark.django_db
def test_a_firing_logs_on_the_logger_the_docs_name(caplog):
    # docs/worker.md names django_workflow.firing (release 2's); release 3 logged elsewhere.
    caplog.set_level(logging.INFO, logger="django_workflow.firing")
    Batch.objects.create()
    Batch.objects.update(state_entered_at=timezone.now() - timedelta(hours=30))
    poll("testapp.Batch", [w.name for w in Batch.workflow.works])
    assert [r.name for r in caplog.records if "fired for" in r.getMessage()] == [
        "django_workflow.firing"
    ]


@pytest.mark.django_db
def test_the_safety_net_names_the_steps_it_queues_again(info_lines):
    record = Sync.objects.create()  # no commit captured: its task was never queued
    Sync.objects.filter(pk=record.pk).update(state_entered_at=timezone.now() - timedelta(minutes=5))
    OrmQ.objects.all().delete()
    poll("testapp.Sync", ["step:pushing"])
    assert info_lines() == [f"testapp.Sync: step:pushing queued again for #{record.pk}"]


def test_a_long_list_of_records_names_ten_and_counts_the_rest():
    assert named([1, 2, 3]) == "#1, #2, #3"
    assert named(list(range(1, 501))) == ("#1, #2, #3, #4, #5, #6, #7, #8, #9, #10 and 490 more")


# What a start says about the stored due instants (docs/deadlines.md) ------------------


def start_once(loggers):
    out = io.StringIO()
    call_command("workflow_worker", "--once", stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_a_first_start_with_every_instant_right_says_nothing_about_deadlines(
    loggers, project, info_lines
):
    Proposal.objects.create()
    DeadlineDeclaration.objects.all().delete()  # no worker ever started
    assert "deadlines changed" not in start_once(loggers)
    assert not [line for line in info_lines() if "deadlines changed" in line]


@pytest.mark.django_db
def test_a_changed_declaration_that_moves_instants_says_how_many(loggers, project, info_lines):
    proposal = Proposal.objects.create()
    Proposal._base_manager.filter(pk=proposal.pk).update(
        **{NEXT_DUE_AT: timezone.now() + timedelta(days=99)}
    )
    DeadlineDeclaration.objects.update_or_create(
        model="testapp.Proposal", defaults={"fingerprint": "an older declaration"}
    )
    assert "testapp.Proposal: deadlines changed; 1 due instant(s) moved\n" in start_once(loggers)
    assert "testapp.Proposal: its deadlines changed; computing next_due_at of every record" in (
        info_lines()
    )


@pytest.mark.django_db
def test_the_worker_s_own_lines_are_out_at_once_on_a_buffered_stdout(loggers, tmp_path):
    # Under systemd or a container runtime stdout is a pipe or a file: block-buffered.
    path = tmp_path / "worker.out"
    with path.open("w") as buffered:
        call_command("workflow_worker", "--once", stdout=buffered)
        said = path.read_text()  # before the file is closed, which would flush it
    assert "unit(s) of work:" in said
    assert said.rstrip().endswith("done: 0 fired")
