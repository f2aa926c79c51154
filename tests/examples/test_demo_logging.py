"""``make demo``'s web server logs requests, not the admin's static files (example settings)."""

import logging

from django.utils.log import CallbackFilter

from example_project import settings

[FILTER] = settings.LOGGING["filters"].values()
SHOWN = CallbackFilter(FILTER["callback"])


def request_line(line, status):
    record = logging.LogRecord(
        "django.server", logging.INFO, "", 0, '"%s" %s %s', (line, status, 512), None
    )
    record.status_code = status
    return record


def test_static_files_served_are_not_logged():
    assert not SHOWN.filter(request_line("GET /static/admin/css/base.css HTTP/1.1", 200))
    assert not SHOWN.filter(request_line("GET /static/admin/js/core.js HTTP/1.1", 304))


def test_pages_and_failing_static_files_are_logged():
    assert SHOWN.filter(request_line("GET /admin/hiring/candidate/ HTTP/1.1", 200))
    assert SHOWN.filter(request_line("POST /admin/login/ HTTP/1.1", 302))
    assert SHOWN.filter(request_line("GET /static/admin/css/missing.css HTTP/1.1", 404))


def test_the_web_server_logger_uses_the_filter():
    assert settings.LOGGING["handlers"]["django.server"]["filters"] == ["no_static_files"]
    assert settings.LOGGING["disable_existing_loggers"] is False  # the worker's loggers stay
