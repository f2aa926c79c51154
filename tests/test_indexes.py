"""Every deadline has an index its poll uses (docs/declaring.md, docs/deployment.md)."""

import pytest
from django.db import connection
from django.utils import timezone

from tests.testapp.models import Monitor, Proposal


def indexes(model):
    return {(tuple(index.fields), str(index.condition)) for index in model._meta.indexes}


def test_action_timeouts_get_a_partial_index_over_unfired_rows():
    found = indexes(Proposal)
    condition = "(AND: ('review_reminder_fired_at__isnull', True))"
    assert (("state", "state_entered_at"), condition) in found
    assert (("state", "respond_by"), "(AND: ('review_chase_fired_at__isnull', True))") in found


def test_transition_timeouts_and_every_get_a_plain_index():
    found = indexes(Proposal)
    assert (("state", "state_entered_at"), "None") in found
    assert (("state", "review_nag_last_fired_at"), "None") in found
    assert (("state", "state_entered_at"), "None") in indexes(Monitor)


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "sqlite", reason="reads SQLite's query plan")
@pytest.mark.parametrize("work", [w.name for w in Proposal.workflow.works])
def test_each_poll_searches_an_index_instead_of_scanning_the_table(work):
    match = Proposal.workflow.work(work).match(timezone.now())
    rows = Proposal.workflow.queryset().filter(match).order_by("pk").values_list("pk")[:500]
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        plan = " | ".join(row[-1] for row in cursor.fetchall())
    assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, plan
    assert "SCAN testapp_proposal" not in plan.replace("SCAN testapp_proposal USING", ""), plan
