"""Work names (``step:<step>``, ``enter:<step>``, ``timeout:<step>.<name>``,
``every:<step>.<name>``, ``join:<step>``) are durable keys: ``django_workflow.work.names``
builds and reads them, and no other module spells one (docs/deadlines.md, units of work)."""

import ast
from pathlib import Path

import pytest

from django_workflow.work import names
from tests.helpers import ROOT
from tests.testapp.models import Candidate, Consignment, Proposal, Sync

PACKAGE = ROOT / "django_workflow"
PREFIXES = ("step:", "enter:", "timeout:", "every:", "join:")


def spelled(source):
    """The lines of ``source`` holding a string that begins like a work name."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith(PREFIXES)
    )


def test_only_the_names_module_spells_a_work_name():
    found = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE) != Path("work/names.py")
        and "migrations" not in path.parts
        and (lines := spelled(path.read_text()))
    }
    assert found == {}


@pytest.mark.parametrize(
    "source",
    ['work = f"step:{step}"', 'name = "enter:" + step', 'step = name.removeprefix("step:")'],
)
def test_the_scan_sees_a_work_name_spelled_elsewhere(source):
    assert spelled(source)


def test_each_kind_is_named_as_its_records_and_logs_know_it():
    assert next(w.name for w in Sync.workflow.works if w.step == "pushing") == "step:pushing"
    assert names.automatic_step("step:pushing") == "pushing"
    assert names.automatic_step("timeout:review.reminder") is None
    assert {w.name for w in Proposal.workflow.works} >= {names.timeout_work("review", "reminder")}
    assert Candidate.workflow.work(names.step_work("screening")).step == "screening"
    assert [w.name for w in Consignment.workflow.works] == [names.join_work("picking")]
