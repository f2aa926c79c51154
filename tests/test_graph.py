"""The workflow diagram: Mermaid, dot and the admin's SVG; manage.py workflow_graph."""

import io
import re

import pytest
from django.core.management import CommandError, call_command

from django_workflow import Step, Timeout, Transition, graph
from django_workflow.compiled import compile_workflow
from tests.testapp.models import Decision, Proposal

DECISION_MERMAID = """stateDiagram-v2
    state "pending" as s_pending
    state "checking" as s_checking
    state "approved" as s_approved
    state "rejected" as s_rejected
    state "held" as s_held
    [*] --> s_pending
    s_pending --> s_checking: approve
    s_pending --> s_rejected: reject
    s_pending --> s_held: hold
    s_checking --> s_approved
    s_rejected --> s_pending: reopen
    s_held --> s_pending: release
    s_approved --> [*]"""


def test_mermaid_lists_every_step_every_edge_and_the_ends():
    assert graph.mermaid(Decision.workflow) == DECISION_MERMAID


class MermaidKeywords:
    end = Step(Transition("note", to="note"), Transition("go", to="state"))
    note = Step(Transition("end", to="end"), Timeout("t", fire_after="1d", transition_to="click"))
    state = Step(Transition("class", to="direction"))
    direction = Step(Transition("style", to="classDef"))
    classDef = Step()
    click = Step()


def test_mermaid_keeps_steps_named_after_its_keywords_apart_from_the_keywords():
    text = graph.mermaid(compile_workflow(None, MermaidKeywords))
    assert 'state "end" as s_end' in text
    assert 'state "note" as s_note' in text
    assert "[*] --> s_end" in text
    assert "s_end --> s_note: note" in text
    assert "s_note --> s_end: end" in text
    assert "s_note --> s_click: t" in text
    assert "s_classDef --> [*]" in text


STATEMENT = re.compile(
    r'    state "[^"]*" as (?P<id>s_\w+|s\d+)'
    r"|    (?P<source>\[\*\]|s_\w+|s\d+) --> (?P<target>\[\*\]|s_\w+|s\d+)(: [^\n\";]+)?"
)


def test_every_mermaid_line_joins_declared_ids_only():
    workflow = compile_workflow(None, MermaidKeywords)
    header, *lines = graph.mermaid(workflow).splitlines()
    assert header == "stateDiagram-v2"
    matches = [STATEMENT.fullmatch(line) for line in lines]
    assert all(matches), lines
    declared = {m["id"] for m in matches if m["id"]}
    assert len(declared) == len(workflow.steps)
    used = {m[group] for m in matches for group in ("source", "target") if m[group]}
    assert used <= declared | {"[*]"}


def test_mermaid_ids_never_collide_and_labels_escape_quotes_and_semicolons():
    declaration = type(
        "Odd",
        (),
        {
            "s_a": Step(Transition("go", to="a")),
            "a": Step(Transition('say "hi"; #1', to="é")),
            "é": Step(Transition("on", to="x y")),
            "x y": Step(),
        },
    )
    workflow = compile_workflow(None, declaration)
    ids = graph.mermaid_ids(workflow.steps)
    assert ids == {"s_a": "s_s_a", "a": "s_a", "é": "s2", "x y": "s3"}
    text = graph.mermaid(workflow)
    assert 'state "x y" as s3' in text
    assert "s_a --> s2: say #quot;hi#quot;#59; #35;1" in text


def test_mermaid_draws_no_start_when_no_step_can_start():
    declaration = type("Ended", (), {"done": Step(terminal=True)})
    text = graph.mermaid(compile_workflow(None, declaration))
    assert text.splitlines() == [
        "stateDiagram-v2",
        '    state "done" as s_done',
        "    s_done --> [*]",
    ]


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


@pytest.mark.parametrize("name", ["decision", "Decision", "DECISION"])
def test_the_command_takes_a_model_name_alone_when_one_workflow_model_has_it(name):
    out = io.StringIO()
    call_command("workflow_graph", name, stdout=out)
    assert out.getvalue().strip() == DECISION_MERMAID


def test_the_command_asks_for_the_app_label_when_the_name_is_shared():
    with pytest.raises(
        CommandError, match=r"called 'candidate': hiring\.Candidate, testapp\.Candidate\."
    ):
        call_command("workflow_graph", "candidate")


@pytest.mark.parametrize("name", ["Nobody", "testapp.Nobody"])
def test_an_unknown_name_lists_the_workflow_models(name):
    with pytest.raises(CommandError) as raised:
        call_command("workflow_graph", name)
    message = str(raised.value)
    assert "Workflow models: " in message
    assert "approvals.Document" in message and "testapp.Decision" in message
    assert "auth.User" not in message
