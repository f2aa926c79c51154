"""The test settings with workflow models on a second database, always PostgreSQL.

``default`` stays what ``WORKFLOW_TEST_DB`` selects (SQLite, or PostgreSQL on the
same server); the router (tests/routers.py) sends the test app's models and the
workflow's own to ``workflow``. Every database test may use both (tests/conftest.py).
``scripts/test.sh`` runs tests/engine/test_engine_paths.py and
tests/engine/test_several_databases.py with ``DJANGO_SETTINGS_MODULE=tests.settings_databases``.
"""

import os

from tests.settings import *  # noqa: F403

_postgres = {
    "ENGINE": "django.db.backends.postgresql",
    "NAME": os.environ.get("WORKFLOW_PG_RECORDS_NAME", "workflow_records"),
    "HOST": os.environ.get("PGHOST", "127.0.0.1"),
    "PORT": os.environ.get("PGPORT", "5432"),
    "USER": os.environ.get("PGUSER", "postgres"),
    "PASSWORD": os.environ.get("PGPASSWORD", ""),
}
DATABASES = {**DATABASES, "workflow": _postgres}  # noqa: F405
DATABASE_ROUTERS = ["tests.routers.WorkflowRouter"]
