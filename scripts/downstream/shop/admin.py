from django.contrib import admin

from django_workflow.admin import WorkflowAdminMixin

from .models import Application, Document, Line, Order, Payment, Proposal, Ticket


@admin.register(Application, Proposal, Order, Line, Document, Payment)
class WorkflowRecordAdmin(WorkflowAdminMixin, admin.ModelAdmin):
    list_display = ("__str__", "state")


@admin.register(Ticket)
class TicketAdmin(WorkflowAdminMixin, admin.ModelAdmin):
    list_display = ("subject", "state")
