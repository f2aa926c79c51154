from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path("", RedirectView.as_view(url="/admin/")),
    path("admin/", admin.site.urls),
    # A support agent's queue, outside the admin, built from the workflow's template tags.
    path("agent/", include("example_project.support.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("workflow/", include("django_workflow.urls")),
]
