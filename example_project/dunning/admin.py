from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from django_workflow.admin import WorkflowAdminMixin

from .models import Subscription, grace_must_end_later


@admin.register(Subscription)
class SubscriptionAdmin(WorkflowAdminMixin, admin.ModelAdmin):
    list_display = ("__str__", "state", "state_entered_at")
    list_filter = ("state",)
    search_fields = ("customer",)

    def get_workflow_transition_form(
        self, request: HttpRequest, record: Any, transition: Any
    ) -> type[forms.ModelForm]:
        """A failed payment's grace must end later than now; only there, so a record whose
        grace has passed can still be edited."""
        form_class = super().get_workflow_transition_form(request, record, transition)
        grace = form_class.base_fields.get("grace_ends_at")
        if grace is not None:
            grace.validators.append(grace_must_end_later)
        return form_class
