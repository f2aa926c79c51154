from django.apps import AppConfig


class HiringConfig(AppConfig):
    name = "example_project.hiring"
    label = "hiring"
    verbose_name = "Hiring"
