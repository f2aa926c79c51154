"""What a declaration adds to its model: fields and transition methods.

Everything is put in the class namespace before Django builds the model, so
``makemigrations`` sees generated fields like any other. A name the user (or
a base class) already defines is left alone: generate-if-missing.
"""

from __future__ import annotations

import hashlib
import keyword
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.base import ModelBase
from django.db.models.signals import class_prepared
from django.utils import timezone

from ..work import counts_firings
from .columns import (
    ASSIGNED_AT,
    ASSIGNEE,
    NEXT_DUE_AT,
    STATE_ENTERED_AT,
    WORKFLOW_VERSION,
    fired_column,
    fired_count_column,
    last_fired_column,
    sla_breached_column,
    sla_consumed_column,
    sla_warned_column,
)
from .compiled import CompiledWorkflow, compile_workflow

STATE_MAX_LENGTH = 100
#: Names a transition cannot take (E017): ``record.workflow`` holds every other call.
LIBRARY_NAMES = frozenset({"workflow"})
#: The state field's verbose name: the admin's column and filter say "Step", as every
#: other text of the package does.
STEP = "step"


class StateField(models.CharField):
    """The current step. A new row always starts in the initial step."""

    def __init__(self, *args: Any, initial_step: str | None = None, **kwargs: Any) -> None:
        self.initial_step = initial_step
        kwargs.setdefault("max_length", STATE_MAX_LENGTH)
        super().__init__(*args, **kwargs)

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        # Only on the workflow's own model: a copy of the field elsewhere (a history
        # table's) stores the step it is given.
        own = getattr(type(model_instance), "workflow", None) is not None
        if add and own and self.initial_step is not None:
            setattr(model_instance, self.attname, self.initial_step)
        return super().pre_save(model_instance, add)

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        # Migrations see a plain CharField: the initial-step rule is behaviour, not schema.
        name, _path, args, kwargs = super().deconstruct()
        kwargs["editable"] = False  # a history table's copy too (_history_tracks_the_step)
        if kwargs.get("verbose_name") == STEP:  # what people read: no migration of its own
            del kwargs["verbose_name"]
        return name, "django.db.models.CharField", args, kwargs


def _history_tracks_the_step(sender: Any, **kwargs: Any) -> None:
    """django-simple-history diffs the editable fields it tracks; the step is not editable
    (forms must not offer it), so a history model of a workflow model tracks its own copy
    of the step, editable there: ``diff_against`` then shows the step a move changed."""
    tracked = getattr(sender, "tracked_fields", None)
    if tracked is None or not isinstance(getattr(sender, "instance_type", None), WorkflowModelBase):
        return
    copies = []
    for field in tracked:
        if isinstance(field, StateField):
            field = sender._meta.get_field(field.name)
            field.editable = True
        copies.append(field)
    sender.tracked_fields = copies


class_prepared.connect(_history_tracks_the_step)


def _state_field(workflow: CompiledWorkflow) -> models.Field:
    initial = workflow.initial_step
    return StateField(
        STEP,
        choices=workflow.choices(),
        default=initial,
        initial_step=initial,
        db_index=True,
        editable=False,
        help_text="The workflow step this record is in.",
    )


class VersionField(models.PositiveSmallIntegerField):
    """The declaration version a record runs on. A new row gets the current version;
    migrations see the lowest declared one as the default, which the migration adding
    the field gives the rows already there."""

    def __init__(self, *args: Any, current: int | None = None, **kwargs: Any) -> None:
        self.current = current
        super().__init__(*args, **kwargs)

    def get_default(self) -> Any:
        return self.current if self.current is not None else super().get_default()

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.PositiveSmallIntegerField", args, kwargs


def _version_field(workflow: CompiledWorkflow) -> models.Field:
    return VersionField(
        "workflow version",
        default=workflow.lowest_version,
        current=workflow.current.version,
        db_index=True,
        editable=False,
        help_text="The version of the workflow declaration this record runs on.",
    )


def _entered_at_field() -> models.Field:
    return models.DateTimeField(
        default=timezone.now,
        editable=False,
        help_text="When the record entered its current step.",
    )


def _next_due_field() -> models.Field:
    return models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When the soonest deadline of the current step falls due.",
    )


def _assignee_field() -> models.Field:
    # related_name "+": no reverse accessor on the user model, so any number of
    # workflow models can hold records without their names clashing.
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
        help_text="Who holds the record in its current step (claimed or assigned).",
    )


def _assigned_at_field() -> models.Field:
    return models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When the holder took the record.",
    )


def defines(name: str, attrs: dict[str, Any], bases: tuple[type, ...]) -> bool:
    """Whether the class being built already has ``name``, written by the user."""
    if name in attrs:
        return True
    for base in bases:
        for klass in base.__mro__:
            meta = klass.__dict__.get("_meta")
            if meta is not None and any(f.name == name for f in _declared_fields(meta)):
                return True
        attribute = getattr(base, name, None)
        if attribute is not None and not is_generated(attribute):
            return True
    return False


def _declared_fields(meta: Any) -> list[Any]:
    # Not get_fields(): the app registry is not ready while models are being defined.
    return [*meta.local_fields, *meta.local_many_to_many, *meta.private_fields]


def is_generated(attribute: Any) -> bool:
    """Whether ``attribute`` is the library's, so a transition of its name may replace it."""
    return getattr(attribute, "_workflow_generated", False)


_Method = TypeVar("_Method", bound=Callable[..., Any])


def replaceable(method: _Method) -> _Method:
    """Mark a library method of records that a transition of the same name replaces."""
    method._workflow_generated = True  # type: ignore[attr-defined]
    return method


class replaceable_property(property):
    """A library property of records that a transition of the same name replaces."""

    _workflow_generated = True


def transition_method(name: str) -> Any:
    def method(self: Any, actor: Any = None, *, authorize: bool = True, **accepted: Any) -> Any:
        return self.workflow.transition(name, actor, authorize=authorize, **accepted)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Run the {name!r} transition from the current step."
    method.alters_data = True  # type: ignore[attr-defined]  # templates never call it
    return replaceable(method)


def _claim(self: Any, actor: Any, *, comment: str = "") -> Any:
    """``record.workflow.claim``: become the record's holder."""
    return self.workflow.claim(actor, comment=comment)


def _release(self: Any, actor: Any, *, comment: str = "") -> Any:
    """``record.workflow.release``: let go of the record."""
    return self.workflow.release(actor, comment=comment)


def _assign(
    self: Any, user: Any, *, actor: Any = None, authorize: bool = True, comment: str = ""
) -> Any:
    """``record.workflow.assign``: make ``user`` the holder (``None``: nobody)."""
    return self.workflow.assign(user, actor=actor, authorize=authorize, comment=comment)


#: ``record.claim/release/assign``, on models with ``Workflow.assignment = True``
#: (shortcuts to ``record.workflow``'s, unless a transition takes the name).
ASSIGNMENT_METHODS = {"claim": _claim, "release": _release, "assign": _assign}
for _name, _method in ASSIGNMENT_METHODS.items():
    _method.__name__ = _method.__qualname__ = _name
    _method.alters_data = True  # type: ignore[attr-defined]
    replaceable(_method)


def contribute(attrs: dict[str, Any], bases: tuple[type, ...], declaration: type) -> None:
    """Add the generated fields and transition methods to a class namespace."""
    workflow = compile_workflow(None, declaration)
    state_attribute = workflow.state_attribute
    valid_name = isinstance(state_attribute, str) and state_attribute.isidentifier()
    if valid_name and not defines(state_attribute, attrs, bases):
        attrs[state_attribute] = _state_field(workflow)
    if not defines(STATE_ENTERED_AT, attrs, bases):
        attrs[STATE_ENTERED_AT] = _entered_at_field()
    if workflow.versions is not None and not defines(WORKFLOW_VERSION, attrs, bases):
        attrs[WORKFLOW_VERSION] = _version_field(workflow)
    for version in workflow.family():  # each version's columns: its records keep them
        _contribute_version(attrs, bases, version)


def _contribute_version(attrs: dict[str, Any], bases: tuple[type, ...], workflow: Any) -> None:
    for name in workflow.transition_names:
        if name in LIBRARY_NAMES or not name.isidentifier() or keyword.iskeyword(name):
            continue
        if not defines(name, attrs, bases):
            attrs[name] = transition_method(name)
    if workflow.assignment:
        for name, method in ASSIGNMENT_METHODS.items():
            if not defines(name, attrs, bases):
                attrs[name] = method
        if not defines(ASSIGNEE, attrs, bases):
            attrs[ASSIGNEE] = _assignee_field()
        if not defines(ASSIGNED_AT, attrs, bases):
            attrs[ASSIGNED_AT] = _assigned_at_field()
    if workflow.has_deadlines and not defines(NEXT_DUE_AT, attrs, bases):
        attrs[NEXT_DUE_AT] = _next_due_field()
    for column, label in deadline_columns(workflow):
        if column.isidentifier() and not defines(column, attrs, bases):
            attrs[column] = models.DateTimeField(
                null=True, blank=True, editable=False, help_text=label
            )
    for column, label in count_columns(workflow):
        if column.isidentifier() and not defines(column, attrs, bases):
            attrs[column] = models.PositiveIntegerField(
                null=True, blank=True, editable=False, help_text=label
            )
    for column, field in sla_fields(workflow):
        if not defines(column, attrs, bases):
            attrs[column] = field


def sla_fields(workflow: CompiledWorkflow) -> list[tuple[str, models.Field]]:
    """Per SLA: the clock time it consumed before the current stay, when it warned and
    when it breached (docs/slas.md)."""
    fields: list[tuple[str, models.Field]] = []
    for name in workflow.clocked_slas:
        consumed = models.PositiveBigIntegerField(
            default=0,
            editable=False,
            help_text=f"Seconds the {name} SLA ran before the current step.",
        )
        fields.append((sla_consumed_column(name), consumed))
        for column, what in (
            (sla_warned_column(name), "warned"),
            (sla_breached_column(name), "breached"),
        ):
            mark = models.DateTimeField(
                null=True, blank=True, editable=False, help_text=f"When the {name} SLA {what}."
            )
            fields.append((column, mark))
    return fields


def deadline_columns(workflow: CompiledWorkflow) -> list[tuple[str, str]]:
    """The fired column of each action timeout and the last-fired column of each every."""
    columns = []
    for step_name, step in workflow.steps.items():
        for timeout in step.timeouts:
            if timeout.action and isinstance(timeout.name, str):
                column = fired_column(step_name, timeout.name)
                columns.append((column, f"When {step_name}.{timeout.name} fired this round."))
        for every in step.everies:
            if isinstance(every.name, str):
                column = last_fired_column(step_name, every)
                columns.append((column, f"When {step_name}.{every.name} last fired."))
    return columns


def count_columns(workflow: CompiledWorkflow) -> list[tuple[str, str]]:
    """The firing count of each every with ``times``, beside its last-fired column."""
    return [
        (
            fired_count_column(step_name, every),
            f"How often {step_name}.{every.name} fired this round.",
        )
        for step_name, step in workflow.steps.items()
        for every in step.everies
        if isinstance(every.name, str) and counts_firings(every)
    ]


def deadline_indexes(model: Any, workflow: CompiledWorkflow) -> list[models.Index]:
    """One index serves every deadline of the model: ``next_due_at``, pending rows only.

    Rows with nothing pending (``NULL``) stay out of it, so it holds the
    records that will fall due, whatever their number of deadlines.
    """
    local = {field.name for field in model._meta.local_fields}
    if not workflow.has_deadlines or NEXT_DUE_AT not in local:
        return []
    key = f"{model._meta.db_table}:{NEXT_DUE_AT}"
    name = "wf_" + hashlib.md5(key.encode(), usedforsecurity=False).hexdigest()[:24]
    condition = Q(**{f"{NEXT_DUE_AT}__isnull": False})
    return [models.Index(fields=[NEXT_DUE_AT], condition=condition, name=name)]


class WorkflowModelBase(ModelBase):
    """Reads the inner ``Workflow`` class and contributes what it generates."""

    def __new__(mcs, name: str, bases: tuple[type, ...], attrs: dict[str, Any], **kwargs: Any):
        declaration = attrs.pop("Workflow", None) or _inherited_declaration(bases)
        if declaration is not None:
            try:
                contribute(attrs, bases, declaration)
            except Exception as error:  # reported by the checks, never at import
                attrs["_workflow_import_error"] = error
        cls = super().__new__(mcs, name, bases, attrs, **kwargs)
        cls._workflow_declaration = declaration
        compiled = compile_workflow(cls, declaration) if declaration is not None else None
        cls._workflow_compiled = compiled  # what ``WorkflowModel.workflow`` answers
        if compiled is not None and not (cls._meta.abstract or cls._meta.proxy):
            try:
                _add_indexes(cls, deadline_indexes(cls, compiled))
            except Exception as error:  # reported by the checks, never at import
                cls._workflow_import_error = error
        return cls


def _add_indexes(cls: Any, indexes: list[models.Index]) -> None:
    if indexes:
        cls._meta.indexes = [*cls._meta.indexes, *indexes]
        # Migrations read the indexes of models whose Meta declared some.
        cls._meta.original_attrs["indexes"] = cls._meta.indexes


def _inherited_declaration(bases: tuple[type, ...]) -> type | None:
    for base in bases:
        declaration = getattr(base, "_workflow_declaration", None)
        if declaration is not None:
            return declaration
    return None
