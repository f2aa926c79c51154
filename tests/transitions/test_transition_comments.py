"""A transition's declared comment and custom data, and an action's word for the log
(docs/transitions.md, "Comments and custom data")."""

import pytest

from tests.testapp.models import Clearance

pytestmark = pytest.mark.django_db


def last_comment(record):
    return list(record.history())[-1].comment


def test_custom_data_is_read_back_from_the_declaration():
    declared = Clearance.workflow.transition("draft", "inspect")
    assert declared.custom == {"colour": "green", "sla_hours": 4}
    assert Clearance.workflow.transition("draft", "reject").custom == {}


def test_a_declared_comment_is_logged_when_the_call_gives_none():
    clearance = Clearance.objects.create()
    clearance.inspect()
    assert last_comment(clearance) == "checked by the clerk"


def test_the_callers_comment_wins_over_the_declared_one():
    clearance = Clearance.objects.create()
    clearance.inspect(comment="second look")
    assert last_comment(clearance) == "second look"


def test_the_string_an_action_returns_is_the_log_comment():
    clearance = Clearance.objects.create(holder="ada")
    clearance.annotate()
    assert last_comment(clearance) == "explained for ada"


def test_the_callers_comment_wins_over_the_actions():
    clearance = Clearance.objects.create(holder="ada")
    clearance.annotate(comment="by hand")
    assert last_comment(clearance) == "by hand"


def test_a_bulk_move_logs_the_declared_comment():
    clearances = [Clearance.objects.create(amount=n) for n in (1, 2)]
    Clearance.objects.filter(pk__in=[c.pk for c in clearances]).transition("inspect")
    assert [last_comment(c) for c in clearances] == ["checked by the clerk"] * 2
