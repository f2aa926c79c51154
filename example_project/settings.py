"""The example project: five workflows on SQLite, run by ``make demo``."""

import logging
import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent

SECRET_KEY = "example-project-not-for-production"
DEBUG = True
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
# `make demo` serves on DEMO_ADDRESS (host:port): its host is allowed too.
if os.environ.get("DEMO_ADDRESS", "").count(":") == 1:
    ALLOWED_HOSTS.append(os.environ["DEMO_ADDRESS"].partition(":")[0])
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_q",
    "django_workflow",
    "example_project.hiring",
    "example_project.approvals",
    "example_project.fulfilment",
    "example_project.dunning",
    "example_project.support",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "example_project.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": BASE_DIR / "db.sqlite3",
        # Two processes (web and worker) write: take the write lock up front and wait for it.
        "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 20},
    }
}

# django-q2 runs automatic steps. The cluster name is the queue the workflows use.
Q_CLUSTER = {
    "name": "workflow",
    "orm": "default",
    "workers": 2,
    "timeout": 60,
    "retry": 120,
    "max_attempts": 3,
    "catch_up": False,
}

STATIC_URL = "static/"
# The support agents' pages (/agent/) log in outside the admin.
LOGIN_REDIRECT_URL = "/agent/"


def static_file_served(record: logging.LogRecord) -> bool:
    """Whether a runserver request line is a static file served without a problem."""
    args = record.args
    request_line = str(args[0]) if isinstance(args, tuple) and args else ""
    path = request_line.split(" ")[1] if request_line.count(" ") >= 2 else ""
    return path.startswith(f"/{STATIC_URL}") and getattr(record, "status_code", 500) < 400


# `make demo` interleaves the web server's request lines with the worker's: the admin's
# static files (a dozen per page) are left out, every other request is logged as usual.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "no_static_files": {
            "()": "django.utils.log.CallbackFilter",
            "callback": lambda record: not static_file_served(record),
        }
    },
    "formatters": {
        "django.server": {
            "()": "django.utils.log.ServerFormatter",
            "format": "[{server_time}] {message}",
            "style": "{",
        }
    },
    "handlers": {
        "django.server": {
            "class": "logging.StreamHandler",
            "formatter": "django.server",
            "filters": ["no_static_files"],
        }
    },
    "loggers": {
        "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False}
    },
}
