# Appended to startproject's urls.py by scripts/downstream.sh: the view the template tags'
# forms post to (docs/outside-the-admin.md).
# ruff: noqa: F821
from django.urls import include

urlpatterns += [path("workflow/", include("django_workflow.urls"))]
