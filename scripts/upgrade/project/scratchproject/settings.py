"""The scratch project scripts/upgrade.sh installs a release in, fills and upgrades.

UPGRADE_DB names the SQLite file. UPGRADE_PHASE=old (the release being upgraded
from) silences django_workflow.E017: release 0.3.0 refuses a transition named
`retract`, which its own WorkflowModel.retract() (withdrawing a vote) takes. After the
upgrade nothing is silenced.
"""

import os

SECRET_KEY = "scratch-project-of-scripts-upgrade-sh-" + "x" * 40
DEBUG = False
ALLOWED_HOSTS = ["localhost"]
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django_q",
    "django_workflow",
    "scratch",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
ROOT_URLCONF = "scratchproject.urls"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["UPGRADE_DB"],
        "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 20},
    }
}

# The ORM broker: what the old release queues while nobody runs a worker stays in the
# database, for the new release's code to run.
Q_CLUSTER = {
    "name": "workflow",
    "orm": "default",
    "workers": 1,
    "timeout": 60,
    "retry": 120,
    "max_attempts": 3,
    "catch_up": False,
    "log_level": "WARNING",
}

SILENCED_SYSTEM_CHECKS = (
    ["django_workflow.E017"] if os.environ.get("UPGRADE_PHASE") == "old" else []
)

# `check --deploy` is asked for errors; these keep Django's own deployment warnings quiet.
SECURE_SSL_REDIRECT = True
SECURE_HSTS_SECONDS = 3600
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
