from django.contrib import admin

from django_workflow.admin import WorkflowAdminMixin

from .models import Candidate, Decision, Proposal, Ticket


@admin.register(Decision, Ticket, Candidate, Proposal)
class WorkflowAdmin(WorkflowAdminMixin, admin.ModelAdmin):
    list_display = ("pk", "state", "state_entered_at")
