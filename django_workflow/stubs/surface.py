"""What a declaration adds to its model, told as types: the one description both the
``.pyi`` writer and the mypy plugin read.

It reads the loaded model (the same class the app runs), never the source, so the
types follow whatever the declaration generates: a step added, a transition
renamed, a deadline given a fired column.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import Any

from django.db import models

from ..model.columns import (
    ASSIGNED_AT,
    ASSIGNEE,
    NEXT_DUE_AT,
    STATE_ENTERED_AT,
    WORKFLOW_VERSION,
)
from ..model.generation import (
    ASSIGNMENT_METHODS,
    count_columns,
    deadline_columns,
    is_generated,
    sla_fields,
)
from ..model.registry import workflow_models
from ..workflow_model import WorkflowManager

#: Keyword arguments every transition call takes besides the accepted values.
ANY = "typing.Any"
BOOL = "builtins.bool"
STR = "builtins.str"

#: The Python type a value of each Django field class has, most specific class first.
_PYTHON_TYPES: tuple[tuple[type[models.Field], str], ...] = (
    (models.BooleanField, BOOL),
    (models.DateTimeField, "datetime.datetime"),
    (models.DateField, "datetime.date"),
    (models.TimeField, "datetime.time"),
    (models.DurationField, "datetime.timedelta"),
    (models.DecimalField, "decimal.Decimal"),
    (models.FloatField, "builtins.float"),
    (models.UUIDField, "uuid.UUID"),
    (models.AutoField, "builtins.int"),
    (models.BigAutoField, "builtins.int"),
    (models.SmallAutoField, "builtins.int"),
    (models.IntegerField, "builtins.int"),
    (models.CharField, STR),
    (models.TextField, STR),
    (models.JSONField, ANY),
)


@dataclass(frozen=True)
class TypeRef:
    """A type as a checker is told it: a class by its full name (``typing.Any`` for any),
    or ``literals`` (``Literal["draft", ...]``); ``nullable`` adds ``| None``."""

    fullname: str = ANY
    nullable: bool = False
    literals: tuple[str, ...] = ()


@dataclass(frozen=True)
class Member:
    """A generated field (or a foreign key's ``_id``) and the type it reads as."""

    name: str
    type: TypeRef


@dataclass(frozen=True)
class Param:
    """A parameter of a generated method: keyword-only unless told, optional unless told."""

    name: str
    type: TypeRef
    keyword_only: bool = True
    optional: bool = True


@dataclass(frozen=True)
class Method:
    """A generated method; it returns the record (moved in place)."""

    name: str
    params: tuple[Param, ...]


@dataclass(frozen=True)
class TransitionCall:
    """A transition callable by name: the values it accepts, and whether the model has a
    generated method of that name (a name the user defines is not generated)."""

    name: str
    accepts: tuple[Member, ...]
    method: bool

    @property
    def params(self) -> tuple[Param, ...]:
        """After ``name`` (for ``transition``) or ``self`` (for the generated method)."""
        return (*CALL_PARAMS, *(Param(value.name, value.type) for value in self.accepts))


@dataclass(frozen=True)
class ModelSurface:
    """Everything generated on one workflow model, as types."""

    module: str
    name: str
    state_attribute: str
    steps: tuple[str, ...]
    fields: tuple[Member, ...]
    transitions: tuple[TransitionCall, ...]
    #: ``claim``, ``release``, ``assign`` when ``Workflow.assignment`` generated them.
    holding: tuple[Method, ...]
    #: Whether ``objects`` is the ``WorkflowManager`` every workflow model gets (not a
    #: manager of the project's, whose own methods its type must keep).
    default_manager: bool

    @property
    def fullname(self) -> str:
        return f"{self.module}.{self.name}"

    @property
    def transition_names(self) -> tuple[str, ...]:
        return tuple(call.name for call in self.transitions)

    def transition(self, name: str) -> TransitionCall | None:
        return next((call for call in self.transitions if call.name == name), None)

    @property
    def methods(self) -> tuple[Method, ...]:
        """Every generated method: the transitions', then ``claim``/``release``/``assign``."""
        calls = tuple(Method(call.name, call.params) for call in self.transitions if call.method)
        return (*calls, *self.holding)


def surface(model: Any) -> ModelSurface:
    """The generated members of ``model``, a class with a compiled ``workflow``."""
    workflow = model.workflow
    steps = tuple(name for name, _label in workflow.choices() if isinstance(name, str))
    return ModelSurface(
        module=model.__module__,
        name=model.__qualname__,
        state_attribute=workflow.state_attribute,
        steps=steps,
        fields=tuple(_fields(model, workflow, steps)),
        transitions=tuple(_transitions(model, workflow)),
        holding=tuple(
            _holding_method(name, _user_type(model))
            for name in ASSIGNMENT_METHODS
            if is_generated(getattr(model, name, None))
        ),
        default_manager=type(getattr(model, "objects", None)) is WorkflowManager,
    )


def typed_models() -> list[Any]:
    """The concrete workflow models and the abstract bases they take a declaration from:
    code typed with an abstract base calls its generated members too."""
    found: dict[Any, None] = {}
    for model in workflow_models():
        for base in reversed(model.__mro__):
            meta = base.__dict__.get("_meta")
            if meta is not None and meta.abstract and getattr(base, "workflow", None):
                found.setdefault(base, None)
        found.setdefault(model, None)
    return list(found)


def generated_field_names(workflow: Any) -> list[str]:
    """The fields ``generation.contribute`` adds for ``workflow`` (every version of it),
    when the model lacks them."""
    names = [workflow.state_attribute, STATE_ENTERED_AT]
    if workflow.versions is not None:
        names.append(WORKFLOW_VERSION)
    if any(version.assignment for version in workflow.family()):
        names += [ASSIGNEE, ASSIGNED_AT]
    if workflow.has_deadlines:
        names.append(NEXT_DUE_AT)
    for version in workflow.family():
        names += [column for column, _label in deadline_columns(version)]
        names += [column for column, _label in count_columns(version)]
        names += [column for column, _field in sla_fields(version)]
    unique = dict.fromkeys(name for name in names if isinstance(name, str) and name.isidentifier())
    return list(unique)


#: What every transition call takes after the transition's name: ``transition(name, actor,
#: *, authorize, comment, data, **accepted)``; the generated methods drop ``name``.
CALL_PARAMS = (
    Param("actor", TypeRef(), keyword_only=False),
    Param("authorize", TypeRef(BOOL)),
    Param("comment", TypeRef(STR)),
    Param("data", TypeRef()),
)


def _holding_method(name: str, user: TypeRef) -> Method:
    """``claim(actor, *, comment)``, ``release(actor, *, comment)`` and
    ``assign(user, *, actor, authorize, comment)`` (generation.ASSIGNMENT_METHODS)."""
    comment = Param("comment", TypeRef(STR))
    if name == "assign":
        user_param = Param("user", TypeRef(user.fullname, True), keyword_only=False, optional=False)
        rest = (Param("actor", TypeRef()), Param("authorize", TypeRef(BOOL)), comment)
        return Method(name, (user_param, *rest))
    return Method(name, (Param("actor", TypeRef(), keyword_only=False, optional=False), comment))


def _user_type(model: Any) -> TypeRef:
    field = _field(model, ASSIGNEE)
    return field_type(field) if field is not None else TypeRef()


def _fields(model: Any, workflow: Any, steps: tuple[str, ...]) -> list[Member]:
    members = []
    for name in generated_field_names(workflow):
        field = _field(model, name)
        if field is None:
            continue
        if name == workflow.state_attribute:
            members.append(Member(name, TypeRef(literals=steps)))
            continue
        members.append(Member(name, field_type(field)))
        if field.is_relation and field.attname != name:
            members.append(Member(field.attname, _key_type(field)))
    return members


def _transitions(model: Any, workflow: Any) -> list[TransitionCall]:
    calls = []
    versions = workflow.family()
    names = dict.fromkeys(name for version in versions for name in version.transition_names)
    for name in names:
        accepted: dict[str, None] = {}
        for version in versions:
            for step_name in version.steps:
                declared = version.transition(step_name, name)
                for value in declared.accept if declared is not None else ():
                    if _usable(value):  # a malformed name is the checks' to report
                        accepted.setdefault(value, None)
        calls.append(
            TransitionCall(
                name=name,
                accepts=tuple(_accepted(model, value) for value in accepted),
                method=_usable(name) and is_generated(getattr(model, name, None)),
            )
        )
    return calls


def _usable(name: Any) -> bool:
    """Whether ``name`` can be a Python parameter or attribute."""
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def _accepted(model: Any, name: str) -> Member:
    field = _field(model, name)
    return Member(name, field_type(field) if field is not None else TypeRef())


def _field(model: Any, name: str) -> Any:
    try:
        return model._meta.get_field(name)
    except Exception:  # an undeclared name: the checks report it
        return None


def field_type(field: Any) -> TypeRef:
    """The type a field's value reads as: its model for a relation, else its Python type."""
    nullable = bool(getattr(field, "null", False))
    if field.is_relation and field.related_model is not None and field.many_to_one:
        related = field.related_model
        return TypeRef(f"{related.__module__}.{related.__qualname__}", nullable)
    for klass, fullname in _PYTHON_TYPES:
        if isinstance(field, klass):
            return TypeRef(fullname, nullable and fullname != ANY)
    return TypeRef()


def _key_type(field: Any) -> TypeRef:
    target = field.target_field
    return TypeRef(field_type(target).fullname, bool(field.null))
