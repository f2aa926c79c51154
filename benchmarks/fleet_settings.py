"""benchmarks/idle_cpu.py: the fleet of workflow models on PostgreSQL, a real cluster."""

from benchmarks.worker_settings import *  # noqa: F403

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django_q",
    "django_workflow",
    "benchmarks.fleet",
]
