from django.apps import AppConfig


class FulfilmentConfig(AppConfig):
    name = "example_project.fulfilment"
    label = "fulfilment"
    verbose_name = "Order fulfilment"
