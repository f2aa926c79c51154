"""System checks (docs/checks.md): a corpus of hostile declarations, each reported by
``manage.py check`` with its ID, none raising at import."""

import os
import re
import subprocess
import sys

import pytest
from django.apps import apps
from django.db import models
from django.test.utils import isolate_apps

from django_workflow import Every, Step, Transition, WorkflowModel
from django_workflow.checks import check_deployment, check_model, check_workflows
from django_workflow.workflow_model import workflow_models
from tests.helpers import ROOT
from tests.hostile.expected import EXPECTED, VALID


@pytest.fixture(scope="module")
def check_output():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings_hostile"}
    result = subprocess.run(
        [sys.executable, "-m", "django", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result


def reported(output, model):
    return set(re.findall(rf"hostile\.{model}: \(django_workflow\.([EW]\d+)\)", output))


def test_the_corpus_is_large_enough():
    assert len(EXPECTED) >= 30


def test_check_fails_without_a_traceback(check_output):
    assert check_output.returncode == 1
    assert "Traceback" not in check_output.stderr
    assert "SystemCheckError" in check_output.stderr


@pytest.mark.parametrize("model, code", sorted(EXPECTED.items()))
def test_each_hostile_declaration_is_reported_with_its_id(check_output, model, code):
    assert code in reported(check_output.stderr, model)


def test_every_hostile_model_is_in_the_corpus(check_output):
    found = set(re.findall(r"hostile\.(\w+): \(django_workflow", check_output.stderr))
    assert found == set(EXPECTED)


@pytest.mark.parametrize("model", VALID)
def test_the_valid_declarations_beside_them_are_accepted(check_output, model):
    assert reported(check_output.stderr, model) == set()


def test_messages_name_the_model_and_step_and_carry_a_hint(check_output):
    lines = check_output.stderr.splitlines()
    unknown = next(i for i, line in enumerate(lines) if "hostile.UnknownTarget:" in line)
    assert "step 'start', transition 'go' names step 'nowhere'" in lines[unknown]
    assert lines[unknown + 1].strip() == "HINT: Declared steps: start."


def test_an_unknown_option_lists_the_valid_ones(check_output):
    assert "`Workflow.stat_attribute` is not a workflow option." in check_output.stderr
    assert "Valid options are: state_attribute, check_interval, queue," in check_output.stderr


def test_the_shipped_test_models_pass_every_check():
    said = check_workflows([apps.get_app_config("testapp")])
    assert {(m.id, m.obj.__name__) for m in said} == {("django_workflow.I001", "Node")}


@pytest.mark.parametrize(
    "setting, value, code",
    [
        ("Q_CLUSTER", {"retry": 300, "timeout": 60}, "W002"),
        ("Q_CLUSTER", {"max_attempts": 3, "retry": 60, "timeout": 60}, "W003"),
        ("Q_CLUSTER", {"max_attempts": 3, "retry": 100, "timeout": 60}, "W003"),  # time_limit 2m
    ],
)
def test_unsafe_django_q2_settings_are_warned_about(settings, setting, value, code):
    setattr(settings, setting, value)
    found = {message.id for message in check_workflows()}
    assert f"django_workflow.{code}" in found


def test_the_test_settings_are_safe():
    found = {message.id for message in check_deployment(workflow_models())}
    assert found == set()


SQLITE = "django.db.backends.sqlite3"
POSTGRES = "django.db.backends.postgresql"


@pytest.mark.parametrize(
    "database, code",
    [
        ({"ENGINE": SQLITE}, "W004"),
        ({"ENGINE": SQLITE, "OPTIONS": {"timeout": 20}}, "W004"),
        ({"ENGINE": SQLITE, "OPTIONS": {"transaction_mode": "IMMEDIATE"}}, None),
        ({"ENGINE": POSTGRES}, "W005"),
        ({"ENGINE": POSTGRES, "CONN_MAX_AGE": 0}, "W005"),
        ({"ENGINE": POSTGRES, "CONN_MAX_AGE": 60}, None),
        ({"ENGINE": POSTGRES, "CONN_MAX_AGE": None}, None),  # persistent, as the hint says
    ],
)
def test_database_settings_that_lock_or_reconnect_are_warned_about(database, code):
    messages = check_deployment(workflow_models(), {"default": database})
    found = [m.id for m in messages if m.id in ("django_workflow.W004", "django_workflow.W005")]
    assert found == ([f"django_workflow.{code}"] if code else [])


def test_the_warning_names_the_database():
    databases = {"default": {"ENGINE": SQLITE}, "reports": {"ENGINE": POSTGRES}}
    messages = [m for m in check_deployment(workflow_models(), databases) if "database" in m.msg]
    assert ["'default'" in m.msg for m in messages] == [True, False]
    assert ["'reports'" in m.msg for m in messages] == [False, True]


# Wall-clock everies and times, declared on throwaway models -------------------------------


@pytest.fixture
def declare_every():
    """``declare_every(Every(...), **fields)``: a model whose one manual step holds the every."""
    with isolate_apps("tests.testapp"):
        count = iter(range(1000))

        def make(every, **fields):
            workflow = type(
                "Workflow",
                (),
                {"open": Step(Transition("close", to="closed"), every), "closed": Step()},
            )
            meta = type("Meta", (), {"app_label": "testapp"})
            attrs = {"__module__": __name__, "Meta": meta, "Workflow": workflow, "act": _act}
            return type(f"EveryModel{next(count)}", (WorkflowModel,), {**attrs, **fields})

        yield make


def _act(self):
    pass


def every_messages(model):
    return [(m.id.removeprefix("django_workflow."), m) for m in check_model(model)]


def every_ids(model):
    return [code for code, _message in every_messages(model)]


def test_a_cron_every_with_times_and_business_days_passes_every_check(declare_every):
    every = Every("e", cron="0 9 * * mon-fri", action="act", business_days_only=True, times=4)
    assert every_ids(declare_every(every)) == []
    assert every_ids(declare_every(Every("e", interval="1d", action="act", times=1))) == []


@pytest.mark.parametrize(
    "every",
    [
        Every("e", action="act"),
        Every("e", interval="1d", cron="0 9 * * *", action="act"),
    ],
    ids=["neither", "both"],
)
def test_an_every_needs_exactly_one_of_interval_and_cron(declare_every, every):
    [(code, message)] = every_messages(declare_every(every))
    assert code == "E049"
    assert "step 'open', every 'e' needs exactly one of interval or cron" in message.msg
    assert "cron='0 9 * * mon-fri'" in message.hint


@pytest.mark.parametrize("cron", ["0 9 * *", "61 9 * * *", "0 9 * * someday", 9])
def test_an_unreadable_cron_is_reported(declare_every, cron):
    [(code, message)] = every_messages(declare_every(Every("e", cron=cron, action="act")))
    assert code == "E050"
    assert f"cron {cron!r} is not a valid cron expression" in message.msg
    assert "five fields" in message.hint


@pytest.mark.parametrize("times", [0, -2, "3", True, 2.5])
def test_times_must_be_a_positive_whole_number(declare_every, times):
    model = declare_every(Every("e", interval="1d", action="act", times=times))
    [(code, message)] = every_messages(model)
    assert code == "E051"
    assert f"times {times!r} is not a positive whole number" in message.msg
    assert not any(f.name.endswith("_fired_count") for f in model._meta.fields)


@pytest.mark.parametrize(
    "every, says",
    [
        (Every("e", interval="1d", action="act", business_days_only=True), "needs a cron"),
        (Every("e", cron="0 9 * * *", action="act", business_days_only="yes"), "not True or"),
    ],
    ids=["with-interval", "not-a-bool"],
)
def test_business_days_only_is_a_bool_for_cron_everies(declare_every, every, says):
    [(code, message)] = every_messages(declare_every(every))
    assert code == "E052"
    assert says in message.msg
    assert message.hint


def test_a_count_column_declared_by_hand_must_be_a_nullable_integer(declare_every):
    every = Every("e", interval="1d", action="act", times=3)
    wrong = declare_every(every, open_e_fired_count=models.CharField(max_length=5))
    [(code, message)] = every_messages(wrong)
    assert code == "E044"
    assert "'open_e_fired_count'" in message.msg
    right = declare_every(every, open_e_fired_count=models.IntegerField(null=True))
    assert every_ids(right) == []


def test_a_cron_firing_more_often_than_its_every_is_polled_is_warned_about(declare_every):
    every = Every("e", cron="*/5 * * * *", action="act", check_interval="0 * * * *")
    [(code, message)] = every_messages(declare_every(every))
    assert code == "W001"
    assert "cron '*/5 * * * *' is shorter than the period" in message.msg
