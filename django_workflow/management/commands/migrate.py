"""Django's ``migrate`` with the autodetector ``makemigrations`` uses.

Django requires both commands to use the same one (check ``commands.E001``);
``migrate`` only uses it to say whether models have changes no migration holds,
and asks nothing.
"""

from django.core.management.commands.migrate import Command as DjangoCommand

from ..step_renames import WorkflowAutodetector


class Command(DjangoCommand):
    autodetector = WorkflowAutodetector
