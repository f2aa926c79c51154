"""Declarations that ``manage.py check`` accepted but that crashed when used: a ``Q``
comparing two of the record's fields, a ``when`` taking no record, a cron with seconds
(docs/transitions.md, "Code in a transition"; docs/checks.md)."""

import pytest
from django.contrib.auth.models import User
from django.db import models
from django.db.models import F, Q

from django_workflow import Every, Route, Step, Transition
from django_workflow.checks import check_model
from django_workflow.errors import StaleRecord
from tests.testapp.models import Clearance


def ids(model):
    return [message.id.removeprefix("django_workflow.") for message in check_model(model)]


def act(self):
    pass


@pytest.mark.django_db
def test_a_when_comparing_two_own_fields_is_decided_on_the_instance():
    clearance = Clearance.objects.create(amount=120, limit=100)
    assert "escalate" in clearance.available_actions()
    clearance.limit = 150  # unsaved: decided on the instance, like every `when`
    assert "escalate" not in clearance.available_actions()
    clearance.save()
    clearance.amount = 150
    clearance.save()
    clearance.escalate()
    assert Clearance.objects.get(pk=clearance.pk).state == "large"


@pytest.mark.django_db
def test_a_field_compared_in_when_joins_the_stale_guard():
    clearance = Clearance.objects.create(amount=120, limit=100)
    Clearance.objects.filter(pk=clearance.pk).update(limit=500)
    with pytest.raises(StaleRecord):
        clearance.escalate()


def test_a_route_comparing_two_own_fields_passes_the_checks(declare):
    class Workflow:
        start = Step(Transition("go", Route("big", when=Q(amount__gte=F("limit"))), Route("small")))
        big = Step()
        small = Step()

    fields = {"amount": models.IntegerField(default=0), "limit": models.IntegerField(default=0)}
    assert ids(declare(Workflow, **fields)) == []


def test_an_f_following_a_relation_is_refused(declare):
    class Workflow:
        start = Step(Transition("go", to="done", when=Q(note=F("owner__username"))))
        done = Step()

    fields = {
        "note": models.CharField(max_length=10),
        "owner": models.ForeignKey(User, on_delete=models.CASCADE),
    }
    assert ids(declare(Workflow, **fields)) == ["E035"]


def test_an_f_naming_no_field_is_refused(declare):
    class Workflow:
        start = Step(Transition("go", to="done", when=Q(amount__gte=F("ceiling"))))
        done = Step()

    assert ids(declare(Workflow, amount=models.IntegerField(default=0))) == ["E032"]


def test_a_when_that_takes_no_record_is_refused(declare):
    class Workflow:
        start = Step(Transition("go", to="done", when=lambda: True))
        done = Step()

    assert ids(declare(Workflow)) == ["E032"]


def test_a_route_when_that_takes_two_arguments_is_refused(declare):
    class Workflow:
        start = Step(
            Transition("go", Route("done", when=lambda record, actor: True), Route("other"))
        )
        done = Step()
        other = Step()

    assert ids(declare(Workflow)) == ["E019"]


def test_a_when_with_an_optional_second_argument_is_accepted(declare):
    def small(record, limit=50):
        return record.amount < limit

    class Workflow:
        start = Step(Transition("go", to="done", when=small))
        done = Step()

    assert ids(declare(Workflow, amount=models.IntegerField(default=0))) == []


def test_a_cron_with_a_seconds_field_is_refused(declare):
    class Workflow:
        scheduler = "precise"
        start = Step(Transition("go", to="done"), Every("tick", cron="0 0 9 * * *", action="act"))
        done = Step()

    assert ids(declare(Workflow, act=act)) == ["E050"]


def test_a_cron_name_croniter_knows_is_accepted(declare):
    class Workflow:
        scheduler = "precise"
        start = Step(Transition("go", to="done"), Every("tick", cron="@daily", action="act"))
        done = Step()

    assert ids(declare(Workflow, act=act)) == []
