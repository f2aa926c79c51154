"""The URLs the template tags' forms post to: include them once in the project's
``urls.py`` with ``path("workflow/", include("django_workflow.urls"))``
(docs/outside-the-admin.md)."""

from django.urls import path

from .web import form_views

app_name = "django_workflow"

urlpatterns = [
    path("<str:app_label>/<str:model_name>/<str:pk>/<str:name>/", form_views.act, name="act"),
    path(
        "<str:app_label>/<str:model_name>/<str:pk>/hold/<str:action>/",
        form_views.hold,
        name="hold",
    ),
]
