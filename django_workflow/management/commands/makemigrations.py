"""Django's ``makemigrations``, asking also whether a workflow step was renamed.

Django runs an app's command of the same name instead of its own, whatever the
app's place in ``INSTALLED_APPS``; of two apps overriding it, the one listed
first wins. ``migrate`` is overridden too: Django requires both commands to
use the same autodetector (check ``commands.E001``).
"""

from django.core.management.commands.makemigrations import Command as DjangoCommand

from ..step_renames import WorkflowAutodetector


class Command(DjangoCommand):
    autodetector = WorkflowAutodetector
