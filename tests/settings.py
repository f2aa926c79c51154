"""Settings for the test suite. ``WORKFLOW_TEST_DB=postgres`` selects PostgreSQL.

The PostgreSQL server is started by ``scripts/postgres.sh`` (``make test``
does it), which exports ``PGHOST``/``PGPORT``/``PGUSER``.

``WORKFLOW_BROKER=redis`` puts django-q2 on its Redis broker instead of the ORM
one; the server is started by ``scripts/redis.sh``, which exports
``WORKFLOW_REDIS_PORT``. ``WORKFLOW_RECOVERY_AFTER`` and ``WORKFLOW_SHUTDOWN_GRACE``
(seconds) set those two ``DJANGO_WORKFLOW`` keys, so worker tests can shorten them.
"""

import os
import tempfile

SECRET_KEY = "tests-only"
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
    # Django's tasks through the database backend: the "django_tasks" transport's tests.
    "django_tasks_db",
    "django_workflow",
    # The REST endpoints (django_workflow.rest), tested in tests/outside_the_admin/test_rest.py.
    "rest_framework",
    "drf_spectacular",
    # A save-based history app, to see that every step change reaches it.
    "simple_history",
    "tests.testapp",
    # The example project's reference workflows, tested end to end in tests/examples.
    "example_project.hiring",
    "example_project.approvals",
    "example_project.fulfilment",
    "example_project.dunning",
    "example_project.support",
]

# Worker subprocesses started by the tests are pointed at the test database.
WORKER_DATABASE = os.environ.get("WORKFLOW_DB_NAME")

if os.environ.get("WORKFLOW_TEST_DB") == "postgres":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": WORKER_DATABASE or os.environ.get("WORKFLOW_PG_NAME", "workflow"),
            "HOST": os.environ.get("PGHOST", "127.0.0.1"),
            "PORT": os.environ.get("PGPORT", "5432"),
            "USER": os.environ.get("PGUSER", "postgres"),
            "PASSWORD": os.environ.get("PGPASSWORD", ""),
            "CONN_MAX_AGE": 60,
        }
    }
else:
    # A file, so worker subprocesses can share the test database.
    test_file = os.path.join(tempfile.gettempdir(), f"workflow-tests-{os.getpid()}.sqlite3")
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": WORKER_DATABASE or test_file,
            "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 20},
            "TEST": {"NAME": test_file},
        }
    }

Q_CLUSTER = {
    "name": "workflow",
    "orm": "default",
    # Tasks run in the test process; worker subprocesses run them for real.
    "sync": WORKER_DATABASE is None,
    "poll": 0.05,
    "max_attempts": 1,
    "timeout": 60,
    "retry": 300,
}
if os.environ.get("WORKFLOW_Q_WORKERS"):  # django-q2 runs one per core otherwise
    Q_CLUSTER["workers"] = int(os.environ["WORKFLOW_Q_WORKERS"])
if os.environ.get("WORKFLOW_BROKER") == "redis":
    # django-q2 picks the Redis broker when no other broker is configured.
    del Q_CLUSTER["orm"]
    Q_CLUSTER["redis"] = {
        "host": "127.0.0.1",
        "port": int(os.environ["WORKFLOW_REDIS_PORT"]),
        "db": 0,
    }

MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
# Object permissions through django-rules beside Django's own: the has_perm policy
# must honour a grant on one record (tests/transitions/test_object_permissions.py).
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "rules.permissions.ObjectPermissionBackend",
]
ROOT_URLCONF = "tests.urls"
REST_FRAMEWORK = {"DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema"}
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
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
STATIC_URL = "/static/"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {"django-q": {"level": "ERROR"}},
}
if WORKER_DATABASE is None:  # quiet in pytest; a worker subprocess logs as workflow_worker sets up
    LOGGING["loggers"]["django_workflow"] = {"level": "CRITICAL"}

DJANGO_WORKFLOW = {
    "PRECISE_SWEEP": 1,
    "PRECISE_LEASE": 3,
    "TRANSPORT": os.environ.get("WORKFLOW_TRANSPORT", "django_q"),
    # The "celery" transport's app (tests/celery_app.py).
    "CELERY_APP": "tests.celery_app:app",
}
# The "django_tasks" transport's backend (docs/transports.md): the database, worked by
# ``manage.py db_worker``.
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "workflow"],
    }
}
for setting in ("RECOVERY_AFTER", "SHUTDOWN_GRACE"):
    if os.environ.get(f"WORKFLOW_{setting}"):
        DJANGO_WORKFLOW[setting] = int(os.environ[f"WORKFLOW_{setting}"])
