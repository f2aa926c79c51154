"""``Workflow.events`` is checked like every declaration (docs/events.md, docs/checks.md):
the transition, the key field and the buffer."""

from datetime import timedelta

import pytest
from django.db import models

from django_workflow import Receive, Step, Transition
from django_workflow.checks import check_model
from tests.testapp.models import Payment


def ids(model):
    return [message.id.split(".")[1] for message in check_model(model)]


def declared(declare, receive, **fields):
    class Workflow:
        events = {"shop.settled": receive}
        pending = Step(Transition("settle", to="settled"))
        settled = Step()

    return declare(Workflow, ref=models.CharField(max_length=20, unique=True), **fields)


def test_the_compiled_workflow_keeps_the_events():
    assert Payment.workflow.events["psp.settled"] == Receive(
        key="psp_ref", transition="settle", buffer="1d"
    )


def test_a_valid_receive_passes(declare):
    assert ids(declared(declare, Receive(key="ref", transition="settle"))) == []


def test_an_unknown_transition_is_an_error_listing_the_declared_ones(declare):
    [error] = check_model(declared(declare, Receive(key="ref", transition="setle")))
    assert error.id == "django_workflow.E073"
    assert "'setle'" in error.msg and "settle" in error.hint


def test_an_event_calling_a_transition_that_counts_votes_is_an_error(declare):
    class Workflow:
        events = {"shop.settled": Receive(key="ref", transition="settle")}
        pending = Step(Transition("settle", to="settled", quorum=2))
        settled = Step()

    model = declare(Workflow, ref=models.CharField(max_length=20, unique=True))
    [error] = check_model(model)
    assert error.id == "django_workflow.E073" and "quorum" in error.msg


def test_an_event_that_is_no_receive_is_an_error(declare):
    assert ids(declared(declare, "settle")) == ["E073"]


def test_an_event_name_received_by_two_models_is_an_error(declare):
    class Workflow:
        events = {"psp.settled": Receive(key="psp_ref", transition="settle")}
        pending = Step(Transition("settle", to="settled"))
        settled = Step()

    model = declare(Workflow, psp_ref=models.CharField(max_length=20, unique=True))
    [error] = [m for m in check_model(model) if m.id.endswith("E073")]
    assert "Payment" in error.msg


def test_a_key_that_is_no_field_is_an_error_listing_the_fields(declare):
    [error] = check_model(declared(declare, Receive(key="reference", transition="settle")))
    assert error.id == "django_workflow.E074" and "ref" in error.hint


def test_a_key_that_is_not_unique_is_a_warning(declare):
    receive = Receive(key="note", transition="settle")
    model = declared(declare, receive, note=models.CharField(max_length=20))
    [warning] = check_model(model)
    assert warning.id == "django_workflow.W011" and "unique=True" in warning.hint


def test_the_primary_key_is_a_unique_key(declare):
    assert ids(declared(declare, Receive(key="id", transition="settle"))) == []


@pytest.mark.parametrize("buffer", ["soon", "0m", "2bd", (1, "fortnight")])
def test_a_buffer_that_is_no_positive_wall_clock_duration_is_an_error(declare, buffer):
    [error] = check_model(declared(declare, Receive(key="ref", transition="settle", buffer=buffer)))
    assert error.id == "django_workflow.E075" and "positive duration" in error.hint


@pytest.mark.parametrize("buffer", ["1d", "90m", timedelta(hours=6), (2, "hours")])
def test_a_wall_clock_buffer_passes(declare, buffer):
    assert ids(declared(declare, Receive(key="ref", transition="settle", buffer=buffer))) == []


def test_events_that_are_not_a_dict_are_reported_as_a_wrong_option(declare):
    class Workflow:
        events = [Receive(key="ref", transition="settle")]
        pending = Step(Transition("settle", to="settled"))
        settled = Step()

    assert "events" in str(check_model(declare(Workflow)))
