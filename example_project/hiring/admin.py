from django.contrib import admin

from django_workflow.admin import WorkflowAdminMixin

from .models import Candidate


@admin.register(Candidate)
class CandidateAdmin(WorkflowAdminMixin, admin.ModelAdmin):
    list_display = ("name", "state", "score", "priority", "state_entered_at")
    list_filter = ("state", "priority")
    search_fields = ("name",)
    readonly_fields = ("score", "offer_sent_at")
