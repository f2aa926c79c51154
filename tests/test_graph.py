"""The workflow diagram: Mermaid, dot and the admin's SVG; manage.py workflow_graph."""

import io
import re

import pytest
from django.core.management import CommandError, call_command

from django_workflow import graph
from tests.testapp.models import Decision, Proposal

DECISION_MERMAID = """stateDiagram-v2
    [*] --> pending
    pending --> checking: approve
    pending --> rejected: reject
    pending --> held: hold
    checking --> approved
    rejected --> pending: reopen
    held --> pending: release
    approved --> [*]"""


def test_mermaid_lists_every_edge_and_the_ends():
    assert graph.mermaid(Decision.workflow) == DECISION_MERMAID


def test_dot_marks_terminal_steps_and_dashes_timeouts():
    text = graph.dot(Proposal.workflow)
    assert '"approved" [label="approved", peripheries=2];' in text
    assert '"review" -> "escalated" [label="escalation", style=dashed];' in text
    assert '"review" -> "review" [label="bounce"];' in text


def test_the_svg_draws_each_step_once_and_marks_the_current_one():
    svg = graph.svg(Decision.workflow, current="held")
    assert re.findall(r'data-step="(\w+)"', svg) == list(Decision.workflow.steps)
    assert 'class="step manual current" data-step="held"' in svg
    assert svg.count('class="edge') == len(graph.edges(Decision.workflow))
    assert svg.count(" current") == 1


def test_the_layout_puts_each_step_one_column_after_its_first_predecessor():
    positions = graph.layout(Decision.workflow)
    assert positions["pending"][0] == 0
    assert positions["checking"][0] == positions["rejected"][0] == 1
    assert positions["approved"][0] == 2


def test_the_command_prints_mermaid_and_dot():
    out = io.StringIO()
    call_command("workflow_graph", "testapp.Decision", stdout=out)
    assert out.getvalue().strip() == DECISION_MERMAID
    out = io.StringIO()
    call_command("workflow_graph", "testapp.Decision", "--format", "dot", stdout=out)
    assert out.getvalue().startswith("digraph workflow {")


@pytest.mark.parametrize("label", ["testapp.Nothing", "nonsense", "auth.User"])
def test_the_command_explains_a_wrong_model(label):
    with pytest.raises(CommandError):
        call_command("workflow_graph", label)
