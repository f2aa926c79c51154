"""benchmarks/worker.py: everything on PostgreSQL, tasks through a real cluster."""

from benchmarks.settings import *  # noqa: F403

DATABASES = {"default": DATABASES["postgres"]}  # noqa: F405
DATABASE_ROUTERS = []
DJANGO_WORKFLOW = {}
Q_CLUSTER = {
    "name": "workflow",
    "orm": "default",
    "workers": 2,
    "poll": 0.05,
    "timeout": 60,
    "retry": 120,
    "max_attempts": 3,
    "log_level": "WARNING",
}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {"django-q": {"level": "WARNING"}},
}
