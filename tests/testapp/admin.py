from django.contrib import admin

from django_workflow.admin import WorkflowAdminMixin

from .models import (
    Appeal,
    Candidate,
    Claim,
    Consignment,
    Decision,
    Errand,
    Expense,
    Inquiry,
    Parcel,
    Payment,
    Proposal,
    Shipment,
    Sync,
    Tender,
    Ticket,
)


@admin.register(Decision, Ticket, Candidate, Proposal, Sync, Claim, Appeal)
class WorkflowAdmin(WorkflowAdminMixin, admin.ModelAdmin):
    list_display = ("pk", "state", "state_entered_at")


admin.site.register(Expense, WorkflowAdmin)
admin.site.register(Shipment, WorkflowAdmin)
admin.site.register(Consignment, WorkflowAdmin)
admin.site.register(Parcel, WorkflowAdmin)
admin.site.register(Errand, WorkflowAdmin)
admin.site.register(Inquiry, WorkflowAdmin)
admin.site.register(Payment, WorkflowAdmin)
admin.site.register(Tender, WorkflowAdmin)
