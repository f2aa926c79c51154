"""Running a benchmark file once per database: Django's settings are fixed per process."""

import os
import subprocess
import sys
import tempfile


def each_database(script):
    """Run ``script`` once per database of ``BENCH_DATABASES`` (PostgreSQL, then SQLite on a
    file of its own, in WAL mode), with ``BENCH_THROUGHPUT_DB`` naming it
    (``benchmarks/throughput_settings.py``)."""
    for name in os.environ.get("BENCH_DATABASES", "postgres,sqlite").split(","):
        env = {**os.environ, "BENCH_THROUGHPUT_DB": name}
        if name == "sqlite":
            folder = tempfile.mkdtemp(prefix="workflow-throughput-")
            env["BENCH_SQLITE_PATH"] = os.path.join(folder, "bench.sqlite3")
        subprocess.run([sys.executable, script], env=env, check=True)


def set_up(script, name):
    """Django for one database of ``BENCH_DATABASES``, under ``benchmarks/throughput_settings``
    (PostgreSQL in a database of ``name``'s own). Run as a script with none named yet,
    ``script`` is run once per database instead, and this process exits."""
    if "BENCH_THROUGHPUT_DB" not in os.environ:
        each_database(script)
        sys.exit(0)
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.throughput_settings"
    if os.environ["BENCH_THROUGHPUT_DB"] == "postgres":
        from benchmarks import database

        database.own(name)
    import django

    django.setup()
