from types import SimpleNamespace

import pytest


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
