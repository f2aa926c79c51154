from django.contrib import admin
from django.urls import include, path

from django_workflow.web.webhook import EventWebhookView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("tests.rest_urls")),
    path("workflow/", include("django_workflow.urls")),
    # The example project's support agent pages, built from the template tags.
    path("agent/", include("example_project.support.urls")),
    path("hooks/events/", EventWebhookView.as_view()),
    path("accounts/", include("django.contrib.auth.urls")),
]
