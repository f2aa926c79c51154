"""benchmarks/throughput.py: one database for the benchmark and its worker, one
django-q2 worker. PostgreSQL by default; ``BENCH_THROUGHPUT_DB=sqlite`` puts both on
the SQLite file ``BENCH_SQLITE_PATH`` (WAL, as a deployment on SQLite runs)."""

import os

from benchmarks.worker_settings import *  # noqa: F403

if os.environ.get("BENCH_THROUGHPUT_DB") == "sqlite":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ["BENCH_SQLITE_PATH"],
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
            },
        }
    }
Q_CLUSTER = {**Q_CLUSTER, "workers": 1}  # noqa: F405
