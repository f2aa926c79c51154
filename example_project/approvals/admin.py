from django.contrib import admin

from django_workflow.admin import WorkflowAdminMixin

from .models import Document


@admin.register(Document)
class DocumentAdmin(WorkflowAdminMixin, admin.ModelAdmin):
    list_display = ("__str__", "state", "state_entered_at")
    list_filter = ("state",)
    search_fields = ("title",)
