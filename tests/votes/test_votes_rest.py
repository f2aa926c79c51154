"""Votes over REST (docs/rest.md, docs/votes.md): ``GET …/workflow/`` lists who voted for
each ``quorum`` transition of the step; a second vote by the same person is 409."""

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from example_project.approvals.models import Document

pytestmark = pytest.mark.django_db


def client_of(name):
    client = APIClient()
    client.force_authenticate(User.objects.create_user(name))
    return client


def test_the_state_lists_the_votes_and_omits_what_the_requester_voted_for():
    ann, bo = client_of("ann"), client_of("bo")
    document = Document.objects.create(title="Budget").submit()
    url = f"/api/documents/{document.pk}/"
    answer = ann.post(f"{url}transitions/approve/", {}, format="json")
    assert answer.status_code == 200 and answer.json()["step"] == "in_review"
    assert answer.json()["votes"] == [
        {"transition": "approve", "label": "Approve", "quorum": 2, "voters": ["ann"]}
    ]
    assert [a["name"] for a in answer.json()["available_actions"]] == ["request_changes"]
    theirs = bo.get(f"{url}workflow/").json()
    assert [a["name"] for a in theirs["available_actions"]] == ["approve", "request_changes"]
    assert theirs["history"][0]["trigger"] == "vote"


def test_voting_twice_is_409_already_voted_and_the_quorum_moves_the_record():
    ann, bo = client_of("ann"), client_of("bo")
    document = Document.objects.create(title="Budget").submit()
    url = f"/api/documents/{document.pk}/transitions/approve/"
    ann.post(url, {}, format="json")
    again = ann.post(url, {}, format="json")
    assert again.status_code == 409
    assert again.json()["error"] == "already_voted"
    assert "ann already voted" in again.json()["detail"]
    moved = bo.post(url, {}, format="json").json()
    assert (moved["step"], moved["votes"]) == ("approved", [])
