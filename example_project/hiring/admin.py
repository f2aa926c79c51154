from django.contrib import admin, messages
from django.contrib.contenttypes.admin import GenericTabularInline

from django_workflow import WorkflowError
from django_workflow.models import TransitionLog

from .models import Candidate


class HistoryInline(GenericTabularInline):
    model = TransitionLog
    ct_field, ct_fk_field = "content_type", "object_id"
    fields = ("occurred_at", "from_state", "to_state", "transition_name", "triggered_by", "actor")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-occurred_at", "-id")

    def has_add_permission(self, request, obj=None):
        return False


def transition_action(name):
    def action(modeladmin, request, queryset):
        moved = 0
        for candidate in queryset:
            try:
                candidate.transition(name, actor=request.user)
                moved += 1
            except WorkflowError as error:
                modeladmin.message_user(request, str(error), messages.WARNING)
        if moved:
            modeladmin.message_user(request, f"{name}: {moved} candidate(s) moved.")

    action.__name__ = f"transition_{name}"
    action.short_description = f"Transition: {name.replace('_', ' ')}"
    return action


@admin.register(Candidate)
class CandidateAdmin(admin.ModelAdmin):
    list_display = ("name", "state", "score", "priority", "state_entered_at")
    list_filter = ("state", "priority")
    readonly_fields = ("state", "state_entered_at", "score", "offer_sent_at")
    inlines = [HistoryInline]
    actions = [
        transition_action(name)
        for name in Candidate.workflow.transition_names
        if name != "triage"  # triage asks for a value
    ]
