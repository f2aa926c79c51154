"""The transition log's admin: read-only, in the words and the time zone people read.

Rows store names; each column shows them as labels (the step's, the transition's,
the deadline's), the trigger in words and the record as its ``str()``. A search
also finds the rows of records whose own admin's ``search_fields`` match.

Imports the log's model, ``triggers``, ``registry``, ``wording`` and the admin's
``display`` and ``site``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import quote
from django.contrib.admin.views.main import ChangeList
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import connections, models
from django.db.models import F, Q, TextField, Value
from django.db.models.functions import Cast, Concat, Substr
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils import dateformat, timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.text import capfirst

from ..model.registry import is_workflow_model, workflow_models
from ..model.triggers import Trigger
from ..models import TransitionLog
from ..reading.wording import row_label, step_words, times_in, trigger_words
from .display import rendered
from .site import StaffReadOnlyAdmin, viewable_models


class WorkflowModelFilter(admin.SimpleListFilter):
    """The log's records by model: workflow models only, not every content type."""

    title = "model"
    parameter_name = "model"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        models = model_admin.readable_models(request)
        types = ContentType.objects.get_for_models(*models) if models else {}
        return sorted(
            ((str(types[m].pk), str(m._meta.verbose_name).capitalize()) for m in models),
            key=lambda choice: choice[1],
        )

    def queryset(self, request: HttpRequest, queryset: Any) -> Any:
        if not self.value():
            return queryset
        if not str(self.value()).isdigit():  # Django's answer to a bad filter value: ?e=1
            raise IncorrectLookupParameters(f"model={self.value()!r} is not a content type")
        return queryset.filter(content_type_id=self.value())


class TransitionFilter(admin.SimpleListFilter):
    """Rows of one transition, by its label: transitions only (no actions, deadlines or
    undos, which the trigger filter selects), those of the chosen model when one is."""

    title = "transition"
    parameter_name = "transition"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        labels: dict[str, list[str]] = defaultdict(list)
        for model in chosen_models(request):
            workflow = model.workflow
            for name in workflow.transition_names:
                label = str(workflow.transition_label(name))
                if label not in labels[name]:
                    labels[name].append(label)
        choices = [(name, " / ".join(words)) for name, words in labels.items()]
        return sorted(choices, key=lambda choice: choice[1].lower())

    def queryset(self, request: HttpRequest, queryset: Any) -> Any:
        if not self.value():
            return queryset
        return queryset.filter(triggered_by=Trigger.MANUAL, transition_name=self.value())


def chosen_models(request: HttpRequest) -> list[Any]:
    """The workflow model the model filter chose, or every workflow model."""
    models = workflow_models()
    chosen = request.GET.get(WorkflowModelFilter.parameter_name)
    if not chosen:
        return models
    types = ContentType.objects.get_for_models(*models) if models else {}
    return [model for model in models if str(types[model].pk) == chosen]


class LogChangeList(ChangeList):
    """The page's rows carry their records, one query per model on the page."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        attach_records(list(self.result_list))  # fills the queryset's cache: same instances


def attach_records(rows: list[Any]) -> None:
    """Set ``row.shown_record`` to each row's record, ``None`` when it is gone."""
    keys: dict[Any, set[str]] = defaultdict(set)
    for row in rows:
        keys[row.content_type].add(row.object_id)
    found: dict[tuple[int, str], Any] = {}
    for content_type, object_ids in keys.items():
        model = content_type.model_class()
        if model is None:  # an app removed since
            continue
        pks = [pk for pk in (_pk(model, key) for key in object_ids) if pk is not None]
        for pk, record in model._base_manager.in_bulk(pks).items():
            found[content_type.pk, str(pk)] = record
    for row in rows:
        row.shown_record = found.get((row.content_type_id, row.object_id))


def _object_ids(records: Any, db: str) -> Any:
    """The log's ``object_id`` (``str(pk)``) of each of ``records``: a subquery computing it
    in the database of the log's rows ``db``, or the keys read first when no expression
    gives that text there (another database, a key of another type)."""
    text = _key_as_text(records.model, db) if records.db == db else None
    if text is not None:
        return records.order_by().values_list(text, flat=True)
    return [str(pk) for pk in records.order_by().values_list("pk", flat=True).distinct()]


def _key_as_text(model: Any, db: str) -> Any:
    """An expression equal to ``str(pk)`` on database ``db``, or ``None``.

    A number casts to its digits, text is itself. A UUID casts to its dashed text
    where the database has a UUID type; elsewhere (SQLite) it is stored as 32 hex
    digits, which a cast leaves without the dashes ``str()`` puts in.
    """
    field = model._meta.pk
    while field.is_relation:  # a child of multi-table inheritance: its parent's key
        field = field.target_field
    if isinstance(field, models.IntegerField):
        return Cast("pk", TextField())
    if isinstance(field, models.CharField | models.TextField):
        return F("pk")
    if not isinstance(field, models.UUIDField):
        return None
    if connections[db].features.has_native_uuid_field:
        return Cast("pk", TextField())
    groups = ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))
    parts = [Substr("pk", start, length) for start, length in groups]
    dashed = [part for group in parts for part in (group, Value("-"))][:-1]
    return Concat(*dashed, output_field=TextField())


def _pk(model: Any, key: str) -> Any:
    try:
        return model._meta.pk.to_python(key)
    except ValidationError:
        return None


@admin.register(TransitionLog)
class TransitionLogAdmin(StaffReadOnlyAdmin):
    # Six columns fit a 1280 px window beside the navigation sidebar and the filters:
    # the model reads under the record, the two steps in one column, the comment under
    # the transition.
    list_display = ("when", "record_link", "steps", "transition", "trigger", "actor_name")
    list_filter = (WorkflowModelFilter, "triggered_by", TransitionFilter)
    search_fields = (
        "object_id",
        "from_state",
        "to_state",
        "transition_name",
        "actor_repr",
        "comment",
    )
    date_hierarchy = "occurred_at"
    ordering = ("-occurred_at", "-id")
    list_select_related = ("content_type", "reverses__reverses")

    class Media:
        css = {"all": ["django_workflow/log.css"]}

    def _reads_every_row(self, request: HttpRequest) -> bool:
        """Whether the user holds the log's own view permission. Any other active staff
        user reads the rows ``get_queryset`` leaves them."""
        return admin.ModelAdmin.has_view_permission(self, request)

    def get_queryset(self, request: HttpRequest) -> Any:
        """Every row for the log's own view permission; else the rows of the workflow
        models whose admin the user may view, as the Workflows overview lists them."""
        rows = super().get_queryset(request)
        if self._reads_every_row(request):
            return rows
        models = self.readable_models(request)
        types = ContentType.objects.get_for_models(*models).values() if models else []
        return rows.filter(content_type__in=list(types))

    def readable_models(self, request: HttpRequest) -> list[Any]:
        """The workflow models whose rows the user reads here."""
        if self._reads_every_row(request):
            return workflow_models()
        return viewable_models(self.admin_site, request)

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return LogChangeList

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        """Times in one zone, named once: the workflows' zone when the rows shown share
        one (no ``time_zone_field``), else the site's current zone."""
        zone = screen_zone(chosen_models(request))
        context = {"workflow_zone": times_in(zone), **(extra_context or {})}
        with timezone.override(zone):
            return rendered(super().changelist_view(request, context))

    def get_search_results(self, request: HttpRequest, queryset: Any, search_term: str) -> Any:
        """Rows matching on their own columns, and the rows of records whose own admin's
        ``search_fields`` match the term (a record's name, say)."""
        found, duplicates = super().get_search_results(request, queryset, search_term)
        named = self._records_found(request, search_term, queryset.db)
        return (found | queryset.filter(named) if named else found), duplicates

    def _records_found(self, request: HttpRequest, search_term: str, db: str) -> Q:
        """A subquery per workflow model the user may view whose admin searches: however
        many records match, the log's query stays one statement of a few parameters."""
        condition = Q()
        if not search_term.strip():
            return condition
        registry = self.admin_site._registry
        for model in workflow_models():
            model_admin = registry.get(model)
            if model_admin is None or not model_admin.has_view_or_change_permission(request):
                continue
            if not model_admin.get_search_fields(request):
                continue
            records, _ = model_admin.get_search_results(
                request, model_admin.get_queryset(request), search_term
            )
            content_type = ContentType.objects.get_for_model(model)
            condition |= Q(content_type=content_type, object_id__in=_object_ids(records, db))
        return condition

    @admin.display(description="when", ordering="occurred_at")
    def when(self, row: TransitionLog) -> str:
        """The date over the time, to the second: a narrow column."""
        local = timezone.localtime(row.occurred_at)
        date, time = dateformat.format(local, "Y-m-d"), dateformat.format(local, "H:i:s")
        return format_html("{}<br>{}", date, time)

    @admin.display(description="record", ordering="object_id")
    def record_link(self, row: TransitionLog) -> str:
        """The record's name, linking to its change page when its admin is registered,
        over its model's name."""
        return format_html(
            '{}<div class="workflow-log-model">{}</div>', self._record(row), _model_name(row)
        )

    def _record(self, row: TransitionLog) -> str:
        record = getattr(row, "shown_record", None)
        name = str(record) if record is not None else f"{row.object_id} (deleted)"
        info = (row.content_type.app_label, row.content_type.model)
        try:
            url = reverse(
                f"{self.admin_site.name}:{info[0]}_{info[1]}_change", args=[quote(row.object_id)]
            )
        except NoReverseMatch:
            return name
        return format_html('<a href="{}">{}</a>', url, name)

    @admin.display(description="from → to", ordering="to_state")
    def steps(self, row: TransitionLog) -> str:
        """Where the row went, "Technical → Waiting on customer"; one step alone for a
        creation or a row that stayed there (an action, a deadline that only acts)."""
        workflow = _workflow(row)
        to_step = _named(row.to_state, step_words(workflow, row.to_state))
        if not row.from_state or row.from_state == row.to_state:
            return to_step
        from_step = _named(row.from_state, step_words(workflow, row.from_state))
        return format_html("{} → {}", from_step, to_step)

    @admin.display(description="transition", ordering="transition_name")
    def transition(self, row: TransitionLog) -> str:
        """The label, over the comment the actor gave."""
        label = _named(row.transition_name, row_label(_workflow(row), row))
        if not row.comment:
            return label
        return format_html(
            '{}<div class="workflow-log-comment">“{}”</div>', label or "", row.comment
        )

    @admin.display(description="trigger", ordering="triggered_by")
    def trigger(self, row: TransitionLog) -> str:
        return trigger_words(row)

    @admin.display(description="actor", ordering="actor_repr")
    def actor_name(self, row: TransitionLog) -> str:
        """Who acted; a long e-mail address as username wraps at its dots and before its
        "@" (where a line may end), never inside a word."""
        return breakable(row.actor_repr)


def breakable(text: str) -> str:
    """``text`` escaped, with a ``<wbr>`` before each dot and "@" that follows a letter or
    digit: where an address or a dotted name may end a line. The text and a copy of it
    stay as they were."""
    parts = _BREAKS.split(text)
    return format_html_join(mark_safe("<wbr>"), "{}", ((part,) for part in parts))


#: Before a dot or an "@" that follows a letter or digit ("d.o.o." and "a@b.hr" break;
#: "...", a leading "." or "@" do not).
_BREAKS = re.compile(r"(?<=\w)(?=[.@]\w)")


def _workflow(row: TransitionLog) -> Any:
    """The row's model's workflow; ``None`` when the model no longer declares one."""
    model = row.content_type.model_class()
    return model.workflow if model is not None and is_workflow_model(model) else None


def _model_name(row: TransitionLog) -> str:
    model = row.content_type.model_class()
    return capfirst(model._meta.verbose_name) if model else row.content_type.model


def _named(name: str, label: str) -> str | None:
    """A label, with the stored name on hover (``None`` for nothing: the empty mark)."""
    if not label:
        return None
    return format_html('<span title="{}">{}</span>', name, label)


def screen_zone(models: list[Any]) -> Any:
    """The zone a screen of these models' times reads in: theirs when they share one
    and no record has its own (``time_zone_field``), else the current zone."""
    zones = {model.workflow.time_zone for model in models}
    per_record = any(model.workflow.time_zone_field for model in models)
    if len(zones) == 1 and not per_record:
        return ZoneInfo(zones.pop())
    return timezone.get_current_timezone()
