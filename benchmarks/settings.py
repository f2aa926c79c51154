"""Settings for the benchmarks: one SQLite and one PostgreSQL database side by side."""

import os
import tempfile

SECRET_KEY = "benchmarks-only"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django_q",
    "django_workflow",
    "benchmarks.benchapp",
]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.path.join(tempfile.mkdtemp(prefix="workflow-bench-"), "bench.sqlite3"),
        "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 20},
    },
    "postgres": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ.get("BENCH_PGDATABASE", "postgres"),
        "HOST": os.environ.get("PGHOST", "127.0.0.1"),
        "PORT": os.environ.get("PGPORT", "5432"),
        "USER": os.environ.get("PGUSER", "postgres"),
        "CONN_MAX_AGE": 600,
    },
}
DJANGO_WORKFLOW = {"ENQUEUE_AUTOMATIC_STEPS": False}
Q_CLUSTER = {
    "name": "workflow",
    "orm": "default",
    "sync": True,
    "timeout": 60,
    "retry": 120,
    "max_attempts": 3,
}


#: The database the benchmark models live in now (benchmarks measure each in turn).
BENCH_DATABASE = ["postgres"]


class BenchmarkDatabases:
    """Every benchapp model but transitions.py's (which names its database) goes to
    ``BENCH_DATABASE[0]``: ``poll`` and ``run_work`` find their database by the router."""

    def db_for_read(self, model, **hints):
        if model._meta.app_label == "benchapp" and model._meta.model_name not in (
            "ours",
            "peer",
            "peerlog",
        ):
            return BENCH_DATABASE[0]
        return None

    db_for_write = db_for_read


DATABASE_ROUTERS = ["benchmarks.settings.BenchmarkDatabases"]
