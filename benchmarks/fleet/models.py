"""Thirty workflow models for benchmarks/idle_cpu.py (``BENCH_FLEET`` of them are declared).

Each: an automatic intake step, a calendar reminder, a business-day reminder,
an every with an until, and a plain step, like a typical business workflow.
The migrations hold all thirty tables; the worker run with one model declares F00 only.
"""

import os

from django_workflow import Every, Step, Timeout, Transition, WorkflowModel

FLEET = int(os.environ.get("BENCH_FLEET", 30))


def _work(self):
    pass


def _fleet_model(index):
    steps = {
        "intake": Step(action="work", on_success="s0"),
        "s0": Step(Transition("next", to="s1"), Timeout("remind", fire_after="2d", action="work")),
        "s1": Step(Transition("next", to="s2"), Timeout("chase", fire_after="2bd", action="work")),
        "s2": Step(
            Transition("next", to="s3"), Every("nag", interval="1d", until="7d", action="work")
        ),
        "s3": Step(),
    }
    workflow = type(
        "Workflow",
        (),
        {"time_zone": "Europe/Zagreb", "holidays": ["2026-12-24", "2026-12-25"], **steps},
    )
    attrs = {"__module__": __name__, "Workflow": workflow, "work": _work}
    return type(WorkflowModel)(f"F{index:02d}", (WorkflowModel,), attrs)


FLEET_MODELS = [_fleet_model(index) for index in range(FLEET)]
for _model in FLEET_MODELS:
    globals()[_model.__name__] = _model
