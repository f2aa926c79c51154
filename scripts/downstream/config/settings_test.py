"""The settings the tests run with: docs/testing.md's advice for automatic steps."""

from .settings import *  # noqa: F403

# Run django-q2's tasks in-process when the transaction commits.
Q_CLUSTER = {**Q_CLUSTER, "sync": True}  # noqa: F405
