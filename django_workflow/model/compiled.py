"""The compiled workflow: the inner ``class Workflow:`` read once per model.

Reading never raises. An option of the wrong type is recorded in
``problems`` and read as its default; a name that is no option is listed in
``unknown_options``; the checks report both. Every other reader can trust the
typed attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..declaration import Sla, Step, Transition, Undo, humanise
from ..work import Work, compile_works, names, soonest_at_entry
from ..work.compiling import releases
from ..work.sla import ALARMS, alarm_label
from .columns import (
    ASSIGNED_AT,
    ASSIGNEE,
    ASSIGNEE_ID,
    NEXT_DUE_AT,
    STATE_ENTERED_AT,
    WORKFLOW_VERSION,
    sla_columns,
)
from .options import OPTIONS, Problem

__all__ = ["OPTIONS", "STATE_ENTERED_AT", "CompiledWorkflow", "Problem", "compile_workflow"]


@dataclass
class CompiledWorkflow:
    model: Any
    steps: dict[str, Step]
    state_attribute: str = "state"
    check_interval: str = "* * * * *"
    queue: str = "workflow"
    scheduler: str = "polling"
    log: bool = False
    undo: Undo | None = None
    policies: dict[str, Any] = field(default_factory=dict)
    calculations: dict[str, Any] = field(default_factory=dict)
    time_zone: str = "UTC"
    time_zone_field: str | None = None
    holidays: Any = None
    working_hours: str | None = None
    save_signals: bool = True
    assignment: bool = False
    from_any_step: tuple[Transition, ...] | list[Transition] = ()
    slas: dict[str, Sla] = field(default_factory=dict)
    events: dict[str, Any] = field(default_factory=dict)
    version: int = 1
    previous: tuple[type, ...] | list[type] = ()
    unknown_options: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    #: Every declared version, the current one included, by number (shared by all of
    #: them); ``None`` on a model that declares no ``version`` nor ``previous``.
    versions: dict[int, CompiledWorkflow] | None = field(default=None, repr=False, compare=False)

    @property
    def current(self) -> CompiledWorkflow:
        """The version new records start on (itself on a model without versions)."""
        return self if self.versions is None else self.versions[max(self.versions)]

    @property
    def lowest_version(self) -> int:
        return self.version if self.versions is None else min(self.versions)

    def family(self) -> list[CompiledWorkflow]:
        """Every declared version, oldest first (itself alone without versions)."""
        if self.versions is None:
            return [self]
        return [self.versions[number] for number in sorted(self.versions)]

    @property
    def initial_step(self) -> str | None:
        marked = [name for name, step in self.steps.items() if step.initial is True]
        if marked:
            return marked[0]
        return next((name for name, step in self.steps.items() if not step.is_terminal), None)

    @property
    def transition_names(self) -> list[str]:
        """Every transition name, in declaration order, each once."""
        names: dict[str, None] = {}
        for step_name in self.steps:
            for transition in self.transitions_in(step_name):
                if isinstance(transition.name, str):
                    names.setdefault(transition.name, None)
        return list(names)

    def transitions_in(self, step_name: str) -> tuple[Transition, ...]:
        """The transitions a step offers: its own (a manual step's), then those of
        ``from_any_step`` whose target it is not, unless it declares the name itself."""
        step = self.steps.get(step_name)
        if step is None or step.is_terminal:
            return ()
        own = step.transitions if step.is_manual else ()
        names = {t.name for t in own}
        shared = tuple(
            t for t in self.from_any_step if t.name not in names and step_name not in t.targets
        )
        return (*own, *shared)

    def transition(self, step_name: str, name: str) -> Transition | None:
        """The transition ``name`` offered in ``step_name``, or ``None``."""
        if not isinstance(name, str):
            return next((t for t in self.transitions_in(step_name) if t.name == name), None)
        offered = self._offered.get(step_name)
        if offered is None:  # read once per step: every manual call asks
            offered = {}
            for transition in self.transitions_in(step_name):
                if isinstance(transition.name, str):
                    offered.setdefault(transition.name, transition)
            self._offered[step_name] = offered
        return offered.get(name)

    @cached_property
    def _offered(self) -> dict[str, dict[str, Transition]]:
        return {}

    def policy_for(self, step_name: str, name: str) -> Any:
        """The policy guarding ``name`` in ``step_name``: ``Workflow.policies`` wins."""
        if name in self.policies:
            return self.policies[name]
        return self.steps[step_name].policy

    @cached_property
    def works(self) -> tuple[Work, ...]:
        """Every unit of work of this version: automatic steps, timeouts, every and join
        re-checks, in declaration order."""
        return compile_works(self)

    @cached_property
    def all_works(self) -> tuple[Work, ...]:
        """The works of every declared version, oldest version first: what the schedulers
        run (each finds the records on its own version)."""
        return tuple(work for version in self.family() for work in version.works)

    def work(self, name: str) -> Work:
        """The work of any version named ``name`` (its durable name, version mark
        included: ``step:check@v2``)."""
        return self._find(self.all_works, name)

    def own_work(self, name: str) -> Work:
        """This version's work ``name``, given without its version mark (``step:check``)."""
        wanted = names.versioned(name, self.version) if self.versions is not None else name
        return self._find(self.works, wanted)

    def newest_work(self, name: str) -> Work:
        """The work ``name`` (without its version mark) of the newest version declaring
        it: what a task named by its step alone runs (an ``on_enter`` owed)."""
        for version in reversed(self.family()):
            try:
                return version.own_work(name)
            except LookupError:
                continue
        return self.own_work(name)  # raises, naming the works

    def _find(self, works: tuple[Work, ...], name: str) -> Work:
        for work in works:
            if work.name == name:
                return work
        raise LookupError(
            f"{self.model.__name__} has no work {name!r}; "
            f"its works are: {', '.join(w.name for w in self.all_works)}."
        )

    @cached_property
    def fired_anchors(self) -> tuple[tuple[str, str], ...]:
        """(fired column, anchor) of each action timeout, of every version."""
        return tuple((w.fired_field, w.deadline.field) for w in self.all_works if w.fired_field)

    @cached_property
    def _fired_by_step(self) -> dict[str, list[str]]:
        by_step: dict[str, list[str]] = {name: [] for name in self.steps}
        for work in self.works:
            if work.fired_field:
                by_step[work.step].append(work.fired_field)
        return by_step

    def fired_fields(self, step_name: str) -> list[str]:
        """The fired columns of a step's action timeouts: cleared on every entry."""
        return self._fired_by_step.get(step_name, [])

    @cached_property
    def deadline_works(self) -> dict[str, tuple[Work, ...]]:
        """Per step, the timeouts, everies and join re-checks the schedulers run
        (``self_scheduled`` ones are run by the project); ``next_due_at`` covers exactly
        these."""
        by_step: dict[str, list[Work]] = {}
        for work in self.works:
            if work.deadline is not None and not work.self_scheduled:
                by_step.setdefault(work.step, []).append(work)
        return {step: tuple(works) for step, works in by_step.items()}

    @cached_property
    def entry_deadline_works(self) -> dict[str, tuple[Work, ...]]:
        """Per step, the deadlines that can decide ``next_due_at`` when a record enters it."""
        return {step: soonest_at_entry(works) for step, works in self.deadline_works.items()}

    @cached_property
    def has_deadlines(self) -> bool:
        """Whether a step of any version has a deadline a scheduler runs, a join it
        re-checks or claims it releases (readable before the model exists)."""
        return any(version.declares_deadlines for version in self.family())

    @cached_property
    def declares_deadlines(self) -> bool:
        """``has_deadlines`` of this version alone."""
        return (
            any(
                getattr(deadline, "self_scheduled", False) is not True
                for step in self.steps.values()
                for deadline in step.deadlines
            )
            or any(step.joins or releases(self, step) for step in self.steps.values())
            or any(self.clocked_slas)
        )

    @cached_property
    def clocked_slas(self) -> dict[str, Sla]:
        """The SLAs whose names can name columns (the checks report the others)."""
        return {
            name: sla
            for name, sla in self.slas.items()
            if isinstance(name, str) and name.isidentifier()
        }

    @cached_property
    def has_votes(self) -> bool:
        """Whether a transition of any version counts votes (``quorum``): a step change
        then discards them."""
        return any(
            t.quorum is not None
            for version in self.family()
            for t in [
                *(t for s in version.steps.values() for t in s.transitions),
                *version.from_any_step,
            ]
        )

    def claims(self, step_name: str) -> bool:
        """Whether ``step_name`` is a ``Step(claim=True)`` of a workflow with ``assignment``:
        only the record's holder may call its transitions."""
        step = self.steps.get(step_name)
        return self.assignment and step is not None and step.claim is True

    @cached_property
    def owned_columns(self) -> frozenset[str]:
        """The columns only the engine writes: ``save()`` leaves them alone."""
        owned = {self.state_attribute, STATE_ENTERED_AT, NEXT_DUE_AT}
        if self.assignment:
            owned.update((ASSIGNEE, ASSIGNEE_ID, ASSIGNED_AT))
        if self.versions is not None:
            owned.add(WORKFLOW_VERSION)
        for version in self.family():
            for work in version.works:
                columns = (work.fired_field, work.last_fired_field, work.count_field)
                owned.update(c for c in columns if c)
            for name in version.clocked_slas:
                owned.update(sla_columns(name))
        return frozenset(owned)

    def queryset(self, using: str | None = None) -> Any:
        """The model's rows with ``calculations`` aliased, so a Work's ``match`` applies."""
        rows = self.model._base_manager.using(using)
        return rows.alias(**self.calculations) if self.calculations else rows

    def choices(self) -> list[tuple[str, Any]]:
        """Each step of every version (the current version's first) with its label."""
        choices: dict[str, Any] = {}
        for version in [self, *reversed(self.family())]:
            for name in version.steps:
                choices.setdefault(name, version.step_label(name))
        return list(choices.items())

    def step_label(self, name: str) -> Any:
        """A step's ``label``, else its humanised name (also for undeclared steps)."""
        step = self.steps.get(name)
        label = getattr(step, "label", None)
        return label if label is not None else humanise(name)

    def deadline_label(self, step_name: str, name: str) -> Any:
        """How the timeout or every ``name`` of ``step_name`` reads: its ``label``, else
        its humanised name (also for one no longer declared); an SLA's alarm
        (``resolution.warn``) reads "SLA “Resolution”: warning"."""
        step = self.steps.get(step_name)
        declared = [d for d in step.deadlines if d.name == name] if step else []
        if declared:
            return declared[0].title
        alarm = self.sla_alarm(name)
        return alarm_label(*alarm) if alarm else humanise(name)

    def sla_alarm(self, name: str) -> tuple[str, str] | None:
        """The SLA and alarm (``warn`` or ``breach``) an alarm's name
        (``resolution.warn``) stands for; ``None`` for any other name."""
        sla, _, alarm = name.rpartition(".")
        return (sla, alarm) if sla in self.clocked_slas and alarm in ALARMS else None

    def transition_label(self, name: str, step_name: str | None = None) -> Any:
        """How transition ``name`` reads: as ``step_name`` declares it, else as the first
        step that gives it a ``label``, else its humanised name."""
        declared = self.transition(step_name, name) if step_name else None
        if declared is not None:
            return declared.title
        declared_anywhere = [t for s in self.steps.values() for t in s.transitions]
        for transition in [*declared_anywhere, *self.from_any_step]:
            if transition.name == name and transition.label is not None:
                return transition.label
        return humanise(name)


def compile_workflow(model: Any, declaration: type) -> CompiledWorkflow:
    """Read an inner ``Workflow`` class and, when it declares ``version`` or ``previous``,
    each earlier declaration it keeps (docs: versions)."""
    current = compile_declaration(model, declaration)
    if not _declares_versions(declaration):
        return current
    versions = {current.version: current}
    for older in current.previous:
        compiled = compile_declaration(model, older)
        versions.setdefault(compiled.version, compiled)  # a duplicate: the checks say so
    for compiled in versions.values():
        compiled.versions = versions
    versions[current.version] = current  # the current one wins a duplicate number
    return current


def _declares_versions(declaration: type) -> bool:
    return any("version" in vars(k) or "previous" in vars(k) for k in declaration.__mro__)


def compile_declaration(model: Any, declaration: type) -> CompiledWorkflow:
    """Read one declaration class: steps in declaration order, then options."""
    steps: dict[str, Step] = {}
    options: dict[str, Any] = {}
    unknown: list[str] = []
    problems: list[Problem] = []
    namespace: dict[str, Any] = {}
    for klass in reversed(declaration.__mro__[:-1]):  # a Workflow may extend another
        namespace.update(vars(klass))
    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        if isinstance(value, Step):
            steps[name] = value
        elif name not in OPTIONS:
            unknown.append(name)
        elif OPTIONS[name][1](value):
            options[name] = value
        else:
            problems.append(Problem(name, value, OPTIONS[name][2]))
    return CompiledWorkflow(
        model=model, steps=steps, unknown_options=unknown, problems=problems, **options
    )
