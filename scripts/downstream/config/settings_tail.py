# Appended to startproject's settings.py by scripts/downstream.sh: what a new user adds.
# ruff: noqa: F821
INSTALLED_APPS += ["django_q", "django_workflow", "shop"]

# docs/tutorial.md: let SQLite serve the web process and the worker at once.
DATABASES["default"]["OPTIONS"] = {"transaction_mode": "IMMEDIATE", "timeout": 20}

# docs/worker.md, "Configuring django-q2 safely".
Q_CLUSTER = {
    "name": "workflow",
    "orm": "default",
    "workers": 2,
    "poll": 0.05,
    "timeout": 60,
    "retry": 120,
    "max_attempts": 3,
}

STATIC_ROOT = BASE_DIR / "collected-static"

# startproject's console backend is development-only: `check --deploy` says so
# (mail.E001, an error). A deployment sends mail over SMTP.
MAILERS = {"default": {"BACKEND": "django.core.mail.backends.smtp.EmailBackend"}}
