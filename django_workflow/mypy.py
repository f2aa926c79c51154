"""The mypy plugin: ``plugins = ["mypy_django_plugin.main", "django_workflow.mypy"]``.

It tells mypy what each workflow declaration generates, from the loaded models:
the same description the stubs are written from (``stubs/surface.py``), so both
say the same. django-stubs' plugin has already set Django up in the mypy process
(it reads ``django_settings_module`` from its own config section); without it,
this plugin sets Django up from that section or ``DJANGO_SETTINGS_MODULE``.
Reading the running declaration, rather than the ``class Workflow:`` source,
gives the exact generated names however the declaration is written (constants,
shared steps, ``from_any_step``, an inherited declaration).

- Generated fields and methods join the model's class while mypy reads it (the
  class MRO hook: django-stubs claims the model's base-class hook, and mypy asks
  only the first plugin that answers one).
- ``transition``/``atransition`` on a record and ``transition`` on its queryset
  or manager take a ``Literal`` transition name and that transition's keywords.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import cache
from typing import Any

from mypy.nodes import (
    ARG_NAMED,
    ARG_NAMED_OPT,
    ARG_OPT,
    ARG_POS,
    ARG_STAR2,
    MDEF,
    ArgKind,
    ClassDef,
    MypyFile,
    StrExpr,
    SymbolTableNode,
    TypeInfo,
    Var,
)
from mypy.options import Options
from mypy.plugin import (
    ClassDefContext,
    MethodSigContext,
    Plugin,
    ReportConfigContext,
    SemanticAnalyzerPluginInterface,
)
from mypy.types import (
    AnyType,
    CallableType,
    FunctionLike,
    Instance,
    LiteralType,
    NoneType,
    ProperType,
    Type,
    TypeOfAny,
    UnionType,
    get_proper_type,
)

WORKFLOW_MODEL = "django_workflow.workflow_model.WorkflowModel"
WORKFLOW_QUERYSET = "django_workflow.workflow_model.WorkflowQuerySet"
#: mypy's options: its config file (where django-stubs' section names the settings) and path.
_options: list[Options] = []


class _Unresolved(Exception):
    """A type the declaration names is not analysed yet: mypy reads the class again."""


class WorkflowPlugin(Plugin):
    def __init__(self, options: Options) -> None:
        super().__init__(options)
        _options.append(options)

    def get_customize_class_mro_hook(
        self, fullname: str
    ) -> Callable[[ClassDefContext], None] | None:
        info = self._typeinfo(fullname)
        if info is not None and fullname != WORKFLOW_MODEL and info.has_base(WORKFLOW_MODEL):
            return _add_generated_members
        return None

    def get_method_signature_hook(
        self, fullname: str
    ) -> Callable[[MethodSigContext], FunctionLike] | None:
        # mypy names a method after the receiver's class: ``app.models.Order.transition``.
        owner, _, method = fullname.rpartition(".")
        if method not in ("transition", "atransition"):
            return None
        info = self._typeinfo(owner)
        if info is not None and info.has_base(WORKFLOW_MODEL):
            return _record_call
        if method == "transition" and _holds_workflow_queryset(info):
            return _queryset_call
        return None

    def get_additional_deps(self, file: MypyFile) -> list[tuple[int, str, int]]:
        """The modules a model's generated members name (``datetime``, the user model's)."""
        modules = {
            ref.rpartition(".")[0]
            for model in _surfaces().values()
            if model.module == file.fullname
            for ref in _referenced(model)
        }
        return [(10, module, -1) for module in sorted(modules - {"builtins", "typing", ""})]

    def report_config_data(self, ctx: ReportConfigContext) -> Any:
        """The module's declarations: mypy's cache of it goes stale when they change, even
        when they come from another module (a shared step, a constant)."""
        return [repr(model) for model in _surfaces().values() if model.module == ctx.id] or None

    def _typeinfo(self, fullname: str) -> TypeInfo | None:
        symbol = self.lookup_fully_qualified(fullname)
        return symbol.node if symbol is not None and isinstance(symbol.node, TypeInfo) else None


def plugin(version: str) -> type[Plugin]:
    return WorkflowPlugin


# --- the model's class -------------------------------------------------------------------


def _add_generated_members(ctx: ClassDefContext) -> None:
    model = _surfaces().get(ctx.cls.fullname)
    if model is None:  # not a model the settings load, nor a base of one
        return
    info, api = ctx.cls.info, ctx.api
    declared = _declared(ctx.cls)
    try:
        for member in model.fields:
            if member.name not in declared:
                _add(info, member.name, _type(api, member.type))
        record = Instance(info, [])
        for method in model.methods:
            if method.name not in declared:
                _add(info, method.name, _method_type(api, record, method.name, method.params))
    except _Unresolved:
        if not api.final_iteration:
            api.defer()


def _add(info: TypeInfo, name: str, typ: Type) -> None:
    var = Var(name, typ)
    var.info = info
    var._fullname = f"{info.fullname}.{name}"
    # Initialised in the class, as a def is: a callable is bound to the record.
    var.is_initialized_in_class = True
    var.is_inferred = True
    info.names[name] = SymbolTableNode(MDEF, var, plugin_generated=True)


def _method_type(
    api: SemanticAnalyzerPluginInterface, record: Instance, name: str, params: Any
) -> CallableType:
    kinds = [ARG_POS, *(_kind(param) for param in params)]
    return CallableType(
        [record, *(_type(api, param.type) for param in params)],
        kinds,
        ["self", *(param.name for param in params)],
        record,
        api.named_type("builtins.function"),
        name=f"{name} of {record.type.name}",
    )


def _declared(cls: ClassDef) -> set[str]:
    """What the class body binds itself (read before mypy analyses the body)."""
    from mypy.nodes import AssignmentStmt, Decorator, FuncDef, NameExpr, OverloadedFuncDef

    names: set[str] = set()
    for statement in cls.defs.body:
        if isinstance(statement, FuncDef | OverloadedFuncDef | Decorator | ClassDef):
            names.add(statement.name)
        elif isinstance(statement, AssignmentStmt):
            names.update(t.name for t in statement.lvalues if isinstance(t, NameExpr))
    return names


# --- calls by name: record.transition("x", ...), queryset.transition("x", ...) -----------


def _record_call(ctx: MethodSigContext) -> FunctionLike:
    receiver = get_proper_type(ctx.type)
    model = _surface_of(receiver)
    return ctx.default_signature if model is None else _by_name(ctx, model)


def _queryset_call(ctx: MethodSigContext) -> FunctionLike:
    receiver = get_proper_type(ctx.type)
    held = get_proper_type(receiver.args[0]) if isinstance(receiver, Instance) else None
    model = _surface_of(held) if held is not None and receiver.args else None
    return ctx.default_signature if model is None else _by_name(ctx, model)


def _by_name(ctx: MethodSigContext, model: Any) -> FunctionLike:
    """The signature for the transition the call names (a string literal), else one that
    takes only a declared name."""
    from .stubs.surface import CALL_PARAMS  # Django is set up by now

    signature = ctx.default_signature
    checker = ctx.api
    given = ctx.args[0][0] if ctx.args and ctx.args[0] else None
    call = model.transition(given.value) if isinstance(given, StrExpr) else None
    names = (call.name,) if call is not None else model.transition_names
    name_type = _literal(checker, names)
    kinds, types, arg_names = [ARG_POS], [name_type], ["name"]
    for param in CALL_PARAMS if call is None else call.params:
        kinds.append(_kind(param))
        types.append(_checker_type(checker, param.type))
        arg_names.append(param.name)
    if call is None:
        kinds.append(ARG_STAR2)
        types.append(AnyType(TypeOfAny.explicit))
        arg_names.append("accepted")
    return signature.copy_modified(arg_types=types, arg_kinds=kinds, arg_names=arg_names)


def _holds_workflow_queryset(info: TypeInfo | None) -> bool:
    """A ``WorkflowQuerySet`` or a manager made from one (``from_queryset``)."""
    if info is None:
        return False
    if info.has_base(WORKFLOW_QUERYSET):
        return True
    return any(
        base.metadata.get("django", {}).get("from_queryset_manager") == WORKFLOW_QUERYSET
        for base in info.mro
    )


def _surface_of(receiver: ProperType | None) -> Any:
    if not isinstance(receiver, Instance):
        return None
    # The nearest class with a declaration: a proxy's is its concrete model's.
    found = (_surfaces().get(info.fullname) for info in receiver.type.mro)
    return next((model for model in found if model is not None), None)


# --- types -------------------------------------------------------------------------------


def _kind(param: Any) -> ArgKind:
    if param.keyword_only:
        return ARG_NAMED_OPT if param.optional else ARG_NAMED
    return ARG_OPT if param.optional else ARG_POS


def _type(api: SemanticAnalyzerPluginInterface, ref: Any) -> Type:
    """A surface ``TypeRef`` as a mypy type, while the semantic analyser runs."""
    if ref.literals:
        return _literal_union(api.named_type("builtins.str"), ref.literals)
    if ref.fullname == "typing.Any":
        return AnyType(TypeOfAny.explicit)
    symbol = api.lookup_fully_qualified_or_none(ref.fullname)
    if symbol is None or not isinstance(symbol.node, TypeInfo):
        raise _Unresolved(ref.fullname)
    return _nullable(_instance(symbol.node), ref.nullable)


def _checker_type(checker: Any, ref: Any) -> Type:
    """The same, while the checker runs (every class is analysed by then)."""
    if ref.literals:
        return _literal(checker, ref.literals)
    if ref.fullname == "typing.Any":
        return AnyType(TypeOfAny.explicit)
    symbol = checker.lookup_qualified(ref.fullname) if "." in ref.fullname else None
    node = symbol.node if symbol is not None else None
    if not isinstance(node, TypeInfo):
        return AnyType(TypeOfAny.special_form)
    return _nullable(_instance(node), ref.nullable)


def _literal(checker: Any, values: tuple[str, ...]) -> Type:
    return _literal_union(checker.named_type("builtins.str"), values)


def _literal_union(fallback: Instance, values: tuple[str, ...]) -> Type:
    return UnionType.make_union([LiteralType(value, fallback) for value in values])


def _instance(info: TypeInfo) -> Instance:
    return Instance(info, [AnyType(TypeOfAny.special_form)] * len(info.defn.type_vars))


def _nullable(typ: Type, nullable: bool) -> Type:
    return UnionType.make_union([typ, NoneType()]) if nullable else typ


def _referenced(model: Any) -> list[str]:
    refs = [member.type.fullname for member in model.fields]
    refs += [param.type.fullname for method in model.methods for param in method.params]
    return [ref for ref in refs if "." in ref]


# --- the loaded declarations -------------------------------------------------------------


@cache
def _surfaces() -> dict[str, Any]:
    """Every workflow model's surface by the class's full name."""
    _set_django_up()
    from .stubs.surface import surface, typed_models

    return {f"{m.__module__}.{m.__qualname__}": surface(m) for m in typed_models()}


def _set_django_up() -> None:
    from django.apps import apps

    if apps.ready:  # django-stubs' plugin did it
        return
    import django

    options = _options[-1] if _options else Options()
    # As django-stubs does: the settings are imported from where mypy runs or its path.
    sys.path.extend([os.getcwd(), *options.mypy_path])
    os.environ["DJANGO_SETTINGS_MODULE"] = _settings_module(options)
    django.setup()


def _settings_module(options: Options) -> str:
    """django-stubs' ``django_settings_module`` (it defaults to ``DJANGO_SETTINGS_MODULE``
    and says what is missing), or without django-stubs the environment's."""
    try:
        from mypy_django_plugin.config import DjangoPluginConfig
    except ImportError:
        return os.environ.get("DJANGO_SETTINGS_MODULE", "")
    return DjangoPluginConfig(options.config_file).django_settings_module
