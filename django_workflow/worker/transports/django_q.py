"""django-q2: each task an ``async_task`` on the cluster named by the workflow's ``queue``,
with ``DJANGO_WORKFLOW["TASK_OPTIONS"]`` and the task's timeout."""

from __future__ import annotations

from typing import Any

from ...conf import workflow_settings

#: django-q2 stops a task past its ``timeout`` (SIGALRM in its worker process).
TIMEOUT = True
#: The package the transport needs, for the checks.
REQUIRES = "django_q"


def enqueue(queued: Any) -> None:
    from django_q.tasks import async_task

    options = {"cluster": queued.queue, **workflow_settings.TASK_OPTIONS}
    if queued.timeout is not None:
        options["timeout"] = queued.timeout
    async_task(
        queued.task, *queued.args, task_name=queued.name, q_options=options, **queued.context
    )
