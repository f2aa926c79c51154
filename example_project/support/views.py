"""A support agent's pages, outside the admin: the queue and a ticket, built only from
the workflow's template tags (docs/outside-the-admin.md). Agents are not staff: what
they may do comes from the ``support.change_ticket`` permission and the policies."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from .models import Ticket


@login_required
def queue(request):
    return render(request, "support/agent_queue.html")


@login_required
def ticket(request, pk):
    if not request.user.has_perm("support.view_ticket"):
        raise Http404
    return render(
        request, "support/agent_ticket.html", {"ticket": get_object_or_404(Ticket, pk=pk)}
    )
