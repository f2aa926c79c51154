"""What the tests share: reading a record's log as (from, to, trigger, name) rows."""

from datetime import UTC, datetime

T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)  # a Monday


def moves(record):
    """The record's log rows, oldest first, as (from_state, to_state, trigger, name)."""
    return [
        (row.from_state, row.to_state, row.triggered_by, row.transition_name)
        for row in record.history()
    ]


def rows(record, trigger):
    return [row for row in record.history() if row.triggered_by == trigger]
