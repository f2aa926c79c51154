"""The project's URLs plus static files served whatever DEBUG says: for the tests only."""

from config.urls import urlpatterns as project_urlpatterns
from django.contrib.staticfiles.views import serve
from django.urls import re_path

urlpatterns = [
    *project_urlpatterns,
    re_path(r"^static/(?P<path>.*)$", serve, {"insecure": True}),
]
