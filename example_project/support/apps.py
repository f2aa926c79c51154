from django.apps import AppConfig


class SupportConfig(AppConfig):
    name = "example_project.support"
    label = "support"
    verbose_name = "Support tickets"
