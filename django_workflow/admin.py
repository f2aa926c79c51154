"""Admin for the transition log: a read-only record of what happened."""

from django.contrib import admin

from .models import TransitionLog


@admin.register(TransitionLog)
class TransitionLogAdmin(admin.ModelAdmin):
    list_display = (
        "occurred_at",
        "content_type",
        "object_id",
        "from_state",
        "to_state",
        "transition_name",
        "triggered_by",
        "actor_repr",
    )
    list_filter = ("content_type", "transition_name", "triggered_by")
    search_fields = ("object_id", "transition_name", "actor_repr")
    date_hierarchy = "occurred_at"

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
