"""Model permissions for the REST endpoints: a transition is a change."""

from __future__ import annotations

from typing import Any

from rest_framework import permissions
from rest_framework.request import Request


class WorkflowModelPermissions(permissions.DjangoModelPermissions):
    """``DjangoModelPermissions``, except that running a transition needs the model's
    change permission (a POST would ask for add): moving a record changes it, as in
    the admin. The workflow's policy is checked as well, by the call itself."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if getattr(view, "action", None) != "workflow_transition":
            return super().has_permission(request, view)
        user = request.user
        if not user or (not user.is_authenticated and self.authenticated_users_only):
            return False
        model = view.get_queryset().model
        return user.has_perms(self.get_required_permissions("PATCH", model))
