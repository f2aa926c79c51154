"""Each benchmark file gets a PostgreSQL database of its own, so runs never share tables.

Imported before ``django.setup()``: sets ``BENCH_PGDATABASE`` (read by
``benchmarks/settings.py``) unless the caller chose one, and creates it.
"""

import os

import psycopg


def own(name):
    database = os.environ.setdefault("BENCH_PGDATABASE", f"bench_{name}")
    server = psycopg.connect(
        host=os.environ.get("PGHOST", "127.0.0.1"),
        port=os.environ.get("PGPORT", "5432"),
        user=os.environ.get("PGUSER", "postgres"),
        dbname="postgres",
        autocommit=True,
    )
    with server:
        found = server.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database])
        if found.fetchone() is None:
            server.execute(f'CREATE DATABASE "{database}"')
    return database
