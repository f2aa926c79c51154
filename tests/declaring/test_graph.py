"""The workflow diagram: Mermaid, dot and the admin's SVG; manage.py workflow_graph."""

import io
import re
from xml.etree import ElementTree

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db.models import BooleanField, Q, Value
from django.utils.translation import gettext_lazy

from django_workflow import Route, Step, Timeout, Transition
from django_workflow.model import graph
from django_workflow.model.compiled import compile_workflow
from tests.testapp.models import Decision, Proposal

DECISION_MERMAID = """stateDiagram-v2
    state "Pending" as s_pending
    state "Checking" as s_checking
    state "Approved" as s_approved
    state "Rejected" as s_rejected
    state "On hold" as s_held
    [*] --> s_pending
    s_pending --> s_checking: Approve
    s_pending --> s_rejected: Reject
    s_pending --> s_held: Put on hold
    s_checking --> s_approved
    s_rejected --> s_pending: Reopen
    s_held --> s_pending: Release
    s_approved --> [*]"""


def test_mermaid_lists_every_step_every_edge_and_the_ends_by_their_labels():
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
    assert 'state "End" as s_end' in text
    assert 'state "Note" as s_note' in text
    assert "[*] --> s_end" in text
    assert "s_end --> s_note: Note" in text
    assert "s_note --> s_end: End" in text
    assert "s_note --> s_click: T" in text
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
    assert 'state "X y" as s3' in text
    assert "s_a --> s2: Say #quot;hi#quot;#59; #35;1" in text


def test_mermaid_draws_no_start_when_no_step_can_start():
    declaration = type("Ended", (), {"done": Step(terminal=True)})
    text = graph.mermaid(compile_workflow(None, declaration))
    assert text.splitlines() == [
        "stateDiagram-v2",
        '    state "Done" as s_done',
        "    s_done --> [*]",
    ]


def test_dot_marks_terminal_steps_and_dashes_timeouts():
    text = graph.dot(Proposal.workflow)
    assert '"approved" [label="Approved", peripheries=2];' in text
    assert '"review" -> "escalated" [label="Escalation", style=dashed];' in text
    assert '"review" -> "review" [label="Bounce"];' in text


def test_dot_reads_the_labels_and_escapes_quotes():
    text = graph.dot(Decision.workflow)
    assert '"held" [label="On hold"];' in text
    assert '"pending" -> "held" [label="Put on hold"];' in text
    assert '"checking" -> "approved" [label=""];' in text
    odd = compile_workflow(
        None, type("Odd", (), {'say "hi"': Step(Transition("go", to="x")), "x": Step()})
    )
    assert '"say \\"hi\\"" -> "x" [label="Go"];' in graph.dot(odd)


def test_the_svg_draws_each_step_once_and_marks_the_current_one():
    svg = graph.svg(Decision.workflow, current="held")
    assert re.findall(r'data-step="(\w+)"', svg) == list(Decision.workflow.steps)
    assert 'class="step manual current" data-step="held"' in svg
    assert svg.count('class="edge') == len(graph.edges(Decision.workflow))
    assert len(re.findall(r'class="step [a-z]+ current"', svg)) == 1


def test_the_layout_puts_the_initial_step_on_top_and_each_step_below_where_it_comes_from():
    steps = {node.name: node.box for node in graph.layout(Decision.workflow).nodes}
    assert min(steps, key=lambda name: steps[name].y) == "pending"
    assert steps["pending"].bottom < steps["checking"].top < steps["approved"].top
    assert steps["pending"].bottom < steps["rejected"].top
    assert steps["pending"].bottom < steps["held"].top


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


# The SVG of every workflow: read back as the browser would, with our own text widths.

WORKFLOW_MODELS = sorted(
    (model for model in apps.get_models() if getattr(model, "workflow", None)),
    key=lambda model: model._meta.label,
)
EXAMPLES = [m for m in WORKFLOW_MODELS if m._meta.app_label != "testapp"]
SVG = "{http://www.w3.org/2000/svg}"


def read(svg):
    """The drawing as boxes: ``view`` (x, y, w, h), ``steps`` {name: Box}, ``texts``
    [(line, Box)], ``edges`` [(kind, source, target, path, label: its lines joined by
    spaces)], ``legend`` [caption]."""
    root = ElementTree.fromstring(svg)
    assert root.get("class") == "workflow-diagram"
    view = tuple(float(n) for n in root.get("viewBox").split())
    steps, texts, drawn, legend = {}, [], [], []
    for text in root.iter(f"{SVG}text"):
        size = float(text.get("font-size"))
        for span in text.iter(f"{SVG}tspan"):
            box = graph.Box(
                float(span.get("x")),
                float(span.get("y")),
                graph.text_width(span.text or "", size),
                round(size * graph.LINE_HEIGHT, 1),
            )
            texts.append((span.text or "", box))
    for group in root.iter(f"{SVG}g"):
        classes = group.get("class", "").split()
        if "step" in classes:
            rect = group.find(f"{SVG}rect")
            x, y, w, h = (float(rect.get(a)) for a in ("x", "y", "width", "height"))
            steps[group.get("data-step")] = graph.Box(x + w / 2, y + h / 2, w, h)
        elif "edge" in classes:
            label = group.find(f"{SVG}text")
            drawn.append(
                (
                    classes[1],
                    group.get("data-source"),
                    group.get("data-target"),
                    group.find(f"{SVG}path").get("d"),
                    " ".join(label.itertext()) if label is not None else None,
                )
            )
        elif "legend" in classes:
            legend = ["".join(t.itertext()) for t in group.iter(f"{SVG}text")]
    return {"view": view, "steps": steps, "texts": texts, "edges": drawn, "legend": legend}


def covers(one, other, slack=0.01):
    """Whether two texts' boxes overlap by more than ``slack``: the lines of one label
    touch, each written a tenth of a pixel apart from a rounded first line."""
    return (
        one.left < other.right - slack
        and other.left < one.right - slack
        and one.top < other.bottom - slack
        and other.top < one.bottom - slack
    )


def within(box, view):
    left, top, width, height = view
    return (
        left <= box.left
        and box.right <= left + width
        and top <= box.top
        and box.bottom <= top + height
    )


@pytest.mark.parametrize("model", WORKFLOW_MODELS, ids=lambda model: model._meta.label)
def test_every_text_and_step_lies_in_the_picture_and_no_text_covers_another(model):
    workflow = model.workflow
    current = next(iter(workflow.steps))
    drawing = read(graph.svg(workflow, current=current))
    assert list(drawing["steps"]) == list(workflow.steps)
    for name, box in drawing["steps"].items():
        assert within(box, drawing["view"]), name
    for line, box in drawing["texts"]:
        assert within(box, drawing["view"]), line
    texts = drawing["texts"]
    covered = [
        (a, b)
        for i, (a, one) in enumerate(texts)
        for b, other in texts[i + 1 :]
        if covers(one, other)
    ]
    assert not covered
    steps = list(drawing["steps"].values())
    assert not [(a, b) for i, a in enumerate(steps) for b in steps[i + 1 :] if a.intersects(b)]


@pytest.mark.parametrize("model", WORKFLOW_MODELS, ids=lambda model: model._meta.label)
def test_edge_labels_stay_off_the_steps_and_each_name_inside_its_box(model):
    layout = graph.layout(model.workflow)
    labels = [arrow.label for arrow in layout.arrows if arrow.label is not None]
    for label in labels:
        for node in layout.nodes:
            assert not label.box.intersects(node.box), (label.lines, node.name)
    for node in layout.nodes:
        text, box = node.text.box, node.box
        assert box.left < text.left and text.right < box.right, node.name
        assert box.top < text.top and text.bottom < box.bottom, node.name


@pytest.mark.parametrize("model", WORKFLOW_MODELS, ids=lambda model: model._meta.label)
def test_every_edge_is_drawn_with_its_label(model):
    workflow = model.workflow
    drawing = read(graph.svg(workflow))
    edges = graph.edges(workflow)
    assert [(kind, source, target) for kind, source, target, *_ in drawing["edges"]] == [
        (edge.kind, edge.source, edge.target) for edge in edges
    ]
    shown = set()
    for edge, (*_, path, label) in zip(edges, drawing["edges"], strict=True):
        assert path.startswith("M ") and " C " in path
        key = (edge.source, edge.kind, edge.text, edge.condition, edge.source == edge.target)
        words = " ".join(part for part in (edge.text, graph.shorten(edge.condition)) if part)
        if words and key not in shown:  # one label for the edges that read alike
            assert label == words
        else:
            assert label is None
        shown.add(key)


@pytest.mark.parametrize("model", EXAMPLES, ids=lambda model: model._meta.label)
def test_the_examples_fit_the_admin_panel_unshrunk(model):
    """The panel is some 860 px wide in a 1280 px window (tests/admin/test_browser.py
    measures it)."""
    assert graph.layout(model.workflow).width <= graph.LEGEND_BESIDE_UP_TO


def test_the_legend_names_the_kinds_of_step_and_edge_the_workflow_has():
    fulfilment = apps.get_model("fulfilment", "Order").workflow
    assert read(graph.svg(fulfilment, current="packing"))["legend"] == [
        "Manual step",
        "Automatic step",
        "Final step",
        "Current step",
        "Transition",
        "On success",
        "On error",
        "Timeout",
    ]
    dunning = apps.get_model("dunning", "Subscription").workflow
    assert read(graph.svg(dunning))["legend"] == [
        "Manual step",
        "Final step",
        "Transition",
        "Timeout",
    ]
    waiting = compile_workflow(
        None,
        type(
            "W", (), {"wait": Step(Timeout("t", fire_after="1d", transition_to="x")), "x": Step()}
        ),
    )
    assert read(graph.svg(waiting))["legend"][0] == "Waiting step"


def test_the_svg_shows_labels_lazy_or_not_and_escapes_every_text():
    declaration = type(
        "Labelled",
        (),
        {
            "a": Step(
                Transition("go", to="b&c", label=gettext_lazy("Go <on>")),
                Timeout("too_late", fire_after="1d", transition_to="b&c"),
                label=gettext_lazy('Start "here"'),
            ),
            "b&c": Step(action="run", on_success="a", on_error="a"),
        },
    )
    svg = graph.svg(compile_workflow(None, declaration), current="b&c")
    assert "Start &quot;here&quot;" in svg and "Go &lt;on&gt;" in svg and "Too late" in svg
    assert 'data-step="b&amp;c"' in svg and "on error" in svg
    drawing = read(svg)  # parses: nothing unescaped
    lines = {line for line, _ in drawing["texts"]}
    assert {'Start "here"', "B&c", "Go <on>", "Too late", "on error"} <= lines


def test_a_timeout_edge_reads_as_its_deadline_label_everywhere_the_diagram_is_drawn():
    declaration = type(
        "Supported",
        (),
        {
            "urgent": Step(
                Transition("resolve", to="resolved"),
                Timeout(
                    "sla_breach", fire_after="4h", transition_to="breached", label="SLA breach"
                ),
            ),
            "breached": Step(Transition("resolve", to="resolved")),
            "resolved": Step(),
        },
    )
    workflow = compile_workflow(None, declaration)
    lines = {line for line, _ in read(graph.svg(workflow))["texts"]}
    assert "SLA breach" in lines and "Sla breach" not in lines
    assert "s_urgent --> s_breached: SLA breach" in graph.mermaid(workflow)
    assert '"urgent" -> "breached" [label="SLA breach", style=dashed];' in graph.dot(workflow)


def test_a_step_that_returns_to_itself_gets_a_loop_round_its_label():
    drawing = read(graph.svg(Proposal.workflow))
    loops = [edge for edge in drawing["edges"] if edge[1] == edge[2] == "review"]
    assert len(loops) == 1 and loops[0][4] == "Bounce"
    review = drawing["steps"]["review"]
    bounce = next(box for line, box in drawing["texts"] if line == "Bounce")
    assert bounce.top > review.bottom  # under the step, the loop round it
    numbers = [float(n) for n in re.findall(r"-?[\d.]+", loops[0][3])]
    xs, ys = numbers[0::2], numbers[1::2]
    assert min(xs) < bounce.left and bounce.right < max(xs) and bounce.bottom < max(ys)
    assert (xs[0], ys[0]) != (xs[-1], ys[-1]) and ys[0] == ys[-1] == review.bottom


def test_parts_that_do_not_connect_stand_side_by_side():
    declaration = type(
        "Parts",
        (),
        {
            "a": Step(Transition("go", to="b")),
            "b": Step(),
            "c": Step(Transition("go", to="d")),
            "d": Step(),
        },
    )
    steps = read(graph.svg(compile_workflow(None, declaration)))["steps"]
    assert steps["a"].right < steps["c"].left and steps["a"].y == steps["c"].y
    assert steps["b"].right < steps["d"].left


def test_a_step_entered_from_a_step_nothing_reaches_still_lays_out():
    declaration = type(
        "Stray",
        (),
        {
            "a": Step(Transition("go", to="b")),
            "b": Step(Transition("again", to="a")),
            "c": Step(Transition("join", to="a"), Route("b")),
        },
    )
    steps = read(graph.svg(compile_workflow(None, declaration), current="a"))["steps"]
    assert set(steps) == {"a", "b", "c"}


def test_the_same_workflow_draws_the_same_svg():
    support = apps.get_model("support", "Ticket").workflow
    assert graph.svg(support, current="urgent") == graph.svg(support, current="urgent")


def test_the_svg_scales_to_its_box():
    svg = graph.svg(Decision.workflow)
    view = read(svg)["view"]
    assert f'width="{graph._n(view[2])}" height="{graph._n(view[3])}"' in svg


# Routes: each way out of an automatic step's on_success or a routed transition reads as
# its condition, the last unconditional one as "otherwise".


def edge_titles(svg):
    """{(source, target): the <title> of the edge's group, or None}."""
    root = ElementTree.fromstring(svg)
    return {
        (group.get("data-source"), group.get("data-target")): (
            group.find(f"{SVG}title").text if group.find(f"{SVG}title") is not None else None
        )
        for group in root.iter(f"{SVG}g")
        if "edge" in group.get("class", "").split()
    }


def test_the_routes_of_on_success_read_as_their_conditions_everywhere():
    hiring = apps.get_model("hiring", "Candidate").workflow
    routes = [e for e in graph.edges(hiring) if e.source == "screening" and e.kind == "success"]
    assert [(e.target, e.condition) for e in routes] == [
        ("scheduling", "if score ≥ 3"),
        ("rejected", "otherwise"),
    ]
    mermaid = graph.mermaid(hiring).splitlines()
    assert "    s_screening --> s_scheduling: if score ≥ 3" in mermaid
    assert "    s_screening --> s_rejected: otherwise" in mermaid
    dot = graph.dot(hiring).splitlines()
    assert '    "screening" -> "scheduling" [label="if score ≥ 3"];' in dot
    assert '    "screening" -> "rejected" [label="otherwise"];' in dot
    drawn = {(s, t): label for kind, s, t, _, label in read(graph.svg(hiring))["edges"]}
    assert drawn["screening", "scheduling"] == "if score ≥ 3"
    assert drawn["screening", "rejected"] == "otherwise"
    titles = edge_titles(graph.svg(hiring))
    assert titles["screening", "scheduling"] == "if score ≥ 3"
    assert titles["screening", "rejected"] == "otherwise"
    assert titles["scheduling", "awaiting_interview"] is None  # one route: no condition


def test_the_routes_of_a_transition_read_as_its_label_and_their_conditions():
    support = apps.get_model("support", "Ticket").workflow
    mermaid = graph.mermaid(support).splitlines()
    assert "    s_new --> s_urgent: Triage, if priority = “urgent”" in mermaid
    assert "    s_new --> s_billing: Triage, if team = “billing”" in mermaid
    assert "    s_new --> s_technical: Triage, otherwise" in mermaid
    dot = graph.dot(support).splitlines()
    assert '    "new" -> "urgent" [label="Triage, if priority = “urgent”"];' in dot
    assert '    "new" -> "technical" [label="Triage, otherwise"];' in dot
    svg = graph.svg(support, current="new")
    drawn = {(s, t): label for kind, s, t, _, label in read(svg)["edges"] if s == "new"}
    # Each route its own label, the transition's name over its condition.
    assert drawn == {
        ("new", "urgent"): "Triage if priority = “urgent”",
        ("new", "billing"): "Triage if team = “billing”",
        ("new", "technical"): "Triage otherwise",
    }
    titles = edge_titles(svg)
    assert titles["new", "urgent"] == "Triage, if priority = “urgent”"
    assert titles["new", "technical"] == "Triage, otherwise"


def spam_filter(record):
    """Passes the spam filter."""
    return True


def test_a_long_condition_is_cut_short_with_its_whole_text_in_the_title():
    long = Q(customer_reference__startswith="ACME-ENTERPRISE-") & ~Q(region__in=["north", "east"])
    declaration = type(
        "Routed",
        (),
        {
            "received": Step(
                action="sort",
                on_success=[
                    Route("big", when=long),
                    Route("checked", when=spam_filter),
                    Route("odd", when=lambda record: True),
                    Route("expression", when=Q(Value(True, output_field=BooleanField()))),
                    Route("rest"),
                ],
            ),
            "big": Step(),
            "checked": Step(),
            "odd": Step(),
            "expression": Step(),
            "rest": Step(),
        },
    )
    workflow = compile_workflow(None, declaration)  # no model: the names humanised
    whole = (
        "if customer reference starts with “ACME-ENTERPRISE-” and not (region in “north”, “east”)"
    )
    routes = {e.target: e.condition for e in graph.edges(workflow)}
    assert routes == {
        "big": whole,
        "checked": "if passes the spam filter",
        "odd": "if a condition holds",
        "expression": "if a condition holds",  # what describe cannot read
        "rest": "otherwise",
    }
    short = graph.shorten(whole)
    assert short.endswith("…") and len(short) <= graph.CONDITION_CHARS
    assert whole.startswith(short[:-1])
    assert f"    s_received --> s_big: {short}" in graph.mermaid(workflow).splitlines()
    assert (
        f'    "received" -> "big" [label="{short}", tooltip="{whole}"];'
        in graph.dot(workflow).splitlines()
    )
    svg = graph.svg(workflow)
    drawn = {t: label for kind, s, t, _, label in read(svg)["edges"]}
    assert drawn["big"] == short and drawn["checked"] == "if passes the spam filter"
    assert edge_titles(svg)["received", "big"] == whole  # hover for the whole condition
    assert all(len(line) <= 22 for line, _ in read(svg)["texts"]), read(svg)["texts"]


def test_shorten_cuts_between_words_when_it_can():
    assert graph.shorten("short enough") == "short enough"
    assert graph.shorten("x" * 60) == "x" * (graph.CONDITION_CHARS - 1) + "…"
    cut = graph.shorten("if the customer has paid every invoice of the last twelve months")
    assert cut == "if the customer has paid every invoice…", cut
