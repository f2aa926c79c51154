from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "example_project.approvals"
    label = "approvals"
    verbose_name = "Document approval"
