from django.apps import AppConfig
from django.core import checks


class DjangoWorkflowConfig(AppConfig):
    name = "django_workflow"
    verbose_name = "Workflow"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .checks import check_workflows
        from .queueing import queue_entered
        from .signals import entered_step

        checks.register(check_workflows, "django_workflow")
        entered_step.connect(queue_entered, dispatch_uid="django_workflow.queue_entered")
