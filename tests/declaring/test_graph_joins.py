"""A join step in every diagram (docs/transitions.md, "Joins"): its ways out drawn as
edges of their own, each labelled with its condition, in Mermaid, dot and the admin's SVG."""

from django_workflow import Join, Step, Transition
from django_workflow.model import graph
from django_workflow.model.compiled import compile_workflow
from tests.declaring.test_graph import read
from tests.testapp.models import Consignment


def test_the_edges_of_a_join_step_read_as_its_condition():
    joins = [e for e in graph.edges(Consignment.workflow) if e.kind == "join"]
    assert [(e.source, e.target, e.label, e.text) for e in joins] == [
        ("picking", "shipping", "parcels", "parcels: all in packed, void"),
        ("picking", "on_hold", "parcels", "parcels: any lost"),
    ]


def test_mermaid_labels_the_join_edges_with_the_colon_escaped():
    """Mermaid ends an edge's description at a colon: the condition's colon is written as
    its entity code, which Mermaid shows as a colon."""
    lines = graph.mermaid(Consignment.workflow).splitlines()
    assert "    s_picking --> s_shipping: parcels#58; all in packed, void" in lines
    assert "    s_picking --> s_on_hold: parcels#58; any lost" in lines


def test_dot_draws_the_join_edges_bold_with_their_condition():
    lines = graph.dot(Consignment.workflow).splitlines()
    shipping = '"picking" -> "shipping" [label="parcels: all in packed, void", style=bold];'
    assert f"    {shipping}" in lines
    assert '    "picking" -> "on_hold" [label="parcels: any lost", style=bold];' in lines


def test_the_svg_draws_the_join_edges_labelled_and_names_them_in_the_legend():
    drawing = read(graph.svg(Consignment.workflow, current="picking"))
    joins = [(s, t, label) for kind, s, t, _, label in drawing["edges"] if kind == "join"]
    assert joins == [
        ("picking", "shipping", "parcels: all in packed, void"),
        ("picking", "on_hold", "parcels: any lost"),
    ]
    assert drawing["legend"][-1] == "Join"


def test_a_join_without_any_in_has_one_edge_and_a_single_child_step_reads_as_one():
    declaration = type(
        "Batch",
        (),
        {
            "waiting": Step(Join("items", all_in="done", to="closed")),
            "closed": Step(Transition("reopen", to="waiting")),
        },
    )
    edges = [e for e in graph.edges(compile_workflow(None, declaration)) if e.kind == "join"]
    assert [(e.target, e.text) for e in edges] == [("closed", "items: all in done")]


def test_a_colon_in_any_mermaid_label_no_longer_cuts_it_short():
    declaration = type(
        "Timed",
        (),
        {"a": Step(Transition("go", to="b", label="Go: now")), "b": Step()},
    )
    text = graph.mermaid(compile_workflow(None, declaration))
    assert "    s_a --> s_b: Go#58; now" in text.splitlines()
