"""Where modules lived before release 0.4, still importable.

Release 0.4 put the package's modules in rooms by layer (docs/decisions.md, "The
map"). django-q2 keeps a queued task's and a schedule's function as a dotted path in
its own tables, and projects may import what they found; every old path therefore
still imports, as the very module it names now. Paths django-q2 stores answer
silently; the others warn with a ``DeprecationWarning`` naming the new path, and go
in release 0.5.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType

PACKAGE = "django_workflow."

MOVED = {
    "actionable": "reading.actionable",
    "admin.joins": "admin.join_panel",
    "ballots": "reading.votes_read",
    "bulk": "engine.bulk",
    "checks.assignment": "checks.assignment_checks",
    "checks.deadlines": "checks.deadlines_checks",
    "checks.deployment": "checks.deployment_checks",
    "checks.events": "checks.events_checks",
    "checks.evolution": "checks.evolution_checks",
    "checks.graph": "checks.graph_checks",
    "checks.joins": "checks.joins_checks",
    "checks.options": "checks.options_checks",
    "checks.policies": "checks.policies_checks",
    "checks.records": "checks.records_checks",
    "checks.slas": "checks.slas_checks",
    "checks.steps": "checks.steps_checks",
    "checks.transitions": "checks.transitions_checks",
    "checks.undo": "checks.undo_checks",
    "columns": "model.columns",
    "compiled": "model.compiled",
    "compiled_reads": "engine.sql.compiled_reads",
    "conditions": "model.conditions",
    "due_instants": "work.due_instants",
    "engine.clocks": "engine.sla_clocks",
    "engine.delivery_statements": "engine.sql.delivery_statements",
    "engine.recovery": "worker.recovery",
    "engine.slas": "engine.sla_firing",
    "engine.step_statements": "engine.sql.step_statements",
    "evaluation": "model.evaluation",
    "event_deliveries": "models.event_delivery",
    "event_reading": "model.event_input",
    "events": "model.triggers",
    "gauge_figures": "report.gauges",
    "generation": "model.generation",
    "graph": "model.graph",
    "halted_steps": "admin.halted_steps",
    "history": "reading.log_rows_read",
    "holders": "reading.claims_read",
    "hot_cursors": "engine.sql.cursors",
    "inbox": "reading.inbox",
    "key_lists": "reading.key_lists",
    "log_values": "model.log_values",
    "meters": "process.meters",
    "offers": "engine.offers",
    "pacing": "process.pacing",
    "pending_effects": "reading.owed_effects_read",
    "probes": "engine.sql.probes",
    "queueing": "worker.transport",
    "rearming": "work.rearming",
    "record_time": "work.record_time",
    "registry": "model.registry",
    "relations": "model.relations",
    "report.reading": "report.time_in_step",
    "retrying": "reading.attempts_read",
    "schedulers": "worker.schedulers",
    "schedulers.base": "worker.schedulers.scheduler",
    "schedulers.buffer_sweep": "worker.schedulers.buffer_sweep",
    "schedulers.polling": "worker.schedulers.polling",
    "schedulers.precise": "worker.schedulers.precise",
    "schedulers.registry": "worker.schedulers.catalog",
    "service_levels": "work.sla_clocks_read",
    "statements": "engine.sql.writes",
    "status": "report.status",
    "step_renames": "management.step_renames",
    "stopping": "process.stopping",
    "supervisor": "worker.supervisor",
    "traces": "process.traces",
    "undo": "engine.undo",
    "wallclock": "work.wallclock",
    "web.offers": "web.form_offers",
    "web.views": "web.form_views",
    "wording": "reading.wording",
    "worker_signals": "worker.stop_signals",
}

# Task and schedule functions django-q2 may hold from an earlier release.
STORED = {"queueing", "schedulers", "schedulers.polling", "schedulers.buffer_sweep"}

# Old modules named like a function of the package (``django_workflow.inbox(user)``):
# registered at once, so importing the old path never puts a module in the function's
# place on the package.
SHADOWED = {"inbox"}


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.startswith(PACKAGE) and fullname[len(PACKAGE) :] in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        old = spec.name[len(PACKAGE) :]
        new = PACKAGE + MOVED[old]
        if old not in STORED:
            warnings.warn(
                f"{spec.name} moved to {new} in release 0.4; import it from there.",
                DeprecationWarning,
                stacklevel=2,
            )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module already ran where it lives now."""


def install() -> None:
    if not any(isinstance(finder, _Moved) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Moved())
    for old in SHADOWED:
        sys.modules.setdefault(PACKAGE + old, importlib.import_module(PACKAGE + MOVED[old]))
