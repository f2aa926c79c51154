"""The workflow signals take a lazy "app_label.ModelName" sender, like Django's model
signals (docs/log-and-signals.md)."""

import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.core import checks
from django.db.models.signals import ModelSignal

from django_workflow import signals
from django_workflow.signals import step_changed, work_failed, work_fired, work_halted
from tests.processes import ROOT
from tests.testapp.models import Decision, Draft

ada = SimpleNamespace(name="ada")


def test_every_signal_sent_with_the_model_is_a_model_signal():
    sent_with_the_model = ("step_changed", "work_fired", "work_failed", "work_halted")
    for name in (*sent_with_the_model, "entered_step"):
        assert isinstance(getattr(signals, name), ModelSignal), name


@pytest.mark.django_db
def test_a_string_sender_hears_that_model_only(committed):
    heard = []

    def receiver(sender, instance, from_state, to_state, **kwargs):
        heard.append((sender, from_state, to_state))

    step_changed.connect(receiver, sender="testapp.Decision")
    try:
        with committed():
            decision = Decision.objects.create()
            draft = Draft.objects.create()
        with committed():
            decision.hold(actor=ada)
            draft.submit(actor=ada)
    finally:
        step_changed.disconnect(receiver, sender="testapp.Decision")
    assert heard == [(Decision, None, "pending"), (Decision, "pending", "held")]


@pytest.mark.django_db
def test_disconnecting_with_the_string_stops_the_receiver(committed):
    heard = []

    def receiver(sender, to_state, **kwargs):
        heard.append(to_state)

    step_changed.connect(receiver, sender="testapp.Decision")
    with committed():
        decision = Decision.objects.create()
    step_changed.disconnect(receiver, sender="testapp.Decision")
    with committed():
        decision.hold(actor=ada)
    assert heard == ["pending"]


@pytest.mark.django_db
def test_a_dispatch_uid_with_a_string_sender(committed):
    heard = []

    def receiver(sender, to_state, **kwargs):
        heard.append(to_state)

    step_changed.connect(receiver, sender="testapp.Decision", dispatch_uid="lazy-uid")
    step_changed.connect(receiver, sender="testapp.Decision", dispatch_uid="lazy-uid")
    with committed():
        decision = Decision.objects.create()
    step_changed.disconnect(sender="testapp.Decision", dispatch_uid="lazy-uid")
    with committed():
        decision.hold(actor=ada)
    assert heard == ["pending"]  # connected once, and no more after the disconnect


FAILURE = {"pk": 1, "work": "submit", "attempt": 1, "error": ValueError("x")}


@pytest.mark.parametrize(
    ("signal", "arguments"),
    [
        (work_fired, {"work": "submit", "count": 1}),
        (work_failed, {**FAILURE, "retry_at": None}),
        (work_halted, FAILURE),
    ],
)
def test_the_work_signals_take_a_string_sender_too(signal, arguments):
    heard = []

    def receiver(sender, **kwargs):
        heard.append(sender)

    signal.connect(receiver, sender="testapp.Draft")
    try:  # with every documented argument: other tests' receivers may still listen
        signal.send(sender=Decision, **arguments)
        signal.send(sender=Draft, **arguments)
    finally:
        signal.disconnect(receiver, sender="testapp.Draft")
    signal.send(sender=Draft, **arguments)
    assert heard == [Draft]


@pytest.mark.django_db  # a model check of Django 6 asks the database
def test_a_string_naming_no_installed_model_is_reported_by_the_checks():
    def receiver(sender, **kwargs):
        pass

    step_changed.connect(receiver, sender="testapp.NoSuchModel")
    try:
        errors = [e for e in checks.run_checks(tags=[checks.Tags.models]) if e.id == "signals.E001"]
    finally:
        apps._pending_operations.pop(("testapp", "nosuchmodel"), None)
    assert len(errors) == 1
    assert "'testapp.nosuchmodel'" in errors[0].msg


CONNECT_BEFORE_SETUP = textwrap.dedent(
    """
    import django
    from django.apps import apps
    from django_workflow.signals import step_changed

    heard = []

    def receiver(sender, **kwargs):
        heard.append(sender.__name__)

    # As a models module would at import: the registry is not ready, Decision unknown.
    step_changed.connect(receiver, sender="testapp.Decision")
    assert not apps.ready

    django.setup()
    from tests.testapp.models import Decision, Draft

    assert step_changed.has_listeners(Decision) and not step_changed.has_listeners(Draft)
    step_changed.send(sender=Draft, instance=None)
    step_changed.send(sender=Decision, instance=None)
    print(heard)
    """
)


def test_a_string_sender_connected_before_the_registry_is_ready():
    done = subprocess.run(
        [sys.executable, "-c", CONNECT_BEFORE_SETUP],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['Decision']"
