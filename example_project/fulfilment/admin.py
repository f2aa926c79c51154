from django.contrib import admin

from django_workflow.admin import WorkflowAdminMixin

from .models import Order


@admin.register(Order)
class OrderAdmin(WorkflowAdminMixin, admin.ModelAdmin):
    list_display = ("__str__", "state", "state_entered_at")
    list_filter = ("state",)
    search_fields = ("item",)
