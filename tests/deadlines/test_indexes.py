"""One index serves every deadline of a model: ``next_due_at`` (docs/deadlines.md,
docs/decisions.md), and the poll's queries use it on both databases."""

import pytest
from django.db import connection, transaction
from django.utils import timezone

from django_workflow.engine.firing import due_rows
from django_workflow.model.columns import NEXT_DUE_AT
from django_workflow.model.generation import deadline_indexes
from tests.testapp.models import Decision, Monitor, Proposal


def indexes(model):
    return {(tuple(index.fields), str(index.condition)) for index in model._meta.indexes}


@pytest.mark.parametrize("model", [Proposal, Monitor])
def test_a_model_with_deadlines_has_one_partial_index_of_pending_due_instants(model):
    assert indexes(model) == {((NEXT_DUE_AT,), "(AND: ('next_due_at__isnull', False))")}
    assert len(Proposal.workflow.works) >= 8  # however many deadlines it declares


def test_a_model_without_deadlines_has_no_due_column_nor_index():
    assert deadline_indexes(Decision, Decision.workflow) == []
    assert NEXT_DUE_AT not in {field.name for field in Decision._meta.get_fields()}


def plan_of(sql, params):
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            return " | ".join(str(row[-1]) for row in cursor.fetchall())
        # Tables this small would be scanned; whether the index *can* serve it is the question.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        return " | ".join(row[0] for row in cursor.fetchall())


def index_name():
    [index] = Proposal._meta.indexes
    return index.name


@pytest.mark.django_db
def test_the_idle_probe_reads_the_due_index():
    rows = Proposal._base_manager.filter(**{f"{NEXT_DUE_AT}__lte": timezone.now()})
    with transaction.atomic():
        plan = plan_of(*rows.values("pk")[:1].query.sql_with_params())
    assert index_name() in plan, plan
    assert "SCAN testapp_proposal" not in plan.replace("SCAN testapp_proposal USING", ""), plan


@pytest.mark.django_db
@pytest.mark.parametrize("after", [None, "keyset"])
def test_the_due_batches_read_the_due_index_in_its_order(after):
    now = timezone.now()
    rows = due_rows(Proposal, now, "default", (now, 7) if after else None)
    with transaction.atomic():
        plan = plan_of(*rows[:500].query.sql_with_params())
    assert index_name() in plan, plan
    assert "SCAN testapp_proposal " not in f"{plan} ", plan
    assert "TEMP B-TREE" not in plan, plan  # SQLite walks the index in order, no sort
