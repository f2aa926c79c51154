"""The "Workflows" page: per workflow model and step, how many records, how many
overdue or halted, the oldest entry and the time in step; per SLA, the open clocks
running, paused and breached; and the URL of "My work",
whose page is ``my_work``'s.

Imports ``status`` and the admin rooms ``display``, ``my_work``, ``site``.
"""

from __future__ import annotations

from functools import partial
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone
from django.utils.text import capfirst

from ..declaration import humanise
from ..model.columns import WORKFLOW_VERSION
from ..models import WorkflowOverview
from ..report import status
from .display import span, time_in_step
from .holding import hold_view
from .my_work import my_work_view
from .site import StaffReadOnlyAdmin, page_url, viewable_models


@admin.register(WorkflowOverview)
class WorkflowOverviewAdmin(StaffReadOnlyAdmin):
    """The "Workflows" page: per model and step, records, overdue, halted, oldest entry.

    Any active staff user may open it; it lists the models whose admin they may view.
    """

    def get_urls(self) -> list[Any]:
        """The overview page and "My work": its rows are the log's, which this admin never shows."""
        info = self.model._meta.app_label, self.model._meta.model_name
        view = self.admin_site.admin_view(self.changelist_view)
        mine = self.admin_site.admin_view(partial(my_work_view, admin_site=self.admin_site))
        return [
            path("", view, name="{}_{}_changelist".format(*info)),
            path("mine/", mine, name="django_workflow_my_work"),
            path(
                "mine/<str:app_label>/<str:model_name>/<path:object_id>/<str:action>/",
                self.admin_site.admin_view(partial(hold_view, admin_site=self.admin_site)),
                name="django_workflow_hold",
            ),
        ]

    def changelist_view(self, request, extra_context=None):
        now = timezone.now()
        context = {
            **self.admin_site.each_context(request),
            "title": "Workflows",
            "opts": self.model._meta,
            "models": [
                self._model_rows(model, now) for model in viewable_models(self.admin_site, request)
            ],
            "time_in_step_days": status.TIME_IN_STEP_DAYS,
        }
        return TemplateResponse(request, "admin/django_workflow/overview.html", context)

    def _model_rows(self, model: Any, now: Any) -> dict[str, Any]:
        changelist = page_url(self.admin_site, model, "changelist")
        state = model.workflow.state_attribute

        def link(step: str, **more: str) -> str:
            return f"{changelist}?{urlencode({f'{state}__exact': step, **more})}"

        times = status.times_in_step(model, now)
        return {
            "name": capfirst(model._meta.verbose_name_plural),
            "url": changelist,
            "versions": _versions(model, changelist),
            "slas": [
                {"label": humanise(name), **counts}
                for name, counts in status.open_clocks(model).items()
            ],
            "steps": [
                {
                    "row": row,
                    "label": model.workflow.step_label(row.step),
                    "url": link(row.step),
                    "overdue_url": link(row.step, workflow="overdue"),
                    "halted_url": link(row.step, workflow="halted"),
                    "waiting": span(now - row.oldest_entry) if row.oldest_entry else "",
                    "time": time_in_step(times.get(row.step)),
                }
                for row in status.step_statuses(model, now)
            ],
        }


def _versions(model: Any, changelist: str) -> list[dict[str, Any]]:
    """Per declared version (and any other the table holds), its records and their link;
    none for a model without versions."""
    if model.workflow.versions is None:
        return []
    counts = status.records_per_version(model)
    numbers = sorted({*model.workflow.versions, *counts})
    return [
        {
            "number": number,
            "records": counts.get(number, 0),
            "current": number == model.workflow.version,
            "declared": number in model.workflow.versions,
            "url": f"{changelist}?{urlencode({f'{WORKFLOW_VERSION}__exact': number})}",
        }
        for number in numbers
    ]
