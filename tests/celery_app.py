"""The Celery app of the "celery" transport's tests (``DJANGO_WORKFLOW["CELERY_APP"] =
"tests.celery_app:app"``), on the Redis server the test script starts."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

app = Celery("tests")
app.conf.broker_url = f"redis://127.0.0.1:{os.environ.get('WORKFLOW_REDIS_PORT', '6379')}/0"
app.conf.broker_connection_retry_on_startup = True
