"""The REST endpoints of django_workflow.rest (docs/rest.md), through DRF's APIClient."""

import json
from base64 import b64encode
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission, User
from django.utils import timezone
from rest_framework.authentication import SessionAuthentication
from rest_framework.test import APIClient

from django_workflow.model.log_values import MAX_DATA_BYTES, MAX_DATA_DEPTH
from django_workflow.models import TransitionLog
from tests.rest_urls import DecisionViewSet, RoutedViewSet
from tests.testapp.models import Decision, Expense, Proposal, Routed, Ticket

pytestmark = pytest.mark.django_db


@pytest.fixture
def user():
    return User.objects.create_user("ann")


@pytest.fixture
def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def grant(user, codename):
    user.user_permissions.add(
        Permission.objects.get(codename=codename, content_type__app_label="testapp")
    )
    return User.objects.get(pk=user.pk)  # permissions are cached per instance


def post(api, url, body=None):
    return api.post(url, body or {}, format="json")


# GET …/workflow/ ---------------------------------------------------------------------------


def test_the_state_names_the_step_the_actions_and_the_history_newest_first(api, user):
    decision = Decision.objects.create()
    decision.hold(actor=user, comment="Waiting for the budget", data={"ticket": 4711})
    response = api.get(f"/api/decisions/{decision.pk}/workflow/")
    assert response.status_code == 200
    body = response.json()
    assert body["step"] == "held"
    assert body["label"] == "On hold"
    assert body["available_actions"] == [{"name": "release", "label": "Release", "accept": []}]
    assert body["pending_deadlines"] == []
    newest, created = body["history"]
    assert newest == {
        "occurred_at": newest["occurred_at"],
        "from_step": "pending",
        "to_step": "held",
        "transition": "hold",
        "trigger": "manual",
        "actor_repr": "ann",
        "comment": "Waiting for the budget",
        "data": {"ticket": 4711},
    }
    assert created["from_step"] is None and created["trigger"] == "initial"


def test_the_actions_are_those_the_requester_may_call_with_labels_and_accepted_fields(api):
    decision = Decision.objects.create()
    actions = api.get(f"/api/decisions/{decision.pk}/workflow/").json()["available_actions"]
    assert actions == [
        {"name": "approve", "label": "Approve", "accept": ["note"]},
        {"name": "reject", "label": "Reject", "accept": []},
        {"name": "hold", "label": "Put on hold", "accept": []},
    ]
    ticket = Ticket.objects.create()  # its policy asks for testapp.change_ticket
    assert api.get(f"/api/tickets/{ticket.pk}/workflow/").json()["available_actions"] == []


def test_the_state_lists_pending_deadlines_soonest_first_with_iso_instants(api):
    start = timezone.now().replace(microsecond=0)
    proposal = Proposal.objects.create(submitted_at=start)
    deadlines = api.get(f"/api/proposals/{proposal.pk}/workflow/").json()["pending_deadlines"]
    assert deadlines[0] == {
        "name": "follow_up",
        "label": "Follow up",
        "kind": "action",
        "due_at": (start + timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
        "target": "follow_up",
    }
    escalation = next(d for d in deadlines if d["name"] == "escalation")
    assert escalation["kind"] == "transition" and escalation["target"] == "escalated"
    assert [d["due_at"] for d in deadlines] == sorted(d["due_at"] for d in deadlines)


def test_the_history_is_bounded(api, user, monkeypatch):
    monkeypatch.setattr(RoutedViewSet, "workflow_history_limit", 2)
    routed = Routed.objects.create(amount=5)
    routed.size(actor=user)
    history = api.get(f"/api/routed/{routed.pk}/workflow/").json()["history"]
    assert [row["to_step"] for row in history] == ["small", "open"]
    monkeypatch.setattr(RoutedViewSet, "workflow_history_limit", 1)
    history = api.get(f"/api/routed/{routed.pk}/workflow/").json()["history"]
    assert [row["to_step"] for row in history] == ["small"]


def test_the_viewset_queryset_decides_which_records_are_found(api):
    other = User.objects.create_user("bob")
    hidden = Ticket.objects.create(owner=other)
    assert api.get(f"/api/tickets/{hidden.pk}/workflow/").status_code == 404
    assert api.get("/api/decisions/999999/workflow/").status_code == 404


def test_an_anonymous_request_is_401_naming_the_scheme_even_with_session_first():
    decision = Decision.objects.create()  # DRF's defaults: SessionAuthentication, then Basic
    response = APIClient().get(f"/api/decisions/{decision.pk}/workflow/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Basic realm="api"'


def test_without_a_scheme_to_name_no_credentials_is_403(monkeypatch):
    monkeypatch.setattr(DecisionViewSet, "authentication_classes", [SessionAuthentication])
    decision = Decision.objects.create()
    response = APIClient().get(f"/api/decisions/{decision.pk}/workflow/")
    assert response.status_code == 403 and "WWW-Authenticate" not in response
    response = post(APIClient(), f"/api/decisions/{decision.pk}/transitions/reject/")
    assert response.status_code == 403
    assert response.json()["error"] == "not_authenticated"


def test_a_wrong_password_is_401_authentication_failed_naming_the_transition(user):
    user.set_password("secret")
    user.save()
    decision = Decision.objects.create()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Basic " + b64encode(b"ann:wrong").decode())
    response = post(client, f"/api/decisions/{decision.pk}/transitions/reject/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Basic realm="api"'
    assert response.json()["transition"] == "reject"
    assert response.json()["error"] == "authentication_failed"
    assert Decision.objects.get(pk=decision.pk).current_step == "pending"
    client.credentials(HTTP_AUTHORIZATION="Basic " + b64encode(b"ann:secret").decode())
    response = post(client, f"/api/decisions/{decision.pk}/transitions/reject/")
    assert response.status_code == 200


def test_the_viewsets_other_routes_keep_drfs_rule():
    decision = Decision.objects.create()
    assert APIClient().get(f"/api/decisions/{decision.pk}/").status_code == 403


# POST …/transitions/{name}/ ----------------------------------------------------------------


def test_a_transition_runs_for_the_requester_and_answers_with_the_new_state(api, user):
    decision = Decision.objects.create()
    response = post(
        api,
        f"/api/decisions/{decision.pk}/transitions/reject/",
        {"comment": "No budget this year", "data": {"ticket": 4711, "tags": ["q3"]}},
    )
    assert response.status_code == 200
    body = response.json()
    assert body["step"] == "rejected" and body["label"] == "Rejected"
    assert [a["name"] for a in body["available_actions"]] == ["reopen"]
    assert body["history"][0]["transition"] == "reject"
    decision.refresh_from_db()
    assert decision.current_step == "rejected"
    row = TransitionLog.objects.filter(transition_name="reject").get()
    assert row.actor == user and row.actor_repr == "ann"
    assert row.comment == "No budget this year"
    assert row.data == {"ticket": 4711, "tags": ["q3"]}


def test_accepted_values_are_written_and_comment_and_data_are_optional(api):
    decision = Decision.objects.create()
    response = post(api, f"/api/decisions/{decision.pk}/transitions/approve/", {"note": "fine"})
    assert response.status_code == 200
    decision.refresh_from_db()
    assert decision.note == "fine"
    assert decision.current_step == "checking"  # its automatic step runs after commit
    row = TransitionLog.objects.get(transition_name="approve")
    assert row.comment == "" and row.data is None


def test_an_accepted_value_routes_the_record(api):
    routed = Routed.objects.create()
    response = post(api, f"/api/routed/{routed.pk}/transitions/decide/", {"decision": "decline"})
    assert response.status_code == 200
    assert response.json()["step"] == "declined"


@pytest.mark.django_db(transaction=True)
def test_the_answer_is_the_record_as_stored_once_the_transition_committed(api):
    decision = Decision.objects.create()
    response = post(api, f"/api/decisions/{decision.pk}/transitions/approve/", {"note": "fine"})
    assert response.status_code == 200
    body = response.json()  # the automatic step "checking" ran on as the transition committed
    assert (body["step"], body["label"]) == ("approved", "Approved")
    assert [(row["trigger"], row["to_step"]) for row in body["history"][:2]] == [
        ("automatic", "approved"),
        ("manual", "checking"),
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "note"),  # an accepted value is required
        ({"note": ""}, "note"),  # and may not be blank
        ({"note": None}, "note"),
        ({"note": "x" * 101}, "note"),  # the model field's own validation
        ({"note": "fine", "notes": "typo"}, "notes"),  # nothing the transition does not accept
        ({"note": "fine", "comment": ["not", "text"]}, "comment"),
    ],
)
def test_bad_values_are_refused_with_the_serializer_errors(api, body, field):
    decision = Decision.objects.create()
    response = post(api, f"/api/decisions/{decision.pk}/transitions/approve/", body)
    assert response.status_code == 400
    error = response.json()
    assert error["transition"] == "approve" and error["error"] == "invalid"
    assert error["step"] == "pending"
    assert field in error["errors"]
    decision.refresh_from_db()
    assert decision.current_step == "pending" and decision.note == ""
    assert not TransitionLog.objects.filter(transition_name="approve").exists()


def test_a_field_not_accepted_is_named_in_words_not_a_python_list(api):
    decision = Decision.objects.create()
    body = {"note": "fine", "notes": "typo"}
    response = post(api, f"/api/decisions/{decision.pk}/transitions/approve/", body)
    assert response.json()["errors"]["notes"] == [
        "Not accepted here; the body takes note, comment and data."
    ]


def test_a_body_that_is_no_object_is_refused(api):
    decision = Decision.objects.create()
    response = api.post(f"/api/decisions/{decision.pk}/transitions/reject/", [1, 2], format="json")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"


def test_the_workflow_policy_refuses_with_403(api, user):
    ticket = Ticket.objects.create(owner=user)  # the viewset lets its owner write
    response = post(api, f"/api/tickets/{ticket.pk}/transitions/start/")
    assert response.status_code == 403
    assert response.json() == {
        "transition": "start",
        "error": "permission_denied",
        "detail": response.json()["detail"],
        "step": "new",
    }
    assert response.json()["detail"] == f"ann may not call “Start” on Ticket {ticket.pk}."
    ticket.refresh_from_db()
    assert ticket.current_step == "new"
    user = grant(user, "change_ticket")
    api.force_authenticate(user)
    response = post(api, f"/api/tickets/{ticket.pk}/transitions/start/")
    assert response.status_code == 200 and response.json()["step"] == "working"


def test_the_viewset_object_permission_refuses_with_403_naming_the_transition(api, user):
    user = grant(user, "change_ticket")
    api.force_authenticate(user)
    unowned = Ticket.objects.create()  # visible, but only its owner may write
    assert api.get(f"/api/tickets/{unowned.pk}/workflow/").status_code == 200
    response = post(api, f"/api/tickets/{unowned.pk}/transitions/start/")
    assert response.status_code == 403
    error = response.json()
    assert error["transition"] == "start" and error["error"] == "permission_denied"
    unowned.refresh_from_db()
    assert unowned.current_step == "new"


def test_model_permissions_ask_for_change_to_run_a_transition(api, user):
    decision = Decision.objects.create()
    url = f"/api/guarded-decisions/{decision.pk}/"
    assert api.get(url + "workflow/").status_code == 200
    user = grant(user, "add_decision")  # what DjangoModelPermissions asks of a POST
    api.force_authenticate(user)
    response = post(api, url + "transitions/reject/")
    assert response.status_code == 403 and response.json()["transition"] == "reject"
    user = grant(user, "change_decision")
    api.force_authenticate(user)
    assert post(api, url + "transitions/reject/").status_code == 200
    assert api.patch(url, {"note": "x"}, format="json").status_code == 200  # as before
    assert api.delete(url).status_code == 403


def test_an_anonymous_post_is_refused_naming_the_transition():
    decision = Decision.objects.create()
    response = post(APIClient(), f"/api/decisions/{decision.pk}/transitions/reject/")
    assert response.status_code == 401
    assert response.json()["transition"] == "reject"
    assert response.json()["error"] == "not_authenticated"


def test_an_unknown_record_is_404_naming_the_transition(api):
    response = post(api, "/api/decisions/999999/transitions/reject/")
    assert response.status_code == 404
    assert response.json()["transition"] == "reject"
    assert response.json()["error"] == "not_found"
    hidden = Ticket.objects.create(owner=User.objects.create_user("bob"))  # not in the queryset
    response = post(api, f"/api/tickets/{hidden.pk}/transitions/close/")
    assert response.status_code == 404
    hidden.refresh_from_db()
    assert hidden.current_step == "new"


def test_an_unknown_transition_name_is_404(api):
    decision = Decision.objects.create()
    response = post(api, f"/api/decisions/{decision.pk}/transitions/teleport/")
    assert response.status_code == 404
    assert response.json() == {
        "transition": "teleport",
        "error": "unknown_transition",
        "detail": "Decision declares no transition 'teleport'.",
        "step": "pending",
    }


def test_a_transition_the_step_does_not_offer_is_409(api, user):
    decision = Decision.objects.create()
    decision.reject(actor=user)
    response = post(api, f"/api/decisions/{decision.pk}/transitions/reject/")
    assert response.status_code == 409
    error = response.json()
    assert error["error"] == "transition_not_allowed" and error["step"] == "rejected"
    assert error["detail"] == f"Decision {decision.pk}: Rejected offers no “Reject”."
    # before the body is looked at: an invalid body changes nothing
    response = post(api, f"/api/decisions/{decision.pk}/transitions/approve/", {"note": ""})
    assert response.status_code == 409


def test_a_when_that_does_not_hold_is_409_and_from_any_step_is_offered(api):
    expense = Expense.objects.create(amount=80)
    actions = api.get(f"/api/expenses/{expense.pk}/workflow/").json()["available_actions"]
    assert [a["name"] for a in actions] == ["explode", "cancel"]  # no receipt: no approve
    assert actions[1]["label"] == "Cancel the expense"
    url = f"/api/expenses/{expense.pk}/transitions/"
    response = post(api, url + "approve/", {"approved_by": "ann"})
    assert response.status_code == 409
    assert response.json() == {
        "transition": "approve",
        "error": "condition_unmet",
        "detail": f"Expense {expense.pk}: “Approve” is not possible now. Attach the receipt first.",
        "step": "submitted",
        "reason": "Attach the receipt first.",
    }
    expense.refresh_from_db()
    assert expense.approved_by == "" and expense.current_step == "submitted"
    assert post(api, url + "attach/", {"receipt": True}).status_code == 200
    response = post(api, url + "approve/", {"approved_by": "ann"})
    assert response.status_code == 200 and response.json()["step"] == "approved"
    expense.refresh_from_db()
    assert expense.note == "approved by ann, in submitted"  # the transition's action ran
    response = post(api, url + "cancel/", {"comment": "Duplicate"})
    assert response.status_code == 200 and response.json()["step"] == "cancelled"


def test_a_failing_transition_action_reaches_drf_and_writes_nothing(api):
    expense = Expense.objects.create()
    with pytest.raises(RuntimeError, match="payment system is down"):
        post(api, f"/api/expenses/{expense.pk}/transitions/explode/")
    expense.refresh_from_db()
    assert expense.current_step == "submitted" and expense.note == ""


def test_a_record_changed_meanwhile_is_409_stale(api, monkeypatch):
    routed = Routed.objects.create(amount=5)
    load = RoutedViewSet.get_object

    def loaded_then_changed(view):
        record = load(view)
        Routed.objects.filter(pk=record.pk).update(amount=500)  # another writer, meanwhile
        return record

    monkeypatch.setattr(RoutedViewSet, "get_object", loaded_then_changed)
    response = post(api, f"/api/routed/{routed.pk}/transitions/size/")
    assert response.status_code == 409
    error = response.json()
    assert error["error"] == "stale_record" and error["transition"] == "size"
    assert set(error["fields"]) == {"state", "amount"}
    routed.refresh_from_db()
    assert routed.current_step == "open"
    assert not TransitionLog.objects.filter(transition_name="size").exists()


def test_no_route_matched_is_422(api):
    routed = Routed.objects.create()
    response = post(api, f"/api/routed/{routed.pk}/transitions/decide/", {"decision": "maybe"})
    assert response.status_code == 422
    error = response.json()
    assert error["error"] == "no_route_matched" and error["transition"] == "decide"
    routed.refresh_from_db()
    assert routed.current_step == "open" and routed.decision == ""


def test_get_on_a_transition_is_405(api):
    decision = Decision.objects.create()
    response = api.get(f"/api/decisions/{decision.pk}/transitions/reject/")
    assert response.status_code == 405
    assert response.json()["transition"] == "reject"
    assert response.json()["error"] == "method_not_allowed"


def test_a_body_that_is_no_json_is_400_parse_error(api):
    decision = Decision.objects.create()
    response = api.post(
        f"/api/decisions/{decision.pk}/transitions/reject/",
        "{not json",
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["transition"] == "reject"
    assert response.json()["error"] == "parse_error"


@pytest.mark.parametrize("comment", [5, 1.5, True, {"text": "x"}])
def test_a_comment_that_is_no_text_is_400_not_stored_as_its_str(api, comment):
    decision = Decision.objects.create()
    response = post(api, f"/api/decisions/{decision.pk}/transitions/reject/", {"comment": comment})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid" and "comment" in response.json()["errors"]
    assert Decision.objects.get(pk=decision.pk).current_step == "pending"
    assert not TransitionLog.objects.filter(transition_name="reject").exists()


def test_a_stale_record_answers_the_step_it_is_in_now(api, monkeypatch):
    routed = Routed.objects.create(amount=5)
    load = RoutedViewSet.get_object

    def loaded_then_moved(view):
        record = load(view)
        Routed.objects.get(pk=record.pk).decide(decision="approve")  # another caller, meanwhile
        return record

    monkeypatch.setattr(RoutedViewSet, "get_object", loaded_then_moved)
    response = post(api, f"/api/routed/{routed.pk}/transitions/size/")
    assert response.status_code == 409
    assert response.json()["error"] == "stale_record"
    assert response.json()["step"] == "approved"


def test_a_record_deleted_meanwhile_is_stale_without_a_step(api, monkeypatch):
    routed = Routed.objects.create(amount=5)
    load = RoutedViewSet.get_object

    def loaded_then_deleted(view):
        record = load(view)
        Routed.objects.filter(pk=record.pk).delete()  # another caller, meanwhile
        return record

    monkeypatch.setattr(RoutedViewSet, "get_object", loaded_then_deleted)
    response = post(api, f"/api/routed/{routed.pk}/transitions/size/")
    assert response.status_code == 409
    assert response.json()["error"] == "stale_record" and "step" not in response.json()


def deep(depth):
    return "[" * depth + "]" * depth


HOSTILE_BODIES = {
    "lone surrogate in data": ('{"data": "\\ud800"}', "invalid"),
    "lone surrogate as a key": ('{"data": {"\\udc80": 1}}', "invalid"),
    "NUL in data": ('{"data": {"note": "a\\u0000b"}}', "invalid"),
    "data one level too deep": (f'{{"data": {deep(MAX_DATA_DEPTH + 1)}}}', "invalid"),
    "data too large": (f'{{"data": "{"x" * MAX_DATA_BYTES}"}}', "invalid"),
    "JSON nested 100,000 deep": (f'{{"data": {deep(100_000)}}}', "parse_error"),
    "NUL in the comment": ('{"comment": "a\\u0000b"}', "invalid"),
    "lone surrogate in the comment": ('{"comment": "\\ud800"}', "invalid"),
}


@pytest.mark.parametrize("body", HOSTILE_BODIES.values(), ids=HOSTILE_BODIES.keys())
def test_hostile_comment_or_data_is_400_and_the_record_stays_readable(api, body):
    text, error = body
    decision = Decision.objects.create()
    url = f"/api/decisions/{decision.pk}/transitions/reject/"
    response = api.post(url, text, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"] == error and response.json()["transition"] == "reject"
    assert Decision.objects.get(pk=decision.pk).current_step == "pending"
    assert not TransitionLog.objects.filter(transition_name="reject").exists()
    assert api.get(f"/api/decisions/{decision.pk}/workflow/").status_code == 200


def test_data_as_deep_and_large_as_allowed_is_stored_and_read_back(api):
    decision = Decision.objects.create()
    url = f"/api/decisions/{decision.pk}/transitions/"
    text = f'{{"data": {deep(MAX_DATA_DEPTH)}, "comment": "\\u00fcber \\u2713"}}'
    assert api.post(url + "hold/", text, content_type="application/json").status_code == 200
    largest = "x" * (MAX_DATA_BYTES - 2)
    assert post(api, url + "release/", {"data": largest}).status_code == 200
    history = api.get(f"/api/decisions/{decision.pk}/workflow/").json()["history"]
    assert history[0]["data"] == largest
    assert history[1]["comment"] == "über ✓"
    assert json.dumps(history[1]["data"]) == deep(MAX_DATA_DEPTH)


# The request serializers ---------------------------------------------------------------------


def test_one_request_serializer_per_model_and_transition():
    from django_workflow.rest import WorkflowTransitionSerializer, transition_serializer

    approve = transition_serializer(Decision, "approve", ("note",))
    assert approve is transition_serializer(Decision, "approve", ("note",))
    assert issubclass(approve, WorkflowTransitionSerializer)
    assert approve.__name__ == "DecisionApproveTransitionSerializer"
    fields = approve().fields
    assert list(fields) == ["note", "comment", "data"]
    assert fields["note"].required and not fields["note"].allow_blank
    assert not fields["comment"].required and not fields["data"].required


def test_a_boolean_is_not_required():
    from django_workflow.rest import transition_serializer
    from tests.testapp.models import Monitor

    serializer = transition_serializer(Monitor, "x", ("fail_checks",))(data={})
    assert serializer.is_valid(), serializer.errors
    assert serializer.validated_data == {}


# OpenAPI -----------------------------------------------------------------------------------


def test_the_schema_describes_both_endpoints_and_is_valid(api):
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.validation import validate_schema

    GENERATOR_STATS.reset()
    response = api.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    validate_schema(schema)
    assert not GENERATOR_STATS, "drf-spectacular warned or failed"
    paths = schema["paths"]
    state = paths["/api/decisions/{id}/workflow/"]["get"]
    assert state["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/WorkflowState"
    }
    assert set(state["responses"]) == {"200", "401", "403", "404"}
    assert state["responses"]["404"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/WorkflowStateError"
    }
    run = paths["/api/decisions/{id}/transitions/{transition}/"]["post"]
    assert set(run["responses"]) == {"200", "400", "401", "403", "404", "409", "422"}
    assert "authentication_failed" in run["responses"]["401"]["description"]
    assert "condition_unmet" in run["responses"]["409"]["description"]
    assert "parse_error" in run["responses"]["400"]["description"]
    # The mixin's docstring is not the description of a viewset that has none.
    assert "description" not in paths["/api/decisions/{id}/"]["get"]
    tickets = paths["/api/tickets/{id}/"]["get"]
    assert tickets["description"].startswith("Tickets of the requester")
    assert run["responses"]["409"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/WorkflowError"
    }
    name = next(p for p in run["parameters"] if p["name"] == "transition")
    assert sorted(name["schema"]["enum"]) == ["approve", "hold", "reject", "release", "reopen"]
    body = run["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/DecisionTransitionBody"}
    components = schema["components"]["schemas"]
    bodies = [
        ref["$ref"].rsplit("/", 1)[1] for ref in components["DecisionTransitionBody"]["anyOf"]
    ]
    assert bodies == [
        "DecisionApproveTransition",
        "DecisionRejectTransition",
        "DecisionHoldTransition",
        "DecisionReopenTransition",
        "DecisionReleaseTransition",
    ]
    approve = components["DecisionApproveTransition"]
    assert approve["required"] == ["note"]
    assert set(approve["properties"]) == {"note", "comment", "data"}
    assert components["DecisionRejectTransition"].get("required") is None
    # each viewset describes its own model's transitions
    routed = paths["/api/routed/{id}/transitions/{transition}/"]["post"]
    assert next(p for p in routed["parameters"] if p["name"] == "transition")["schema"]["enum"] == [
        "decide",
        "size",
    ]
    assert components["RoutedDecideTransition"]["required"] == ["decision"]
    expense = paths["/api/expenses/{id}/transitions/{transition}/"]["post"]
    names = next(p for p in expense["parameters"] if p["name"] == "transition")["schema"]["enum"]
    assert "cancel" in names  # from_any_step
    assert "required" not in components["ExpenseAttachTransition"]  # a boolean
    codes = components["WorkflowError"]["properties"]["error"]["description"]
    for code in ("parse_error", "method_not_allowed", "authentication_failed", "condition_unmet"):
        assert code in codes
    assert set(components["WorkflowState"]["properties"]) == {
        "step",
        "label",
        "version",
        "available_actions",
        "pending_deadlines",
        "history",
        "votes",
    }
    votes = components["WorkflowVotes"]["properties"]
    assert set(votes) == {"transition", "label", "quorum", "voters"}


def test_a_viewset_that_does_not_name_its_model_gets_the_generic_body():
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator
    from rest_framework import routers, viewsets

    from django_workflow.rest import WorkflowViewSetMixin
    from tests.rest_urls import DecisionSerializer

    class Dynamic(WorkflowViewSetMixin, viewsets.GenericViewSet):
        def get_queryset(self):
            return Decision.objects.all()

        def get_serializer_class(self):
            return DecisionSerializer

    GENERATOR_STATS.reset()
    router = routers.SimpleRouter()
    router.register("dynamic", Dynamic, basename="dynamic")
    schema = SchemaGenerator(patterns=router.urls).get_schema(request=None, public=True)
    run = schema["paths"]["/dynamic/{id}/transitions/{transition}/"]["post"]
    body = run["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/WorkflowCall"}
    assert not GENERATOR_STATS, "drf-spectacular warned or failed"

    class Named(Dynamic):
        workflow_model = Decision  # named: its own transitions again

    router = routers.SimpleRouter()
    router.register("dynamic", Named, basename="dynamic")
    schema = SchemaGenerator(patterns=router.urls).get_schema(request=None, public=True)
    run = schema["paths"]["/dynamic/{id}/transitions/{transition}/"]["post"]
    body = run["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/DecisionTransitionBody"}
