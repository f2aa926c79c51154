from django.urls import path

from . import views

urlpatterns = [
    path("", views.queue, name="agent_queue"),
    path("tickets/<int:pk>/", views.ticket, name="agent_ticket"),
]
