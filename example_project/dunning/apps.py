from django.apps import AppConfig


class DunningConfig(AppConfig):
    name = "example_project.dunning"
    label = "dunning"
    verbose_name = "Subscription dunning"
