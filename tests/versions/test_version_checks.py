"""``manage.py check`` on versioned declarations (docs/versions.md, docs/checks.md)."""

import pytest
from django.core import checks

from django_workflow import Step, Transition
from django_workflow.checks import check_model
from tests.testapp.models import Tender
from tests.versions.test_versions import on_version_1


def ids(messages):
    return [message.id for message in messages]


def test_each_previous_version_is_checked_and_its_messages_name_it(declare):
    class Old:
        version = 1
        draft = Step(Transition("send", to="sent"))  # a typo of version 1's own
        done = Step()

    class Workflow:
        version = 2
        previous = [Old]
        draft = Step(Transition("send", to="done"))
        done = Step()

    [message] = check_model(declare(Workflow))
    assert message.id == "django_workflow.E012"
    assert message.msg.startswith("version 1: step 'draft', transition 'send' names step 'sent'")


def test_a_previous_version_numbered_at_or_above_the_current_one_is_an_error(declare):
    class Old:
        version = 2
        draft = Step(Transition("send", to="done"))
        done = Step()

    class Workflow:
        version = 2
        previous = [Old]
        draft = Step(Transition("send", to="done"))
        done = Step()

    [message] = check_model(declare(Workflow))
    assert message.id == "django_workflow.E080"
    assert "holds Old with version 2" in message.msg


def test_versions_storing_the_step_in_different_fields_are_an_error(declare):
    class Old:
        state_attribute = "status"
        draft = Step(Transition("send", to="done"))
        done = Step()

    class Workflow:
        version = 2
        previous = [Old]
        draft = Step(Transition("send", to="done"))
        done = Step()

    assert "django_workflow.E081" in ids(check_model(declare(Workflow)))


def test_a_version_that_is_not_a_positive_integer_is_an_option_error(declare):
    class Workflow:
        version = "2"
        draft = Step(Transition("send", to="done"))
        done = Step()

    [message] = check_model(declare(Workflow))
    assert message.id == "django_workflow.E027"
    assert "`Workflow.version` is '2'" in message.msg


def deploy_messages():
    found = checks.run_checks(include_deployment_checks=True, databases=["default"])
    wanted = {"django_workflow.E082", "django_workflow.I002"}
    return [m for m in found if m.id in wanted and m.obj is Tender]


@pytest.mark.django_db(transaction=True)
def test_records_on_a_version_no_longer_declared_fail_the_deploy_check():
    stray = Tender.objects.create()
    Tender.objects.filter(pk=stray.pk).update(workflow_version=7)
    on_version_1()
    [message] = deploy_messages()
    assert message.id == "django_workflow.E082"
    assert "1 record in database 'default' run on version 7" in message.msg
    assert "workflow_upgrade testapp.Tender --from 7 --to 2" in message.hint


@pytest.mark.django_db(transaction=True)
def test_a_previous_version_without_records_may_be_removed():
    Tender.objects.create()
    [message] = deploy_messages()
    assert (message.id, message.msg) == (
        "django_workflow.I002",
        "version 1 of testapp.Tender has no records in database 'default': it may be removed.",
    )


@pytest.mark.django_db(transaction=True)
def test_records_of_a_step_only_their_own_version_declares_are_not_stranded():
    shelved = on_version_1()
    shelved.shelve()
    found = checks.run_checks(databases=["default"], tags=[checks.Tags.database])
    assert "django_workflow.W010" not in ids(m for m in found if m.obj is Tender)


def test_the_type_stubs_name_the_version_field_and_every_versions_transitions():
    from django_workflow.stubs.surface import surface

    found = surface(Tender)
    assert "workflow_version" in [member.name for member in found.fields]
    assert {"shelve", "withdraw", "revive", "submit"} <= {t.name for t in found.transitions}
    assert set(found.steps) == {"draft", "checking", "review", "approved", "legacy"}
