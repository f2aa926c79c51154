"""The change page panel of a parent waiting in a join step: "3 of 5 lines done" per
join (done: the children in one of its ``all_in`` steps), linking to the children's
changelist filtered to this parent when their model is on the same admin site and the
user may view it there.

One counting query per join, however many children (``engine.joins.progress``); nothing
here writes.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest
from django.utils.translation import gettext

from ..model.relations import relation_named
from .site import page_url


def join_progress(admin_site: Any, request: HttpRequest, record: Any, step: Any) -> list[dict]:
    """Per join of ``step`` (the record's declared current step): its relation, its
    words and the children's changelist URL (empty when not shown)."""
    from ..engine.joins import progress

    found = []
    for join in step.joins:
        counted = progress(record, join)
        if counted is None:  # a relation the checks report
            continue
        done, total = counted
        words = gettext("%(done)d of %(total)d %(children)s done") % {
            "done": done,
            "total": total,
            "children": str(join.related_name).replace("_", " "),
        }
        url = children_url(admin_site, request, record, join.related_name)
        found.append({"related_name": join.related_name, "text": words, "url": url})
    return found


def children_url(admin_site: Any, request: HttpRequest, record: Any, related_name: str) -> str:
    """The changelist of the children ``related_name`` reaches, filtered to ``record``;
    empty when their model is not registered on ``admin_site`` or the user may not view
    it there."""
    relation = relation_named(type(record), related_name)
    child_admin = admin_site._registry.get(relation.related_model)
    if child_admin is None or not child_admin.has_view_permission(request):
        return ""
    field = relation.field  # the child's foreign key; filtered the way the admin's own
    target = field.target_field  # related-field filter does, which the admin allows
    lookup = f"{field.name}__{target.name}__exact"
    query = urlencode({lookup: getattr(record, target.attname)})
    return f"{page_url(admin_site, relation.related_model, 'changelist')}?{query}"
