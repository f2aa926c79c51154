"""A router that keeps workflow records, their log and their attempts on a database of
their own (tests/settings_databases.py), and everything else on ``default``."""

WORKFLOW_DATABASE = "workflow"
ROUTED_APPS = {"testapp", "django_workflow"}


class WorkflowRouter:
    def _route(self, model, **hints):
        return WORKFLOW_DATABASE if model._meta.app_label in ROUTED_APPS else None

    db_for_read = db_for_write = _route

    def allow_relation(self, first, second, **hints):
        return True  # the log's content types and actors are read on its own database

    def allow_migrate(self, db, app_label, **hints):
        return True  # every table on both: each database is complete
