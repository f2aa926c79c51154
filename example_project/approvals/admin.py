from django.contrib import admin

from django_workflow.admin import WorkflowAdminMixin

from .models import Document


@admin.register(Document)
class DocumentAdmin(WorkflowAdminMixin, admin.ModelAdmin):
    list_display = ("__str__", "state", "state_entered_at")
    list_filter = ("state",)
    search_fields = ("title",)

    def get_workflow_transition_values(self, request, record, transition):
        """The signer is whoever is logged in: never typed, so never someone else's name."""
        if transition.name != "approve":
            return {}
        field = "first_signer" if record.state == "in_review" else "second_signer"
        return {field: request.user.get_username()}
