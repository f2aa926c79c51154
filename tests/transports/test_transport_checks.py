"""``manage.py check`` on the transport settings (docs/checks.md, docs/transports.md)."""

from django_workflow.checks.transport_checks import check_transport


def ids(settings, **workflow):
    settings.DJANGO_WORKFLOW = {**settings.DJANGO_WORKFLOW, **workflow}
    return [(message.id, message.msg) for message in check_transport()]


def test_the_default_transport_and_the_configured_ones_pass(settings):
    assert ids(settings, TRANSPORT="django_q") == []
    assert ids(settings, TRANSPORT="django_tasks") == []
    assert ids(settings, TRANSPORT="celery") == []


def test_an_unknown_transport_is_an_error_naming_the_setting(settings):
    [(code, message)] = ids(settings, TRANSPORT="rq")
    assert code == "django_workflow.E083"
    assert message == "DJANGO_WORKFLOW['TRANSPORT'] is 'rq', which is no transport."


def test_a_celery_app_that_does_not_import_is_an_error(settings):
    [(code, message)] = ids(settings, TRANSPORT="celery", CELERY_APP="tests.nowhere:app")
    assert code == "django_workflow.E085"
    assert message.startswith("DJANGO_WORKFLOW['CELERY_APP'] is 'tests.nowhere:app', which")
    [(code, _)] = ids(settings, TRANSPORT="celery", CELERY_APP="tests.settings:TASKS")
    assert code == "django_workflow.E085"


def test_a_tasks_backend_that_tasks_does_not_configure_is_an_error(settings):
    [(code, message)] = ids(settings, TRANSPORT="django_tasks", TASKS_BACKEND="elsewhere")
    assert code == "django_workflow.E086"
    assert "'elsewhere', which TASKS does not configure" in message
