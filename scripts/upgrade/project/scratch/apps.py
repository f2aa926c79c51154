from django.apps import AppConfig


class ScratchConfig(AppConfig):
    name = "scratch"
    default_auto_field = "django.db.models.BigAutoField"
