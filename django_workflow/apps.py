from typing import Any

from django.apps import AppConfig
from django.core import checks


class DjangoWorkflowConfig(AppConfig):
    name = "django_workflow"
    verbose_name = "Workflow"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, pre_delete
        from django_q.signals import post_execute_in_worker, post_spawn, pre_execute

        from .checks import (
            check_deploy_records,
            check_deploy_versions,
            check_records,
            check_workflows,
        )
        from .signals import entered_step
        from .worker import transports
        from .worker.stop_signals import stop_gently, task_finished, task_started
        from .worker.transport import queue_entered

        checks.register(check_workflows, "django_workflow")
        # It queries records, so it runs only where Django passes databases:
        # `check --database <alias>`, `migrate` and `test`.
        checks.register(check_records, "django_workflow", checks.Tags.database)
        # The same rows as errors, so `check --deploy --database <alias>` stops a deploy.
        checks.register(check_deploy_records, "django_workflow", checks.Tags.database, deploy=True)
        checks.register(check_deploy_versions, "django_workflow", checks.Tags.database, deploy=True)
        pre_delete.connect(_parent_deleting, dispatch_uid="django_workflow.join_parent_deleting")
        post_delete.connect(_child_deleted, dispatch_uid="django_workflow.join_child_deleted")
        entered_step.connect(queue_entered, dispatch_uid="django_workflow.queue_entered")
        post_spawn.connect(stop_gently, dispatch_uid="django_workflow.stop_gently")
        pre_execute.connect(task_started, dispatch_uid="django_workflow.task_started")
        post_execute_in_worker.connect(task_finished, dispatch_uid="django_workflow.task_finished")
        transports.prepare()


def _parent_deleting(sender: Any, **kwargs: Any) -> None:
    """A record a deletion takes is no join parent to move meanwhile (the engine is
    imported only once something of a workflow model is deleted)."""
    if getattr(sender, "workflow", None) is None:
        return
    from .engine.joins import parent_deleting

    parent_deleting(sender, **kwargs)


def _child_deleted(sender: Any, **kwargs: Any) -> None:
    """A deleted record may complete its parent's ``Join``; the engine is imported only
    once something is deleted (``manage.py check`` imports no runtime module)."""
    from .engine.joins import child_deleted

    child_deleted(sender, **kwargs)
