import os
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.db import models, router
from django.test.utils import isolate_apps

from django_workflow import WorkflowModel
from django_workflow.models import TransitionLog
from tests.moments import T


@pytest.fixture
def recruiter():
    return SimpleNamespace(role="recruiter")


@pytest.fixture
def outsider():
    return SimpleNamespace(role="intern")


def pytest_collection_modifyitems(items):
    """Tests marked ``alone`` time what the load of other processes would decide: the test
    command runs them after the suites, with the machine to itself and ``WORKFLOW_ALONE``
    set (scripts/test.sh). With a second database (tests/settings_databases.py), database
    tests may use both."""
    if not os.environ.get("WORKFLOW_ALONE"):
        later = pytest.mark.skip(reason="run alone by the test command, with WORKFLOW_ALONE=1")
        for item in items:
            if item.get_closest_marker("alone"):
                item.add_marker(later)
    if len(settings.DATABASES) == 1:
        return
    for item in items:
        marker = item.get_closest_marker("django_db")
        if marker is not None and "databases" not in marker.kwargs:
            wider = pytest.mark.django_db(*marker.args, **marker.kwargs, databases="__all__")
            item.add_marker(wider, append=False)


def workflow_database() -> str:
    """The database workflow records live on: ``default`` unless a router says otherwise."""
    return router.db_for_write(TransitionLog)


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run the block's on-commit callbacks (signals, automatic steps) as a commit would."""
    return lambda: django_capture_on_commit_callbacks(using=workflow_database(), execute=True)


@pytest.fixture
def clock(time_machine):
    """A stopped clock at ``tests.moments.T`` (a Monday, 09:00 UTC); move it with ``move_to``."""
    time_machine.move_to(T, tick=False)
    return time_machine


@pytest.fixture
def declare():
    """``declare(Workflow, **members)``: a workflow model no other test can see."""
    with isolate_apps("tests.testapp"):
        count = iter(range(1000))

        def make(workflow, **members):
            meta = type("Meta", (), {"app_label": "testapp"})
            attrs = {"__module__": __name__, "Meta": meta, "Workflow": workflow, **members}
            return type(f"Throwaway{next(count)}", (WorkflowModel,), attrs)

        yield make


@pytest.fixture
def with_items(declare):
    """``with_items(parent, child_workflow)``: ``parent`` given children pointing at it with
    related_name "items", of a workflow model declaring ``child_workflow`` (a plain model
    when it is None); returns ``parent``."""

    def make(parent, child_workflow):
        relation = models.ForeignKey(parent, related_name="items", on_delete=models.CASCADE)
        if child_workflow is None:
            meta = type("Meta", (), {"app_label": "testapp"})
            attrs = {"__module__": __name__, "Meta": meta, "parent": relation}
            type(f"{parent.__name__}Item", (models.Model,), attrs)
        else:
            declare(child_workflow, parent=relation)
        return parent

    return make
