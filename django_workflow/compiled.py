"""The compiled workflow: the inner ``class Workflow:`` read once per model.

Reading never raises. Whatever cannot be understood is kept as written (or
listed in ``unknown_options``) for the checks to report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .declaration import Step, Transition

#: Every option ``class Workflow:`` accepts, with its default.
OPTIONS: dict[str, Any] = {
    "state_attribute": "state",
    "check_interval": "* * * * *",
    "queue": "workflow",
    "scheduler": "polling",
    "log": False,
    "undo": None,
    "policies": {},
    "calculations": {},
    "time_zone": "UTC",
    "time_zone_field": None,
    "holidays": None,
}

STATE_ENTERED_AT = "state_entered_at"


@dataclass
class CompiledWorkflow:
    model: Any
    steps: dict[str, Step]
    options: dict[str, Any]
    unknown_options: list[str] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        options = self.__dict__.get("options", {})
        if name in options:
            return options[name]
        raise AttributeError(name)

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
        for step in self.steps.values():
            for transition in step.transitions:
                if isinstance(transition.name, str):
                    names.setdefault(transition.name, None)
        return list(names)

    def transition(self, step_name: str, name: str) -> Transition | None:
        """The transition ``name`` offered by a manual step, or ``None``."""
        step = self.steps.get(step_name)
        if step is None or not step.is_manual:
            return None
        return next((t for t in step.transitions if t.name == name), None)

    def policy_for(self, step_name: str, name: str) -> Any:
        """The policy guarding ``name`` in ``step_name``: ``Workflow.policies`` wins."""
        policies = self.policies if isinstance(self.policies, dict) else {}
        if name in policies:
            return policies[name]
        return self.steps[step_name].policy

    @cached_property
    def works(self) -> tuple[Any, ...]:
        """Every unit of work: automatic steps, timeouts and every, in declaration order."""
        from .work import compile_works

        return compile_works(self)

    def work(self, name: str) -> Any:
        for work in self.works:
            if work.name == name:
                return work
        raise LookupError(
            f"{self.model.__name__} has no work {name!r}; "
            f"its works are: {', '.join(w.name for w in self.works)}."
        )

    @cached_property
    def fired_anchors(self) -> tuple[tuple[str, str], ...]:
        """(fired column, anchor) of each action timeout."""
        return tuple((w.fired_field, w.deadline.field) for w in self.works if w.fired_field)

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

    def queryset(self, using: str | None = None) -> Any:
        """The model's rows with ``calculations`` aliased, so a Work's ``match`` applies."""
        rows = self.model._base_manager.using(using)
        calculations = self.calculations if isinstance(self.calculations, dict) else {}
        return rows.alias(**calculations) if calculations else rows

    def choices(self) -> list[tuple[str, str]]:
        return [(name, name.replace("_", " ").capitalize()) for name in self.steps]


def compile_workflow(model: Any, declaration: type) -> CompiledWorkflow:
    """Read an inner ``Workflow`` class: steps in declaration order, then options."""
    steps: dict[str, Step] = {}
    options = dict(OPTIONS)
    unknown: list[str] = []
    namespace: dict[str, Any] = {}
    for klass in reversed(declaration.__mro__[:-1]):  # a Workflow may extend another
        namespace.update(vars(klass))
    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        if isinstance(value, Step):
            steps[name] = value
        elif name in OPTIONS:
            options[name] = value
        else:
            unknown.append(name)
    return CompiledWorkflow(model=model, steps=steps, options=options, unknown_options=unknown)
