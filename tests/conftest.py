from types import SimpleNamespace

import pytest
from django.test.utils import isolate_apps

from django_workflow import WorkflowModel
from tests.moments import T


@pytest.fixture
def recruiter():
    return SimpleNamespace(role="recruiter")


@pytest.fixture
def outsider():
    return SimpleNamespace(role="intern")


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run the block's on-commit callbacks (signals, automatic steps) as a commit would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


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
